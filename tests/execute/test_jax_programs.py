"""Global-view programs lowered by JAX run on one device as JAX computes them: every
``examples/jax/*.mlir`` (StableHLO with sdy shardings and constraints, chlo ops, while
loops, gathers, convolutions) through our interpreter, against ``jax.jit`` of the same
Python function on random inputs (marker ``oracle``: needs the oracle venv's jax)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from corpus import ORACLE_PY

from shardy_ref.execute import run
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "jax").glob("*.mlir"))


def _module(path: Path):
    module = parse_module(path.read_text(), str(path))
    verify_module(module)
    return module


def _inputs(module, rng) -> list[np.ndarray]:
    main = next(f for f in module.regions[0].blocks[0] if f.name == "func.func"
                and f.attributes["sym_name"].value == "main")
    arrays = []
    for arg in main.regions[0].blocks[0].args:
        t = arg.type
        dtype = storage_dtype(t.element_type)
        if dtype.kind in "iu":
            arrays.append(rng.integers(0, min(t.shape) if t.shape else 4, t.shape).astype(dtype))
        else:  # scaled like trained weights, so rounding is not amplified chaotically
            scale = 1 / np.sqrt(t.shape[-1]) if t.shape else 1.0
            arrays.append((rng.standard_normal(t.shape) * scale).astype(dtype))
    return arrays


def test_every_example_parses_verifies_and_finds_its_kernels():
    from shardy_ref.execute.interpreter import TERMINATORS
    from shardy_ref.execute.registry import load_kernels

    kernels = load_kernels()
    for path in EXAMPLES:
        missing = {op.name for op in _module(path).walk()
                   if op.name not in kernels and op.name not in TERMINATORS
                   and op.name.split(".")[0] in ("stablehlo", "chlo")}
        assert not missing, f"{path.name}: no kernel for {missing}"


def test_a_manual_computation_runs_on_one_device():
    """``shard_map.mlir`` multiplies per device and psums over ``model``: on one device the
    body runs on every device's shards and the result is the global product."""
    path = ROOT / "examples" / "jax" / "shard_map.mlir"
    module = _module(path)
    x, w = _inputs(module, np.random.default_rng(0))
    np.testing.assert_allclose(run(module, x, w)[0], x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.oracle
def test_examples_compute_what_jax_computes(tmp_path):
    rng = np.random.default_rng(12)
    inputs, ours = {}, {}
    for path in EXAMPLES:
        name = path.stem
        module = _module(path)
        args = _inputs(module, rng)
        for i, a in enumerate(args):
            inputs[f"{name}/arg{i}"] = a
        for i, r in enumerate(run(module, *args)):
            ours[f"{name}/out{i}"] = r
    np.savez(tmp_path / "in.npz", **inputs)
    job = {"inputs": str(tmp_path / "in.npz"), "outputs": str(tmp_path / "out.npz")}
    subprocess.run([str(ORACLE_PY), str(ROOT / "tools" / "jax_reference.py")],
                   input=json.dumps(job), text=True, check=True, timeout=600)
    theirs = np.load(tmp_path / "out.npz")
    assert sorted(theirs.files) == sorted(ours)
    for key, expected in theirs.items():
        got = ours[key]
        assert got.shape == expected.shape and got.dtype == expected.dtype, key
        if got.dtype.kind == "f":
            # f32 sums in another order (XLA fuses and blocks differently from NumPy/BLAS):
            # within 1e-5 of the result's scale
            scale = max(1.0, float(np.max(np.abs(expected))))
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * scale, err_msg=key)
        else:
            np.testing.assert_array_equal(got, expected, err_msg=key)
