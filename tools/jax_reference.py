#!/usr/bin/env python3
"""JAX's own answers for the programs of ``examples/jax/lower_examples.py``.

Run with the oracle's interpreter (it has jax): reads a JSON object ``{"inputs": NPZ,
"outputs": NPZ}``; the input archive holds ``<example>/arg<i>`` arrays, the output archive
gets ``<example>/out<i>`` from ``jax.jit(fn)(*args)`` on the CPU (no shardings: the
single-device answer a global-view program must reproduce).
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "jax"))


def main() -> int:
    import jax
    import lower_examples
    import numpy as np

    job = json.load(sys.stdin)
    inputs = np.load(job["inputs"])
    by_example: dict = {}
    for key in inputs.files:
        name, arg = key.split("/")
        by_example.setdefault(name, {})[int(arg[3:])] = inputs[key]
    out = {}
    for name, args in by_example.items():
        fn, _ = lower_examples.EXAMPLES[name]
        results = jax.jit(fn)(*[args[i] for i in range(len(args))])
        if not isinstance(results, tuple):
            results = (results,)
        for i, r in enumerate(results):
            out[f"{name}/out{i}"] = np.asarray(r)
    np.savez(job["outputs"], **out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
