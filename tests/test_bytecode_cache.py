"""The tools keep bytecode under our cache directory when writing it is off (issue 30)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHOW = "import shardy_ref.tools, sys; print(sys.pycache_prefix, sys.dont_write_bytecode)"


def _run(tmp_path: Path, code: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPYCACHEPREFIX", "SHARDY_REF_NO_BYTECODE_CACHE")}
    base.update({"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path), **env})
    base = {k: v for k, v in base.items() if v}
    return subprocess.run([sys.executable, "-c", code], env=base, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_tools_cache_bytecode_outside_the_source_tree(tmp_path):
    prefix = tmp_path / "shardy-ref" / "pycache"
    assert _run(tmp_path, SHOW) == f"{prefix} False"
    _run(tmp_path, "import shardy_ref.tools.opt")
    cached = list(prefix.rglob("opt.*.pyc"))
    assert any("shardy_ref" in str(p) for p in cached)


@pytest.mark.parametrize("env", [{"SHARDY_REF_NO_BYTECODE_CACHE": "1"},
                                 {"PYTHONPYCACHEPREFIX": "/nonexistent/prefix"}])
def test_opt_out_and_explicit_prefix_are_left_alone(tmp_path, env):
    want = "/nonexistent/prefix True" if "PYTHONPYCACHEPREFIX" in env else "None True"
    assert _run(tmp_path, SHOW, **env) == want
    assert not (tmp_path / "shardy-ref" / "pycache").exists()


def test_writing_bytecode_already_on_is_left_alone(tmp_path):
    assert _run(tmp_path, SHOW, PYTHONDONTWRITEBYTECODE="") == "None False"
