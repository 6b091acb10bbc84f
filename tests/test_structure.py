"""The layout rules hold (pyproject.toml declares them): import-linter's contracts (packages
import only those below them; pass modules never import each other)."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return path


def test_import_contracts_are_kept():
    run = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_every_pass_module_is_in_the_independence_contract():
    """A new pass module joins the contract: its list is PASS_MODULES' modules."""
    from shardy_ref.pass_manager import PASS_MODULES

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "pass-independence")
    assert sorted(contract["modules"]) == sorted(set(PASS_MODULES.values()))
