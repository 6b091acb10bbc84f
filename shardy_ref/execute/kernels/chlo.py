"""Kernels of the CHLO dialect (``stablehlo/dialect/ChloOps.td``), whose meaning is their
decomposition into StableHLO (``ChloLegalizeToStablehlo.cpp``).

- ``broadcast_*``: the operands are broadcast to the result shape (numpy-style prefix
  padding, or ``broadcast_dimensions`` mapping the lower-rank operand's dimensions) and
  the matching StableHLO kernel runs on them (``broadcast_add`` is ``stablehlo.add``), so
  the two cannot drift apart; ``broadcast_next_after``/``polygamma``/``zeta`` use the CHLO
  ops below.
- Transcendental unary ops (``acos``, ``sinh``, ``tan``...): computed in double (complex
  double) and rounded to the element type, as the reference interpreter does for
  StableHLO's (Element.cpp ``mapWithUpcastToDouble``); the decompositions round at every
  step, so they may differ in the last bits. ``square`` and ``conj`` are exact.
- Special functions: :mod:`chlo_special`; ``next_after`` and ``mulhi`` bit-exactly.
- ``top_k`` (a stable descending sort, floats in total order), ``ragged_dot`` (three modes,
  one masked ``einsum``), ``scan`` (the body once per position along ``dimension``).

Everything is elementwise over varying values except ``ragged_dot``, which runs once per
process (rare and heavy: :func:`per_process`).
"""
from __future__ import annotations

import weakref

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import (
    bit_width,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    storage_dtype,
    wide,
    wrap,
)
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels import chlo_special as special
from shardy_ref.execute.kernels.elementwise_base import round_to
from shardy_ref.execute.registry import kernel, per_process
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.chlo_attrs import compare_attrs_of, ragged_prefix_dims
from shardy_ref.ir.chlo_families import BROADCAST_BINARY
from shardy_ref.ir.operation import Block, Operation
from shardy_ref.ir.types import RankedTensorType

# -- transcendental unary ops: (real function on float64, complex function on complex128)
_UNARY = {
    "chlo.acos": (np.arccos, np.arccos), "chlo.acosh": (np.arccosh, np.arccosh),
    "chlo.asin": (np.arcsin, np.arcsin), "chlo.asinh": (np.arcsinh, np.arcsinh),
    "chlo.atan": (np.arctan, np.arctan), "chlo.atanh": (np.arctanh, np.arctanh),
    "chlo.cosh": (np.cosh, np.cosh), "chlo.sinh": (np.sinh, np.sinh),
    "chlo.tan": (np.tan, np.tan),
    "chlo.erf": (special.erf, None), "chlo.erfc": (special.erfc, None),
    "chlo.erf_inv": (special.erf_inv, None), "chlo.lgamma": (special.lgamma, None),
    "chlo.digamma": (special.digamma, None), "chlo.bessel_i1e": (special.bessel_i1e, None),
}


def _rounded(op, data: np.ndarray, nb: int) -> Tensor:
    """Float64 results rounded once to the result's element type (ml_dtypes would round
    twice, through float32: ``round_to`` rounds as APFloat does)."""
    t = batching.result_type(op, 0, data.shape[nb:])
    return Tensor(t, round_to(np.asarray(data), t.element_type), nb)


def _real_or_complex(op, x: Tensor, real_fn, complex_fn) -> Tensor:
    et = x.element_type
    with np.errstate(all="ignore"):
        if is_complex(et) and complex_fn is not None:
            return batching.make(op, complex_fn(x.data.astype(np.complex128)), x.batch)
        if is_float(et):
            return _rounded(op, real_fn(x.data.astype(np.float64)), x.batch)
    raise InterpreterError(None, f"'{op.name}' does not support element type {et}")


@kernel(*_UNARY)
def transcendental(ctx, op, x):
    real_fn, complex_fn = _UNARY[op.name]
    return _real_or_complex(op, x, real_fn, complex_fn)


@kernel("chlo.conj")
def conj(ctx, op, x):
    """Complex conjugate; the identity on real numbers."""
    return batching.make(op, np.conj(x.data) if is_complex(x.element_type) else x.data,
                         x.batch)


def _complex(real: np.ndarray, imag: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A complex array from its parts (``re + 1j * im`` would turn an infinite imaginary
    part into a NaN real part)."""
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape), dtype=dtype)
    out.real, out.imag = real, imag
    return out


@kernel("chlo.square")
def square(ctx, op, x):
    """``x * x``; for complex numbers ``(re == +-im finite ? 0 : (re - im)(re + im),
    2 (re im))`` in the part type, as the decomposition computes it."""
    if is_complex(x.element_type):
        re, im = x.data.real, x.data.imag
        with np.errstate(all="ignore"):
            same = np.isfinite(re) & (np.abs(re) == np.abs(im))
            real = np.where(same, re.dtype.type(0), (re - im) * (re + im))
            imag = re.dtype.type(2) * (re * im)
        return batching.make(op, _complex(real, imag, x.data.dtype), x.batch)
    return batching.make(op, x.data * x.data, x.batch)


def _inf_test(positive: bool, negative: bool):
    def run(ctx, op, x):
        if not is_float(x.element_type):
            raise InterpreterError(None, f"'{op.name}' needs a float operand")
        data = x.data.astype(np.float64)
        out = np.zeros(data.shape, dtype=bool)
        if positive:
            out |= data == np.inf
        if negative:
            out |= data == -np.inf
        return batching.make(op, out, x.batch)
    return run


kernel("chlo.is_inf")(_inf_test(True, True))
kernel("chlo.is_pos_inf")(_inf_test(True, False))
kernel("chlo.is_neg_inf")(_inf_test(False, True))


@kernel("chlo._asin_acos_kernel")
def asin_acos_kernel(ctx, op, z):
    """``w`` with asin(z) = complex(atan2(re z, re w), sign(im z) im w): with
    A = (|z + 1| + |z - 1|) / 2, re w = sqrt(A^2 - re(z)^2) and im w = acosh(A)."""
    if not is_complex(z.element_type):
        raise InterpreterError(None, "'chlo._asin_acos_kernel' needs a complex operand")
    c = z.data.astype(np.complex128)
    with np.errstate(all="ignore"):
        a = 0.5 * (np.abs(c + 1) + np.abs(c - 1))
        re = np.sqrt(np.maximum((a - c.real) * (a + c.real), 0.0))
        imag = np.arccosh(np.maximum(a, 1.0))
    return batching.make(op, _complex(re, imag, np.dtype(np.complex128)), z.batch)


# -- binary elementwise ops ----------------------------------------------------------------


def _float_binary(fn):
    def run(ctx, op, a, b):
        if not (is_float(a.element_type) and is_float(b.element_type)):
            raise InterpreterError(None, f"'{op.name}' needs float operands")
        with np.errstate(all="ignore"):
            data = fn(a.data.astype(np.float64), b.data.astype(np.float64))
        return _rounded(op, data, batching.batch_of(a, b))
    return run


kernel("chlo.zeta")(_float_binary(special.zeta))
kernel("chlo.polygamma")(_float_binary(special.polygamma))


def _float_bits(data: np.ndarray) -> np.ndarray:
    """The bit patterns of a float array as uint64."""
    return data.view(np.dtype(f"u{data.dtype.itemsize}")).astype(np.uint64)


@kernel("chlo.next_after")
def next_after(ctx, op, x, y):
    """C's ``nextafter`` in the element type, on bit patterns as the decomposition does:
    NaN if either is NaN; ``y`` if x == y; the smallest subnormal signed like ``y`` from
    zero; else one step of the magnitude towards ``y``."""
    et = x.element_type
    if not is_float(et):
        raise InterpreterError(None, "'chlo.next_after' needs float operands")
    dtype = storage_dtype(et)
    sign = np.uint64(1 << (bit_width(et) - 1))
    xd, yd = np.broadcast_arrays(x.data, y.data)
    xb, yb = _float_bits(xd), _float_bits(yd)
    xf, yf = xd.astype(np.float64), yd.astype(np.float64)
    magnitude = sign - np.uint64(1)
    xa, ya = xb & magnitude, yb & magnitude
    smaller = (xa > ya) | ((xb & sign) != (yb & sign))
    out = np.where(smaller, xb - np.uint64(1), xb + np.uint64(1))
    out = np.where(xa == 0, np.where(ya == 0, yb, (yb & sign) | np.uint64(1)), out)
    out = np.where(xf == yf, yb, out)
    nan = _float_bits(np.full((), np.nan).astype(dtype))
    out = np.where(np.isnan(xf) | np.isnan(yf), nan, out)
    data = out.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    return batching.make(op, data, batching.batch_of(x, y))


_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def _mulhi_u64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The high 64 bits of the 128-bit product of uint64 arrays (32-bit limbs)."""
    a_lo, a_hi, b_lo, b_hi = a & _LOW32, a >> _32, b & _LOW32, b >> _32
    mid = a_lo * b_hi + ((a_lo * b_lo) >> _32)
    mid2 = a_hi * b_lo + (mid & _LOW32)
    return a_hi * b_hi + (mid >> _32) + (mid2 >> _32)


@kernel("chlo.mulhi")
def mulhi(ctx, op, lhs, rhs):
    """The high N bits of the 2N-bit product of two N-bit integers (signed or not)."""
    et = lhs.element_type
    if is_bool(et) or is_float(et) or is_complex(et):
        raise InterpreterError(None, "'chlo.mulhi' needs integer operands")
    width = bit_width(et)
    a, b = wide(lhs.data, et), wide(rhs.data, et)
    with np.errstate(over="ignore"):
        if width <= 32:
            high = (a * b) >> (np.uint64(width) if is_unsigned(et) else width)
        elif is_unsigned(et):
            high = _mulhi_u64(a, b)
        else:
            ua, ub = a.astype(np.uint64), b.astype(np.uint64)
            high = _mulhi_u64(ua, ub) - np.where(a < 0, ub, 0).astype(np.uint64) \
                - np.where(b < 0, ua, 0).astype(np.uint64)
            high = high.astype(np.int64)
    return batching.make(op, wrap(high, et), batching.batch_of(lhs, rhs))


# -- broadcasting ops ----------------------------------------------------------------------

# chlo op -> the op computing it once operands have the result's shape
_DELEGATE = {name: "stablehlo." + name[len("chlo.broadcast_"):] for name in BROADCAST_BINARY}
_DELEGATE.update({"chlo.broadcast_next_after": "chlo.next_after",
                  "chlo.broadcast_polygamma": "chlo.polygamma",
                  "chlo.broadcast_zeta": "chlo.zeta",
                  "chlo.broadcast_select": "stablehlo.select"})
_SHIMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _shim(op, name: str, operand_types: list) -> Operation:
    """A detached op ``name`` with the broadcast operand types and ``op``'s result type (and
    attributes translated), for the delegated kernel to read; cached per op and shapes."""
    per_op = _SHIMS.setdefault(op, {})
    key = tuple(operand_types)
    shim = per_op.get(key)
    if shim is None:
        attrs = compare_attrs_of(op)
        block = Block(operand_types)
        shim = per_op[key] = Operation(name, block.args, [op.results[0].type], attrs,
                                       location=op.location)
    return shim


def _expand(t: Tensor, shape: tuple, dims: tuple[int, ...], rank: int) -> np.ndarray:
    """``t``'s array with its dimension i moved to position ``dims[i]`` of a rank-``rank``
    shape (size 1 elsewhere), batch dimensions kept in front."""
    nb = t.batch
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    data = np.transpose(t.data, tuple(range(nb)) + batching.axes(nb, order))
    new_shape = [1] * rank
    for i, d in enumerate(dims):
        new_shape[d] = shape[i]
    return data.reshape(t.data.shape[:nb] + tuple(new_shape))


def _broadcast_arrays(op, operands: list[Tensor]) -> tuple[list[np.ndarray], tuple]:
    """The operands' arrays broadcast to the result shape (still with their own batch
    dimensions), and that shape."""
    shapes = [tuple(t.data.shape[t.batch:]) for t in operands]
    arrays = [t.data for t in operands]
    dims_attr = op.attributes.get("broadcast_dimensions")
    if dims_attr is not None and len(operands) == 2:
        large = 0 if len(shapes[0]) > len(shapes[1]) else 1
        small = 1 - large
        dims = tuple(dims_attr.value)
        rank = len(shapes[large])
        if len(dims) != len(shapes[small]) or any(not 0 <= d < rank for d in dims):
            raise InterpreterError(None, f"broadcast_dimensions {list(dims)} do not map "
                                   f"{list(shapes[small])} into rank {rank}")
        arrays[small] = _expand(operands[small], shapes[small], dims, rank)
        shapes[small] = tuple(arrays[small].shape[operands[small].batch:])
    try:
        out = np.broadcast_shapes(*shapes)
    except ValueError:
        raise InterpreterError(None, "operand shapes " + ", ".join(map(str, map(list, shapes)))
                               + " are not broadcast compatible") from None
    padded = [a.reshape(a.shape[:t.batch] + (1,) * (len(out) - len(s)) + s)
              for a, t, s in zip(arrays, operands, shapes, strict=True)]
    return [np.broadcast_to(a, a.shape[:t.batch] + out)
            for a, t in zip(padded, operands, strict=True)], out


@kernel(*_DELEGATE)
def broadcasting(ctx, op, *operands):
    """Broadcast, then run the non-broadcasting op's kernel."""
    name = _DELEGATE[op.name]
    fn = ctx.interp.kernels.get(name)
    if fn is None:
        raise InterpreterError(None, f"'{op.name}' needs the kernel of '{name}', which is "
                               "not available")
    arrays, shape = _broadcast_arrays(op, list(operands))
    tensors = [Tensor(RankedTensorType(shape, t.element_type), a, t.batch)
               for a, t in zip(arrays, operands, strict=True)]
    return fn(ctx, _shim(op, name, [t.type for t in tensors]), *tensors)


# -- constants -----------------------------------------------------------------------------


@kernel("chlo.constant_like")
def constant_like(ctx, op, operand):
    """A splat of ``value`` with the operand's shape (uniform: it is the same everywhere)."""
    value = op.attributes["value"]
    et = op.results[0].type.element_type
    scalar = np.asarray(value.value).astype(storage_dtype(et))
    shape = operand.data.shape[operand.batch:]
    return Tensor(batching.result_type(op, 0, shape), np.full(shape, scalar), 0)


# -- top_k ---------------------------------------------------------------------------------


def _descending_key(data: np.ndarray, et) -> np.ndarray:
    """An integer key whose ascending order is the descending order of ``data``: floats in
    IEEE total order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), like the
    decomposition's ``sort`` with a TOTALORDER ``GT`` comparator."""
    if is_float(et):
        width = bit_width(et)
        bits = _float_bits(data)
        sign = np.uint64(1 << (width - 1))
        magnitude = (bits & (sign - np.uint64(1))).astype(np.int64)
        key = np.where((bits & sign) != 0, -magnitude - 1, magnitude)
    elif is_complex(et):
        raise InterpreterError(None, "'chlo.top_k' cannot order complex numbers")
    else:
        key = wide(data, et)
    return ~key


@kernel("chlo.top_k")
def top_k(ctx, op, operand):
    """The ``k`` largest entries along the last dimension and their indices, equal entries
    in index order (stable)."""
    k = op.attributes["k"].value
    n = operand.data.shape[-1] if operand.data.ndim > operand.batch else 0
    if operand.data.ndim == operand.batch:
        raise InterpreterError(None, "'chlo.top_k' needs an operand of rank >= 1")
    order = np.argsort(_descending_key(operand.data, operand.element_type), axis=-1,
                       kind="stable")[..., :min(k, n)]
    values = np.take_along_axis(operand.data, order, axis=-1)
    return [batching.make(op, values, operand.batch, 0),
            batching.make(op, order, operand.batch, 1)]


# -- scan ----------------------------------------------------------------------------------


@kernel("chlo.scan")
def scan(ctx, op, *operands):
    """Run the body at each position along ``dimension`` (from the end with
    ``is_reverse``): block arguments are the inputs' slices there and the carries; the
    body returns the outputs' slices there and the new carries."""
    n_in, n_carry = op.attributes["operandSegmentSizes"].value
    dim = op.attributes["dimension"].value
    reverse = op.attributes.get("is_reverse")
    inputs, carries = operands[:n_in], list(operands[n_in:])
    n_out = op.num_results - n_carry
    size = inputs[0].data.shape[inputs[0].batch + dim] if inputs else \
        op.results[0].type.shape[dim]
    if size is None:
        raise InterpreterError(None, "'chlo.scan' without inputs needs a static scan size")
    positions = range(size - 1, -1, -1) if reverse is not None and reverse.value else \
        range(size)
    steps: dict[int, list] = {}
    for i in positions:
        slices = [Tensor(RankedTensorType(t.shape[:dim] + t.shape[dim + 1:], t.element_type),
                         np.take(t.data, i, axis=t.batch + dim), t.batch) for t in inputs]
        results = ctx.run_region(op.regions[0], slices + carries)
        steps[i] = results[:n_out]
        carries = list(results[n_out:])
    outputs = [_stack(ctx, op, j, [steps[i][j] for i in range(size)], dim)
               for j in range(n_out)]
    return outputs + carries


def _stack(ctx, op, index: int, slices: list, dim: int) -> Tensor:
    if not slices:
        t = op.results[index].type
        return Tensor(t, np.zeros(t.shape, dtype=storage_dtype(t.element_type)), 0)
    nb = batching.batch_of(*slices)
    arrays = [ctx.broadcast(s).data if nb else s.data for s in slices]
    return batching.make(op, np.stack(arrays, axis=nb + dim), nb, index)


# -- ragged_dot ----------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY"


def _group_bounds(group_sizes: np.ndarray, lhs_shape: tuple, prefix: list[int], ragged: int):
    """Each group's [start, limit) along the ragged dimension, as arrays ``[g, *lhs]``
    broadcastable to the lhs (group_sizes is ``[*prefix, g]`` or just ``[g]``)."""
    sizes = group_sizes.astype(np.int64)
    limits = np.cumsum(sizes, axis=-1)
    starts = limits - sizes
    rank = len(lhs_shape)
    shape = [1] * rank
    if sizes.ndim > 1:
        order = sorted(range(len(prefix)), key=lambda i: prefix[i])
        starts = np.transpose(starts, (*order, len(prefix)))
        limits = np.transpose(limits, (*order, len(prefix)))
        for d in prefix:
            shape[d] = lhs_shape[d]
    g = sizes.shape[-1]
    starts = np.moveaxis(starts, -1, 0).reshape((g, *shape))
    limits = np.moveaxis(limits, -1, 0).reshape((g, *shape))
    iota = np.arange(lhs_shape[ragged]).reshape([lhs_shape[ragged] if d == ragged else 1
                                                 for d in range(rank)])
    return (starts <= iota[None]) & (iota[None] < limits)




@kernel("chlo.ragged_dot")
@per_process
def ragged_dot(ctx, op, lhs, rhs, group_sizes):
    """dot_general with one ragged lhs dimension split into consecutive groups of
    ``group_sizes``: a non-contracting one (each group of rows uses its own slice of the
    rhs group dimension), a contracting one (one result per group, stacked in front), or a
    batch one (a plain batched dot). Floats accumulate in double, integers in int64."""
    dims = op.attributes["ragged_dot_dimension_numbers"]
    ragged = dims.lhs_ragged_dimensions[0]
    lhs_rank, rhs_rank = lhs.data.ndim, rhs.data.ndim
    letters = iter(_LETTERS)
    lhs_l = [next(letters) for _ in range(lhs_rank)]
    rhs_l = [next(letters) for _ in range(rhs_rank)]
    for a, b in zip(dims.lhs_batching_dimensions, dims.rhs_batching_dimensions, strict=True):
        rhs_l[b] = lhs_l[a]
    for a, b in zip(dims.lhs_contracting_dimensions, dims.rhs_contracting_dimensions,
                    strict=True):
        rhs_l[b] = lhs_l[a]
    used = set(dims.lhs_batching_dimensions) | set(dims.lhs_contracting_dimensions)
    rhs_used = set(dims.rhs_batching_dimensions) | set(dims.rhs_contracting_dimensions) \
        | set(dims.rhs_group_dimensions)
    out = [lhs_l[d] for d in dims.lhs_batching_dimensions] + \
        [lhs_l[d] for d in range(lhs_rank) if d not in used] + \
        [rhs_l[d] for d in range(rhs_rank) if d not in rhs_used]
    a, b = _accumulate_type(lhs, rhs)
    if ragged in dims.lhs_batching_dimensions:
        data = np.einsum(f"{''.join(lhs_l)},{''.join(rhs_l)}->{''.join(out)}", a, b)
    else:
        mask = _group_bounds(group_sizes.data, lhs.data.shape,
                             ragged_prefix_dims(dims, ragged), ragged)
        masked = np.where(mask, a[None], np.zeros((), a.dtype))
        group = "Z"
        for d in dims.rhs_group_dimensions:
            rhs_l[d] = group
        result = out if dims.rhs_group_dimensions else [group, *out]
        data = np.einsum(f"{group}{''.join(lhs_l)},{''.join(rhs_l)}->{''.join(result)}",
                         masked, b)
    et = op.results[0].type.element_type
    if is_float(et):
        return _rounded(op, data, 0)
    if not is_complex(et):
        data = wrap(data, et)
    return batching.make(op, data, 0)


def _accumulate_type(lhs: Tensor, rhs: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Both operands in the type dot products accumulate in here."""
    ets = (lhs.element_type, rhs.element_type)
    if any(is_complex(t) for t in ets):
        wide_type = np.complex128
    elif any(is_float(t) for t in ets):
        wide_type = np.float64
    else:
        return wide(lhs.data, ets[0]).astype(np.int64), wide(rhs.data, ets[1]).astype(np.int64)
    return lhs.data.astype(wide_type), rhs.data.astype(wide_type)
