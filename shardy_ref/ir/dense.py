"""Text form of ``dense<...>`` elements: nested lists, splats, and the hex blob MLIR uses
for more than 100 elements (``dense<"0x0100...">``, little-endian element bytes)."""
from __future__ import annotations

from shardy_ref.ir.types import ComplexType, FloatType, IntegerType

HEX_ELEMENT_LIMIT = 100  # MLIR prints elements as hex above this count


def format_dense(attr) -> str:
    """The text between ``dense<`` and ``>`` for a DenseElementsAttr."""
    from shardy_ref.ir.builtin_attrs import format_scalar

    et = attr.type.element_type
    if attr.is_splat:
        return format_scalar(attr.values[0], et)
    n = len(attr.values)
    if n == 0:
        return ""
    if n > HEX_ELEMENT_LIMIT:
        return '"0x' + to_bytes(attr.values, et).hex().upper() + '"'
    items = [format_scalar(v, et) for v in attr.values]
    return _nest(items, attr.type.shape)


def _nest(items: list[str], shape) -> str:
    if not shape:
        return items[0]
    for dim in reversed(shape[1:]):
        items = ["[" + ", ".join(items[i:i + dim]) + "]" for i in range(0, len(items), dim)]
    return "[" + ", ".join(items) + "]"


def to_bytes(values, et) -> bytes:
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    return np.asarray(values, dtype=numpy_dtype(str(et))).tobytes()


def from_bytes(data: bytes, et, count: int) -> tuple:
    """Element values from a hex blob; a blob of exactly one element is a splat."""
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    arr = np.frombuffer(data, dtype=numpy_dtype(str(et)))
    if isinstance(et, ComplexType):
        return tuple(complex(v) for v in arr)
    if isinstance(et, FloatType):
        return tuple(float(v) for v in arr.astype(np.float64))
    if isinstance(et, IntegerType) and et.width == 1:
        return tuple(bool(v) for v in arr)
    return tuple(int(v) for v in arr)
