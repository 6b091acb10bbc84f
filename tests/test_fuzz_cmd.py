"""``shardy-ref fuzz`` (issue 16): every invariant on a few random programs, a forced
failure shrunk and saved with a command that checks the saved file again, ``--jobs``,
``--stats``."""
from __future__ import annotations

import re

import pytest

from shardy_ref.testing.invariants import INVARIANTS, InvariantViolation
from shardy_ref.tools import fuzz_stats
from shardy_ref.tools.cli import main


def test_every_invariant_runs_five_examples(capsys):
    assert main(["fuzz", "--examples", "5", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for name in INVARIANTS:
        assert re.search(rf"^{name}: 5 programs.*, ok \(", out, re.M), out


def _no_add(text: str) -> None:
    if "stablehlo.add" in text:
        raise InvariantViolation("no_add", "the program adds")


def test_a_failure_is_shrunk_and_saved_with_a_repro_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(INVARIANTS, "no_add", _no_add)
    assert main(["fuzz", "--invariant", "no_add", "--examples", "50", "--seed", "7",
                 "--save", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    saved = tmp_path / "no_add-7.mlir"
    assert f"no_add: FAILED: no_add: the program adds\n  counterexample: {saved}" in out
    lines = saved.read_text().splitlines()
    assert lines[0] == "// shardy-ref fuzz: invariant no_add fails (seed 7, shrunk)"
    assert lines[1] == "// no_add: the program adds"
    assert lines[2] == f"// repro: shardy-ref fuzz --invariant no_add {saved}"
    assert "stablehlo.add" in saved.read_text()
    # the repro line checks the saved file again
    assert main(lines[2].removeprefix("// repro: shardy-ref ").split()) == 1
    assert f"{saved}: no_add: FAILED: no_add: the program adds" in capsys.readouterr().out


def test_an_internal_error_is_a_failure_too(tmp_path, capsys, monkeypatch):
    def crash(text):
        raise KeyError("boom")

    monkeypatch.setitem(INVARIANTS, "crash", crash)
    assert main(["fuzz", "--invariant", "crash", "--examples", "3",
                 "--save", str(tmp_path)]) == 1
    assert "// KeyError: 'boom'" in (tmp_path / "crash-0.mlir").read_text()


def test_checking_a_file_that_holds(tmp_path, capsys):
    from shardy_ref.testing.programs import random_program

    path = tmp_path / "p.mlir"
    path.write_text(random_program(1))
    assert main(["fuzz", "--invariant", "roundtrip", "--invariant", "propagation_fixpoint",
                 str(path)]) == 0
    assert capsys.readouterr().out == (f"{path}: roundtrip: ok\n"
                                       f"{path}: propagation_fixpoint: ok\n")


def test_jobs_run_invariants_in_processes(capsys):
    assert main(["fuzz", "--invariant", "roundtrip", "--invariant", "verifier_sound",
                 "--examples", "5", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "roundtrip: 5 programs, ok" in out and "verifier_sound: 5 programs, ok" in out


def test_stats_prints_a_throughput(capsys, monkeypatch):
    monkeypatch.setattr(fuzz_stats, "STATS_PROGRAMS", 3)
    assert main(["fuzz", "--stats"]) == 0
    out = capsys.readouterr().out
    rate = re.search(r"^throughput: ([0-9.]+) programs/s through sdy-propagation-pipeline",
                     out, re.M)
    assert rate and float(rate.group(1)) > 0, out
    for name in ("propagation_fixpoint", "per_device_equals_single_device"):
        line = re.search(rf"^invariant {name}: ([0-9.]+) programs/s \(3 random programs",
                         out, re.M)
        assert line and float(line.group(1)) > 0, out
    assert "verify (after each pass that changed the IR)" in out
    assert "sdy-user-priority-propagate" in out
    verified = re.search(r"^passes that changed the IR, verified after: (\d+) of (\d+)$", out, re.M)
    assert verified and 0 < int(verified.group(1)) < int(verified.group(2)), out


@pytest.mark.parametrize("argv", [["--examples", "0"], ["--jobs", "0"]])
def test_bad_counts_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(["fuzz", *argv])
    assert e.value.code == 2
    assert f"argument {argv[0]}: expected an integer >= 1, got '0'" in capsys.readouterr().err


@pytest.mark.slow  # draws programs of every op kind: ~15 s
def test_a_run_reports_how_often_each_op_kind_was_drawn(capsys):
    from shardy_ref.testing.program_catalog import KIND_NAMES

    assert main(["fuzz", "--invariant", "roundtrip", "--examples", "20", "--stats"]) == 0
    out = capsys.readouterr().out
    line = re.search(r"^op kinds drawn in 20 programs \(roundtrip\): (\d+) of (\d+); "
                     r"fewest (\d+) \((\w+)\)$", out, re.M)
    assert line, out
    drawn, total = int(line.group(1)), int(line.group(2))
    assert total == len(KIND_NAMES) and 0 < drawn <= total
    table = re.findall(r"^ +(\d+)  (\w+)$", out, re.M)
    assert sorted(name for _, name in table) == sorted(KIND_NAMES)
    assert sum(int(n) for n, _ in table) >= 20  # about 2.5 kinds per program


def test_stats_alone_counts_the_kinds_of_drawn_programs(capsys, monkeypatch):
    monkeypatch.setattr(fuzz_stats, "STATS_PROGRAMS", 2)
    assert main(["fuzz", "--stats"]) == 0
    out = capsys.readouterr().out
    line = re.search(r"^op kinds drawn in 100 programs \(seeds 0-99, not run\): (\d+) of "
                     r"(\d+); fewest (\d+)", out, re.M)
    assert line, out
    assert "programs, ok" not in out  # no invariant ran


def test_features_none_draws_the_plain_chain(capsys):
    assert main(["fuzz", "--invariant", "roundtrip", "--examples", "3", "--features",
                 "none"]) == 0
    assert "op kinds drawn" not in capsys.readouterr().out


def test_an_unknown_feature_is_a_usage_error(capsys):
    assert main(["fuzz", "--features", "ops,loops"]) == 2
    assert "shardy-ref fuzz: --features: unknown feature 'loops'" in capsys.readouterr().err
