"""Lower a dozen JAX programs with user shardings to MLIR text (``examples/jax/*.mlir``).

The files are the input JAX hands to Shardy: StableHLO with ``sdy.mesh``, argument
shardings, ``sdy.sharding_constraint`` (from ``with_sharding_constraint``) and
``sdy.manual_computation`` (from ``shard_map``). ``tests/propagate/test_jax_examples.py``
runs ``sdy-propagation-pipeline`` on each, ours against real Shardy's.

Needs jax (the oracle's venv has it):
    ~/.cache/shardy-ref-oracle/bin/python examples/jax/lower_examples.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map
except ImportError:  # older jax
    from jax.experimental.shard_map import shard_map

MESH = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
F32 = jnp.float32


def spec(*parts) -> NamedSharding:
    return NamedSharding(MESH, P(*parts))


def arg(*shape) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, F32)


def constrain(x, *parts):
    return jax.lax.with_sharding_constraint(x, spec(*parts))


def mlp(x, w1, w2):
    """Megatron-style MLP: column- then row-parallel."""
    return jax.nn.relu(x @ w1) @ w2


def attention(x, wq, wk, wv):
    """One attention head block with a softmax."""
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = jnp.einsum("bsd,btd->bst", q, k) / 8.0
    return jnp.einsum("bst,btd->bsd", jax.nn.softmax(scores, axis=-1), v)


def layernorm(x, scale):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale


def constrained_chain(x, w):
    """``with_sharding_constraint`` in the middle of a chain."""
    h = constrain(jnp.tanh(x @ w), None, "model")
    return jnp.exp(h) + 1.0


def reshapes(x):
    """Split and merge dimensions, then transpose."""
    y = x.reshape(8, 4, 32)
    z = jnp.transpose(y, (2, 0, 1)).reshape(32, 32)
    return z * 2.0


def scan_cumsum(xs, w):
    """``lax.scan`` lowers to a ``stablehlo.while`` (data-flow edges)."""
    def body(carry, x):
        carry = jnp.tanh(carry @ w + x)
        return carry, carry
    _, ys = jax.lax.scan(body, jnp.zeros((16, 32), F32), xs)
    return ys


def shard_map_matmul(x, w):
    """``shard_map`` lowers to ``sdy.manual_computation`` with a psum inside."""
    def local(xb, wb):
        return jax.lax.psum(xb @ wb, "model")
    return shard_map(local, mesh=MESH, in_specs=(P("data", "model"), P("model", None)),
                     out_specs=P("data", None))(x, w)


def broadcast_bias(x, b):
    """A bias broadcast over the batch, then a reduction."""
    return jnp.sum(x + b[None, :], axis=1)


def concat_split(x, y):
    z = jnp.concatenate([x, y], axis=1)
    return jnp.tanh(z[:, :48])


def embedding(table, ids):
    """A gather (embedding lookup) followed by a projection."""
    return jnp.take(table, ids, axis=0) @ table.T


def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def two_layer_residual(x, w1, w2):
    h = x + jax.nn.gelu(x @ w1) @ w2
    return constrain(h, "data", None)


def square_erf(x, w):
    """``jnp.square`` and ``erf`` lower to ``chlo.square`` and ``chlo.erf`` (no sharding
    rule in Shardy: propagation goes around them)."""
    h = jnp.square(x @ w)
    return jax.scipy.special.erf(h - 1.0) * 2.0


def top_k(x):
    """``lax.top_k`` lowers to ``chlo.top_k``."""
    values, indices = jax.lax.top_k(jnp.tanh(x), 4)
    return values * 2.0, indices


EXAMPLES = {
    "mlp": (mlp, [(arg(16, 32), spec("data", None)), (arg(32, 64), spec(None, "model")),
                  (arg(64, 32), spec("model", None))]),
    "attention": (attention, [(arg(4, 16, 32), spec("data", None, None)),
                              (arg(32, 32), spec(None, "model")),
                              (arg(32, 32), spec(None, "model")),
                              (arg(32, 32), spec(None, "model"))]),
    "layernorm": (layernorm, [(arg(16, 64), spec("data", "model")), (arg(64,), spec())]),
    "constrained_chain": (constrained_chain, [(arg(16, 32), spec("data", None)),
                                              (arg(32, 64), spec())]),
    "reshapes": (reshapes, [(arg(32, 32), spec("data", "model"))]),
    "scan": (scan_cumsum, [(arg(8, 16, 32), spec(None, "data", None)),
                           (arg(32, 32), spec(None, "model"))]),
    "shard_map": (shard_map_matmul, [(arg(16, 32), spec("data", "model")),
                                     (arg(32, 64), spec("model", None))]),
    "broadcast_bias": (broadcast_bias, [(arg(16, 64), spec("data", None)),
                                        (arg(64,), spec("model"))]),
    "concat_split": (concat_split, [(arg(16, 32), spec("data", None)),
                                    (arg(16, 32), spec(None, "model"))]),
    "embedding": (embedding, [(arg(64, 32), spec("model", None)),
                              (jax.ShapeDtypeStruct((16,), jnp.int32), spec("data"))]),
    "conv": (conv, [(arg(8, 16, 16, 4), spec("data", None, None, None)),
                    (arg(3, 3, 4, 8), spec(None, None, None, "model"))]),
    "residual": (two_layer_residual, [(arg(16, 32), spec()), (arg(32, 64), spec(None, "model")),
                                      (arg(64, 32), spec("model", None))]),
    "chlo_square_erf": (square_erf, [(arg(16, 32), spec("data", None)),
                                     (arg(32, 64), spec(None, "model"))]),
    "chlo_top_k": (top_k, [(arg(16, 32), spec("data", None))]),
}


def lower(name: str) -> str:
    fn, args = EXAMPLES[name]
    shapes = [a for a, _ in args]
    shardings = tuple(s for _, s in args)
    return jax.jit(fn, in_shardings=shardings).lower(*shapes).as_text()


def main(out_dir: Path, names: list[str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names or EXAMPLES:
        (out_dir / f"{name}.mlir").write_text(lower(name))
        print(f"wrote {out_dir / name}.mlir")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent, sys.argv[2:])
