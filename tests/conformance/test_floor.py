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


STABLEHLO_FLOOR = ROOT / "tests" / "stablehlo_floor.json"


@pytest.mark.conformance
def test_stablehlo_interpreter_floor():
    """StableHLO's own interpreter tests (``corpus-stablehlo``), with our shardy-ref-opt as
    the ``stablehlo-opt`` of the chlo/composite chunks: no file below its recorded floor."""
    proc = subprocess.run(
        [sys.executable, str(SHARED / "conformance" / "run_stablehlo.py"),
         "--tool", "shardy-ref-translate", "--stablehlo-opt", "shardy-ref-opt",
         "--floor", str(STABLEHLO_FLOOR), "--failures", "0"],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


EXECUTABLE_FLOOR = ROOT / "tests" / "executable_floor.json"


@pytest.mark.conformance
def test_executable_floor():
    """Upstream's executable tests (partition with shardy-ref-opt, run the per-device program
    with shardy-ref-translate's run_parallel, compare with the unpartitioned one): no file
    below its recorded floor. One mutant per file keeps CI short; the closing notes of the
    issues quote full runs (a mutant per check op)."""
    proc = subprocess.run(
        [sys.executable, str(SHARED / "conformance" / "run_executable.py"),
         "--opt-tool", "shardy-ref-opt", "--translate-tool", "shardy-ref-translate",
         "--mutants", "1", "--floor", str(EXECUTABLE_FLOOR), "--failures", "0"],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
