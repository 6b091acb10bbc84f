#!/usr/bin/env python3
"""The JAX sweep (``tests/execute/test_jax_sweep.py``'s 300+ functions with random
shardings on 8 and 16 devices) partitioned by XLA and judged by ``check --partitioner xla``
(issue 31: agreement on correct programs).

For each function and mesh size, XLA's Shardy partitioner partitions the lowered module,
our simulator runs XLA's per-device program, and the verdict is compared with XLA's own
run of the function (``jax.jit`` with the same shardings) against our single-device run:

* ``agree``: the check says OK and XLA's run equals the single-device run;
* ``xla wrong``: the check says MISMATCH and XLA's run is wrong too (a partitioner bug);
* ``DISAGREE``: the check and XLA's run disagree (a fault of ours, or of the conversion);
* ``error``: the check could not run the program (the message's first line is counted).

    python tools/xla_jax_sweep.py [NAME ...]       (needs the jax extra; ~10 min)
"""
from __future__ import annotations

import collections
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run_case(f, devices: int) -> tuple[str, str]:
    import jax
    import numpy as np
    from jax.sharding import NamedSharding

    from shardy_ref.backends.xla_check import check_partitioned
    from shardy_ref.execute import run
    from shardy_ref.frontends.jax import lower_to_text
    from shardy_ref.ir.diagnostics import ShardyRefError
    from tests.execute.test_jax_sweep import AXIS_NAMES, _mesh, draw_inputs, draw_specs, mismatch

    rng = random.Random(f"{f.name}/{devices}")
    shape, specs = draw_specs(f, devices, rng)
    mesh = _mesh(shape)
    arrays = draw_inputs(f, np.random.default_rng(len(f.name) + devices))
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    where = f"mesh {dict(zip(AXIS_NAMES, shape, strict=False))} in_shardings {specs}"
    text = lower_to_text(f.fn, *structs, mesh=mesh, in_shardings=tuple(specs))
    with jax.set_mesh(mesh):
        jitted = jax.jit(f.fn, in_shardings=tuple(NamedSharding(mesh, s) for s in specs))
        xla = jax.tree.leaves(jitted(*arrays))
    try:
        report = check_partitioned(text, *arrays, num_devices=int(np.prod(shape)),
                                   rtol=1e-4, atol=1e-4)
    except ShardyRefError as e:
        return "error", e.message.splitlines()[0][:120]
    except Exception as e:  # a bug of ours: counted, with its type
        return "error", f"internal: {type(e).__name__}: {str(e)[:100]}"
    want = run(text, *arrays)
    xla_right = len(xla) == len(want) and not any(
        mismatch(np.asarray(x), np.asarray(w)) for x, w in zip(xla, want, strict=True))
    if report.ok and xla_right:
        return "agree", ""
    if not report.ok and not xla_right:
        return "xla wrong", where
    lines = "; ".join(o.line for o in report.outputs if not o.same)
    return "DISAGREE", f"{where}: check {'OK' if report.ok else 'MISMATCH'} ({lines}), " \
        f"XLA's run {'right' if xla_right else 'wrong'}"


def main(argv: list[str]) -> int:
    from shardy_ref.backends import xla_devices
    from tests.execute.jax_functions import FUNCTIONS

    xla_devices(64)
    chosen = [f for f in FUNCTIONS if not argv or f.name in argv]
    tally: collections.Counter = collections.Counter()
    notes = []
    for f in chosen:
        for devices in (8, 16):
            verdict, detail = run_case(f, devices)
            tally[verdict] += 1
            if verdict == "error":
                tally[f"error: {detail}"] += 1
                notes.append(f"error {f.name} on {devices}: {detail}")
            if verdict in ("DISAGREE", "xla wrong"):
                notes.append(f"{verdict} {f.name} on {devices}: {detail}")
    for key, count in sorted(tally.items()):
        print(f"{count:5d}  {key}")
    for note in notes:
        print(note)
    return 1 if tally["DISAGREE"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
