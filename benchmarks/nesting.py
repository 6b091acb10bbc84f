"""Interpreter time against region depth (issue 28's target in brackets): a nest of
``stablehlo.case`` ops, each in a branch of the previous, run by the interpreter at 300
and 3000 levels; parsing is not timed. The ratio time(3000) / time(300) [<= 12] is 10 for
work linear in the depth, 100 for quadratic.

    python benchmarks/nesting.py [--repeat N]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.nesting_programs import case_nest  # noqa: E402


def seconds(depth: int, repeat: int) -> float:
    """The best of ``repeat`` runs of the interpreter (a fresh one each time: its per-block
    plans are part of the work) on the nest of ``depth``."""
    from shardy_ref.execute import run
    from shardy_ref.parser import parse_module

    module = parse_module(case_nest(depth, sdy=False))
    args = [np.array(1, np.int32), np.arange(8, dtype=np.float32)]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        (out,) = run(module, *args)
        best = min(best, time.perf_counter() - start)
    assert np.array_equal(np.asarray(out), 2 * args[1])
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    opts = p.parse_args()
    times = {d: seconds(d, opts.repeat) for d in (300, 1000, 3000)}
    for depth, t in times.items():
        print(f"depth {depth:5}: {t * 1e3:8.1f} ms")
    print(f"time(3000) / time(300): {times[3000] / times[300]:.1f} [target <= 12]")


if __name__ == "__main__":
    from shardy_ref.tools.stack import run_with_deep_stack

    run_with_deep_stack(lambda: main() or 0)
