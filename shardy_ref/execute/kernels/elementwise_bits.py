"""Bit-level elementwise ops: ``shift_left shift_right_arithmetic shift_right_logical popcnt
count_leading_zeros bitcast_convert reduce_precision`` (StableHLO spec, "Operations"; the
reference's ``Element.cpp`` and ``Ops.cpp``).

- Shifts read the shift amount as an *unsigned* integer of the operand's width (APInt's
  ``getLimitedValue``): amounts >= width (negative ones included) give 0, or for the
  arithmetic right shift the sign (0 or -1). NumPy's shift ufuncs do exactly that on
  integers of the same dtype (``npy_lshift``/``npy_rshift``); the logical right shift of a
  signed type shifts its unsigned view, the arithmetic one of an unsigned type its signed
  view.
- ``popcnt``/``count_leading_zeros`` count within the element's width (signed values as
  their two's-complement bits).
- ``bitcast_convert`` reinterprets bits, little-endian like the reference: an element wider
  than the result's becomes a trailing dimension of narrower ones, lowest bits first
  (``bitcastConvertOneToMany``), and the other way round (``ManyToOne``); a complex
  number's real part is its low half. Types whose storage is their exact width use NumPy
  views; ``i1``, the 2/4-bit integers and f4/f6 go through their bits.
- ``reduce_precision`` rounds the mantissa to nearest-even on the bits, then flushes
  exponents out of the reduced range to zero or infinity; NaNs stay NaN (infinity when
  no mantissa bits are kept), as ``reducePrecision`` does.
"""
from __future__ import annotations

import sys

import numpy as np

from shardy_ref.execute.dtypes import bit_width, storage_dtype, wide, wrap
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.elementwise_base import (
    kind,
    result,
    round_to,
    unsupported,
    wrap_int,
)
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.types import ComplexType, FloatType

_U64 = np.uint64


def _unsigned(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"u{dtype.itemsize}")


def _signed(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


# -- shifts, popcnt, clz ----------------------------------------------------------------------
def _shift_native(name: str, unsigned: bool):
    """One ufunc call on the type's own dtype or its signed/unsigned view."""
    if name == "left":
        return np.left_shift
    view = _unsigned if name == "logical" else _signed
    if unsigned == (name == "logical"):
        return np.right_shift

    def fn(a, b):
        target = view(a.dtype)
        return np.asarray(np.right_shift(a.view(target), b.view(target))).view(a.dtype)
    return fn


def _shift_narrow(name: str, t):
    width = t.width
    mask = (1 << width) - 1

    def fn(a, b):
        amount = (wide(b, t).astype(np.int64) & mask)
        big = amount >= width
        amount = np.where(big, 0, amount)
        if name == "left":
            out = np.where(big, 0, wide(a, t).astype(np.int64) << amount)
        elif name == "logical":
            out = np.where(big, 0, (wide(a, t).astype(np.int64) & mask) >> amount)
        else:
            v = wide(a, t).astype(np.int64)
            v = np.where(v > mask >> 1, v - (1 << width), v)  # the bits read as signed
            out = np.where(big, np.where(v < 0, -1, 0), v >> amount)
        return wrap(out, t)
    return fn


def _register_shift(op_name: str, name: str):
    @kernel(op_name)
    def shift(ctx, op, lhs: Tensor, rhs: Tensor) -> Tensor:
        t = lhs.type.element_type
        k = kind(t)
        if k == "int":
            fn = _shift_native(name, lhs.data.dtype.kind == "u")
        elif k == "int_narrow":
            fn = _shift_narrow(name, t)
        else:
            raise unsupported(op, t)
        return result(op, fn(lhs.data, rhs.data), lhs.batch or rhs.batch)
    return shift


_register_shift("stablehlo.shift_left", "left")
_register_shift("stablehlo.shift_right_arithmetic", "arithmetic")
_register_shift("stablehlo.shift_right_logical", "logical")


def _int_bits(op, x: Tensor) -> tuple[np.ndarray, int]:
    """An integer operand's bits (an unsigned array) and its width."""
    t = x.type.element_type
    k = kind(t)
    if k == "int":
        return x.data.view(_unsigned(x.data.dtype)), bit_width(t)
    if k == "int_narrow":
        return wide(x.data, t).astype(np.int64) & ((1 << t.width) - 1), t.width
    raise unsupported(op, t)


@kernel("stablehlo.popcnt")
def popcnt(ctx, op, x: Tensor) -> Tensor:
    """The number of one bits of each element (spec "popcnt")."""
    bits, _ = _int_bits(op, x)
    return result(op, wrap_int(np.bitwise_count(bits), x.type.element_type), x.batch)


@kernel("stablehlo.count_leading_zeros")
def count_leading_zeros(ctx, op, x: Tensor) -> Tensor:
    """Leading zero bits within the width: ``width - bit_length``, where the bit length is
    the popcount of the value with every bit below its highest one set."""
    bits, width = _int_bits(op, x)
    smeared = np.array(bits, copy=True)
    shift = 1
    while shift < width:
        smeared |= smeared >> smeared.dtype.type(shift)
        shift *= 2
    clz = width - np.bitwise_count(smeared).astype(np.int64)
    return result(op, wrap_int(clz, x.type.element_type), x.batch)


# -- bits of any element type -----------------------------------------------------------------
def _parts(t) -> tuple:
    """The element types whose bits make up one element of ``t`` (low bits first)."""
    return (t.element_type, t.element_type) if isinstance(t, ComplexType) else (t,)


def to_bits(data: np.ndarray, t) -> np.ndarray:
    """The bits of non-complex elements as uint64 (the element's width, zero-extended)."""
    dtype = data.dtype
    if dtype == np.bool_:
        return data.astype(_U64)
    if kind(t) == "int_narrow":
        return wide(data, t).astype(np.int64).astype(_U64) & _U64((1 << t.width) - 1)
    raw = data.view(_unsigned(dtype)).astype(_U64)
    width = bit_width(t)
    return raw if width == 64 else raw & _U64((1 << width) - 1)


def from_bits(bits: np.ndarray, t) -> np.ndarray:
    """Elements of non-complex type ``t`` from their bits (uint64)."""
    dtype = storage_dtype(t)
    if dtype == np.bool_:
        return bits != 0
    if kind(t) == "int_narrow":
        return wrap(bits, t)
    return bits.astype(_unsigned(dtype)).view(dtype)


def _contiguous(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else np.array(a, order="C")


def _byte_exact(t) -> bool:
    """Whether NumPy's storage of ``t`` is exactly its bits (views can reinterpret it)."""
    if isinstance(t, ComplexType):
        return kind(t) == "complex"
    return kind(t) != "" and storage_dtype(t).itemsize * 8 == bit_width(t) and \
        storage_dtype(t) != np.bool_


def _units(data: np.ndarray, t, unit: int) -> np.ndarray:
    """Each element as ``width / unit`` little-endian chunks of ``unit`` bits, in a new
    trailing dimension."""
    if isinstance(t, ComplexType):
        parts = [data.real, data.imag]
    else:
        parts = [data]
    chunks = []
    for part in parts:
        bits = to_bits(part, _parts(t)[0])
        mask = _U64((1 << unit) - 1) if unit < 64 else _U64(0xFFFFFFFFFFFFFFFF)
        for i in range(bit_width(_parts(t)[0]) // unit):
            chunks.append((bits >> _U64(i * unit)) & mask)
    return np.stack(chunks, axis=-1)


def _assemble(units: np.ndarray, t, unit: int) -> np.ndarray:
    """The inverse of :func:`_units`: trailing chunks -> elements of ``t``."""
    part_type = _parts(t)[0]
    per_part = bit_width(part_type) // unit
    parts = []
    for p in range(len(_parts(t))):
        bits = np.zeros(units.shape[:-1], _U64)
        for i in range(per_part):
            bits |= units[..., p * per_part + i] << _U64(i * unit)
        parts.append(from_bits(bits, part_type))
    if len(parts) == 1:
        return parts[0]
    out = np.empty(parts[0].shape, storage_dtype(t))
    out.real, out.imag = parts
    return out


def bitcast(data: np.ndarray, src, dst) -> np.ndarray:
    """Reinterpret elements of ``src`` as ``dst``: equal widths elementwise, a wider source
    split into a trailing dimension, a narrower one merged from its trailing dimension."""
    ws, wd = bit_width(src), bit_width(dst)
    if _byte_exact(src) and _byte_exact(dst) and sys.byteorder == "little":
        dtype = storage_dtype(dst)
        if ws == wd:
            return data.view(dtype)
        if ws > wd:
            return _contiguous(data[..., None]).view(dtype)
        return _contiguous(data).view(dtype)[..., 0]
    unit = min(bit_width(_parts(src)[0]), bit_width(_parts(dst)[0]))
    units = _units(data, src, unit)
    if ws < wd:  # merge the trailing dimension into one element
        units = units.reshape((*units.shape[:-2], -1))
    elif ws > wd:
        units = units.reshape((*units.shape[:-1], ws // wd, wd // unit))
    return _assemble(units, dst, unit)


@kernel("stablehlo.bitcast_convert")
def bitcast_convert(ctx, op, x: Tensor) -> Tensor:
    src, dst = x.type.element_type, op.results[0].type.element_type
    ws, wd = _checked_widths(src, dst)
    if ws < wd and (not x.type.shape or x.type.shape[-1] != wd // ws):
        raise InterpreterError(None, f"cannot bitcast {x.type} to {op.results[0].type}")
    return result(op, bitcast(x.data, src, dst), x.batch)


def _checked_widths(src, dst) -> tuple[int, int]:
    if not kind(src) or not kind(dst):
        raise InterpreterError(None, f"cannot bitcast elements of {src} to {dst}")
    ws, wd = bit_width(src), bit_width(dst)
    if max(ws, wd) % min(ws, wd):
        raise InterpreterError(None, f"Unsupported bitcast conversion from {src} to {dst}")
    return ws, wd


# -- reduce_precision -------------------------------------------------------------------------
def reduce_precision_bits(bits: np.ndarray, t: FloatType, exponent_bits: int,
                          mantissa_bits: int) -> np.ndarray:
    """The reference's bit manipulation (uint64 bits of ``t`` in and out)."""
    width = t.width
    src_mantissa = t.precision - 1
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last = 1 << shift
        bias = (bits & _U64(last)) >> _U64(shift)  # round half to even
        bits = (bits + bias + _U64((last >> 1) - 1)) & ~_U64(last - 1)
    src_exponent = width - src_mantissa - 1
    if exponent_bits < src_exponent:
        exp_mask = ((1 << src_exponent) - 1) << src_mantissa
        exp_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & _U64(exp_mask)
        sign = bits & _U64(1 << (width - 1))
        overflow = exponent > _U64((exp_bias + reduced_bias) << src_mantissa)
        underflow = exponent <= _U64((exp_bias - reduced_bias) << src_mantissa)
        bits = np.where(overflow, sign | _U64(exp_mask), bits)
        bits = np.where(underflow, sign, bits)
    return bits & _U64((1 << width) - 1) if width < 64 else bits


@kernel("stablehlo.reduce_precision")
def reduce_precision(ctx, op, x: Tensor) -> Tensor:
    """Round to ``exponent_bits``/``mantissa_bits`` and back (spec "reduce_precision")."""
    t = x.type.element_type
    if kind(t) not in ("float", "float_narrow"):
        raise unsupported(op, t)
    e, m = op.attributes["exponent_bits"].value, op.attributes["mantissa_bits"].value
    if e < 1 or m < 0:
        raise InterpreterError(None, f"reduce_precision needs exponent_bits >= 1 and "
                               f"mantissa_bits >= 0, got {e} and {m}")
    data = x.data
    out = from_bits(reduce_precision_bits(to_bits(data, t), t, e, m), t)
    nan = np.isnan(data.astype(np.float32) if data.dtype.itemsize < 4 else data)
    if nan.any():
        keep = data if m > 0 else round_to(np.full(data.shape, np.inf), t)
        out = np.where(nan, keep, out)
    return result(op, out, x.batch)

