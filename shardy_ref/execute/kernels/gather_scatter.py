"""``gather`` and ``scatter`` in full generality (StableHLO spec, "gather", "scatter"):
offset/window dims, collapsed/inserted dims, operand/input batching dims, any
``index_vector_dim`` (including ``rank(indices)``), variadic scatter with any update region.

Both compute, for every element of the result (gather) or of the updates (scatter), the
operand index the spec's formula gives: one integer array per operand dimension, the sum of
a start component (from the indices), a batching component and an offset/window component
(``arange``\\ s), all broadcast to the iteration space. Gather is then one fancy-indexing
read, with start indices clamped so the slice fits (spec). Scatter skips updates whose
index is out of bounds (spec; element by element, as the reference interpreter does) and
applies the update computation in the order of the update index space (row-major, the
reference's schedule): with ``ufunc.at`` for the bodies :func:`regions.binary_ufunc`
recognises, otherwise in rounds where round ``k`` applies the region once, vectorized, to
the ``k``-th update of every target element. Processes of a vectorized run are one more
(leading) index dimension, so varying operands need no per-process loop.
``indices_are_sorted``/``unique_indices`` change nothing (they only license optimisations).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import storage_dtype, wide
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.shape import attr_ints
from shardy_ref.execute.regions import apply_region, binary_ufunc
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


def _index_vectors(indices: Tensor, index_vector_dim: int) -> np.ndarray:
    """The start indices as int64/uint64 with the index vector last: ``[batch...] + the
    indices' other dimensions + [K]`` (a trailing ``K = 1`` when ``index_vector_dim`` is
    the rank)."""
    data = wide(indices.data, indices.element_type)
    rank = len(indices.shape)
    if not 0 <= index_vector_dim <= rank:
        raise InterpreterError(None, f"index_vector_dim {index_vector_dim} out of range for "
                               f"{indices.type}")
    if index_vector_dim == rank:
        return data[..., None]
    return np.moveaxis(data, indices.batch + index_vector_dim, -1)


def _place(arr: np.ndarray, nb: int, where: list[int], rank: int) -> np.ndarray:
    """``arr`` (``[batch...] + len(where)`` dims) with its dims at result axes ``where``
    (ascending) and size-1 axes elsewhere in a rank-``rank`` space."""
    others = [nb + a for a in range(rank) if a not in set(where)]
    return np.expand_dims(arr, others) if others else arr


def _line(size: int, axis: int, rank: int) -> np.ndarray:
    return np.arange(size, dtype=np.int64).reshape((1,) * axis + (size,) +
                                                   (1,) * (rank - axis - 1))


def _scan_dims(operand_batching, indices_batching, index_vector_dim: int,
               non_window: list[int], window_dims, skipped, operand_rank: int,
               window_sizes) -> list:
    """Per operand dimension: the iteration-space axis of its batching coordinate (or
    None) and that of its window/offset coordinate with its size (or None)."""
    batch_axes, window = {}, {}
    if len(operand_batching) != len(indices_batching):
        raise InterpreterError(None, f"batching dims {list(operand_batching)} and "
                               f"{list(indices_batching)} differ in number")
    for d_operand, d_start in zip(operand_batching, indices_batching, strict=True):
        pos = d_start - (1 if d_start > index_vector_dim else 0)
        if d_start == index_vector_dim or not 0 <= pos < len(non_window):
            raise InterpreterError(None, f"indices batching dim {d_start} is out of range")
        batch_axes[d_operand] = non_window[pos]
    free = [d for d in range(operand_rank) if d not in skipped]
    if len(free) != len(window_dims):
        raise InterpreterError(None, f"{len(window_dims)} offset/window dims for "
                               f"{len(free)} operand dimensions that are not collapsed")
    for d, axis in zip(free, window_dims, strict=True):
        window[d] = (axis, window_sizes[d])
    return [(batch_axes.get(d), window.get(d)) for d in range(operand_rank)]


def _operand_index(vectors: np.ndarray, nb: int, space: tuple[int, ...], window_dims,
                   index_map, plan: list, clamp_to) -> list[np.ndarray]:
    """One int64 array per operand dimension broadcastable to ``[batch] + space``: the
    spec's ``full_start_index + full_batching_index + full_offset_index``."""
    rank = len(space)
    non_window = [a for a in range(rank) if a not in set(window_dims)]
    if vectors.ndim - nb - 1 != len(non_window):
        raise InterpreterError(None, f"indices of rank {vectors.ndim - nb} do not match the "
                               f"{len(non_window)} batch dims of the result/updates")
    out = []
    for d, (batch_axis, window) in enumerate(plan):
        parts = []
        if d in index_map:
            start = vectors[..., index_map.index(d)]
            if clamp_to is not None:
                start = np.clip(start, 0, clamp_to[d])
            parts.append(_place(start.astype(np.int64), nb, non_window, rank))
        if batch_axis is not None:
            parts.append(_line(space[batch_axis], batch_axis, rank))
        if window is not None:
            parts.append(_line(window[1], window[0], rank))
        total = parts[0] if parts else np.zeros((1,) * rank, dtype=np.int64)
        for p in parts[1:]:
            total = total + p
        out.append(total)
    return out


def _batch_index(ctx, rank: int) -> list[np.ndarray]:
    nb = ctx.nb
    return [np.arange(n).reshape((1,) * i + (n,) + (1,) * (nb - 1 - i + rank))
            for i, n in enumerate(ctx.batch_shape)]


# -- gather ---------------------------------------------------------------------------------
def gather_data(ctx, op, operand: Tensor, indices: Tensor, slice_sizes) -> tuple:
    """The gathered array and its batch rank (spec "gather")."""
    dn = op.attributes["dimension_numbers"]
    ivd = dn.index_vector_dim
    rank_o = len(operand.shape)
    if len(slice_sizes) != rank_o or any(not 0 <= k <= n for k, n in
                                         zip(slice_sizes, operand.shape, strict=True)):
        raise InterpreterError(None, f"slice_sizes {list(slice_sizes)} invalid for "
                               f"{operand.type}")
    vectors = _index_vectors(indices, ivd)
    index_map = list(dn.start_index_map)
    if vectors.shape[-1] != len(index_map):
        raise InterpreterError(None, f"start_index_map {index_map} does not match index "
                               f"vectors of size {vectors.shape[-1]}")
    nb = batching.batch_of(operand, indices)
    batch_shape = vectors.shape[indices.batch:-1]
    skipped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [k for d, k in enumerate(slice_sizes) if d not in skipped]
    rank = len(batch_shape) + len(offset_sizes)
    offset_dims = list(dn.offset_dims)
    if offset_dims != sorted(set(offset_dims)) or len(offset_dims) != len(offset_sizes) or \
            any(not 0 <= a < rank for a in offset_dims):
        raise InterpreterError(None, f"offset_dims {offset_dims} do not match the "
                               f"{len(offset_sizes)} offset dimensions of slice_sizes")
    non_offset = [a for a in range(rank) if a not in set(offset_dims)]
    space = [0] * rank
    for a, n in zip(non_offset, batch_shape, strict=True):
        space[a] = n
    for a, n in zip(offset_dims, offset_sizes, strict=True):
        space[a] = n
    plan = _scan_dims(dn.operand_batching_dims, dn.start_indices_batching_dims, ivd,
                      non_offset, offset_dims, skipped, rank_o, slice_sizes)
    clamp_to = [n - k for n, k in zip(operand.shape, slice_sizes, strict=True)]
    index = _operand_index(vectors, indices.batch, tuple(space), offset_dims, index_map,
                           plan, clamp_to)
    if operand.batch:
        index = _batch_index(ctx, rank) + index
    batch = ctx.batch_shape[:nb] if nb else ()
    return np.broadcast_to(operand.data[tuple(index)], batch + tuple(space)), nb


@kernel("stablehlo.gather")
def gather(ctx, op, operand: Tensor, start_indices: Tensor) -> Tensor:
    data, nb = gather_data(ctx, op, operand, start_indices, attr_ints(op, "slice_sizes"))
    return batching.make(op, data, nb)


# -- scatter --------------------------------------------------------------------------------
def _targets(ctx, op, inputs, indices: Tensor, updates) -> tuple[np.ndarray, np.ndarray, int]:
    """For every update element (row-major, processes first): the flat position it updates
    in ``[batch] + input shape``, and which update elements are in bounds."""
    dn = op.attributes["scatter_dimension_numbers"]
    ivd = dn.index_vector_dim
    shape = tuple(inputs[0].shape)
    space = tuple(updates[0].shape)
    if any(tuple(x.shape) != shape for x in inputs) or \
            any(tuple(u.shape) != space for u in updates):
        raise InterpreterError(None, "scatter inputs (and updates) must share one shape")
    vectors = _index_vectors(indices, ivd)
    index_map = list(dn.scatter_dims_to_operand_dims)
    if vectors.shape[-1] != len(index_map):
        raise InterpreterError(None, f"scatter_dims_to_operand_dims {index_map} does not "
                               f"match index vectors of size {vectors.shape[-1]}")
    window_dims = list(dn.update_window_dims)
    non_window = [a for a in range(len(space)) if a not in set(window_dims)]
    if [space[a] for a in non_window] != list(vectors.shape[indices.batch:-1]):
        raise InterpreterError(None, f"updates {updates[0].type} do not match the scatter "
                               f"indices {indices.type}")
    skipped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    window_sizes = {d: space[a] for d, a in
                    zip([d for d in range(len(shape)) if d not in skipped], window_dims,
                        strict=False)}
    plan = _scan_dims(dn.input_batching_dims, dn.scatter_indices_batching_dims, ivd,
                      non_window, window_dims, skipped, len(shape), window_sizes)
    index = _operand_index(vectors, indices.batch, space, window_dims, index_map, plan, None)
    nb = batching.batch_of(*inputs, indices, *updates)
    full = (ctx.batch_shape[:nb] if nb else ()) + space
    index = [np.broadcast_to(i, full) for i in index]
    ok = np.ones(full, dtype=bool)
    for i, n in zip(index, shape, strict=True):
        ok &= (i >= 0) & (i < n)
    coords = [np.broadcast_to(b, full) for b in _batch_index(ctx, len(space))] if nb else []
    flat = np.ravel_multi_index([c[ok] for c in coords + index],
                                (ctx.batch_shape[:nb] if nb else ()) + shape)
    return flat, ok, nb


def _occurrence(flat: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same value."""
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    starts = np.r_[True, ranked[1:] != ranked[:-1]] if len(ranked) else np.zeros(0, bool)
    group_start = np.maximum.accumulate(np.where(starts, np.arange(len(ranked)), 0))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(ranked)) - group_start
    return rank


@kernel("stablehlo.scatter")
def scatter(ctx, op, *operands: Tensor) -> list[Tensor]:
    n = len(operands) // 2
    if len(operands) % 2 != 1 or n == 0:
        raise InterpreterError(None, f"scatter takes N inputs, indices and N updates, got "
                               f"{len(operands)} operands")
    inputs, indices, updates = operands[:n], operands[n], operands[n + 1:]
    region = op.regions[0]
    arg_types = [a.type for a in region.blocks[0].args]
    if len(arg_types) != 2 * n:
        raise InterpreterError(None, f"update_computation takes {len(arg_types)} arguments, "
                               f"expected {2 * n}")
    flat, ok, nb = _targets(ctx, op, inputs, indices, updates)
    batch = ctx.batch_shape[:nb] if nb else ()
    outs = [np.array(np.broadcast_to(x.data, batch + tuple(x.shape)),
                     dtype=storage_dtype(op.results[i].type.element_type)).reshape(-1)
            for i, x in enumerate(inputs)]
    full = batch + tuple(updates[0].shape)
    upd = [np.broadcast_to(u.data, full)[ok].astype(storage_dtype(t.element_type), copy=False)
           for u, t in zip(updates, arg_types[n:], strict=True)]
    ufunc = binary_ufunc(region) if n == 1 else None
    if ufunc in (np.maximum, np.minimum) and outs[0].dtype.kind in "fc":
        ufunc = None  # ties of -0 and +0: see regions.binary_op; the rounds get them right
    if ufunc is not None and outs[0].dtype == upd[0].dtype:
        ufunc.at(outs[0], flat, upd[0])
    elif len(flat):
        _apply_in_rounds(ctx, region, outs, flat, upd)
    return [batching.make(op, o.reshape(batch + tuple(x.shape)), nb, i)
            for i, (o, x) in enumerate(zip(outs, inputs, strict=True))]


def _apply_in_rounds(ctx, region, outs: list, flat: np.ndarray, upd: list) -> None:
    """Apply the region to every update in schedule order: round ``k`` updates, at once,
    every target with at least ``k + 1`` updates by its ``k``-th one (updates of distinct
    targets commute, updates of one target keep their order)."""
    rank = _occurrence(flat)
    by_round = np.argsort(rank, kind="stable")
    ends = np.cumsum(np.bincount(rank))
    for begin, end in zip(np.r_[0, ends[:-1]], ends, strict=True):
        sel = by_round[begin:end]
        where = flat[sel]
        args = [o[where] for o in outs] + [u[sel] for u in upd]
        new = apply_region(ctx, region, args, (len(where),))
        for o, v in zip(outs, new, strict=True):
            o[where] = v
