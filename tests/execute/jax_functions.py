"""The functions of the JAX sweep (``tests/execute/test_jax_sweep.py``): more than 300 small
programs from ``jax.numpy``, ``jax.lax`` and ``jax.nn``, each with its argument shapes and,
for integer arguments used as indices, the range their values are drawn from (inside the
dimension, across shard boundaries, and past its ends, which JAX clamps or drops).

Each entry is a :class:`Fn`; :data:`FUNCTIONS` lists them all. Needs jax.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax import lax


@dataclass(frozen=True)
class Arg:
    """An argument: its shape and dtype; integers are drawn from ``[low, high)``."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    low: int = -3
    high: int = 4


@dataclass(frozen=True)
class Fn:
    name: str
    fn: Callable
    args: tuple[Arg, ...]


FUNCTIONS: list[Fn] = []


def fn(name: str, *args: Arg):
    def register(f):
        FUNCTIONS.append(Fn(name, f, tuple(args)))
        return f
    return register


def add(name: str, f: Callable, *args: Arg) -> None:
    FUNCTIONS.append(Fn(name, f, tuple(args)))


def F(*shape) -> Arg:
    return Arg(tuple(shape))


def I(*shape, low: int = -3, high: int = 4) -> Arg:  # noqa: E743 (an index argument)
    return Arg(tuple(shape), "int32", low, high)


def B(*shape) -> Arg:
    return Arg(tuple(shape), "bool")


X = F(8, 12)      # the usual matrix: 12 is divided by 2 and 4, not by 8 or 16
Y = F(8, 12)
V = F(12)
T3 = F(4, 8, 12)

# -- elementwise -------------------------------------------------------------------------------
UNARY = {
    "abs": jnp.abs, "negative": jnp.negative, "exp": jnp.exp, "expm1": jnp.expm1,
    "log1p_abs": lambda x: jnp.log1p(jnp.abs(x)), "sqrt_abs": lambda x: jnp.sqrt(jnp.abs(x)),
    "rsqrt_abs": lambda x: lax.rsqrt(jnp.abs(x) + 1), "tanh": jnp.tanh, "sin": jnp.sin,
    "cos": jnp.cos, "tan": jnp.tan, "arctan": jnp.arctan, "sinh": jnp.sinh, "cosh": jnp.cosh,
    "arcsinh": jnp.arcsinh, "square": jnp.square, "reciprocal": lambda x: 1 / (x * x + 1),
    "floor": jnp.floor, "ceil": jnp.ceil, "round": jnp.round, "sign": jnp.sign,
    "cbrt": jnp.cbrt, "exp2": jnp.exp2, "log2_abs": lambda x: jnp.log2(jnp.abs(x) + 1),
    "erf": jax.scipy.special.erf, "erfc": jax.scipy.special.erfc,
    "erf_inv": lambda x: jax.scipy.special.erfinv(jnp.tanh(x) * 0.9),
    "lgamma": lambda x: jax.scipy.special.gammaln(jnp.abs(x) + 0.5),
    "digamma": lambda x: jax.scipy.special.digamma(jnp.abs(x) + 0.5),
    "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu, "relu6": jax.nn.relu6,
    "gelu": jax.nn.gelu, "gelu_exact": lambda x: jax.nn.gelu(x, approximate=False),
    "silu": jax.nn.silu, "softplus": jax.nn.softplus, "elu": jax.nn.elu,
    "leaky_relu": jax.nn.leaky_relu, "selu": jax.nn.selu, "celu": jax.nn.celu,
    "log_sigmoid": jax.nn.log_sigmoid, "hard_tanh": jax.nn.hard_tanh,
    "mish": jax.nn.mish, "isfinite": lambda x: jnp.isfinite(1 / x),
    "nan_to_num": lambda x: jnp.nan_to_num(jnp.log(x)), "deg2rad": jnp.deg2rad,
    "clip": lambda x: jnp.clip(x, -0.5, 0.5), "reduce_precision":
        lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
    "to_bf16_and_back": lambda x: x.astype(jnp.bfloat16).astype(jnp.float32),
    "to_int_and_back": lambda x: (x * 10).astype(jnp.int32).astype(jnp.float32),
}
for _name, _f in UNARY.items():
    add(f"unary_{_name}", _f, X)

BINARY = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
    "divide": lambda x, y: x / (y * y + 1), "maximum": jnp.maximum, "minimum": jnp.minimum,
    "power": lambda x, y: jnp.power(jnp.abs(x) + 0.5, y), "arctan2": jnp.arctan2,
    "hypot": jnp.hypot, "logaddexp": jnp.logaddexp, "remainder": lambda x, y: jnp.remainder(
        x, jnp.abs(y) + 0.5), "where": lambda x, y: jnp.where(x > y, x, y),
    "copysign": jnp.copysign, "nextafter": jnp.nextafter,
    "squared_difference": lambda x, y: (x - y) ** 2, "greater": lambda x, y: x > y,
    "equal_rounded": lambda x, y: jnp.round(x) == jnp.round(y),
    "complex_abs": lambda x, y: jnp.abs(lax.complex(x, y)),
    "complex_mul_real": lambda x, y: jnp.real(lax.complex(x, y) * lax.complex(y, x)),
}
for _name, _f in BINARY.items():
    add(f"binary_{_name}", _f, X, Y)

INTS = {
    "bitwise_and": jnp.bitwise_and, "bitwise_or": jnp.bitwise_or,
    "bitwise_xor": jnp.bitwise_xor, "left_shift": lambda a, b: a << (b & 7),
    "right_shift": lambda a, b: a >> (b & 7), "floor_divide": lambda a, b: a // (jnp.abs(b) + 1),
    "mod": lambda a, b: a % (jnp.abs(b) + 1),
    "popcount": lambda a, b: lax.population_count(a) + b,
    "clz": lambda a, b: lax.clz(a) - b, "invert": lambda a, b: ~a ^ b,
    "int_max": jnp.maximum, "int_mul": jnp.multiply,
}
for _name, _f in INTS.items():
    add(f"int_{_name}", _f, I(8, 12, low=-100, high=100), I(8, 12, low=-100, high=100))

# broadcasting
add("broadcast_row", lambda x, v: x + v, X, V)
add("broadcast_col", lambda x, c: x * c[:, None], X, F(8))
add("broadcast_scalar", lambda x, s: x * s, X, F())
add("broadcast_outer", lambda a, b: a[:, None] * b[None, :], F(8), V)
add("broadcast_to", lambda v: jnp.broadcast_to(v, (8, 12)), V)
add("broadcast_3d", lambda t, m: t + m[None], T3, F(8, 12))
add("where_scalar_pred", lambda x, y, p: jnp.where(p > 0, x, y), X, Y, I())
add("select_n", lambda x, y, i: lax.select_n(jnp.clip(i, 0, 1), x, y), X, Y, I(8, 12))
add("clip_by_arrays", lambda x, lo: jnp.clip(x, lo, lo + 1), X, F(12))

# -- reductions --------------------------------------------------------------------------------
REDUCTIONS = {
    "sum": jnp.sum, "mean": jnp.mean, "max": jnp.max, "min": jnp.min, "prod": jnp.prod,
    "var": jnp.var, "std": jnp.std, "argmax": jnp.argmax, "argmin": jnp.argmin,
    "any": lambda x, axis=None: jnp.any(x > 0.5, axis=axis),
    "all": lambda x, axis=None: jnp.all(x > -1.5, axis=axis),
    "logsumexp": jax.scipy.special.logsumexp, "norm": lambda x, axis=None: jnp.linalg.norm(
        x, axis=axis), "count_nonzero": lambda x, axis=None: jnp.count_nonzero(x > 0, axis),
    "amax_abs": lambda x, axis=None: jnp.max(jnp.abs(x), axis=axis),
}
for _name, _f in REDUCTIONS.items():
    for _axis in (0, 1, None):
        add(f"reduce_{_name}_axis{_axis}", lambda x, f=_f, a=_axis: f(x, axis=a), X)
add("reduce_sum_3d_axes02", lambda t: jnp.sum(t, axis=(0, 2)), T3)
add("reduce_mean_keepdims", lambda x: x - jnp.mean(x, axis=1, keepdims=True), X)
add("reduce_max_3d_axis1", lambda t: jnp.max(t, axis=1), T3)
add("reduce_sum_initial", lambda x: jnp.sum(x, axis=0, initial=1.5), X)
add("reduce_max_initial", lambda x: jnp.max(x, axis=1, initial=0.25), X)
add("reduce_average_weighted", lambda x, w: jnp.average(x, axis=1, weights=w), X, F(12))
add("reduce_nanmean", lambda x: jnp.nanmean(jnp.where(x > 1, jnp.nan, x), axis=0), X)
add("lax_reduce_multi", lambda x, y: lax.reduce((x, y), (0.0, 1.0),
                                                lambda a, b: (a[0] + b[0], a[1] * b[1]), (1,)),
    X, Y)

# cumulative
for _name, _f in {"cumsum": jnp.cumsum, "cumprod": lambda x, axis: jnp.cumprod(
        x * 0.5 + 1, axis=axis), "cummax": lambda x, axis: lax.cummax(x, axis=axis),
        "cummin": lambda x, axis: lax.cummin(x, axis=axis),
        "cumlogsumexp": lambda x, axis: lax.cumlogsumexp(x, axis=axis)}.items():
    for _axis in (0, 1):
        add(f"{_name}_axis{_axis}", lambda x, f=_f, a=_axis: f(x, axis=a), X)
add("cumsum_reverse", lambda x: lax.cumsum(x, axis=1, reverse=True), X)
add("diff_axis0", lambda x: jnp.diff(x, axis=0), X)
add("diff_axis1_n2", lambda x: jnp.diff(x, n=2, axis=1), X)

# normalisation and attention pieces
add("softmax_last", lambda x: jax.nn.softmax(x, axis=-1), X)
add("softmax_first", lambda x: jax.nn.softmax(x, axis=0), X)
add("log_softmax", lambda x: jax.nn.log_softmax(x, axis=-1), X)
add("standardize", lambda x: jax.nn.standardize(x, axis=-1), X)


@fn("layer_norm", X, F(12), F(12))
def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


@fn("rms_norm", T3, F(12))
def rms_norm(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


@fn("cross_entropy", X, I(8, low=0, high=12))
def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


@fn("one_hot_matmul", I(8, low=-2, high=14), F(12, 6))
def one_hot_matmul(idx, table):
    return jax.nn.one_hot(idx, 12) @ table


add("one_hot", lambda i: jax.nn.one_hot(i, 12), I(8, low=-2, high=14))
add("one_hot_3d", lambda i: jax.nn.one_hot(i, 6, axis=0), I(4, 8, low=0, high=6))


@fn("dot_product_attention", F(2, 8, 4, 6), F(2, 8, 4, 6), F(2, 8, 4, 6))
def attention(q, k, v):
    return jax.nn.dot_product_attention(q, k, v)


@fn("attention_masked", F(2, 8, 6), F(2, 8, 6), F(2, 8, 6))
def attention_masked(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k)
    mask = jnp.tril(jnp.ones((8, 8), bool))
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(jnp.where(mask, s, -1e9)), v)


@fn("glu", F(8, 12))
def glu(x):
    return jax.nn.glu(x, axis=-1)


@fn("swiglu_fused", F(8, 6), F(6, 16))
def swiglu(x, w):
    h = x @ w
    a, b = jnp.split(h.reshape(8, 2, 8), 2, axis=1)
    return jax.nn.silu(a[:, 0]) * b[:, 0]


@fn("fused_qkv", F(8, 12), F(12, 36))
def fused_qkv(x, w):
    q, k, v = jnp.split(x @ w, 3, axis=-1)
    return jax.nn.softmax(q @ k.T) @ v


# -- indexing, gathers and scatters ------------------------------------------------------------
ROW = I(low=-10, high=11)  # a traced row index, past both ends too
IDX = I(5, low=-10, high=11)  # 5 indices into 8 rows, some out of range
COLS = I(5, low=-14, high=15)  # 5 indices into 12 columns
add("index_row_traced", lambda x, i: x[i], X, ROW)
add("index_col_traced", lambda x, i: x[:, i], X, I(low=-14, high=15))
add("index_static_slice", lambda x: x[2:7], X)
add("index_static_stride", lambda x: x[::2, 1::3], X)
add("index_negative_step", lambda x: x[::-1, ::2], X)
add("index_rows_array", lambda x, i: x[i], X, IDX)
add("index_cols_array", lambda x, i: x[:, i], X, COLS)
add("index_points", lambda x, i, j: x[i, j], X, IDX, COLS)
add("index_ellipsis_3d", lambda t, i: t[..., i], T3, COLS)
add("index_3d_middle", lambda t, i: t[:, i], T3, IDX)
add("index_bool_mask_where", lambda x: jnp.where(x > 0, x, 0.0).sum(0), X)
add("take_axis0", lambda x, i: jnp.take(x, i, axis=0), X, IDX)
add("take_axis1", lambda x, i: jnp.take(x, i, axis=1), X, COLS)
add("take_clip", lambda x, i: jnp.take(x, i, axis=0, mode="clip"), X, IDX)
add("take_fill", lambda x, i: jnp.take(x, i, axis=1, mode="fill", fill_value=-1.0), X, COLS)
add("take_wrap", lambda x, i: jnp.take(x, i, axis=0, mode="wrap"), X, IDX)
add("take_along_axis0", lambda x, i: jnp.take_along_axis(x, i, axis=0), X,
    I(3, 12, low=-2, high=9))
add("take_along_axis1", lambda x, i: jnp.take_along_axis(x, i, axis=1), X,
    I(8, 4, low=-2, high=13))
add("take_along_axis_3d", lambda t, i: jnp.take_along_axis(t, i, axis=1), T3,
    I(4, 3, 12, low=0, high=8))
add("embedding_lookup", lambda table, ids: table[ids], F(16, 6), I(4, 8, low=0, high=16))
add("at_set_row", lambda x, v, i: x.at[i].set(v), X, V, ROW)
add("at_set_rows", lambda x, v, i: x.at[i].set(v), X, F(5, 12), IDX)
add("at_add_rows", lambda x, v, i: x.at[i].add(v), X, F(5, 12), IDX)
add("at_add_cols", lambda x, v, i: x.at[:, i].add(v), X, F(8, 5), COLS)
add("at_max_rows", lambda x, v, i: x.at[i].max(v), X, F(5, 12), IDX)
add("at_min_rows", lambda x, v, i: x.at[i].min(v), X, F(5, 12), IDX)
add("at_mul_rows", lambda x, v, i: x.at[i].multiply(v), X, F(5, 12), IDX)
add("at_add_points", lambda x, v, i, j: x.at[i, j].add(v), X, F(5), IDX, COLS)
add("at_set_slice", lambda x, v: x.at[2:5].set(v), X, F(3, 12))
add("at_add_drop", lambda x, v, i: x.at[i].add(v, mode="drop"), X, F(5, 12), IDX)
add("at_get_fill", lambda x, i: x.at[i].get(mode="fill", fill_value=0.0), X, IDX)
add("segment_sum", lambda v, s: jax.ops.segment_sum(v, s, num_segments=6), F(12, 4),
    I(12, low=-1, high=7))
add("segment_max", lambda v, s: jax.ops.segment_max(v, s, num_segments=6), F(12, 4),
    I(12, low=0, high=6))
add("bincount", lambda i: jnp.bincount(i, length=10), I(16, low=0, high=10))
add("histogram_like", lambda x: jnp.zeros(8).at[jnp.clip((x * 2 + 4).astype(jnp.int32), 0, 7)]
    .add(1.0), X)
add("dynamic_slice_rows", lambda x, i: lax.dynamic_slice(x, (i, 0), (3, 12)), X, ROW)
add("dynamic_slice_block", lambda x, i, j: lax.dynamic_slice(x, (i, j), (4, 5)), X, ROW,
    I(low=-14, high=15))
add("dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 6, axis=1), X,
    I(low=-14, high=15))
add("dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, axis=0), X, ROW)
add("dynamic_update_slice_rows", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), X,
    F(3, 12), ROW)
add("dynamic_update_slice_block", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
    X, F(3, 5), ROW, I(low=-14, high=15))
add("dynamic_update_index", lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 1), X,
    F(8), I(low=-14, high=15))
add("dynamic_update_slice_3d", lambda t, u, i: lax.dynamic_update_slice(t, u, (0, i, 0)), T3,
    F(4, 2, 12), ROW)
add("kv_cache_update", lambda cache, new, pos: lax.dynamic_update_slice_in_dim(
    cache, new, pos, axis=1), F(2, 16, 6), F(2, 1, 6), I(low=0, high=16))

# -- sorting -----------------------------------------------------------------------------------
add("sort_axis0", lambda x: jnp.sort(x, axis=0), X)
add("sort_axis1", lambda x: jnp.sort(x, axis=1), X)
add("sort_descending", lambda x: -jnp.sort(-x, axis=1), X)
add("argsort_axis0", lambda x: jnp.argsort(x, axis=0), X)
add("argsort_axis1", lambda x: jnp.argsort(x, axis=1), X)
add("top_k", lambda x: lax.top_k(x, 3)[0], X)
add("top_k_indices", lambda x: lax.top_k(x, 4)[1], X)
add("sort_key_val", lambda k, v: lax.sort_key_val(k, v, dimension=0)[1], X, Y)
add("sort_3d_middle", lambda t: jnp.sort(t, axis=1), T3)
add("median_axis0", lambda x: jnp.median(x, axis=0), X)
add("percentile_axis1", lambda x: jnp.percentile(x, 75.0, axis=1), X)
add("partition_smallest", lambda x: jnp.sort(x, axis=1)[:, :3], X)
add("searchsorted", lambda a, v: jnp.searchsorted(jnp.sort(a), v), F(16), F(6))
add("unique_counts_fixed", lambda i: jnp.unique(i, size=6, fill_value=-1),
    I(12, low=0, high=5))

# -- shapes ------------------------------------------------------------------------------------
add("reshape_merge", lambda x: x.reshape(96), X)
add("reshape_split", lambda x: x.reshape(8, 3, 4), X)
add("reshape_split_rows", lambda x: x.reshape(2, 4, 12), X)
add("reshape_regroup", lambda x: x.reshape(12, 8), X)
add("reshape_regroup_3d", lambda t: t.reshape(8, 4, 12), T3)
add("reshape_heads", lambda t: t.reshape(4, 8, 3, 4).transpose(0, 2, 1, 3), T3)
add("reshape_unheads", lambda t: t.reshape(2, 2, 8, 12).transpose(1, 0, 2, 3).reshape(2, 16,
                                                                                       12), T3)
add("flatten", jnp.ravel, T3)
add("transpose", lambda x: x.T, X)
add("transpose_3d", lambda t: jnp.transpose(t, (2, 0, 1)), T3)
add("moveaxis", lambda t: jnp.moveaxis(t, 0, -1), T3)
add("swapaxes", lambda t: jnp.swapaxes(t, 0, 1), T3)
add("expand_squeeze", lambda x: jnp.squeeze(jnp.expand_dims(x, 1) * 2, 1), X)
add("squeeze_unit", lambda x: jnp.squeeze(x[:, :1], axis=1), X)
add("tile", lambda x: jnp.tile(x, (2, 1)), X)
add("repeat", lambda x: jnp.repeat(x, 2, axis=0), X)
add("repeat_cols", lambda x: jnp.repeat(x, 3, axis=1), F(8, 4))
add("concatenate_axis0", lambda x, y: jnp.concatenate([x, y], axis=0), X, Y)
add("concatenate_axis1", lambda x, y: jnp.concatenate([x, y], axis=1), X, F(8, 5))
add("concatenate_three", lambda x, y: jnp.concatenate([x, y[:2], x[3:]], axis=0), X, Y)
add("stack_axis0", lambda x, y: jnp.stack([x, y]), X, Y)
add("stack_axis1", lambda x, y: jnp.stack([x, y], axis=1), X, Y)
add("stack_axis2", lambda x, y: jnp.stack([x, y], axis=2), X, Y)
add("hstack", lambda x, y: jnp.hstack([x, y]), X, Y)
add("vstack", lambda x, y: jnp.vstack([x, y]), X, Y)
add("split_sum", lambda x: sum(p.sum() * (i + 1) for i, p in enumerate(jnp.split(x, 4, 0))), X)
add("split_uneven", lambda x: jnp.split(x, [3, 5], axis=1)[1] * 2, X)
add("array_split", lambda x: jnp.array_split(x, 3, axis=0)[2], X)
add("flip_axis0", lambda x: jnp.flip(x, 0), X)
add("flip_both", jnp.flip, X)
add("rot90", jnp.rot90, X)
add("roll_axis0", lambda x: jnp.roll(x, 3, axis=0), X)
add("roll_axis1", lambda x: jnp.roll(x, -5, axis=1), X)
add("roll_flat", lambda x: jnp.roll(x, 7), X)
add("roll_traced", lambda x, s: jnp.roll(x, s, axis=1), X, I(low=-20, high=20))
add("pad_constant", lambda x: jnp.pad(x, ((1, 2), (3, 0)), constant_values=0.5), X)
add("pad_edge", lambda x: jnp.pad(x, ((2, 2), (1, 1)), mode="edge"), X)
add("pad_reflect", lambda x: jnp.pad(x, ((2, 1), (0, 3)), mode="reflect"), X)
add("pad_wrap", lambda x: jnp.pad(x, ((1, 1), (2, 2)), mode="wrap"), X)
add("lax_pad_negative", lambda x: lax.pad(x, 0.0, ((-1, 2, 0), (1, -2, 1))), X)
add("lax_pad_interior", lambda x: lax.pad(x, -1.0, ((0, 0, 1), (0, 0, 0))), X)
add("tril", jnp.tril, X)
add("triu_offset", lambda x: jnp.triu(x, 2), X)
add("diagonal", lambda x: jnp.diagonal(x[:, :8]), X)
add("trace", lambda x: jnp.trace(x[:, :8]), X)
add("eye_mask", lambda x: x * jnp.eye(8, 12), X)
add("iota_add", lambda x: x + jnp.arange(12.0), X)
add("arange_outer", lambda x: x * jnp.arange(8.0)[:, None], X)
add("meshgrid_sum", lambda x: x + sum(jnp.meshgrid(jnp.arange(12.0), jnp.arange(8.0))), X)
add("outer", jnp.outer, F(8), V)
add("kron", jnp.kron, F(2, 3), F(4, 4))
add("atleast_3d", lambda x: jnp.atleast_3d(x) * 2, X)
add("reshape_scalar_grid", lambda v: v.reshape(3, 4).T.reshape(12), V)
add("gather_strided_window", lambda x: x[1:7:3, 2:11:4], X)

# -- contractions ------------------------------------------------------------------------------
add("matmul", jnp.matmul, X, F(12, 6))
add("matmul_vec", lambda x, v: x @ v, X, V)
add("vec_matmul", lambda v, x: v @ x, F(8), X)
add("dot", jnp.dot, X, F(12, 6))
add("vdot", jnp.vdot, V, V)
add("inner", jnp.inner, X, F(6, 12))
add("tensordot", lambda t, m: jnp.tensordot(t, m, axes=([1, 2], [0, 1])), T3, F(8, 12))
for _spec, _shapes in {
        "ij,jk->ik": ((8, 12), (12, 6)), "ij,kj->ik": ((8, 12), (6, 12)),
        "ji,jk->ik": ((8, 12), (8, 6)), "bij,bjk->bik": ((4, 8, 12), (4, 12, 6)),
        "bij,jk->bik": ((4, 8, 12), (12, 6)), "bsd,dhk->bshk": ((2, 8, 12), (12, 3, 4)),
        "bshk,bthk->bhst": ((2, 8, 3, 4), (2, 8, 3, 4)), "ij,ij->i": ((8, 12), (8, 12)),
        "i,j->ij": ((8,), (12,)), "bij->bji": ((4, 8, 12),), "ijk->k": ((4, 8, 12),),
        "ij,jk,kl->il": ((8, 12), (12, 6), (6, 4))}.items():
    add(f"einsum_{_spec.replace(',', '_').replace('->', '_to_')}",
        lambda *a, s=_spec: jnp.einsum(s, *a), *(F(*sh) for sh in _shapes))
add("linalg_norm_fro", jnp.linalg.norm, X)
add("matrix_power", lambda m: jnp.linalg.matrix_power(m * 0.3, 3), F(8, 8))
add("polyval", lambda c, x: jnp.polyval(c, x), F(4), X)
add("fft", lambda x: jnp.abs(jnp.fft.fft(x)), X)
add("ifft_fft", lambda x: jnp.real(jnp.fft.ifft(jnp.fft.fft(x, axis=0), axis=0)), X)
add("rfft", lambda x: jnp.abs(jnp.fft.rfft(x)), X)
add("irfft_rfft", lambda x: jnp.fft.irfft(jnp.fft.rfft(x), n=12), X)
add("fft2", lambda x: jnp.abs(jnp.fft.fft2(x)), X)
add("convolve_1d", lambda a, b: jnp.convolve(a, b), F(16), F(5))
add("correlate_same", lambda a, b: jnp.correlate(a, b, mode="same"), F(16), F(5))

# -- convolutions and windows ------------------------------------------------------------------
IMG = F(2, 8, 8, 3)  # NHWC


def _conv(x, k, **kw):
    return lax.conv_general_dilated(x, k, dimension_numbers=("NHWC", "HWIO", "NHWC"), **kw)


add("conv2d_same", lambda x, k: _conv(x, k, window_strides=(1, 1), padding="SAME"), IMG,
    F(3, 3, 3, 4))
add("conv2d_valid_stride", lambda x, k: _conv(x, k, window_strides=(2, 2), padding="VALID"),
    IMG, F(3, 3, 3, 4))
add("conv2d_dilated", lambda x, k: _conv(x, k, window_strides=(1, 1), padding="SAME",
                                          rhs_dilation=(2, 2)), IMG, F(3, 3, 3, 4))
add("conv2d_lhs_dilated", lambda x, k: _conv(x, k, window_strides=(1, 1),
                                              padding=((1, 1), (1, 1)), lhs_dilation=(2, 1)),
    IMG, F(2, 2, 3, 2))
add("conv2d_depthwise", lambda x, k: _conv(x, k, window_strides=(1, 1), padding="SAME",
                                            feature_group_count=3), IMG, F(3, 3, 1, 6))
add("conv2d_1x1", lambda x, k: _conv(x, k, window_strides=(1, 1), padding="VALID"), IMG,
    F(1, 1, 3, 8))
add("conv1d", lambda x, k: lax.conv_general_dilated(
    x, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")), F(2, 16, 4), F(3, 4, 6))
add("conv1d_causal", lambda x, k: lax.conv_general_dilated(
    x, k, (1,), ((2, 0),), dimension_numbers=("NWC", "WIO", "NWC")), F(2, 16, 4), F(3, 4, 4))
add("conv_transpose", lambda x, k: lax.conv_transpose(
    x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), IMG, F(3, 3, 3, 2))
add("conv_nchw", lambda x, k: lax.conv(x, k, (1, 1), "SAME"), F(2, 3, 8, 8), F(4, 3, 3, 3))
add("max_pool", lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                            "VALID"), IMG)
add("avg_pool_same", lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1),
                                                 "SAME") / 9, IMG)
add("min_pool_strided", lambda x: lax.reduce_window(x, jnp.inf, lax.min, (2, 3), (2, 2),
                                                    ((0, 0), (1, 1))), X)
add("window_sum_dilated", lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1),
                                                      "VALID", window_dilation=(2, 3)), X)
add("max_pool_grad", jax.grad(lambda x: lax.reduce_window(
    x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID").sum()), X)
add("moving_average", lambda v: jnp.convolve(v, jnp.ones(3) / 3, mode="valid"), F(16))

# -- control flow ------------------------------------------------------------------------------
add("while_loop", lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1,
                                                                         jnp.tanh(c[1]) * 2),
                                           (0, x))[1], X)
add("while_traced_bound", lambda x, n: lax.while_loop(
    lambda c: c[0] < jnp.clip(n, 0, 4), lambda c: (c[0] + 1, c[1] * 0.5 + 1), (0, x))[1],
    X, I(low=-2, high=6))
add("fori_loop_rows", lambda x: lax.fori_loop(0, 8, lambda i, a: a.at[i].set(
    a[i] * 2 + a[(i + 7) % 8]), x), X)
add("fori_loop_dus", lambda x: lax.fori_loop(0, 4, lambda i, a: lax.dynamic_update_slice(
    a, lax.dynamic_slice(a, (i, 0), (1, 12)) + 1, (i + 2, 0)), x), X)
add("scan_cumsum", lambda x: lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(12), x)[1], X)
add("scan_carry_matmul", lambda x, w: lax.scan(lambda c, r: (jnp.tanh(c @ w + r), c.sum()),
                                               jnp.zeros(12), x)[0], X, F(12, 12))
add("scan_reverse", lambda x: lax.scan(lambda c, r: (c * 0.5 + r, c), jnp.zeros(12), x,
                                       reverse=True)[1], X)
add("associative_scan", lambda x: lax.associative_scan(jnp.add, x, axis=1), X)
add("cond", lambda x, p: lax.cond(p > 0, lambda a: a * 2, lambda a: -a, x), X, I())
add("cond_two_operands", lambda x, y, p: lax.cond(p > 1, jnp.add, jnp.subtract, x, y), X, Y,
    I())
add("switch", lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), X,
    I(low=-1, high=4))
add("map_rows", lambda x: lax.map(lambda r: jnp.sort(r)[::-1], x), X)
add("vmap_dot", jax.vmap(jnp.dot), F(4, 8, 12), F(4, 12))
add("checkpoint", jax.checkpoint(lambda x: jnp.sin(x) * jnp.cos(x)), X)
add("grad_mlp", jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), F(12, 6), X)
add("value_and_grad_softmax", lambda x: jax.grad(lambda a: jax.nn.logsumexp(a))(x), X)
add("jvp_tanh", lambda x, t: jax.jvp(jnp.tanh, (x,), (t,))[1], X, Y)
add("stop_gradient_mix", lambda x: x - lax.stop_gradient(x.mean()), X)
add("optimization_barrier", lambda x, y: sum(lax.optimization_barrier((x * 2, y))), X, Y)


# -- with_sharding_constraint inside --------------------------------------------------------------
def _constrained(spec_dims):
    def f(x):
        from jax.sharding import PartitionSpec as P

        mesh = jax.sharding.get_abstract_mesh()
        axes = [None] * 2
        for d, k in spec_dims:
            if k < len(mesh.axis_names):
                axes[d] = mesh.axis_names[k]
        return jnp.tanh(jax.lax.with_sharding_constraint(x * 2, P(*axes))) + 1
    return f


add("constraint_rows", _constrained([(0, 0)]), X)
add("constraint_cols", _constrained([(1, 0)]), X)
add("constraint_both", _constrained([(0, 0), (1, 1)]), X)
