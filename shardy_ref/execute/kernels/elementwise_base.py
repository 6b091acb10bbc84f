"""What the elementwise kernels share: element kinds, results, alignment of rank-0 operands,
and rounding to the narrow float types exactly as the reference does.

Element kinds (:func:`kind`): ``bool`` (``i1``), ``int`` (8-64 bits and ``index``, NumPy
integers), ``int_narrow`` (2/4 bits, ml_dtypes), ``float`` (``f16``/``f32``/``f64``),
``float_narrow`` (``bf16`` and the f8/f6/f4 formats, ml_dtypes), ``complex``.

Precision policy (StableHLO spec, "Types"; the reference's ``Element.cpp``):

- The reference does ``+ - * /``, ``remainder``, ``sqrt`` in the element type's own IEEE
  arithmetic (APFloat), i.e. correctly rounded. NumPy's ``float32``/``float64`` ufuncs are
  exactly that, and its ``float16`` ufuncs compute in ``float32`` and round once, which is
  also correctly rounded: with p' >= 2p + 2 bits (24 >= 2*11 + 2) rounding twice equals
  rounding once (Figueroa, "When is double rounding innocuous?"). The narrow formats (p <= 8)
  likewise compute in ``float32`` and round once with :func:`round_to` (``f8E8M0FNU``, whose
  range exceeds float32's, in ``float64``): bit-identical to the reference.
- The reference computes transcendental functions in ``double`` and rounds to the element
  type (``mapWithUpcastToDouble``); so do we for f16 and the narrow formats (bit-identical
  up to the last bit of NumPy's float64 function vs glibc's). ``f32`` calls NumPy's float32
  functions directly (within ~1 ulp of the reference: speed wins), ``f64`` NumPy's float64.

:func:`round_to` rounds like APFloat's ``convert`` (nearest, ties to even) including each
format's special rules: ml_dtypes converts float64 through float32 (rounding twice) and
saturates differently, so values are first rounded on the target's grid here, overflow and
non-finite values mapped as APFloat does, and only exact values handed to ml_dtypes.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from shardy_ref.execute.batching import result_type
from shardy_ref.execute.dtypes import storage_dtype, wrap
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.types import ComplexType, FloatType, IndexType, IntegerType

NATIVE_FLOATS = frozenset({np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)})


@cache
def kind(t) -> str:
    """The element kind of ``t`` (see the module docstring); ``""`` if unsupported."""
    if isinstance(t, IndexType):
        return "int"
    if isinstance(t, IntegerType):
        if t.width == 1:
            return "bool"
        return "int" if t.width >= 8 else "int_narrow"
    if isinstance(t, FloatType):
        try:
            dtype = storage_dtype(t)
        except KeyError:
            return ""
        return "float" if dtype in NATIVE_FLOATS else "float_narrow"
    if isinstance(t, ComplexType) and str(t.element_type) in ("f32", "f64"):
        return "complex"
    return ""


def unsupported(op, t) -> InterpreterError:
    return InterpreterError(None, f"'{op.name}' does not support element type {t}")


def result(op, data, nb: int) -> Tensor:
    """Result 0 of ``op`` holding ``data`` (``nb`` batch dimensions in front)."""
    if type(data) is not np.ndarray:  # ufuncs return NumPy scalars for 0-d inputs
        data = np.asarray(data)
    t = op.results[0].type
    if None in t.shape:
        t = result_type(op, 0, data.shape[nb:])
    return Tensor(t, data, nb)


def batch(*values: Tensor) -> int:
    """The batch rank of a result computed from ``values`` (that of any varying one)."""
    for v in values:
        if v.batch:
            return v.batch
    return 0


def aligned(value: Tensor, rank: int) -> np.ndarray:
    """``value``'s array broadcastable against a rank-``rank`` result: a varying rank-0
    operand (``clamp``'s bounds, ``select``'s predicate) gets singleton element dims."""
    data = value.data
    if value.batch and len(value.type.shape) < rank:
        data = data.reshape(data.shape[:value.batch] + (1,) * (rank - len(value.type.shape))
                            + data.shape[value.batch:])
    return data


def to_array(x) -> np.ndarray:
    return x if type(x) is np.ndarray else np.asarray(x)


def wrap_int(data: np.ndarray, t) -> np.ndarray:
    """Integers (any integer dtype) wrapped modulo 2^width into ``t``'s storage: a NumPy
    cast for 8-64-bit types (C casts wrap), :func:`~shardy_ref.execute.dtypes.wrap` for
    the narrow ml_dtypes ones."""
    dtype = storage_dtype(t)
    if dtype.kind in "iu":
        return np.asarray(data).astype(dtype, copy=False)
    return wrap(data, t)


# -- floats -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FloatFormat:
    """A float format as APFloat sees it: ``precision`` bits (with the implicit one), the
    exponent of the smallest subnormal ``min_ulp``, the largest finite value, and what
    happens to overflow and non-finite values (``behaviour``):

    - ``ieee``: infinities and NaNs (f16, bf16, f8E5M2, f8E4M3, f8E3M4);
    - ``nan_only``: no infinity, overflow and infinities become NaN (f8E4M3FN; the FNUZ
      formats, which also have no negative zero);
    - ``finite_only``: no infinity or NaN (f4E2M1FN, f6E2M3FN, f6E3M2FN): overflow
      saturates, infinities and NaNs become a zero of their sign;
    - ``e8m0``: f8E8M0FNU, unsigned powers of two: no zero (the smallest value stands for
      it), no sign (see :func:`_e8m0` for what negative values become), overflow and
      non-finite values become NaN.
    """

    dtype: np.dtype
    precision: int
    min_ulp: int
    max: float
    behaviour: str
    compute: np.dtype  # where ``+ - * /`` are computed before rounding once


@cache
def float_format(t) -> FloatFormat:
    dtype = storage_dtype(t)
    if dtype in NATIVE_FLOATS:
        info = np.finfo(dtype)
    else:  # imported only here: ml_dtypes costs ~10 ms of every tool's start-up
        import ml_dtypes

        info = ml_dtypes.finfo(dtype)
    name = t.name
    if name == "f8E8M0FNU":
        behaviour = "e8m0"
    elif name.startswith(("f4", "f6")):
        behaviour = "finite_only"
    elif name.endswith(("FN", "FNUZ")):
        behaviour = "nan_only"
    else:
        behaviour = "ieee"
    min_ulp = int(np.log2(float(info.smallest_subnormal)))
    compute = np.dtype(np.float64 if behaviour == "e8m0" else np.float32)
    if dtype in NATIVE_FLOATS:
        compute = dtype
    return FloatFormat(dtype, int(info.nmant) + 1, min_ulp, float(info.max), behaviour,
                       compute)


def round_to(x: np.ndarray, t) -> np.ndarray:
    """Floats ``x`` (any float dtype) rounded to element type ``t`` as APFloat's
    ``convert`` with round-to-nearest-even does, in ``t``'s storage dtype."""
    dtype = storage_dtype(t)
    x = to_array(x)
    if x.dtype == dtype:
        return x
    with np.errstate(all="ignore"):  # overflow to infinity is the defined result
        if dtype in NATIVE_FLOATS:  # NumPy rounds float64 -> float16 directly, correctly
            return x.astype(dtype)
        fmt = float_format(t)
        if fmt.behaviour == "ieee" and x.dtype == np.float32:
            return x.astype(dtype)  # ml_dtypes rounds float32 once, IEEE-style
        return _round_generic(x.astype(np.float64), fmt)


def _round_generic(x: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Round on the target's grid (the ulp of each value, never finer than the smallest
    subnormal), then map overflow and non-finite values as the format's behaviour says."""
    with np.errstate(all="ignore"):
        negative = np.signbit(x)
        if fmt.behaviour == "e8m0":
            x = np.abs(x)
        _, exp = np.frexp(x)
        ulp = np.maximum(exp - fmt.precision, fmt.min_ulp)
        r = np.ldexp(np.rint(np.ldexp(x, -ulp)), ulp)
        big = np.abs(r) > fmt.max
        finite = np.isfinite(x)
        if fmt.behaviour == "ieee":
            r = np.where(big, np.copysign(np.inf, x), r)
        elif fmt.behaviour == "nan_only":
            r = np.where(big | ~finite, np.copysign(np.nan, x), r)
        elif fmt.behaviour == "finite_only":
            r = np.where(big, np.copysign(fmt.max, x), r)
            r = np.where(finite, r, np.copysign(0.0, x))
        else:
            return _e8m0(r, big | ~finite, negative, fmt)
        return r.astype(fmt.dtype)


def _e8m0(r: np.ndarray, nan: np.ndarray, negative: np.ndarray, fmt: FloatFormat):
    """f8E8M0FNU from rounded magnitudes ``r``: zero becomes the smallest value; APFloat
    keeps a sign for a format without a sign bit and stores it in the exponent's top bit,
    so a negative nonzero value comes out as ``bits | 0x80`` (or NaN)."""
    out = np.where(nan, np.nan, np.maximum(r, 2.0 ** fmt.min_ulp)).astype(fmt.dtype)
    flag = negative & (r != 0) & ~nan
    if flag.any():
        bits = out.view(np.uint8) | np.where(flag, np.uint8(0x80), np.uint8(0))
        out = bits.view(fmt.dtype)
    return out


def basic_float(fn, t, *arrays) -> np.ndarray:
    """``fn`` (a correctly rounded operation: ``+ - * /``, sqrt, fmod...) of float arrays of
    type ``t``, rounded once to ``t``."""
    fmt = float_format(t)
    with np.errstate(all="ignore"):
        if fmt.compute == fmt.dtype:
            return to_array(fn(*arrays))
        return round_to(fn(*(a.astype(fmt.compute) for a in arrays)), t)


def via_double(fn, t, *arrays) -> np.ndarray:
    """``fn`` of float arrays of type ``t`` computed in float64 and rounded to ``t`` (the
    reference's ``mapWithUpcastToDouble``); f32 and f64 call ``fn`` directly (see the
    module docstring); the interpreter's ``np.errstate`` keeps their warnings off."""
    dtype = storage_dtype(t)
    if dtype == np.float32 or dtype == np.float64:
        return to_array(fn(*arrays))
    with np.errstate(all="ignore"):
        return round_to(fn(*(a.astype(np.float64) for a in arrays)), t)
