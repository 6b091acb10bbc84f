"""The JAX programs with CHLO ops in ``examples/jax/`` (``chlo_square_erf``: ``jnp.square``
and ``erf``; ``chlo_top_k``: ``lax.top_k``), run by our interpreter on random inputs:
against NumPy formulas written here, and (``oracle``) against JAX's own result on CPU
computed in the oracle's venv."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from shardy_ref.execute import run
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples" / "jax"


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((16, 32)) / 4).astype(np.float32)
    w = (rng.standard_normal((32, 64)) / 4).astype(np.float32)
    return x, w


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7): independent of the kernel."""
    t = 1 / (1 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                                                                          t * 1.061405429))))
    return np.sign(x) * (1 - poly * np.exp(-x * x))


def test_square_erf_example_matches_numpy():
    x, w = _inputs()
    (out,) = run((EXAMPLES / "chlo_square_erf.mlir").read_text(), x, w)
    h = np.square(x.astype(np.float64) @ w.astype(np.float64))
    assert out.dtype == np.float32 and out.shape == (16, 64)
    assert np.allclose(out, 2 * _erf(h - 1), atol=1e-5)


def test_top_k_example_matches_numpy():
    x, _ = _inputs(1)
    values, indices = run((EXAMPLES / "chlo_top_k.mlir").read_text(), x)
    t = np.tanh(x.astype(np.float64))
    order = np.argsort(-t, axis=1, kind="stable")[:, :4]
    assert np.array_equal(indices, order)
    assert np.allclose(values, 2 * np.take_along_axis(t, order, axis=1), atol=1e-6)


_JAX = """
import json, sys, numpy as np
sys.path.insert(0, sys.argv[1])
import jax
import lower_examples as ex
data = np.load(sys.argv[2])
out = {}
fn = ex.square_erf
out["square_erf"] = np.asarray(jax.jit(fn)(data["x"], data["w"])).tolist()
v, i = jax.jit(ex.top_k)(data["x"])
out["top_k"] = [np.asarray(v).tolist(), np.asarray(i).tolist()]
print(json.dumps(out))
"""


@pytest.mark.oracle
def test_examples_match_jax():
    from corpus import ORACLE_PY

    x, w = _inputs(2)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.npz"
        np.savez(path, x=x, w=w)
        proc = subprocess.run([str(ORACLE_PY), "-c", _JAX, str(EXAMPLES), str(path)],
                              capture_output=True, text=True, timeout=600, check=True)
    want = json.loads(proc.stdout.strip().splitlines()[-1])
    (out,) = run((EXAMPLES / "chlo_square_erf.mlir").read_text(), x, w)
    # XLA's erf and f32 dot accumulate differently from ours: a few f32 ulps
    assert np.allclose(out, np.array(want["square_erf"], np.float32), rtol=1e-5, atol=1e-5)
    values, indices = run((EXAMPLES / "chlo_top_k.mlir").read_text(), x)
    assert np.array_equal(indices, np.array(want["top_k"][1]))
    assert np.allclose(values, np.array(want["top_k"][0], np.float32), rtol=1e-6)
