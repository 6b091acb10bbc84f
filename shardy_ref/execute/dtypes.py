"""Element types at run time: the NumPy dtype that stores each StableHLO element type, and
the integer wrap-around every integer kernel ends with.

A tensor's array always has exactly ``storage_dtype(element_type)``: ``bool`` for ``i1``,
NumPy's integers for 8-64 bits, ml_dtypes' ``int2``/``int4``/``uint2``/``uint4`` for the
narrow integers, ``float16``/``float32``/``float64``, ml_dtypes for ``bf16`` and the f8/f6/f4
formats, ``complex64``/``complex128``. Kernels may compute in a wider type but convert back
(StableHLO spec, "Types": integer arithmetic wraps modulo 2^width).
"""
from __future__ import annotations

from functools import cache

import numpy as np

from shardy_ref.ir.dtypes import numpy_dtype
from shardy_ref.ir.types import ComplexType, FloatType, IndexType, IntegerType, OpaqueType, Type


@cache
def storage_dtype(element_type: Type) -> np.dtype:
    """The NumPy dtype holding elements of ``element_type`` (a quantized type's elements are
    its storage integers)."""
    if isinstance(element_type, OpaqueType) and element_type.dialect == "quant":
        from shardy_ref.execute.quant_types import quant_type
        try:
            return storage_dtype(quant_type(element_type).storage_type)
        except ValueError as e:
            raise KeyError(f"no NumPy dtype for element type {element_type}: {e}") from e
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, IntegerType) and element_type.width == 1:
        return np.dtype(np.bool_)
    if isinstance(element_type, IntegerType) and element_type.width not in (2, 4, 8, 16, 32, 64):
        raise KeyError(f"no NumPy dtype for element type {element_type}")
    name = str(element_type)
    if isinstance(element_type, IntegerType) and element_type.is_signless:
        name = f"si{element_type.width}" if element_type.width > 1 else name
    if name.startswith("si"):
        name = "i" + name[2:]
    return numpy_dtype(name)


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def is_complex(t: Type) -> bool:
    return isinstance(t, ComplexType)


def is_bool(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.width == 1


def is_integer(t: Type) -> bool:
    """Integers of more than one bit (and ``index``)."""
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width > 1)


def is_unsigned(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.is_unsigned


def bit_width(t: Type) -> int:
    if isinstance(t, IndexType):
        return 64
    if isinstance(t, ComplexType):
        return 2 * bit_width(t.element_type)
    return t.width


@cache
def _wide_dtype(element_type: Type) -> np.dtype:
    return np.dtype(np.uint64 if is_unsigned(element_type) else np.int64)


def wide(data: np.ndarray, element_type: Type) -> np.ndarray:
    """Integer data as int64 (uint64 for unsigned types), for exact arithmetic."""
    return np.asarray(data).astype(_wide_dtype(element_type), copy=False)


def wrap(data: np.ndarray, element_type: Type) -> np.ndarray:
    """Integer values (any integer dtype, possibly out of range) reduced modulo 2^width into
    ``element_type``'s range, stored in its dtype: two's-complement wrap-around."""
    dtype = storage_dtype(element_type)
    width = bit_width(element_type)
    data = np.asarray(data)
    if width >= 64 or data.dtype == dtype or (width >= 8 and dtype.kind in "iu"):
        return data.astype(dtype, copy=False)  # NumPy's integer casts wrap modulo 2^width
    bits = data.astype(np.uint64) & np.uint64((1 << width) - 1)
    if is_unsigned(element_type):
        return bits.astype(dtype)
    signed = bits.astype(np.int64)
    signed = np.where(signed >= (1 << (width - 1)), signed - (1 << width), signed)
    return signed.astype(dtype)


def int_range(element_type: Type) -> tuple[int, int]:
    """The smallest and largest value of an integer type."""
    width = bit_width(element_type)
    if is_unsigned(element_type):
        return 0, (1 << width) - 1
    return -(1 << (width - 1)), (1 << (width - 1)) - 1
