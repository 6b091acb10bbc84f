"""The op x sharding sweep (:mod:`shardy_ref.testing.catalog.sweep`): every op the
interpreter runs that can appear in a sharded program, with each dimension of each argument
and of the result sharded by each axis of ``["x"=4, "y"=2]``, the sub-axes ``"x":(1)2``
and ``"x":(2)2`` and two axes, dimensions 4 and 8 do not divide, run-time indices inside a
shard, straddling shards, clamped past the end and negative: the partitioned program run on
every device equals the single-device run, or the partitioner refuses it with a located
error of a known class. Nothing is ever wrong.

``python -m tests.partition.test_op_sharding_sweep`` prints the op list and the table.
"""
from __future__ import annotations

import re
import sys
import time
import zlib
from collections import Counter

import pytest

from shardy_ref.execute.registry import load_kernels
from shardy_ref.testing.catalog import KINDS, NOT_SWEPT
from shardy_ref.testing.catalog.sweep import VARIANTS, cases, run_case
from tests.profiles import examples

# refusal classes: a located error the partitioner may give, and why it is not a defect
REFUSALS = {
    r"Shardy propagation doesn't support tuples":
        "upstream's own error: sdy propagation has no tuple types (JAX flattens tuples)",
}


def _known_refusal(detail: str) -> str | None:
    return next((why for pattern, why in REFUSALS.items() if re.search(pattern, detail)),
                None)


def sweep_kind(name: str, variants: int = VARIANTS, stride: int = 1) -> Counter:
    """Run every ``stride``-th case of kind ``name`` (from an offset the name picks);
    the verdicts counted, and the cases that are wrong or refused for an unknown reason
    listed in the failure."""
    counts: Counter = Counter()
    bad = []
    every = list(cases(KINDS[name], variants))
    for built, case in every[zlib.crc32(name.encode()) % min(stride, len(every))::stride]:
        outcome = run_case(built.site, case)
        verdict = outcome.verdict
        if verdict == "refused" and _known_refusal(outcome.detail) is None:
            verdict = "unknown refusal"
        counts[verdict] += 1
        if verdict not in ("equal", "refused"):
            bad.append(f"{case.label()}: {verdict}: {outcome.detail}\n{case.text}")
    assert not bad, f"{len(bad)} of {sum(counts.values())} cases:\n" + "\n".join(bad[:3])
    return counts


@pytest.mark.parametrize("name", sorted(KINDS))
def test_kind_is_right_or_refused(name):
    """In the CI profile, every third case of one seed of the kind's builder (which
    third depends on the kind; the full sweep takes about three minutes of one core more);
    every case of both seeds (the other draws choices such as the dimension it works on
    differently too) in the long profile and in ``python -m``."""
    counts = sweep_kind(name, examples(1, VARIANTS), examples(3, 1))
    assert counts["equal"] + counts["refused"] > 0
    print(f"{name}: {dict(counts)}")


def swept_ops() -> tuple[set[str], set[str]]:
    """The ops the interpreter runs, and those the catalog exercises."""
    return set(load_kernels()), {op for k in KINDS.values() for op in k.ops}


def test_every_interpreter_op_is_swept_or_excused():
    ops, covered = swept_ops()
    assert sorted(ops - covered - set(NOT_SWEPT)) == []
    assert sorted(set(NOT_SWEPT) - ops) == []  # excuses only for ops the interpreter runs
    assert not covered & set(NOT_SWEPT)
    assert len(covered & ops) >= 160


def test_a_wrong_partitioner_is_caught(monkeypatch):
    """The sweep's judgement is not vacuous: a per-device program that computes
    something else on one device is a ``wrong`` verdict."""
    import numpy as np

    from shardy_ref.execute.simulator import SpmdProgram

    real = SpmdProgram.run

    def off_by_one(self, *arrays, **options):
        return tuple(np.asarray(r) + 1 for r in real(self, *arrays, **options))

    monkeypatch.setattr(SpmdProgram, "run", off_by_one)
    built, case = next(iter(cases(KINDS["dynamic_update_slice_rows"])))
    assert run_case(built.site, case).verdict == "wrong"


def main() -> int:
    ops, covered = swept_ops()
    print(f"ops the interpreter runs: {len(ops)}; swept: {len(covered & ops)}; "
          f"not swept: {len(NOT_SWEPT)}")
    for op in sorted(covered & ops):
        kinds = [k.name for k in KINDS.values() if op in k.ops]
        print(f"  {op}: {', '.join(kinds)}")
    print("not swept:")
    for op, why in sorted(NOT_SWEPT.items()):
        print(f"  {op}: {why}")
    total: Counter = Counter()
    refusals: Counter = Counter()
    start = time.time()
    for name in sorted(KINDS):
        for built, case in cases(KINDS[name]):
            outcome = run_case(built.site, case)
            total[outcome.verdict] += 1
            if outcome.verdict == "refused":
                refusals[_known_refusal(outcome.detail) or outcome.detail] += 1
            elif outcome.verdict != "equal":
                print(f"  {outcome.verdict}: {case.label()}: {outcome.detail}")
    print(f"kinds: {len(KINDS)}; ops covered: {len(covered & ops)}; combinations: "
          f"{sum(total.values())}; equal: {total['equal']}; refused: {total['refused']}; "
          f"wrong: {total['wrong']}; errors: {total['error']} ({time.time() - start:.0f} s)")
    for why, n in refusals.most_common():
        print(f"  refused {n}: {why}")
    return 1 if total["wrong"] or total["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
