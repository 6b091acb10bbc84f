"""The wheel works outside the checkout: built from a copy of the sources, it carries
LICENSE and the grammars, and installed into a directory of its own it imports from there
and runs ``shardy-ref --version``, ``check`` and ``show`` from another directory.

The checkout's editable install can stand in for the wheel unseen: its
``__editable___shardy_ref_*_finder`` (a meta-path finder in site-packages) serves
``shardy_ref`` and each of its direct submodules from the checkout to any import that the
path (PYTHONPATH here) cannot satisfy, so a module missing from the wheel would still
import. Hence each command runs under an audit that fails it when a loaded ``shardy_ref``
module's file is not in the install directory.

The build runs offline (no build isolation), with the environment's setuptools (the test
extra's); it is skipped, saying why, when that cannot build a wheel. About 4 s."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "shardy_ref")
EXAMPLE = ROOT / "examples" / "mlp.mlir"

# Runs a console script (argv[1]) as its own process would, then fails (exit 97) when a
# loaded shardy_ref module came from anywhere but $SHARDY_REF_WHEEL_TARGET.
AUDIT = """
import os, runpy, sys
target = os.path.realpath(os.environ["SHARDY_REF_WHEEL_TARGET"]) + os.sep
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    strays = sorted(f"{name}: {getattr(module, '__file__', None)}"
                    for name, module in list(sys.modules.items())
                    if name.split(".")[0] == "shardy_ref"
                    and not os.path.realpath(getattr(module, "__file__", None) or "/")
                    .startswith(target))
    if strays:
        print("not from the wheel:", *strays, sep="\\n  ", file=sys.stderr)
        raise SystemExit(97)
"""


def _why_no_offline_build() -> str | None:
    if importlib.util.find_spec("setuptools") is None:
        return "setuptools is not installed (pip install -e '.[test]' installs it)"
    if (importlib.util.find_spec("setuptools.command.bdist_wheel") is None
            and importlib.util.find_spec("wheel") is None):
        return "this setuptools (< 70.1) needs the wheel package to build a wheel"
    return None


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, **kwargs)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.mark.slow  # builds and installs a wheel: ~6 s
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    if reason := _why_no_offline_build():
        pytest.skip(f"cannot build the wheel offline: {reason}")

    # Build from a copy: an in-tree build would write build/ and *.egg-info into the
    # checkout, and pack stale files a previous build left in build/lib.
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", str(tmp_path / "dist"), str(src)], cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("shardy_ref-*.whl")

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [metadata] = [n for n in names if re.fullmatch(r"shardy_ref-[^/]+\.dist-info/METADATA", n)]
        dist_info = metadata.rsplit("/", 1)[0]
        # setuptools >= 77 puts license files under licenses/ (PEP 639), older ones beside
        licenses = [n for n in (f"{dist_info}/LICENSE", f"{dist_info}/licenses/LICENSE")
                    if n in names]
        assert licenses, f"no LICENSE in {dist_info}: {[n for n in names if 'dist-info' in n]}"
        assert archive.read(licenses[0]) == (ROOT / "LICENSE").read_bytes()
        version = re.search(r"^Version: (\S+)$", archive.read(metadata).decode(), re.M)[1]
    assert "shardy_ref/parser/core.lark" in names  # package data
    assert {n.split("/")[0] for n in names} == {"shardy_ref", dist_info}  # no tests, tools

    target = tmp_path / "target"
    _run([*pip, "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
         cwd=tmp_path)
    script = target / "bin" / "shardy-ref"
    assert script.is_file()

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy2(EXAMPLE, elsewhere / EXAMPLE.name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "SHARDY_REF_")) and k != "COLUMNS"}
    env.update(PYTHONPATH=str(target), SHARDY_REF_WHEEL_TARGET=str(target),
               PYTHONDONTWRITEBYTECODE="1")

    def run(*args) -> str:
        return _run(list(args), cwd=elsewhere, env=env).stdout

    where = Path(run(sys.executable, "-c", "import shardy_ref; print(shardy_ref.__file__)")
                 .strip())
    assert where.resolve() == (target / "shardy_ref" / "__init__.py").resolve()
    assert not where.resolve().is_relative_to(ROOT.resolve())

    out = run(str(script), "--version")  # the console script itself, by its shebang
    assert f"(shardy_ref {version})" in out, out
    out = run(sys.executable, "-c", AUDIT, str(script), "check", EXAMPLE.name)
    assert "OK: the partitioned program computes the same results" in out, out
    out = run(sys.executable, "-c", AUDIT, str(script), "show", EXAMPLE.name, "--width", "100")
    assert 'mesh @mesh = #sdy.mesh<["data"=2, "model"=4]>' in out, out
