"""Tensors as text, the way the reference interpreter prints them (``Tensor::print``):
``tensor<2x2xi8> {`` then one bracketed row per line, indented two spaces per level, and
``}``; a scalar prints ``tensor<ui8> {1}``; elements print like MLIR attributes without
their type (``1.000000e+00``, ``true``), complex numbers as ``[re, im]``."""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.values import Tensor
from shardy_ref.ir.builtin_attrs import format_scalar
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType


def format_element(value, element_type) -> str:
    if isinstance(element_type, ComplexType):
        et = element_type.element_type
        return f"[{format_scalar(float(value.real), et)}, {format_scalar(float(value.imag), et)}]"
    if isinstance(element_type, FloatType):
        return format_scalar(float(value), element_type)
    if isinstance(element_type, IntegerType) and element_type.width == 1:
        return "true" if value else "false"
    return str(int(value))


def format_tensor(value: Tensor) -> str:
    """The reference interpreter's text of a uniform tensor."""
    et = value.element_type
    data = value.data
    if data.dtype.kind not in "biuc" and not isinstance(et, FloatType):
        data = data.astype(object)
    elif isinstance(et, FloatType):
        data = data.astype(np.float64)
    out = [f"{value.type} {{"]
    _print_helper(out, data, et, (), value.shape, 1)
    out.append("}")
    return "".join(out)


def _is_last(index: tuple, shape: tuple) -> bool:
    """The reference's ``isEndOfIterationSpace``: only the innermost index is compared."""
    return not index or index[-1] == shape[len(index) - 1] - 1


def _print_helper(out: list, data, et, index: tuple, shape: tuple, indent: int) -> None:
    if len(index) == len(shape):
        out.append(format_element(data[index], et))
        if not _is_last(index, shape):
            out.append(", ")
        return
    out.append("\n" + "  " * indent + "[")
    for i in range(shape[len(index)]):
        _print_helper(out, data, et, (*index, i), shape, indent + 1)
    out.append("]")
    if not _is_last(index, shape):
        out.append(",")
    else:
        out.append("\n" + "  " * (indent - 1))
