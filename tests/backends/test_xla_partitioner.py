"""XLA's own partitioned programs judged by our simulator (issue 31): every
``examples/jax`` program partitioned by XLA's Shardy partitioner for its mesh (8, 16 or 64
CPU devices) computes the single-device results on every device; edits of those programs
(:mod:`shardy_ref.testing.program_mutations`) are reported. Needs the ``jax`` extra."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from shardy_ref.backends import xla_devices  # noqa: E402
from shardy_ref.backends.xla_check import check_partitioned, device_arguments  # noqa: E402
from shardy_ref.backends.xla_partitioner import partition_with_xla  # noqa: E402
from shardy_ref.execute import run_spmd  # noqa: E402
from shardy_ref.execute.inputs import random_arguments  # noqa: E402
from shardy_ref.ir.diagnostics import ShardyRefError  # noqa: E402
from shardy_ref.ir.utils import entry_function  # noqa: E402
from shardy_ref.parser import parse_module  # noqa: E402
from shardy_ref.testing.program_mutations import KINDS, mutants  # noqa: E402
from shardy_ref.tools.cli import main  # noqa: E402
from tests.backends.xla_programs import (  # noqa: E402
    COLLECTIVE_PERMUTES,
    example_program,
    sweep_program,
)
from tests.conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.jax
EXAMPLES = sorted((ROOT / "examples" / "jax").glob("*.mlir"))


def _partitioned(programs: dict) -> dict:
    """Each ``name -> (text, devices, inputs)`` with XLA's partition of it appended."""
    xla_devices(64)
    return {name: (text, n, arrays, partition_with_xla(text, n))
            for name, (text, n, arrays) in programs.items()}


@pytest.fixture(scope="module")
def partitioned():
    return _partitioned({path.name: example_program(path.name) for path in EXAMPLES})


def test_every_example_partitioned_by_xla_computes_the_same_results(partitioned):
    failures = []
    for name, (text, n, arrays, program) in partitioned.items():
        report = check_partitioned(text, *arrays, num_devices=n, partitioned=program)
        if not report.ok:
            failures.append((name, [o.line for o in report.outputs if not o.same]))
    assert not failures
    assert len(partitioned) >= 48
    assert {p.num_devices for *_, p in partitioned.values()} == {8, 16, 64}


def test_reordered_mesh_groups_are_written_out_from_the_hlo(partitioned):
    """jaxlib's converter drops a mesh's device order; the HLO keeps it
    (``device_ids=([4,4]T(1,0))``) and the program gets explicit groups."""
    *_, program = partitioned["sim_nondivisible_6_16.mlir"]
    assert "device_ids=([4,4]T(1,0))" in program.hlo
    # groups along axis_0 of 4x4 devices ordered [4,4]T(1,0): device (i, j) is 4 * j + i
    assert "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]" in program.text
    assert "replica_group_mesh_axes" not in program.text


@pytest.fixture(scope="module")
def sweep_partitioned():
    """JAX-sweep functions whose XLA programs hold collective_permutes."""
    return _partitioned({name: sweep_program(name) for name in COLLECTIVE_PERMUTES})


def test_every_edit_of_xlas_programs_is_reported_unless_it_changes_nothing(
        partitioned, sweep_partitioned):
    """A mutant is reported (MISMATCH or an error), or every device computes exactly what
    it computed before the edit (an edit these inputs cannot see: a reduction of equal
    values, a branch not taken). Every kind of edit is tried on ten programs or more
    (``tools/xla_mutants.py`` also runs every mutant on XLA as a witness)."""
    caught = dict.fromkeys(KINDS, 0)
    programs = {kind: set() for kind in KINDS}
    unseen = []
    for name, (text, n, arrays, program) in {**partitioned, **sweep_partitioned}.items():
        args = device_arguments(program, arrays)
        before = None
        for mutant in mutants(program.text):
            programs[mutant.kind].add(name)
            try:
                report = check_partitioned(text, *arrays, num_devices=n,
                                           partitioned=dataclasses.replace(program,
                                                                           text=mutant.text))
            except ShardyRefError:
                caught[mutant.kind] += 1
                continue
            if not report.ok:
                caught[mutant.kind] += 1
                assert all(o.wrong_devices for o in report.outputs if not o.same)
                continue
            before = before or run_spmd(program.text, args)
            after = run_spmd(mutant.text, args)
            if not all(np.array_equal(a, b) for x, y in zip(after, before, strict=True)
                       for a, b in zip(x, y, strict=True)):
                unseen.append((name, mutant.kind, mutant.where))
    assert not unseen
    assert all(caught[kind] >= 10 for kind in KINDS), caught
    assert all(len(names) >= 10 for names in programs.values()), programs


def test_the_first_wrong_value_is_located_by_xlas_op_names(partitioned):
    """Dropping the all-reduce that completes XLA's ``dot.3`` of the MLP leaves the
    partial dot as the last value of that name: it is the first wrong one."""
    text, n, arrays, program = partitioned["mlp.mlir"]
    (mutant,) = [m for m in mutants(program.located, ["drop_all_reduce"], debug_info=True)]
    report = check_partitioned(text, *arrays, num_devices=n, partitioned=dataclasses.replace(
        program, text=mutant.text, located=mutant.text))
    first = report.first_wrong
    assert not report.ok and first is not None
    assert first.xla_name == "dot.3" and first.op.startswith("stablehlo.dot ")
    assert first.wrong_devices == tuple(range(8))


def test_check_command_reports_xlas_collectives_and_keeps_its_program(tmp_path, capsys):
    xla_devices(64)
    path = ROOT / "examples" / "jax" / "mlp.mlir"
    assert main(["check", "--quiet", "--partitioner", "xla", "--save-hlo", str(tmp_path),
                 str(path)]) == 0
    out = capsys.readouterr().out
    assert "partitioned by XLA (shardy) for 8 devices" in out
    assert "XLA's per-device program: collectives all_reduce x1" in out
    assert out.rstrip().endswith("OK: XLA's partitioned program computes the same results")
    assert (tmp_path / "mlp.after_spmd.hlo").read_text().startswith("HloModule")
    assert "stablehlo.all_reduce" in (tmp_path / "mlp.per_device.mlir").read_text()


@pytest.mark.parametrize("argv", [
    ["--save-hlo", "d"], ["--xla-partitioner", "gspmd"],
    ["--partitioner", "xla", "--backend", "xla"],
    ["--partitioner", "xla", "--memory-budget", "1G"],
    ["--partitioner", "xla", "--devices-from-mesh"],
    ["--partitioner", "xla", "--function", "f"],
])
def test_xla_partitioner_flags_misused_are_usage_errors(argv, capsys):
    path = str(ROOT / "examples" / "jax" / "mlp.mlir")
    with pytest.raises(SystemExit) as e:
        main(["check", *argv, path])
    assert e.value.code == 2
    assert "--partitioner xla" in capsys.readouterr().err


def test_translate_runs_xlas_per_device_program_on_its_grid(partitioned):
    """``shardy-ref-translate --interpret --num-partitions=N`` runs the converted program
    of another compiler as ``run_spmd`` does (every process given the same arguments)."""
    import io

    from shardy_ref.execute.values import Tensor, from_dense, to_dense
    from shardy_ref.parser import parse_attribute
    from shardy_ref.tools.translate import parse_args, run

    *_, program = partitioned["mlp.mlir"]
    func = entry_function(parse_module(program.text), None)
    local = random_arguments([a.type for a in func.regions[0].blocks[0].args], 1)
    dense = [to_dense(Tensor(a.type, value, 0))
             for a, value in zip(func.regions[0].blocks[0].args, local, strict=True)]
    out, err = io.StringIO(), io.StringIO()
    rc = run(parse_args(["--interpret", "--num-partitions=8", "--interpreter-print-dense",
                         f"--args=[{', '.join(map(str, dense))}]", "-"]),
             io.StringIO(program.text), out, err)
    assert (rc, err.getvalue()) == (0, "")
    printed = [line for line in out.getvalue().splitlines() if not line.startswith("//")]
    want = run_spmd(program.text, [local] * 8)
    assert len(printed) == 8
    for line, (value,) in zip(printed, want, strict=True):
        got = from_dense(parse_attribute(line)).data
        np.testing.assert_array_equal(got, value)


def test_partitioning_in_a_child_process_gives_the_same_program(partitioned):
    from shardy_ref.backends.xla_isolated import partition_isolated

    text, n, _, program = partitioned["mlp.mlir"]
    assert partition_isolated(text, n) == program


def test_xla_aborting_is_an_error_line_quoting_it():
    from shardy_ref.backends.xla_isolated import _failure

    stderr = ("F1129 18:50:59.098297   22465 hlo_sharding.h:754] Check failed: IsTiledLeaf()\n"
              "*** Check failure stack trace: ***\n    @     0x7f3a32840634  absl::Flush()\n")
    assert _failure(-6, stderr) == (
        "XLA crashed while partitioning the module (the process was killed by SIGABRT): "
        "F1129 18:50:59.098297   22465 hlo_sharding.h:754] Check failed: IsTiledLeaf()")
    assert _failure(3, "") == ("XLA crashed while partitioning the module (the process "
                               "exited with status 3): nothing on stderr")


def test_a_module_xla_refuses_is_a_located_error(tmp_path, capsys):
    """GSPMD cannot partition a module lowered for Shardy (its sdy custom calls)."""
    path = ROOT / "examples" / "jax" / "shard_map.mlir"
    assert main(["check", "--quiet", "--partitioner", "xla", "--xla-partitioner", "gspmd",
                 str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("shardy-ref check: error: XLA could not compile the module")
    assert "Traceback" not in err
