"""Helpers kernels share for varying values (JAX's ``batching.py`` in small).

A varying tensor's array has ``nb`` batch dimensions in front (``ctx.nb``); a uniform one
has none. Elementwise NumPy code works on a mix as is (broadcasting aligns trailing
dimensions); code that names axes shifts them by ``nb`` (:func:`axes`), or first gives every
operand the batch (:func:`unify`).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.values import Tensor, Token, TupleValue
from shardy_ref.ir.types import RankedTensorType


def batch_of(*values) -> int:
    """The batch rank of a result computed from ``values``: that of any varying one."""
    for v in values:
        if v.batch:
            return v.batch
    return 0


def unify(ctx, *values: Tensor) -> tuple[list[np.ndarray], int]:
    """The operands' arrays, all with the batch dimensions if any operand is varying
    (broadcast views, nothing copied), and the result's batch rank."""
    nb = batch_of(*values)
    if not nb:
        return [v.data for v in values], 0
    return [v.data if v.batch else np.broadcast_to(v.data, ctx.batch_shape + v.data.shape)
            for v in values], nb


def axes(nb: int, dims) -> tuple[int, ...]:
    """Tensor dimensions ``dims`` as axes of an array with ``nb`` batch dimensions."""
    return tuple(int(d) + nb for d in dims)


def result_type(op, index: int, shape) -> RankedTensorType:
    """Result ``index``'s type with a static ``shape`` (its declared type if that is static)."""
    declared = op.results[index].type
    shape = tuple(int(d) for d in shape)
    if isinstance(declared, RankedTensorType) and declared.shape == shape:
        return declared
    return RankedTensorType(shape, declared.element_type)


def make(op, data: np.ndarray, nb: int, index: int = 0) -> Tensor:
    """Result ``index`` of ``op`` from ``data`` (``nb`` batch dimensions in front), converted
    to the result's storage dtype."""
    from shardy_ref.execute.dtypes import storage_dtype

    t = result_type(op, index, data.shape[nb:])
    dtype = storage_dtype(t.element_type)
    if data.dtype != dtype:
        data = data.astype(dtype)
    return Tensor(t, data, nb)


def select(ctx, mask: np.ndarray, on_true, on_false):
    """Per batch element, ``on_true`` where ``mask`` (an array of ``ctx.batch_shape``) holds,
    else ``on_false``: how divergent control flow of varying processes is merged."""
    if isinstance(on_true, Tensor):
        a, b = ctx.broadcast(on_true).data, ctx.broadcast(on_false).data
        m = mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
        return Tensor(on_true.type, np.where(m, a, b), ctx.nb)
    if isinstance(on_true, TupleValue):
        return TupleValue(tuple(select(ctx, mask, x, y)
                                for x, y in zip(on_true.elements, on_false.elements, strict=True)))
    if isinstance(on_true, Token):
        return on_true
    raise TypeError(f"cannot select between {type(on_true).__name__} values")


def scalar_mask(ctx, pred: Tensor) -> np.ndarray:
    """A varying ``tensor<i1>`` (or integer index) as an array of the batch shape."""
    return np.broadcast_to(pred.data, ctx.batch_shape)
