"""Upstream's lit tests must not regress: every file keeps at least its recorded floor."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, SHARED

FLOOR = ROOT / "tests" / "conformance_floor.json"


@pytest.mark.conformance
def test_conformance_floor():
    proc = subprocess.run(
        [sys.executable, str(SHARED / "conformance" / "run_conformance.py"),
         "--tool", "shardy-ref-opt", "--floor", str(FLOOR), "--failures", "0"],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
