"""Float literals exactly as MLIR prints and parses them.

MLIR prints a float with ``APFloat::toString(6, 0, false)`` (``1.000000e+00``) when that
text reads back to the same bits, else with APFloat's shortest default form
(``0.899999976``), else (infinities, NaNs, or a default form without ``.``) as the
bit pattern in hex (``0x7FC00000``). This module reimplements LLVM's decimal conversion
(``IEEEFloat::toString``, rounding half-up on decimal digits) with Python integers.
"""
from __future__ import annotations

import math
import struct
from functools import lru_cache

# name -> (precision in bits incl. the implicit bit, minimum normal exponent)
_SEMANTICS: dict[str, tuple[int, int]] = {
    "f16": (11, -14), "bf16": (8, -126), "f32": (24, -126), "f64": (53, -1022),
    "tf32": (11, -126), "f80": (64, -16382), "f128": (113, -16382),
    "f8E5M2": (3, -14), "f8E4M3": (4, -6), "f8E4M3FN": (4, -6), "f8E5M2FNUZ": (3, -15),
    "f8E4M3FNUZ": (4, -7), "f8E4M3B11FNUZ": (4, -10), "f8E3M4": (5, -2), "f8E8M0FNU": (1, -127),
    "f4E2M1FN": (2, 0), "f6E2M3FN": (4, 0), "f6E3M2FN": (3, -2),
}


def format_float(value: float, type_) -> str:
    """The text MLIR prints for ``value`` of float type ``type_`` (a FloatType or its name)."""
    value = float(value)
    name = getattr(type_, "name", type_)
    if value == 0:  # +0.0 and -0.0 share a cache key, so keep them out of the cache
        return _format.__wrapped__(value, name)
    return _format(value, name)


@lru_cache(maxsize=65536)
def _format(value: float, name: str) -> str:
    if math.isnan(value) or math.isinf(value):
        return hex_bits(value, name)
    from fractions import Fraction

    precision, emin = _SEMANTICS[name]
    text = to_string(value, precision, 6, 0, False)
    if round_to_semantics(Fraction(text), precision, emin) == Fraction(value) and \
            (value != 0 or math.copysign(1, value) == (-1 if text.startswith("-") else 1)):
        return text
    text = to_string(value, precision, 0, 3, True)
    if "." in text:
        return text
    return hex_bits(value, name)


def to_string(value: float, precision: int, format_precision: int, max_padding: int,
              truncate_zero: bool) -> str:
    """``IEEEFloat::toString`` for a finite ``value`` of a format with ``precision`` bits."""
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        if max_padding:
            return sign + "0"
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0.0" + "0" * max(format_precision - 1, 0) + "e+00"
    if not format_precision:
        format_precision = 2 + precision * 59 // 196
    mantissa, exp = math.frexp(abs(value))
    sig = int(mantissa * (1 << 64))
    exp -= 64
    tz = (sig & -sig).bit_length() - 1
    sig >>= tz
    exp += tz
    # Change the exponent from 2^e to 10^e.
    if exp > 0:
        sig <<= exp
        exp = 0
    elif exp < 0:
        sig *= 5 ** (-exp)
    # AdjustToPrecision on the integer: drop decimal digits beyond what is needed.
    bits_required = (format_precision * 196 + 58) // 59
    bits = sig.bit_length()
    if bits > bits_required:
        tens = (bits - bits_required) * 59 // 196
        if tens:
            exp += tens
            sig //= 10 ** tens
    digits = str(sig)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    buffer = stripped[::-1]  # least significant digit first, as LLVM keeps it
    buffer, exp = _adjust_digits(buffer, exp, format_precision)
    return sign + _layout(buffer, exp, format_precision, max_padding, truncate_zero)


def _adjust_digits(buffer: str, exp: int, format_precision: int) -> tuple[str, int]:
    """Round the digit buffer (least significant first) to ``format_precision`` digits, half up."""
    n = len(buffer)
    if n <= format_precision:
        return buffer, exp
    first = n - format_precision
    if buffer[first - 1] < "5":
        while first < n and buffer[first] == "0":
            first += 1
        return buffer[first:], exp + first
    chars = list(buffer)
    for i in range(first, n):
        if chars[i] == "9":
            first += 1
        else:
            chars[i] = chr(ord(chars[i]) + 1)
            break
    if first == n:
        return "1", exp + first
    return "".join(chars[first:]), exp + first


def _layout(buffer: str, exp: int, format_precision: int, max_padding: int,
            truncate_zero: bool) -> str:
    nd = len(buffer)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or nd + exp > format_precision
    else:
        msd = exp + nd - 1
        scientific = msd < 0 and -msd > max_padding
    digits = buffer[::-1]  # most significant first
    if scientific:
        exp += nd - 1
        out = digits[0] + "."
        if nd == 1 and truncate_zero:
            out += "0"
        else:
            out += digits[1:]
        if not truncate_zero and format_precision > nd - 1:
            out += "0" * (format_precision - nd + 1)
        out += "E" if truncate_zero else "e"
        out += "+" if exp >= 0 else "-"
        e = str(abs(exp))
        if not truncate_zero and len(e) < 2:
            e = "0" + e
        return out + e
    if exp >= 0:
        return digits + "0" * exp
    whole = exp + nd
    if whole > 0:
        return digits[:whole] + "." + digits[whole:]
    return "0." + "0" * (-whole) + digits


def round_to_semantics(q, precision: int, emin: int):
    """A Fraction ``q`` rounded to nearest-even in a binary format of ``precision`` bits."""
    from fractions import Fraction

    if q == 0:
        return q
    neg = q < 0
    q = -q if neg else q
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - precision + 1)
    n = q / quantum
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2):
        fl += 1
    r = fl * quantum
    return -r if neg else r


def hex_bits(value: float, name: str) -> str:
    """``0x7FC00000``: the value's bit pattern as MLIR prints special floats."""
    bits = float_to_bits(value, name)
    return f"0x{bits:X}"


def float_to_bits(value: float, name: str) -> int:
    if name == "f64":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "f32":
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if name == "f16":
        return struct.unpack("<H", struct.pack("<e", value))[0]
    if name == "bf16":
        return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    return int(np.array(value, dtype=numpy_dtype(name)).view(_uint_for(name)))


def bits_to_float(bits: int, name: str) -> float:
    """Inverse of :func:`float_to_bits`: read a hex float literal of a given type."""
    if name == "f64":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if name == "f32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if name == "f16":
        return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]
    if name == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    return float(np.array(bits, dtype=_uint_for(name)).view(numpy_dtype(name)))


def _uint_for(name: str):
    import numpy as np
    return np.uint8  # every remaining format is at most 8 bits wide


def round_float(value: float, name: str) -> float:
    """``value`` (a double) converted to the format ``name``, as MLIR's parser does."""
    if name == "f64" or math.isnan(value) or math.isinf(value) or value == 0:
        return value  # zeros keep their sign (a Fraction would drop it)
    if name == "f32":
        try:
            return struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    from fractions import Fraction

    precision, emin = _SEMANTICS[name]
    return float(round_to_semantics(Fraction(value), precision, emin))
