#!/usr/bin/env python3
"""JAX's own answers for the programs of ``examples/jax/lower_examples.py`` and
``examples/jax/lower_programs.py``.

Run with the oracle's interpreter (it has jax): reads a JSON object ``{"inputs": NPZ,
"outputs": NPZ}``; the input archive holds ``<example>/arg<i>`` arrays, the output archive
gets ``<example>/out<i>`` from ``jax.jit(fn)(*args)`` on the CPU (no shardings: the
single-device answer a global-view program must reproduce).
"""
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "jax"))


def main() -> int:
    # the meshes of lower_programs need 64 host devices; set before jax is imported
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=64")
    import jax
    import lower_examples
    import lower_programs
    import numpy as np

    job = json.load(sys.stdin)
    inputs = np.load(job["inputs"])
    by_example: dict = {}
    for key in inputs.files:
        name, arg = key.split("/")
        by_example.setdefault(name, {})[int(arg[3:])] = inputs[key]
    out = {}
    for name, args in by_example.items():
        fn = lower_examples.EXAMPLES[name][0] if name in lower_examples.EXAMPLES \
            else lower_programs.PROGRAMS[name][0]
        results = jax.jit(fn)(*[args[i] for i in range(len(args))])
        if not isinstance(results, tuple):
            results = (results,)
        for i, r in enumerate(results):
            out[f"{name}/out{i}"] = np.asarray(r)
    np.savez(job["outputs"], **out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
