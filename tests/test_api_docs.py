"""The API reference builds: ``tools/build_api_docs.py`` (pdoc) writes a page for every
public package, with no module failing to import and the public names on their pages.

Built without each function's source (``--no-show-source``): the same pages otherwise,
in 8 CPU-seconds instead of 13."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pdoc", reason="pdoc (the test extra) is not installed")

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("shardy_ref", "shardy_ref.ir", "shardy_ref.parser", "shardy_ref.propagate",
            "shardy_ref.partition", "shardy_ref.execute", "shardy_ref.testing")
# page -> public names documented on it (SpmdProgram and simulate: lazy exports of execute)
NAMES = {
    "shardy_ref.ir": ("TensorSharding", "Mesh", "AxisRef"),
    "shardy_ref.parser": ("parse_module", "print_module"),
    "shardy_ref.execute": ("run", "run_spmd", "SpmdProgram", "simulate"),
    "shardy_ref.testing.strategies": ("meshes", "tensor_shardings"),
}


def _page(out: Path, module: str) -> Path:
    return out.joinpath(*module.split(".")).with_suffix(".html")


@pytest.mark.slow  # pdoc renders ~140 pages: ~11 s
def test_api_reference_builds(tmp_path):
    out = tmp_path / "api"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_api_docs.py"), "-o", str(out),
         "--no-show-source"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines()
              if line.startswith(("error:", "warning:", "note:"))]
    assert not [line for line in warned if "import" in line.lower() or "left out" in line], (
        done.stderr)
    assert (out / "index.html").is_file()
    for module in PACKAGES:
        assert _page(out, module).is_file(), module
    for module, names in NAMES.items():
        html = _page(out, module).read_text()
        for name in names:
            assert f'id="{name}"' in html, (module, name)
