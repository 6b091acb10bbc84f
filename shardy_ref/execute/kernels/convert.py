"""``stablehlo.convert`` between every pair of element types (StableHLO spec "convert"; the
reference's ``convert`` overloads in ``Element.cpp``), and :func:`convert_array`, the same
conversion on plain arrays for other kernels.

- to ``i1``: nonzero is true (NaN too); a complex number's real part decides.
- integers to integers: sign- or zero-extend by the source's signedness, then wrap.
- integers (and ``i1`` as 0/1) to floats: correctly rounded from the exact integer. 64-bit
  integers beyond 2^53 are first narrowed to 53 significant bits with a sticky bit, so
  rounding them to a narrow float through float64 is still a single rounding.
- floats to integers: truncate toward zero and saturate to the type's range, NaN gives 0
  (APFloat's ``convertToInteger``; unsigned targets saturate negatives to 0).
- floats to floats: round to nearest even with each format's special values
  (:func:`~.elementwise_base.round_to`); f8E8M0FNU's NaN becomes +infinity there, as
  APFloat converts it (to integers it is still NaN: 0).
- complex to real types: the real part; real to complex: ``(x, 0)``.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import int_range, is_unsigned, storage_dtype, wide
from shardy_ref.execute.kernels import elementwise_complex as cx
from shardy_ref.execute.kernels.elementwise_base import (
    kind,
    result,
    round_to,
    to_array,
    unsupported,
    wrap_int,
)
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

_FLOATS = ("float", "float_narrow")


def convert_array(data: np.ndarray, src, dst) -> np.ndarray:
    """Elements ``data`` of type ``src`` converted to type ``dst`` (in its storage dtype)."""
    if src == dst:
        return data
    ks, kd = kind(src), kind(dst)
    if not ks or not kd:
        raise ValueError(f"cannot convert {src} to {dst}")
    if ks == "complex" and kd != "complex":
        data, src, ks = data.real, src.element_type, "float"
    if kd == "bool":
        return _to_bool(data, src)
    if kd == "complex":
        return _to_complex(data, src, dst)
    if kd in _FLOATS:
        return round_to(_e8m0_nan_as_inf(data, src), dst) if ks in _FLOATS else \
            _int_to_float(data, src, dst)
    if ks in _FLOATS:
        return _float_to_int(data, dst)
    if kd == "int" and ks != "int_narrow":
        return data.astype(storage_dtype(dst))  # C casts: extend or truncate (wrap)
    return wrap_int(wide(data, src) if ks == "int_narrow" else data, dst)


def _to_bool(data: np.ndarray, src) -> np.ndarray:
    k = kind(src)
    if k == "float_narrow":
        data = data.astype(np.float32)
    elif k == "int_narrow":
        data = wide(data, src)
    return np.asarray(data != 0)


def _to_complex(data: np.ndarray, src, dst) -> np.ndarray:
    part = dst.element_type
    dtype = storage_dtype(dst)
    if kind(src) == "complex":
        return cx.from_double(data, dtype)  # NumPy rounds each part once
    return cx.make(convert_array(data, src, part), np.zeros((), storage_dtype(part)), dtype)


def _e8m0_nan_as_inf(data: np.ndarray, src) -> np.ndarray:
    """APFloat converts f8E8M0FNU's NaN (0xFF) to another float format as +infinity."""
    if getattr(src, "name", "") != "f8E8M0FNU":
        return data
    wide_data = data.astype(np.float64)
    return np.where(np.isnan(wide_data), np.inf, wide_data)


def _int_to_float(data: np.ndarray, src, dst) -> np.ndarray:
    dtype = storage_dtype(dst)
    if kind(src) == "int_narrow":
        data = wide(data, src)
    if dtype.kind == "f" and dtype.itemsize >= 4:
        return data.astype(dtype)  # a single C conversion, correctly rounded
    if data.dtype.itemsize == 8 and data.dtype.kind in "iu":
        return round_to(_sticky_float64(data), dst)
    return round_to(data.astype(np.float64), dst)  # exact in float64


def _sticky_float64(v: np.ndarray) -> np.ndarray:
    """64-bit integers as float64 without a rounding that could mislead a second one:
    beyond 2^53, the low 12 bits are replaced by one sticky bit (set if any was)."""
    magnitude = np.abs(v.astype(np.float64))
    big = magnitude >= 2.0 ** 53
    if not big.any():
        return v.astype(np.float64)
    if v.dtype.kind == "i":
        negative = v < 0
        # |v| as uint64 (also for INT64_MIN): -(v + 1) cannot overflow where v < 0
        u = np.where(negative, (-(v + 1)).astype(np.uint64) + np.uint64(1), v.astype(np.uint64))
    else:
        negative, u = np.zeros(v.shape, bool), v
    low = u & np.uint64(0xFFF)
    narrowed = (u & ~np.uint64(0xFFF)) | np.where(low != 0, np.uint64(0x800), np.uint64(0))
    out = np.where(big, narrowed.astype(np.float64), v.astype(np.float64))
    return np.where(negative & big, -out, out)


def _float_to_int(data: np.ndarray, dst) -> np.ndarray:
    """Truncate toward zero, saturate, NaN -> 0. Bounds below 2^24 (2^53) are exact in
    float32 (float64), so up to 32-bit targets this is a clip in a float type that holds
    the operand exactly."""
    lo, hi = int_range(dst)
    small = hi < 2**24 and data.dtype.itemsize <= 4
    x = np.trunc(data.astype(np.float32 if small else np.float64))
    with np.errstate(invalid="ignore"):
        if hi < 2**53:
            x = to_array(np.clip(x, lo, hi))  # a NumPy scalar for 0-d operands
            np.copyto(x, 0, where=np.isnan(x))
            dtype = storage_dtype(dst)
            return x.astype(dtype) if dtype.kind in "iu" else wrap_int(x.astype(np.int64), dst)
        above, below = x >= float(hi) + 1.0, x < float(lo)  # 2^63 or 2^64: exact
        wide_dtype = np.dtype(np.uint64 if is_unsigned(dst) else np.int64)
        out = np.where(above | below | np.isnan(x), 0.0, x).astype(wide_dtype)
    out[above] = hi
    out[below] = lo
    return out


@kernel("stablehlo.convert")
def convert(ctx, op, x: Tensor) -> Tensor:
    src, dst = x.type.element_type, op.results[0].type.element_type
    if not kind(src) or not kind(dst):
        raise unsupported(op, src if not kind(src) else dst)
    return result(op, convert_array(x.data, src, dst), x.batch)

