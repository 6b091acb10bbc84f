"""Programs for judging XLA's partitioner: the JAX sweep's functions
(``tests/execute/jax_functions.py``) lowered with the sweep's sharding draw, as MLIR text
with their inputs. ``COLLECTIVE_PERMUTES`` are functions whose XLA-partitioned program (8
devices) holds a ``collective_permute`` of several pairs: padding, rolls, flips, windows,
convolutions and scans, which the examples rarely reach."""
from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "jax"
COLLECTIVE_PERMUTES = ("pad_reflect", "pad_wrap", "roll_flat", "flip_axis0", "conv1d",
                       "segment_sum", "associative_scan", "layer_norm")


def example_program(name: str) -> tuple[str, int, list]:
    """``examples/jax/NAME``: its MLIR text, device count (``mhlo.num_partitions``, else 8)
    and random inputs (seed 0)."""
    from shardy_ref.execute.inputs import random_arguments
    from shardy_ref.ir.utils import entry_function
    from shardy_ref.parser import parse_module

    text = (EXAMPLES / name).read_text()
    found = re.search(r"mhlo.num_partitions = (\d+)", text)
    func = entry_function(parse_module(text), None)
    arrays = random_arguments([a.type for a in func.regions[0].blocks[0].args], 0)
    return text, int(found.group(1)) if found else 8, arrays


def sweep_program(name: str, devices: int = 8) -> tuple[str, int, list]:
    """Function ``name`` of the JAX sweep lowered for ``devices`` devices with the sweep's
    shardings: its MLIR text, device count and inputs."""
    import jax

    from shardy_ref.frontends.jax import lower_to_text
    from tests.execute.jax_functions import FUNCTIONS
    from tests.execute.test_jax_sweep import _mesh, draw_inputs, draw_specs

    f = next(f for f in FUNCTIONS if f.name == name)
    shape, specs = draw_specs(f, devices, random.Random(f"{f.name}/{devices}"))
    mesh = _mesh(shape)
    arrays = draw_inputs(f, np.random.default_rng(len(f.name) + devices))
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    text = lower_to_text(f.fn, *structs, mesh=mesh, in_shardings=tuple(specs))
    return text, int(np.prod(shape)), arrays
