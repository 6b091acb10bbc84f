"""Lower JAX programs with user shardings to MLIR text for the simulator (``sim_*.mlir``).

Like ``lower_examples.py``, each file is the input JAX hands to Shardy: StableHLO with
``sdy.mesh``, argument and result shardings, ``sdy.sharding_constraint`` (from
``with_sharding_constraint``) and ``sdy.manual_computation`` (from ``shard_map``). These
programs cover what issue 14 asks the simulator to check: MLP, attention and transformer
blocks, embeddings (gather and scatter), convolutions, loops and conditionals, ``shard_map``
collectives, sub-axes, non-divisible intermediate dimensions, integer programs and reductions,
on meshes of 8, 16 and 64 devices. ``tests/execute/test_simulate_jax_programs.py`` checks
that each simulated partitioned run equals the single-device run.

Shapes are small (a few thousand elements per tensor) so each program simulates quickly.

Needs jax (the oracle's venv has it):
    ~/.cache/shardy-ref-oracle/bin/python examples/jax/lower_programs.py [OUT_DIR [NAME...]]
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=64"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

try:
    from jax import shard_map
except ImportError:  # older jax
    from jax.experimental.shard_map import shard_map

DEVICES = np.array(jax.devices()[:64])
MESH8 = Mesh(DEVICES[:8].reshape(2, 4), ("data", "model"))
MESH16 = Mesh(DEVICES[:16].reshape(4, 4), ("x", "y"))
MESH16_2x8 = Mesh(DEVICES[:16].reshape(2, 8), ("a", "b"))
MESH64 = Mesh(DEVICES.reshape(8, 8), ("x", "y"))
MESH64_3D = Mesh(DEVICES.reshape(4, 4, 4), ("x", "y", "z"))
F32, I32 = jnp.float32, jnp.int32


def arg(*shape, dtype=F32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def iarg(*shape) -> jax.ShapeDtypeStruct:
    return arg(*shape, dtype=I32)


def constrain(x, mesh: Mesh, *parts):
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(*parts)))


def layernorm(x, scale):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) * (x - mean), axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * scale


def mha(x, wq, wk, wv, wo):
    """Multi-head attention: heads on their own dimension of the projections."""
    q = jnp.einsum("bsd,dhk->bshk", x, wq)
    k = jnp.einsum("bsd,dhk->bshk", x, wk)
    v = jnp.einsum("bsd,dhk->bshk", x, wv)
    scores = jnp.einsum("bshk,bthk->bhst", q, k) / np.float32(np.sqrt(q.shape[-1]))
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bshk,hkd->bsd", jnp.einsum("bhst,bthk->bshk", probs, v), wo)


# -- MLP, attention, transformer blocks ------------------------------------------------------
def mlp_col_row(x, w1, b1, w2):
    """MLP, 8 devices: column-parallel ``w1`` (+ bias), row-parallel ``w2`` (a partial sum)."""
    return jax.nn.relu(x @ w1 + b1) @ w2


def mlp_deep_16(x, w1, w2, w3):
    """Three-layer MLP on a 4x4 mesh, alternating column- and row-parallel weights, batch
    sharded on the other axis."""
    h = jnp.tanh(x @ w1)
    h = jax.nn.gelu(h @ w2)
    return h @ w3


def mlp_64(x, w1, w2):
    """MLP on an 8x8 mesh: 2-D sharded weights (both axes on one weight)."""
    return jax.nn.relu(x @ w1) @ w2


def attention_mha(x, wq, wk, wv, wo):
    """Multi-head attention (softmax), heads sharded over ``model``, batch over ``data``."""
    return mha(x, wq, wk, wv, wo)


def transformer_block(x, ln1, wq, wk, wv, wo, ln2, w1, w2):
    """A pre-norm transformer block: layernorm + attention + residual, layernorm + MLP +
    residual (8 devices)."""
    h = x + mha(layernorm(x, ln1), wq, wk, wv, wo)
    return h + jax.nn.gelu(layernorm(h, ln2) @ w1) @ w2


def transformer_block_64(x, ln1, wq, wk, wv, wo, ln2, w1, w2):
    """The same transformer block on an 8x8 mesh (batch on ``x``, heads and hidden on
    ``y``), with a sharding constraint on the residual stream."""
    h = x + mha(layernorm(x, ln1), wq, wk, wv, wo)
    h = constrain(h, MESH64, "x", None, None)
    return h + jax.nn.relu(layernorm(h, ln2) @ w1) @ w2


# -- embeddings: gather and scatter ----------------------------------------------------------
def embed_gather(table, ids, w):
    """Embedding lookup ``table[ids]`` (vocab sharded) and a projection; int32 ids."""
    return table[ids] @ w


def embed_take_16(table, ids):
    """``jnp.take`` with 2-D int32 ids on a 4x4 mesh (hidden sharded), then a mean over
    the sequence."""
    return jnp.mean(jnp.take(table, ids, axis=0), axis=1)


def scatter_add(x, idx, v):
    """``x.at[idx].add(v)``: a scatter-add of sharded updates into a sharded table."""
    return x.at[idx].add(v) * 2.0


def scatter_int_histogram_16(counts, idx, w):
    """Integer scatter (``counts.at[idx].add(w)``, int32 throughout) on a 2x8 mesh."""
    return counts.at[idx].add(w)


# -- convolutions ----------------------------------------------------------------------------
def conv1d(x, k):
    """1-D convolution (NWC/WIO), batch sharded over ``data``, output features over
    ``model``."""
    y = jax.lax.conv_general_dilated(x, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"))
    return jax.nn.relu(y)


def conv2d_16(x, k):
    """2-D convolution (NHWC/HWIO) on a 4x4 mesh, batch and output features sharded, with a
    stride and VALID padding."""
    return jax.lax.conv_general_dilated(x, k, (2, 1), "VALID",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


def conv2d_64(x, k):
    """2-D convolution on an 8x8 mesh: batch over ``x``, input features over ``y`` (a
    contracting dimension: partial sums)."""
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))


# -- loops and conditionals ------------------------------------------------------------------
def fori_loop(x, w):
    """``lax.fori_loop`` (a ``stablehlo.while`` with a static trip count) of a sharded
    matmul."""
    return jax.lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h @ w) + 0.1, x)


def while_loop_int(x):
    """``lax.while_loop`` with a data-dependent trip count (int32): halve until the max
    over the sharded array is small; also counts iterations."""
    def cond(state):
        return jnp.max(state[0]) > 3

    def body(state):
        return state[0] // 2, state[1] + 1
    y, n = jax.lax.while_loop(cond, body, (x, jnp.int32(0)))
    return y, n


def cond_data_dependent(x, w):
    """``lax.cond`` on a predicate computed from sharded data."""
    return jax.lax.cond(jnp.sum(x) > 0, lambda a, b: jnp.tanh(a @ b),
                        lambda a, b: jnp.exp(a * 0.1) @ b, x, w)


def scan_rnn_16(xs, h0, w, u):
    """``lax.scan``: an RNN over time on a 4x4 mesh, batch and hidden sharded."""
    def step(h, x):
        h = jnp.tanh(h @ w + x @ u)
        return h, h
    last, ys = jax.lax.scan(step, h0, xs)
    return last, ys


# -- shard_map collectives -------------------------------------------------------------------
def shard_map_psum(x, w):
    """``shard_map``: local matmul over the contracting shard, ``psum`` over ``model``."""
    def local(xb, wb):
        return jax.lax.psum(xb @ wb, "model")
    return shard_map(local, mesh=MESH8, in_specs=(P("data", "model"), P("model", None)),
                     out_specs=P("data", None))(x, w)


def shard_map_all_gather_16(x):
    """``shard_map``: ``all_gather`` (tiled) of blocks over ``y``, then local elementwise work
    (``check_vma=False``: the gathered value is the same on every ``y``)."""
    def local(xb):
        full = jax.lax.all_gather(xb, "y", axis=1, tiled=True)
        return full * 2.0 + 1.0
    return shard_map(local, mesh=MESH16, in_specs=P("x", "y"), out_specs=P("x", None),
                     check_vma=False)(x)


def shard_map_psum_scatter(x, w):
    """``shard_map``: a matmul whose partial sums are reduce-scattered (``psum_scatter``)."""
    def local(xb, wb):
        return jax.lax.psum_scatter(xb @ wb, "model", scatter_dimension=1, tiled=True)
    return shard_map(local, mesh=MESH8, in_specs=(P("data", "model"), P("model", None)),
                     out_specs=P("data", "model"))(x, w)


def shard_map_ppermute(x):
    """``shard_map``: ``ppermute`` around a ring over ``model`` (each block moves one
    device on) and adds to the local block."""
    n = MESH8.shape["model"]

    def local(xb):
        return xb + jax.lax.ppermute(xb, "model", [(i, (i + 1) % n) for i in range(n)])
    return shard_map(local, mesh=MESH8, in_specs=P("data", "model"),
                     out_specs=P("data", "model"))(x)


def shard_map_all_to_all_16(x):
    """``shard_map``: ``all_to_all`` moving the sharded dimension from rows to columns."""
    def local(xb):
        return jax.lax.all_to_all(xb, "y", 1, 0, tiled=True)
    return shard_map(local, mesh=MESH16, in_specs=P("x", "y"), out_specs=P(("x", "y"), None))(x)


def shard_map_axis_index_64(x):
    """``shard_map`` on a 4x4x4 mesh: ``axis_index`` adds each device's coordinate, then a
    ``psum`` over two axes (int32)."""
    def local(xb):
        offset = jax.lax.axis_index("x") * 100 + jax.lax.axis_index("z")
        return jax.lax.psum(xb + offset, ("y", "z"))
    return shard_map(local, mesh=MESH64_3D, in_specs=P("x", ("y", "z")),
                     out_specs=P("x", None))(x)


# -- non-divisible dimensions, sub-axes ------------------------------------------------------
def nondivisible_10(x, w):
    """A length-10 slice sharded 4 ways by ``with_sharding_constraint`` (padding), summed."""
    h = constrain(jnp.tanh(x[:10] @ w), MESH8, "model", None)
    return jnp.sum(h * 2.0, axis=0)


def nondivisible_6_16(x, y):
    """A length-6 concatenation sharded over ``y``=4 on a 4x4 mesh, then reduced by max."""
    z = constrain(jnp.concatenate([x, y], axis=0), MESH16, "y", "x")
    return jnp.max(jnp.exp(z * 0.5), axis=0)


def nondivisible_10_replicated(x, w):
    """A length-10 dimension (a replicated argument) sharded 4 ways on an intermediate by
    ``with_sharding_constraint``; elementwise work on the padded shards, result replicated."""
    h = constrain(jnp.tanh(x @ w), MESH8, "model", None)
    return h * 2.0 + 1.0


def nondivisible_6_matmul_16(x, y, w):
    """A length-6 concatenation sharded over ``y``=4 on a 4x4 mesh (padded shards), an
    elementwise op and a matmul over the other (divisible, sharded) dimension."""
    z = constrain(jnp.concatenate([x, y], axis=0) * 2.0, MESH16, "y", "x")
    return jnp.tanh(z) @ w


def sub_axes_reshape_16(x, w):
    """A reshape splitting a dimension sharded over ``b``=8 into 2x8 (sub-axes ``b:(1)2`` and
    ``b:(2)4`` in propagation), then a matmul and a merge back."""
    y = x.reshape(2, 8, 32) @ w
    return jnp.tanh(y).reshape(16, 8)


# -- integer programs and reductions ---------------------------------------------------------
def int_matmul(x, w):
    """int32 matmul with a sharded contracting dimension, then elementwise int ops."""
    y = x @ w
    return jnp.maximum(y, 0) % 7 - (y >> 2)


def int_reduce_64(x):
    """int32 sum and max over dimensions sharded on a 4x4x4 mesh."""
    return jnp.sum(x, axis=1), jnp.max(x, axis=0), jnp.min(x * 3 - 1)


def int_sum_16(x):
    """int32 sums over sharded dimensions only (one dimension, then all), on a 4x4 mesh."""
    y = x * x - 3
    return jnp.sum(y, axis=0), jnp.sum(y)


def reduce_sum_max_16(x):
    """f32 sum over a sharded dimension and max over another, on a 4x4 mesh."""
    return jnp.sum(x, axis=0), jnp.max(jnp.sin(x), axis=1)


def layernorm_softmax_64(x, scale):
    """layernorm then softmax over a sharded hidden dimension (8x8 mesh)."""
    return jax.nn.softmax(layernorm(x, scale), axis=-1)


def argmax_int_8(x):
    """``jnp.argmax`` (a variadic reduce with int32 indices) over a sharded dimension."""
    return jnp.argmax(x, axis=1).astype(I32), jnp.cumsum(x, axis=0)


def A(mesh, shape_dtype, *parts):
    """An argument: its shape and dtype and its sharding on ``mesh``."""
    return shape_dtype, NamedSharding(mesh, P(*parts))


def R(mesh, *parts):
    """A result sharding on ``mesh``."""
    return NamedSharding(mesh, P(*parts))


D = MESH8
X = MESH16
B = MESH16_2x8
E = MESH64
T = MESH64_3D
ATTN8 = [A(D, arg(32, 4, 8), None, "model", None)] * 3 + [A(D, arg(4, 8, 32), "model")]
ATTN64 = [A(E, arg(32, 8, 4), None, "y", None)] * 3 + [A(E, arg(8, 4, 32), "y")]

# name -> (function, [(argument, sharding)], output shardings or None)
PROGRAMS = {
    "sim_mlp_col_row": (mlp_col_row, [A(D, arg(16, 32), "data"), A(D, arg(32, 64), None, "model"),
                                      A(D, arg(64), "model"), A(D, arg(64, 32), "model")],
                        R(D, "data", None)),
    "sim_mlp_deep_16": (mlp_deep_16, [A(X, arg(16, 32), "x"), A(X, arg(32, 64), None, "y"),
                                      A(X, arg(64, 32), "y"), A(X, arg(32, 16), None, "y")],
                        R(X, "x", "y")),
    "sim_mlp_64": (mlp_64, [A(E, arg(16, 32), "x"), A(E, arg(32, 64), "x", "y"),
                            A(E, arg(64, 16), "y")], R(E, "x", None)),
    "sim_attention_mha": (attention_mha, [A(D, arg(2, 8, 32), "data"), *ATTN8],
                          R(D, "data", None, None)),
    "sim_transformer_block": (transformer_block,
                              [A(D, arg(2, 8, 32), "data"), A(D, arg(32)), *ATTN8, A(D, arg(32)),
                               A(D, arg(32, 64), None, "model"), A(D, arg(64, 32), "model")],
                              R(D, "data")),
    "sim_transformer_block_64": (transformer_block_64,
                                 [A(E, arg(8, 8, 32), "x"), A(E, arg(32)), *ATTN64,
                                  A(E, arg(32)), A(E, arg(32, 64), None, "y"),
                                  A(E, arg(64, 32), "y")], R(E, "x")),
    "sim_embed_gather": (embed_gather, [A(D, arg(64, 32), "model"), A(D, iarg(16), "data"),
                                        A(D, arg(32, 16), None, "model")], None),
    "sim_embed_take_16": (embed_take_16, [A(X, arg(32, 16), None, "y"), A(X, iarg(4, 8), "x")],
                          R(X, "x", "y")),
    "sim_scatter_add": (scatter_add, [A(D, arg(64, 16), "model"), A(D, iarg(16), "data"),
                                      A(D, arg(16, 16), "data", "model")], None),
    "sim_scatter_int_16": (scatter_int_histogram_16,
                           [A(B, iarg(32, 8), None, "a"), A(B, iarg(16), "b"),
                            A(B, iarg(16, 8), "b")], R(B, None, "a")),
    "sim_conv1d": (conv1d, [A(D, arg(8, 32, 4), "data"), A(D, arg(3, 4, 8), None, None, "model")],
                   R(D, "data", None, "model")),
    "sim_conv2d_16": (conv2d_16, [A(X, arg(4, 9, 8, 4), "x"),
                                  A(X, arg(3, 3, 4, 8), None, None, None, "y")], None),
    "sim_conv2d_64": (conv2d_64, [A(E, arg(8, 8, 8, 8), "x", None, None, "y"),
                                  A(E, arg(3, 3, 8, 8), None, None, "y")], R(E, "x")),
    "sim_fori_loop": (fori_loop, [A(D, arg(16, 32), "data"), A(D, arg(32, 32), None, "model")],
                      R(D, "data", None)),
    "sim_while_loop_int": (while_loop_int, [A(D, iarg(16, 32), "data", "model")], None),
    "sim_cond": (cond_data_dependent, [A(D, arg(16, 32), "data", "model"),
                                       A(D, arg(32, 16), "model")], None),
    "sim_scan_rnn_16": (scan_rnn_16, [A(X, arg(6, 8, 16), None, "x"), A(X, arg(8, 32), "x", "y"),
                                      A(X, arg(32, 32), None, "y"), A(X, arg(16, 32), None, "y")],
                        None),
    "sim_shard_map_psum": (shard_map_psum, [A(D, arg(16, 32), "data", "model"),
                                            A(D, arg(32, 16), "model")], None),
    "sim_shard_map_all_gather_16": (shard_map_all_gather_16, [A(X, arg(16, 32), "x", "y")],
                                    None),
    "sim_shard_map_psum_scatter": (shard_map_psum_scatter, [A(D, arg(16, 32), "data", "model"),
                                                            A(D, arg(32, 16), "model")], None),
    "sim_shard_map_ppermute": (shard_map_ppermute, [A(D, arg(8, 16), "data", "model")], None),
    "sim_shard_map_all_to_all_16": (shard_map_all_to_all_16, [A(X, arg(16, 32), "x", "y")],
                                    None),
    "sim_shard_map_axis_index_64": (shard_map_axis_index_64, [A(T, iarg(8, 32), "x", ("y", "z"))],
                                    None),
    "sim_nondivisible_10": (nondivisible_10, [A(D, arg(16, 32), "data"), A(D, arg(32, 16))],
                            None),
    "sim_nondivisible_6_16": (nondivisible_6_16, [A(X, arg(4, 8), None, "x"),
                                                  A(X, arg(2, 8), None, "x")], None),
    "sim_nondivisible_10_replicated": (nondivisible_10_replicated,
                                       [A(D, arg(10, 32)), A(D, arg(32, 16))], None),
    "sim_nondivisible_6_matmul_16": (nondivisible_6_matmul_16,
                                     [A(X, arg(4, 8), None, "x"), A(X, arg(2, 8), None, "x"),
                                      A(X, arg(8, 4))], None),
    "sim_sub_axes_16": (sub_axes_reshape_16, [A(B, arg(16, 32), "b"), A(B, arg(32, 8))],
                        None),
    "sim_int_matmul": (int_matmul, [A(D, iarg(16, 32), "data", "model"),
                                    A(D, iarg(32, 16), "model")], R(D, "data", None)),
    "sim_int_reduce_64": (int_reduce_64, [A(T, iarg(16, 64), ("x", "y"), "z")], None),
    "sim_int_sum_16": (int_sum_16, [A(X, iarg(32, 16), "x", "y")], None),
    "sim_reduce_sum_max_16": (reduce_sum_max_16, [A(X, arg(32, 16), "x", "y")], None),
    "sim_layernorm_softmax_64": (layernorm_softmax_64, [A(E, arg(16, 64), "x", "y"),
                                                        A(E, arg(64), "y")], R(E, "x", "y")),
    "sim_argmax_int": (argmax_int_8, [A(D, iarg(16, 32), "data", "model")], None),
}


def lower(name: str) -> str:
    fn, args, out = PROGRAMS[name]
    shapes = [a for a, _ in args]
    shardings = tuple(s for _, s in args)
    kwargs = {} if out is None else {"out_shardings": out}
    return jax.jit(fn, in_shardings=shardings, **kwargs).lower(*shapes).as_text()


def main(out_dir: Path, names: list[str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in names or PROGRAMS:
        (out_dir / f"{name}.mlir").write_text(lower(name))
        print(f"wrote {out_dir / name}.mlir")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent, sys.argv[2:])
