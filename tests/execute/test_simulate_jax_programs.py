"""The multi-device simulator on JAX-lowered programs (issue 14): every ``examples/jax/*.mlir``
(``lower_examples.py`` and ``lower_programs.py`` write them; the files are committed, so
nothing here needs jax) is propagated, partitioned into the per-device program, run on
every device of its mesh (8, 16 or 64 devices) on seeded random inputs, and its global
results compared with the single-device run of the same module (integers exactly, floats
within rtol 1e-5 and atol 1e-5).

Programs built from ``shard_map`` (``sdy.manual_computation``) are written per device, so
their single-device run is itself a simulation of the body; for those the expected values
are computed here with NumPy from what the JAX program does, and both ``run`` and
``simulate`` are compared with them."""
from __future__ import annotations

import numpy as np
import pytest

from shardy_ref.execute import run, simulate
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "jax").glob("*.mlir"))
INT_RANGE = (-8, 9)  # integer arguments that are not indices


def _main(module):
    return next(op for op in module.regions[0].blocks[0]
                if op.name == "func.func" and op.attributes["sym_name"].value == "main")


def _index_bound(module) -> int | None:
    """The smallest indexed dimension of any gather or scatter operand (valid indices are
    below it), or None without gathers and scatters."""
    bounds = []
    for op in module.walk():
        if op.name == "stablehlo.gather":
            dims = op.attributes["dimension_numbers"].start_index_map
        elif op.name == "stablehlo.scatter":
            dims = op.attributes["scatter_dimension_numbers"].scatter_dims_to_operand_dims
        else:
            continue
        bounds += [op.operands[0].type.shape[d] for d in dims]
    return min(bounds) if bounds else None


def _inputs(module, seed: int) -> list[np.ndarray]:
    """Seeded random arguments: floats scaled like trained weights (so rounding is not
    amplified), small integers, valid indices in programs with gathers or scatters."""
    rng = np.random.default_rng(seed)
    bound = _index_bound(module)
    arrays = []
    for arg in _main(module).regions[0].blocks[0].args:
        t = arg.type
        dtype = storage_dtype(t.element_type)
        if dtype.kind in "iu":
            low, high = (0, bound) if bound is not None else INT_RANGE
            arrays.append(rng.integers(low, high, t.shape).astype(dtype))
        else:
            scale = 1 / np.sqrt(t.shape[-1]) if t.shape else 1.0
            arrays.append((rng.standard_normal(t.shape) * scale).astype(dtype))
    return arrays


# -- NumPy references for the shard_map programs ---------------------------------------------
def _ppermute_ring(x):
    # in_specs P("data", "model"): 4 column blocks; device j receives block j-1
    return (x + np.roll(x, x.shape[1] // 4, axis=1),)


def _all_to_all(x):
    # local [4, 8] on device (i, k) of the 4x4 mesh; columns split in 4 chunks of 2, chunk k
    # gathered from every y', stacked on rows; out_specs P(("x", "y"), None)
    return (np.concatenate([x[4 * i:4 * i + 4, 8 * y + 2 * k:8 * y + 2 * k + 2]
                            for i in range(4) for k in range(4) for y in range(4)]),)


def _axis_index(x):
    # local [2, 2] blocks of a 4x4x4 mesh, x[i-rows, (j, l)-columns] + 100 i + l, summed
    # over j and l
    blocks = x.reshape(4, 2, 16, 2).sum(axis=2, dtype=x.dtype)
    offsets = 16 * 100 * np.arange(4, dtype=x.dtype) + 4 * (0 + 1 + 2 + 3)
    return ((blocks + offsets[:, None, None]).reshape(8, 2),)


MANUAL_REFERENCE = {
    "shard_map": lambda x, w: (x @ w,),
    "sim_shard_map_psum": lambda x, w: (x @ w,),
    "sim_shard_map_psum_scatter": lambda x, w: (x @ w,),
    "sim_shard_map_all_gather_16": lambda x: (x * np.float32(2) + np.float32(1),),
    "sim_shard_map_ppermute": _ppermute_ring,
    "sim_shard_map_all_to_all_16": _all_to_all,
    "sim_shard_map_axis_index_64": _axis_index,
}


# Programs our passes get wrong today (issue 14 reports them; the library is not changed
# here). Strict: a fixed program fails its test until it leaves this list.
KNOWN_FAILURES: dict[str, str] = {}  # stem -> why (strict xfail); none at present


def _params():
    for path in EXAMPLES:
        marks = [pytest.mark.xfail(reason=KNOWN_FAILURES[path.stem], strict=True)] \
            if path.stem in KNOWN_FAILURES else []
        yield pytest.param(path, id=path.stem, marks=marks)


def _assert_same(got, expected) -> None:
    assert len(got) == len(expected)
    for i, (g, want) in enumerate(zip(got, expected, strict=True)):
        g, want = np.asarray(g), np.asarray(want)
        assert g.shape == want.shape and g.dtype == want.dtype, f"result {i}"
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(g, want, err_msg=f"result {i}")
        else:
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5, err_msg=f"result {i}")


@pytest.mark.parametrize("path", list(_params()))
def test_simulated_program_equals_single_device_run(path):
    text = path.read_text()
    module = parse_module(text, str(path))
    verify_module(module)
    arrays = _inputs(module, seed=14)
    if any(op.name == "sdy.manual_computation" for op in module.walk()):
        # the single-device run of a manual computation is itself a simulation: both are
        # checked against NumPy
        assert path.stem in MANUAL_REFERENCE, f"{path.name}: add a NumPy reference"
        expected = MANUAL_REFERENCE[path.stem](*arrays)
        _assert_same(run(text, *arrays), expected)
    else:
        expected = run(text, *arrays)
    _assert_same(simulate(text, *arrays), expected)


def test_index_arguments_stay_in_range():
    """Gather/scatter programs get indices below the indexed dimension (JAX fills or drops
    out-of-range ones, which would hide a wrong partitioning)."""
    module = parse_module((ROOT / "examples" / "jax" / "sim_embed_gather.mlir").read_text(),
                          "sim_embed_gather.mlir")
    assert _index_bound(module) == 64
    ids = _inputs(module, seed=14)[1]
    assert ids.dtype == np.int32 and ids.min() >= 0 and ids.max() < 64
