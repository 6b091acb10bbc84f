"""``dot_general`` and ``dot`` (StableHLO spec, "dot_general"; reference ``dotGeneralOp``), and
the contraction every matrix-like kernel (``convolution``) shares: :func:`contract`.

Each result element is ``sum(convert(lhs) * convert(rhs))`` over the contracting dimensions,
with both operands first converted to the *result* element type, as the reference does
(so ``i8 x i8 -> i32`` cannot overflow in ``i8``, and ``f32 x f32 -> f64`` multiplies in
f64). ``precision_config`` and ``algorithm`` do not change the result (the reference
ignores them). Result dimensions are ordered batch, lhs free, rhs free.

Arithmetic, by result element type:

- f32, f64: the reference adds the products one by one in index order, each product and
  partial sum rounded to the element type. Up to ``SEQUENTIAL_LIMIT`` multiply-adds (and
  at most ``SEQUENTIAL_MAX_K`` contracting positions) we do the same, one vectorized step per
  contracting position, bit-identical to the reference: partitioned programs split a
  contraction into partial sums and all-reduce them, and upstream's executable tests
  compare the result with the unpartitioned one exactly. Larger contractions take one
  ``np.matmul`` (BLAS) on the operands transposed to ``[batch, M, K] x [batch, K, N]``, which
  blocks and may fuse, so its results differ from the reference's by rounding only (a few
  ulps, more under cancellation): there speed wins, as in NumPy code computing the same.
- complex: one ``np.matmul`` (BLAS), as above.
- f16, bf16, f8, f6, f4: like the reference, products and partial sums are rounded to the
  element type at every step, adding the contracting positions in ascending lexicographic
  order: one vectorized step per contracting position (bit-identical to the reference).
  Each step computes in float32, which is exact for products of these types and gives the
  correctly rounded sum after a single rounding to the type (float32 has more than twice
  their precision plus two bits).
- integers: exact in int64 (uint64 for unsigned types), then wrapped to the result width:
  the same as the reference's wrap-around at every step, since wrapping is a ring map.
- i1: ``or`` of ``and`` (the reference's ``+`` and ``*`` on booleans).

Varying operands: the process dimensions of a varying operand become extra dot batching
dimensions when both vary, or extra free dimensions of the varying one otherwise, so one
``np.matmul`` serves every process.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import (
    int_range,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    storage_dtype,
    wide,
    wrap,
)
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

_BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                np.complex128))
_IEEE_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))
SEQUENTIAL_LIMIT = 1 << 22  # multiply-adds of an f32/f64 contraction done in reference order
SEQUENTIAL_MAX_K = 256  # contracting positions (vectorized steps) it may take


# -- element conversion (the reference's ``convert(resultElementType, element)``) ---------
def convert_elements(data: np.ndarray, src, dst) -> np.ndarray:
    """``data`` (elements of type ``src``) converted to element type ``dst`` as the
    reference's ``convert`` does: round to nearest even between floats, truncate toward zero
    and saturate (NaN to 0) from floats to integers, wrap between integers, nonzero to i1."""
    dtype = storage_dtype(dst)
    if data.dtype == dtype:
        return data
    if is_complex(src) and not is_complex(dst):
        data, src = data.real, src.element_type
    if is_bool(dst):
        return (data.astype(np.float64) if data.dtype.kind not in "biufc" else data) != 0
    if is_float(dst) or is_complex(dst):
        if is_float(src) or is_complex(src) or data.dtype == np.float64:
            return round_float(data, dtype)
        return round_float(data.astype(np.float64), dtype)  # integers (exact below 2^53)
    if is_float(src):
        return _float_to_int(data.astype(np.float64), dst)
    return wrap(wide(data, src), dst)


def round_float(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Floats rounded once (to nearest even) to ``dtype``. ml_dtypes converts float64 to its
    narrow types through float32, which can round twice; rounding to float32 *to odd*
    first makes the second rounding the correct one (float32 has >= 2 more bits)."""
    if data.dtype != np.float64 or dtype in _BLAS_DTYPES or dtype == np.float16:
        return data.astype(dtype)
    with np.errstate(over="ignore"):
        single = data.astype(np.float32)
    back = single.astype(np.float64)
    inexact = (back != data) & np.isfinite(back)
    if inexact.any():
        toward_zero = np.where(np.abs(back) > np.abs(data),
                               np.nextafter(single, np.float32(0)), single)
        odd = (toward_zero.view(np.uint32) | np.uint32(1)).view(np.float32)
        single = np.where(inexact, odd, single)
    return single.astype(dtype)


def _float_to_int(data: np.ndarray, dst) -> np.ndarray:
    lo, hi = int_range(dst)
    with np.errstate(invalid="ignore"):
        data = np.trunc(np.nan_to_num(data, nan=0.0, posinf=np.inf, neginf=-np.inf))
        big, small = data >= float(hi), data <= float(lo)
        middle = np.where(big | small, 0.0, data)
        middle = middle.astype(np.uint64 if is_unsigned(dst) else np.int64)
    out = np.where(big, hi, np.where(small, lo, middle))
    return wrap(out, dst)


# -- the contraction -------------------------------------------------------------------------
def contract(lhs: np.ndarray, rhs: np.ndarray, element_type) -> np.ndarray:
    """``lhs [..., M, K] @ rhs [..., K, N]`` (leading dimensions broadcast) in the arithmetic
    of ``element_type`` (both already stored in its dtype); see the module docstring."""
    dtype = storage_dtype(element_type)
    if dtype in _IEEE_DTYPES and _small(lhs, rhs):
        return _in_order(lhs, rhs, dtype)
    if dtype in _BLAS_DTYPES:
        return np.matmul(lhs, rhs)
    if is_bool(element_type):
        return np.matmul(lhs.astype(np.int64), rhs.astype(np.int64)) > 0
    if is_float(element_type):
        return _sequential(lhs, rhs, dtype)
    return wrap(np.matmul(wide(lhs, element_type), wide(rhs, element_type)), element_type)


def _small(lhs: np.ndarray, rhs: np.ndarray) -> bool:
    k = lhs.shape[-1]
    out = _size(np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])) * lhs.shape[-2] \
        * rhs.shape[-1]
    return k <= SEQUENTIAL_MAX_K and out * k <= SEQUENTIAL_LIMIT


def _in_order(lhs: np.ndarray, rhs: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The reference's order for an IEEE type NumPy computes in: each step adds one
    contracting position's products (every operation rounded to ``dtype``, as APFloat
    rounds it)."""
    shape = (*np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2]), lhs.shape[-2], rhs.shape[-1])
    acc = np.zeros(shape, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(lhs.shape[-1]):
            acc = acc + lhs[..., :, k, None] * rhs[..., None, k, :]
    return acc


def _sequential(lhs: np.ndarray, rhs: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The reference's element-type accumulation, one contracting position per step."""
    shape = (*np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2]), lhs.shape[-2], rhs.shape[-1])
    acc = np.zeros(shape, np.float32)
    a, b = lhs.astype(np.float32), rhs.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(lhs.shape[-1]):
            product = (a[..., :, k, None] * b[..., None, k, :]).astype(dtype)
            acc = (acc + product.astype(np.float32)).astype(dtype).astype(np.float32)
    return acc.astype(dtype)


def dot_general_arrays(lhs: np.ndarray, lhs_nb: int, rhs: np.ndarray, rhs_nb: int,
                       dims: tuple, element_type) -> tuple[np.ndarray, int]:
    """Contract ``lhs``/``rhs`` (``*_nb`` process dimensions in front, the same ones when
    both vary; elements already of ``element_type``) over ``dims = (lhs_batch, rhs_batch,
    lhs_contracting, rhs_contracting)``. Returns the result array (process dimensions, then
    batch, lhs free, rhs free) and its process rank.

    One matrix product for every process at once: a process dimension along which only
    one operand varies is folded into that operand's free dimensions (an operand the same
    on every process is multiplied once, not once per process), one along which both vary
    is a batching dimension, and one along which neither varies (a broadcast view) stays
    size 1 and is broadcast back."""
    proc = lhs.shape[:lhs_nb] or rhs.shape[:rhs_nb]
    lv, rv = _varying(lhs, lhs_nb), _varying(rhs, rhs_nb)
    both = [d for d in range(len(proc)) if d in lv and d in rv]
    only_l = [d for d in range(len(proc)) if d in lv and d not in rv]
    only_r = [d for d in range(len(proc)) if d in rv and d not in lv]
    a, lpos = _compact(lhs, lhs_nb, lv)
    b, rpos = _compact(rhs, rhs_nb, rv)
    lb, rb, lc, rc = (tuple(d) for d in dims)
    lsh, rsh = lhs.shape[lhs_nb:], rhs.shape[rhs_nb:]
    lf = tuple(d for d in range(len(lsh)) if d not in lb and d not in lc)
    rf = tuple(d for d in range(len(rsh)) if d not in rb and d not in rc)
    bshape = tuple(lsh[d] for d in lb)
    m_shape, n_shape = tuple(lsh[d] for d in lf), tuple(rsh[d] for d in rf)
    c_shape = tuple(proc[d] for d in both)
    l_shape, r_shape = tuple(proc[d] for d in only_l), tuple(proc[d] for d in only_r)
    k = _size(lsh[d] for d in lc)
    lo, ro = len(lv), len(rv)
    a = a.transpose([lpos[d] for d in both] + [d + lo for d in lb] + [lpos[d] for d in only_l]
                    + [d + lo for d in lf] + [d + lo for d in lc]
                    ).reshape((*c_shape, *bshape, _size(l_shape) * _size(m_shape), k))
    b = b.transpose([rpos[d] for d in both] + [d + ro for d in rb] + [d + ro for d in rc]
                    + [rpos[d] for d in only_r] + [d + ro for d in rf]
                    ).reshape((*c_shape, *bshape, k, _size(r_shape) * _size(n_shape)))
    out = contract(a, b, element_type).reshape(
        c_shape + bshape + l_shape + m_shape + r_shape + n_shape)
    if not proc:
        return out, 0
    return _processes_in_front(out, proc, both, only_l, only_r,
                               (len(bshape), len(m_shape), len(n_shape))), len(proc)


def _varying(x: np.ndarray, nb: int) -> set[int]:
    """The process dimensions along which ``x`` holds different data (not a broadcast)."""
    return {d for d in range(nb) if x.shape[d] > 1 and x.strides[d] != 0}


def _compact(x: np.ndarray, nb: int, keep: set[int]) -> tuple[np.ndarray, dict[int, int]]:
    """``x`` with only the process dimensions ``keep`` (others taken at 0), and where each
    kept one now is."""
    index = tuple(slice(None) if d in keep else 0 for d in range(nb))
    return x[index], {d: i for i, d in enumerate(sorted(keep))}


def _processes_in_front(out: np.ndarray, proc: tuple, both: list, only_l: list, only_r: list,
                        sizes: tuple[int, int, int]) -> np.ndarray:
    """``out`` laid out ``both, batch, only_l, lhs free, only_r, rhs free`` as ``proc``
    (size 1, broadcast, along process dimensions neither operand varies along), then
    batch, lhs free, rhs free."""
    nbatch, nm, nn = sizes
    c, lo = len(both), len(only_l)
    at_l = c + nbatch
    at_r = at_l + lo + nm
    order, shape = [], []
    for d, n in enumerate(proc):
        if d in both:
            order.append(both.index(d))
        elif d in only_l:
            order.append(at_l + only_l.index(d))
        elif d in only_r:
            order.append(at_r + only_r.index(d))
        else:
            continue
        shape.append(n)
    rest = list(range(c, c + nbatch)) + list(range(at_l + lo, at_l + lo + nm)) \
        + list(range(at_r + len(only_r), at_r + len(only_r) + nn))
    moved = out.transpose(order + rest)
    tail = moved.shape[len(order):]
    kept = tuple(n if (d in both or d in only_l or d in only_r) else 1
                 for d, n in enumerate(proc))
    return np.broadcast_to(moved.reshape(kept + tail), proc + tail)


def _size(shape) -> int:
    return int(np.prod(tuple(shape), dtype=np.int64))


def _check_dims(lhs: Tensor, rhs: Tensor, dims: tuple) -> None:
    lb, rb, lc, rc = dims
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise InterpreterError(None, "dot_general: batching and contracting dimension lists "
                               "of lhs and rhs must have the same sizes")
    for ld, rd in zip(lb + lc, rb + rc, strict=True):
        if not (0 <= ld < len(lhs.shape) and 0 <= rd < len(rhs.shape)) or \
                lhs.shape[ld] != rhs.shape[rd]:
            raise InterpreterError(None, f"dot_general: lhs dimension {ld} and rhs dimension "
                                   f"{rd} do not match ({lhs.type} vs {rhs.type})")


def run_dot(ctx, op, lhs: Tensor, rhs: Tensor, dims: tuple) -> Tensor:
    """Convert both operands to the result element type and contract them."""
    if not isinstance(lhs, Tensor) or not isinstance(rhs, Tensor):
        raise InterpreterError(None, "dot_general operands must be tensors")
    _check_dims(lhs, rhs, dims)
    et = op.results[0].type.element_type
    a = convert_elements(lhs.data, lhs.element_type, et)
    b = convert_elements(rhs.data, rhs.element_type, et)
    if lhs.batch and rhs.batch and lhs.batch != rhs.batch:
        a, b = ctx.broadcast(Tensor(lhs.type, a, lhs.batch)).data, \
            ctx.broadcast(Tensor(rhs.type, b, rhs.batch)).data
        nbl = nbr = ctx.nb
    else:
        nbl, nbr = lhs.batch, rhs.batch
    data, nb = dot_general_arrays(a, nbl, b, nbr, dims, et)
    return batching.make(op, data, nb)


@kernel("stablehlo.dot_general")
def dot_general(ctx, op, lhs, rhs) -> Tensor:
    dn = op.attributes["dot_dimension_numbers"]
    dims = (tuple(dn.lhs_batching_dimensions), tuple(dn.rhs_batching_dimensions),
            tuple(dn.lhs_contracting_dimensions), tuple(dn.rhs_contracting_dimensions))
    return run_dot(ctx, op, lhs, rhs, dims)


@kernel("stablehlo.dot")
def dot(ctx, op, lhs, rhs) -> Tensor:
    """The legacy ``dot``: vector/matrix products contracting lhs's last dimension with rhs's
    first (StableHLO's ``dot`` is ``dot_general`` without batching)."""
    if not isinstance(lhs, Tensor) or not isinstance(rhs, Tensor) or \
            not 1 <= len(lhs.shape) <= 2 or not 1 <= len(rhs.shape) <= 2:
        raise InterpreterError(None, "dot takes rank-1 or rank-2 tensors")
    return run_dot(ctx, op, lhs, rhs, ((), (), (len(lhs.shape) - 1,), (0,)))
