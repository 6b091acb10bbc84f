"""``stablehlo.compare`` (StableHLO spec "compare"): ``EQ NE GE GT LE LT`` elementwise,
giving ``i1``.

- Integers compare as signed or unsigned by their element type (the reference reads the
  type, not ``compare_type``, which the spec requires to agree); ``i1``: false < true.
- Floats with ``compare_type`` ``FLOAT`` (or none): IEEE quiet comparisons, as NumPy's
  (NaN is unordered, ``-0 == +0``).
- Floats with ``TOTALORDER``: IEEE ``totalOrder``, ``-NaN < -inf < ... < -0 < +0 < ... <
  +inf < +NaN``, on every direction including ``EQ`` (so ``-0 != +0`` and a NaN equals
  itself), as XLA implements it: sign-magnitude bits mapped to two's-complement keys.
  The reference interpreter ignores ``compare_type`` and compares as ``FLOAT``; we follow
  the spec here.
- Complex numbers: ``EQ``/``NE`` of both parts (other directions are not defined).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import wide
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.elementwise_base import kind, result, unsupported
from shardy_ref.execute.kernels.elementwise_bits import to_bits
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

UFUNCS = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
          "LE": np.less_equal, "LT": np.less}


def total_order_keys(data: np.ndarray, t) -> np.ndarray:
    """Signed integers ordered as ``totalOrder`` orders the floats ``data``: negative
    values (sign bit set) get their magnitude bits flipped."""
    if data.dtype.itemsize * 8 == t.width and data.dtype.itemsize >= 2:
        s = data.view(np.dtype(f"i{data.dtype.itemsize}"))
        return s ^ ((s >> (t.width - 1)) & ((1 << (t.width - 1)) - 1))
    bits = to_bits(data, t).astype(np.int64)
    if t.name == "f8E8M0FNU":  # no sign bit
        return bits
    half = 1 << (t.width - 1)
    s = np.where(bits >= half, bits - 2 * half, bits)
    return s ^ ((s >> 63) & (half - 1))


def compare_arrays(a: np.ndarray, b: np.ndarray, t, direction: str,
                   compare_type: str | None = None) -> np.ndarray:
    """``a <direction> b`` for elements of type ``t`` (a bool array)."""
    k = kind(t)
    ufunc = UFUNCS[direction]
    if k == "complex":
        if direction not in ("EQ", "NE"):
            raise InterpreterError(None, f"compare {direction} is not defined on {t}")
        return ufunc(a, b)
    if k in ("float", "float_narrow"):
        if compare_type == "TOTALORDER":
            return ufunc(total_order_keys(a, t), total_order_keys(b, t))
        if k == "float_narrow":
            a, b = a.astype(np.float32), b.astype(np.float32)
    elif k == "int_narrow":
        a, b = wide(a, t), wide(b, t)
    return ufunc(a, b)


@kernel("stablehlo.compare")
def compare(ctx, op, lhs: Tensor, rhs: Tensor) -> Tensor:
    t = lhs.type.element_type
    if not kind(t):
        raise unsupported(op, t)
    direction = op.attributes["comparison_direction"].value
    compare_type = op.attributes.get("compare_type")
    out = compare_arrays(lhs.data, rhs.data, t, direction,
                         compare_type.value if compare_type is not None else None)
    return result(op, out, lhs.batch or rhs.batch)
