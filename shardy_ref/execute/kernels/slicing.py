"""Slicing kernels: ``slice``, ``pad``, ``dynamic_slice``, ``dynamic_update_slice``
(StableHLO spec, sections of the same names).

``slice`` is a strided basic slice (a view). ``pad`` writes the operand once into a
result filled with the padding value, at the positions that survive negative edge
padding. ``dynamic_slice``/``dynamic_update_slice`` clamp their start indices into range
(spec: ``clamp(start, 0, dim - size)``) for any integer index type. When the start
indices differ between processes (each process slicing its own shard, the way every
partitioned program addresses its data), all processes are served by one fancy-indexing
operation over the batch, never a per-process loop. :func:`slice_data` and
:func:`pad_data` are shared with ``dynamic.py``.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import wide
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.shape import attr_ints, lead
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


# -- slice ----------------------------------------------------------------------------------
def slice_data(x: Tensor, start, limit, strides) -> np.ndarray:
    """``x[start:limit:strides]`` (spec "slice"), checking the spec's constraints."""
    shape = x.shape
    if not len(start) == len(limit) == len(strides) == len(shape):
        raise InterpreterError(None, f"slice of {x.type} needs {len(shape)} start, limit and "
                               "stride values")
    for d, (s, e, st) in enumerate(zip(start, limit, strides, strict=True)):
        if not (0 <= s <= e <= shape[d] and st > 0):
            raise InterpreterError(None, f"slice [{s}:{e}:{st}] out of range for dimension "
                                   f"{d} of {x.type}")
    index = tuple(slice(s, e, st) for s, e, st in zip(start, limit, strides, strict=True))
    return x.data[(slice(None),) * x.batch + index]


@kernel("stablehlo.slice")
def slice_(ctx, op, operand: Tensor) -> Tensor:
    start = attr_ints(op, "start_indices")
    limit = attr_ints(op, "limit_indices")
    strides = attr_ints(op, "strides") or (1,) * len(start)
    return batching.make(op, slice_data(operand, start, limit, strides), operand.batch)


# -- pad ------------------------------------------------------------------------------------
def _pad_dim(n: int, low: int, high: int, interior: int):
    """Result size of one padded dimension and the (operand, result) slices that copy
    the operand elements surviving negative padding; element ``i`` lands at
    ``low + i * (interior + 1)``."""
    step = interior + 1
    size = low + high + n + max(n - 1, 0) * interior
    if interior < 0 or size < 0:
        raise InterpreterError(None, f"invalid padding low={low} high={high} "
                               f"interior={interior} of a dimension of size {n}")
    first = max(0, -(low // step) if low < 0 else 0)  # ceil(-low / step)
    last = min(n - 1, (size - 1 - low) // step) if size else -1
    if first > last:
        return size, None, None
    return size, slice(first, last + 1), slice(low + first * step, low + last * step + 1, step)


def pad_data(ctx, operand: Tensor, value: Tensor, low, high, interior) -> tuple[np.ndarray,
                                                                                  int]:
    """The padded array (spec "pad") and its batch rank: allocated once, filled with the
    (possibly varying) padding value, the operand written into a strided window."""
    rank = len(operand.shape)
    if not len(low) == len(high) == len(interior) == rank:
        raise InterpreterError(None, f"pad of {operand.type} needs {rank} low, high and "
                               "interior values")
    dims = [_pad_dim(n, lo, hi, it) for n, lo, hi, it in
            zip(operand.shape, low, high, interior, strict=True)]
    nb = batching.batch_of(operand, value)
    batch = ctx.batch_shape[:nb] if nb else ()
    out = np.empty(batch + tuple(d[0] for d in dims), dtype=operand.data.dtype)
    out[...] = value.data.reshape(lead(value) + (1,) * (out.ndim - value.batch)) \
        if value.batch else value.data
    if all(d[1] is not None for d in dims):
        src = (slice(None),) * operand.batch + tuple(d[1] for d in dims)
        dst = (slice(None),) * nb + tuple(d[2] for d in dims)
        out[dst] = operand.data[src]
    return out, nb


@kernel("stablehlo.pad")
def pad(ctx, op, operand: Tensor, padding_value: Tensor) -> Tensor:
    out, nb = pad_data(ctx, operand, padding_value, attr_ints(op, "edge_padding_low"),
                       attr_ints(op, "edge_padding_high"), attr_ints(op, "interior_padding"))
    return batching.make(op, out, nb)


# -- dynamic_slice / dynamic_update_slice ---------------------------------------------------
def clamped_starts(ctx, starts, shape, sizes) -> list:
    """Each start index clamped into ``[0, dim - size]`` (spec "dynamic_slice" and
    "dynamic_update_slice", ``adjusted_start_indices``): a Python int if uniform (or the
    same for every process), else an int64 array over the batch. Unsigned indices keep
    their unsigned value (the reference interpreter sign-extends them)."""
    if len(starts) != len(shape):
        raise InterpreterError(None, f"{len(starts)} start indices for a rank-{len(shape)} "
                               "operand")
    out = []
    for s, n, k in zip(starts, shape, sizes, strict=True):
        if not 0 <= k <= n:
            raise InterpreterError(None, f"slice size {k} out of range for a dimension of "
                                   f"size {n}")
        if len(s.shape):
            raise InterpreterError(None, f"a start index must be a scalar, got {s.type}")
        data = np.clip(wide(s.data, s.element_type), 0, n - k).astype(np.int64)
        if s.batch:
            flat = data.reshape(-1)
            if (flat == flat[0]).all():
                data = flat[0]
        out.append(int(data) if data.ndim == 0 else data)
    return out


class _Window:
    """Where every process's window lies in an array with batch dimensions in front:
    dimensions with a uniform start are cut by a basic slice (a view); the array is then
    transposed so the dimensions whose start varies come first after the batch, where
    one advanced index (batch coordinates and ``start + arange(size)`` per varying
    dimension) picks every process's rows at once, trailing dimensions copied whole."""

    def __init__(self, ctx, starts: list, sizes):
        nb = ctx.nb
        rank = len(sizes)
        self.cut = (slice(None),) * nb + tuple(
            slice(None) if isinstance(s, np.ndarray) else slice(s, s + k)
            for s, k in zip(starts, sizes, strict=True))
        varying = [d for d, s in enumerate(starts) if isinstance(s, np.ndarray)]
        order = varying + [d for d in range(rank) if d not in varying]
        self.perm = tuple(range(nb)) + batching.axes(nb, order)
        self.back = tuple(range(nb)) + batching.axes(nb, np.argsort(order))
        nv = len(varying)
        index = [np.arange(n).reshape((1,) * i + (n,) + (1,) * (nb - 1 - i + nv))
                 for i, n in enumerate(ctx.batch_shape)]
        for j, d in enumerate(varying):
            line = np.arange(sizes[d]).reshape((1,) * (nb + j) + (sizes[d],) +
                                               (1,) * (nv - j - 1))
            start = np.broadcast_to(starts[d], ctx.batch_shape)
            index.append(start.reshape(ctx.batch_shape + (1,) * nv) + line)
        self.index = tuple(index)

    def read(self, data: np.ndarray) -> np.ndarray:
        """Every process's window of ``data`` (``batch_shape + shape``)."""
        picked = np.transpose(data[self.cut], self.perm)[self.index]
        return np.transpose(picked, self.back)

    def write(self, out: np.ndarray, update: np.ndarray) -> None:
        """Write ``update`` (``batch_shape + sizes``) into every process's window."""
        view = np.transpose(out[self.cut], self.perm)
        view[self.index] = np.transpose(update, self.perm)


@kernel("stablehlo.dynamic_slice")
def dynamic_slice(ctx, op, operand: Tensor, *start_indices: Tensor) -> Tensor:
    sizes = attr_ints(op, "slice_sizes")
    if len(sizes) != len(operand.shape):
        raise InterpreterError(None, f"slice_sizes {list(sizes)} do not match {operand.type}")
    starts = clamped_starts(ctx, start_indices, operand.shape, sizes)
    if all(isinstance(s, int) for s in starts):
        index = tuple(slice(s, s + k) for s, k in zip(starts, sizes, strict=True))
        return batching.make(op, operand.data[(slice(None),) * operand.batch + index],
                             operand.batch)
    data = ctx.broadcast(operand).data
    return batching.make(op, _Window(ctx, starts, sizes).read(data), ctx.nb)


@kernel("stablehlo.dynamic_update_slice")
def dynamic_update_slice(ctx, op, operand: Tensor, update: Tensor,
                         *start_indices: Tensor) -> Tensor:
    """A copy of ``operand`` with ``update`` written at the clamped starts (spec
    "dynamic_update_slice"); the operand itself is never modified."""
    if len(update.shape) != len(operand.shape):
        raise InterpreterError(None, f"update {update.type} does not match {operand.type}")
    sizes = update.shape
    starts = clamped_starts(ctx, start_indices, operand.shape, sizes)
    uniform = all(isinstance(s, int) for s in starts)
    nb = batching.batch_of(operand, update) if uniform else ctx.nb
    batch = ctx.batch_shape[:nb] if nb else ()
    out = np.array(np.broadcast_to(operand.data, batch + tuple(operand.shape)))
    upd = update.data.astype(out.dtype, copy=False)
    if uniform:
        index = tuple(slice(s, s + k) for s, k in zip(starts, sizes, strict=True))
        out[(slice(None),) * nb + index] = upd
    else:
        _Window(ctx, starts, sizes).write(out, np.broadcast_to(upd, batch + tuple(sizes)))
    return batching.make(op, out, nb)
