"""Upstream's test suites must not regress: every file keeps at least its recorded floor.

Each harness runs on one part of its floor's files per pytest item, so ``-n auto`` spreads
the suites over every core (run whole, the lit suite alone kept one core busy for most of
the run); the parts together select every file of the floor.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED

HARNESSES = SHARED / "conformance"
FLOOR = ROOT / "tests" / "conformance_floor.json"
STABLEHLO_FLOOR = ROOT / "tests" / "stablehlo_floor.json"
EXECUTABLE_FLOOR = ROOT / "tests" / "executable_floor.json"
# parts per suite, about a minute of one core each
PARTS = {FLOOR: 8, STABLEHLO_FLOOR: 4, EXECUTABLE_FLOOR: 2}


def floor_part(floor: Path, part: int) -> list[str]:
    """Every ``PARTS[floor]``-th file of the floor, starting at ``part``; sorted by name
    first, so neighbours (the slow partitioner files sit together) land in different parts."""
    files = sorted(json.loads(floor.read_text()))
    return files[part::PARTS[floor]]


def run_harness(script: str, floor: Path, part: int, *options: str) -> None:
    files = floor_part(floor, part)
    assert files, f"part {part} of {floor.name} selects no file"
    proc = subprocess.run(
        [sys.executable, str(HARNESSES / script), *options, "--floor", str(floor),
         "--failures", "0", *files],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def test_the_parts_select_every_file_of_each_floor_once():
    for floor, parts in PARTS.items():
        chosen = [f for part in range(parts) for f in floor_part(floor, part)]
        assert sorted(chosen) == sorted(json.loads(floor.read_text()))


@pytest.mark.conformance
@pytest.mark.parametrize("part", range(PARTS[FLOOR]))
def test_conformance_floor(part):
    """Upstream Shardy's lit tests, with shardy-ref-opt as ``sdy_opt``."""
    run_harness("run_conformance.py", FLOOR, part, "--tool", "shardy-ref-opt")


@pytest.mark.conformance
@pytest.mark.parametrize("part", range(PARTS[STABLEHLO_FLOOR]))
def test_stablehlo_interpreter_floor(part):
    """StableHLO's own interpreter tests (``corpus-stablehlo``), with our shardy-ref-opt as
    the ``stablehlo-opt`` of the chlo/composite chunks."""
    run_harness("run_stablehlo.py", STABLEHLO_FLOOR, part, "--tool", "shardy-ref-translate",
                "--stablehlo-opt", "shardy-ref-opt")


@pytest.mark.conformance
@pytest.mark.parametrize("part", range(PARTS[EXECUTABLE_FLOOR]))
def test_executable_floor(part):
    """Upstream's executable tests (partition with shardy-ref-opt, run the per-device program
    with shardy-ref-translate's run_parallel, compare with the unpartitioned one). One mutant
    per file keeps CI short; the closing notes of the issues quote full runs (a mutant per
    check op)."""
    run_harness("run_executable.py", EXECUTABLE_FLOOR, part, "--opt-tool", "shardy-ref-opt",
                "--translate-tool", "shardy-ref-translate", "--mutants", "1")
