#!/usr/bin/env python3
"""Edits of XLA's partitioned programs, judged by ``check --partitioner xla`` and run by
XLA itself (issue 31's mutation test, with XLA as the independent witness).

For every ``examples/jax`` program and the JAX-sweep functions of
``tests.backends.xla_programs.COLLECTIVE_PERMUTES`` (named ``sweep:NAME``), partitioned by
XLA's Shardy partitioner, each mutant of :mod:`shardy_ref.testing.program_mutations` is

* judged by :func:`~shardy_ref.backends.xla_check.check_partitioned` (MISMATCH, error or
  OK);
* run by our simulator and by XLA on the same per-device inputs
  (:func:`~shardy_ref.backends.xla.run_per_device_on_xla`), each device's results
  compared between the two and with the unedited program's.

A mutant the judge calls OK must leave every device's results unchanged in XLA's run as
well; our simulator and XLA must agree on every mutant XLA can run (floats within 1e-4 of
the result's largest magnitude: XLA's CPU kernels round differently). XLA is given the
mutant with mesh-axes replica groups written out as dense groups: jaxlib 0.10.2 compiles
``all_to_all`` with ``#stablehlo.replica_group_mesh_axes`` into other groups than the same
collective in HLO (see docs/xla_partitioner_bugs.md). XLA aborts its process when devices
deadlock in a collective (after 40 s), so each program's mutants run in a child process and
a mutant that kills it is rerun alone and counted as "XLA aborts".

    python tools/xla_mutants.py [--only NAME ...]      (needs the jax extra; ~8 min)
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _program(name: str):
    from shardy_ref.backends import xla_devices
    from shardy_ref.backends.xla_partitioner import partition_with_xla
    from tests.backends.xla_programs import example_program, sweep_program

    xla_devices(64)
    text, n, arrays = sweep_program(name.removeprefix("sweep:")) \
        if name.startswith("sweep:") else example_program(name)
    return text, n, arrays, partition_with_xla(text, n)


def _same(a: list, b: list) -> bool:
    import numpy as np

    return all(np.array_equal(x, y, equal_nan=np.asarray(x).dtype.kind in "fc")
               for u, v in zip(a, b, strict=True) for x, y in zip(u, v, strict=True))


def _unchanged(after: list, before: list) -> bool:
    """XLA's run of a mutant gives what it gave for the unedited program (exactly, or
    within 1e-4 for floats: a mutant may sum the same values in another order)."""
    return _same(after, before) or _close(after, before)


def _close(a: list, b: list) -> bool:
    """Per device and result, within 1e-4 of the result's largest magnitude over devices."""
    import numpy as np

    from shardy_ref.execute.compare import magnitude, mismatches

    for r in range(len(a[0])):
        scale = max(magnitude(np.asarray(per[r])) for per in b)
        for u, v in zip(a, b, strict=True):
            x, y = np.asarray(u[r]), np.asarray(v[r])
            if x.shape != y.shape or mismatches(x, y, 1e-4, 1e-4, scale).any():
                return False
    return True


def _dense_groups(text: str) -> str:
    """``text`` with every mesh-axes replica group list written out as dense groups."""
    from shardy_ref.execute.spmd import replica_groups
    from shardy_ref.ir.module import Module
    from shardy_ref.ir.replica_groups import groups_attr
    from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes
    from shardy_ref.parser import parse_module, print_module

    module = parse_module(text)
    symbols = Module(module)
    for op in module.walk():
        if isinstance(op.attributes.get("replica_groups"), ReplicaGroupMeshAxes):
            op.attributes["replica_groups"] = groups_attr(replica_groups(op, symbols=symbols))
    return print_module(module)


def worker(name: str, indices: list[int]) -> None:
    """One JSON line per mutant: the judge's verdict, whether XLA's run of it equals the
    unedited one's, and whether our simulator's equals XLA's."""
    from shardy_ref.backends.xla import run_per_device_on_xla
    from shardy_ref.backends.xla_check import check_partitioned, device_arguments
    from shardy_ref.execute import run_spmd
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.testing.program_mutations import mutants

    text, n, arrays, program = _program(name)
    args = device_arguments(program, arrays)
    xla_before = run_per_device_on_xla(_dense_groups(program.text), args)
    found = mutants(program.text)
    for i in indices or range(len(found)):
        mutant = found[i]
        try:
            report = check_partitioned(text, *arrays, num_devices=n,
                                       partitioned=dataclasses.replace(program,
                                                                       text=mutant.text))
            verdict = "OK" if report.ok else "MISMATCH"
        except ShardyRefError as e:
            verdict = f"error: {e.message[:80]}"
        print(json.dumps({"index": i, "kind": mutant.kind, "where": mutant.where,
                          "verdict": verdict}), flush=True)
        try:
            ours = run_spmd(mutant.text, args)
        except ShardyRefError as e:
            ours = f"error: {e.message[:80]}"
        xla = run_per_device_on_xla(_dense_groups(mutant.text), args)
        print(json.dumps({"index": i, "kind": mutant.kind, "where": mutant.where,
                          "verdict": verdict, "xla_unchanged": _unchanged(xla, xla_before),
                          "ours_vs_xla": ours if isinstance(ours, str) else
                          ("equal" if _same(ours, xla) else
                           "close" if _close(ours, xla) else "DIFFERENT")}), flush=True)


def run_program(name: str, count: int) -> list[dict]:
    """Every mutant of ``name``, rerunning alone the one a child process died on."""
    done: dict[int, dict] = {}
    pending = list(range(count))
    while pending:
        child = subprocess.run([sys.executable, __file__, "--worker", name,
                                *map(str, pending)], capture_output=True, text=True,
                               timeout=600)
        rows = [json.loads(line) for line in child.stdout.splitlines() if line.startswith("{")]
        for row in rows:
            done[row["index"]] = row
        finished = {r["index"] for r in rows if "ours_vs_xla" in r}
        if child.returncode == 0:
            break
        started = [r for r in rows if r["index"] not in finished]
        dead = started[-1] if started else {"index": pending[0], "kind": "?", "where": "?",
                                            "verdict": "?"}
        done[dead["index"]] = {**dead, "xla_unchanged": None, "ours_vs_xla": "XLA aborts"}
        pending = [i for i in pending if i not in finished and i != dead["index"]]
    return [done[i] for i in sorted(done)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these examples/jax files")
    opts = ap.parse_args()
    if opts.worker:
        worker(opts.worker[0], [int(i) for i in opts.worker[1:]])
        return 0
    from shardy_ref.testing.program_mutations import mutants
    from tests.backends.xla_programs import COLLECTIVE_PERMUTES

    names = opts.only or [*sorted(p.name for p in (ROOT / "examples" / "jax").glob("*.mlir")),
                          *(f"sweep:{name}" for name in COLLECTIVE_PERMUTES)]
    table: collections.Counter = collections.Counter()
    programs = collections.defaultdict(set)
    bad = []
    for name in names:
        *_, program = _program(name)
        rows = run_program(name, len(mutants(program.text)))
        for row in rows:
            caught = row["verdict"] != "OK"
            table[(row["kind"], "caught" if caught else
                   "OK, XLA's run unchanged" if row["xla_unchanged"] else "SURVIVED")] += 1
            table[(row["kind"], f"ours vs XLA: {row['ours_vs_xla'].split(':')[0]}")] += 1
            programs[row["kind"]].add(name)
            if (not caught and not row["xla_unchanged"]) or row["ours_vs_xla"] == "DIFFERENT":
                bad.append((name, row))
    for (kind, what), count in sorted(table.items()):
        print(f"{kind:20s} {what:28s} {count}")
    for kind, names_ in sorted(programs.items()):
        print(f"{kind:20s} programs {len(names_)}")
    for name, row in bad:
        print(f"BAD {name}: {row}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
