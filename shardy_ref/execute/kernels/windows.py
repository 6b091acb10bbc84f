"""Window ops: ``reduce_window`` and ``select_and_scatter`` (StableHLO spec sections of the
same names; reference ``reduceWindowOp``, ``selectAndScatterOp``).

``reduce_window`` pads each input with its init value (edges ``padding``, negative entries
crop, and ``base_dilations - 1`` holes between elements), then reduces every window
(``window_dimensions`` spaced by ``window_dilations``, placed every ``window_strides``)
with the body, as the reference does: ``acc = init``, then ``acc = body(acc..., x...)``
over the window's elements in lexicographic order (padding elements included). We build
all windows as one strided view ``[..., outputs, window]`` and reduce its window axes: one
``ufunc.reduce`` where the order cannot show (integers, i1, maximum/minimum of recognised
bodies, signed zeros fixed up as in :mod:`.reduce`), else one step per window position
over all outputs at once, in the reference's order (bit-identical float sums).

``select_and_scatter`` follows the reference exactly, vectorized over source elements:
for each window position in lexicographic order, skipping positions in the padding, the
first in-bounds element is selected and a later one replaces it where ``select(selected,
current)`` is false (one select-region run per window position). Then, in source order,
``result[selected] = scatter(scatter(init, source), result[selected])`` — the reference's
``reduce([source, current], init)``, which applies the init value once per scattered
source (the spec's formula folds it once per result element; the two agree when
``init`` is the scatter's identity, as in every program JAX emits). Sources selecting the
same element are applied in rounds (the k-th source of every element in round k), one
scatter-region run per round.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from shardy_ref.execute import batching
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.dot import convert_elements
from shardy_ref.execute.kernels.reduce import (
    batched,
    fast_ufunc,
    fold,
    init_array,
    region_prefix,
    signed_zero_fix,
)
from shardy_ref.execute.regions import apply_region, binary_ufunc
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

# Recognised bodies whose reduction result does not depend on the order (any dtype fast_ufunc
# accepts; sums and products of floats do depend on it).
_ORDERLESS = (np.maximum, np.minimum, np.bitwise_and, np.bitwise_or, np.bitwise_xor)


def _ints(op, name: str, rank: int, default: int) -> tuple[int, ...]:
    attr = op.attributes.get(name)
    values = (default,) * rank if attr is None else tuple(int(v) for v in attr.value)
    if len(values) != rank:
        raise InterpreterError(None, f"{name} must have {rank} entries, got {list(values)}")
    return values


def _padding(op, rank: int) -> tuple[tuple[int, int], ...]:
    attr = op.attributes.get("padding")
    if attr is None:
        return ((0, 0),) * rank
    values = [int(v) for v in attr.values] * (2 * rank if attr.is_splat else 1)
    if len(values) != 2 * rank:
        raise InterpreterError(None, f"padding must be {rank}x2, got {attr.type}")
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(rank))


def pad_with(x: np.ndarray, fill: np.ndarray, nb: int, padding, dilations) -> np.ndarray:
    """``x`` (``nb`` leading batch axes) padded with ``fill`` (broadcastable): interior
    ``dilation - 1``, edges ``padding`` (negative edges crop)."""
    shape, where, crop = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i, ((lo, hi), dil) in enumerate(zip(padding, dilations, strict=True)):
        ax, size = nb + i, x.shape[nb + i]
        dilated = (size - 1) * dil + 1 if size else 0
        shape[ax] = max(lo, 0) + dilated + max(hi, 0)
        where[ax] = slice(max(lo, 0), max(lo, 0) + dilated, dil)
        crop[ax] = slice(max(-lo, 0), max(shape[ax] - max(-hi, 0), max(-lo, 0)))
    out = np.empty(shape, x.dtype)
    out[...] = fill
    out[tuple(where)] = x
    return out[tuple(crop)]


def window_view(padded: np.ndarray, nb: int, dims, strides, dilations, out_shape) -> np.ndarray:
    """Every window of ``padded``: a view ``[batch.., outputs.., window..]``."""
    extents = tuple((w - 1) * d + 1 for w, d in zip(dims, dilations, strict=True))
    spatial = tuple(range(nb, nb + len(dims)))
    view = sliding_window_view(padded, extents, axis=spatial)
    index = [slice(None)] * nb + [slice(0, (o - 1) * s + 1, s)
                                  for o, s in zip(out_shape, strides, strict=True)]
    return view[(*index, *(slice(None, None, d) for d in dilations))]


def _out_shape(padded_shape, dims, strides, dilations) -> tuple[int, ...]:
    out = []
    for p, w, s, d in zip(padded_shape, dims, strides, dilations, strict=True):
        extent = (w - 1) * d + 1
        out.append((p - extent) // s + 1 if p >= extent else 0)
    return tuple(out)


# -- reduce_window ----------------------------------------------------------------------------
def _window_attrs(op, rank: int):
    dims = _ints(op, "window_dimensions", rank, 1)
    strides = _ints(op, "window_strides", rank, 1)
    base = _ints(op, "base_dilations", rank, 1)
    wdil = _ints(op, "window_dilations", rank, 1)
    if min(dims + strides + base + wdil, default=1) < 1:
        raise InterpreterError(None, "window dimensions, strides and dilations must be "
                               "positive")
    return dims, strides, base, wdil, _padding(op, rank)


@kernel("stablehlo.reduce_window")
def reduce_window(ctx, op, *operands):
    n = len(operands) // 2
    inputs, inits = list(operands[:n]), list(operands[n:])
    body = op.regions[0]
    shape = inputs[0].shape
    if any(v.shape != shape for v in inputs) or any(v.shape != () for v in inits):
        raise InterpreterError(None, "reduce_window: inputs must have one shape and init "
                               "values must be scalars")
    dims, strides, base, wdil, padding = _window_attrs(op, len(shape))
    prefix = region_prefix(ctx, body, inputs + inits)
    nb, rank = len(prefix), len(shape)
    types = [a.type.element_type for a in body.blocks[0].args[n:]]
    fills = [convert_elements(init_array(ctx, v, prefix, rank), v.element_type, t)
             for v, t in zip(inits, types, strict=True)]
    padded = [pad_with(convert_elements(batched(ctx, v, prefix), v.element_type, t), f, nb,
                       padding, base) for v, t, f in zip(inputs, types, fills, strict=True)]
    out_shape = _out_shape(padded[0].shape[nb:], dims, strides, wdil)
    declared = tuple(op.results[0].type.shape)
    if all(d is not None for d in declared) and declared != out_shape:
        raise InterpreterError(None, f"reduce_window: the windows give shape {out_shape}, "
                               f"the result type says {declared}")
    full = prefix + out_shape
    if 0 in out_shape:
        outs = [np.empty(full, f.dtype) for f in fills]
    else:
        views = [window_view(p, nb, dims, strides, wdil, out_shape) for p in padded]
        outs = _reduce_windows(ctx, body, views, fills, types, full)
    return [batching.make(op, o, nb, i) for i, o in enumerate(outs)]


def _reduce_windows(ctx, body, views, fills, types, full) -> list[np.ndarray]:
    rank = len(full)
    axes = tuple(range(rank, views[0].ndim))
    ufunc = fast_ufunc(body, types[0]) if len(views) == 1 else None
    with np.errstate(over="ignore", invalid="ignore"):
        if ufunc is not None and (ufunc in _ORDERLESS or views[0].dtype.kind in "biu"):
            r = ufunc(fills[0], ufunc.reduce(views[0], axis=axes))
            return [signed_zero_fix(ufunc, r, views[0], axes, fills[0])]
        seq = binary_ufunc(body) if len(views) == 1 and views[0].dtype.kind in "biufc" \
            and np.dtype(views[0].dtype.str) == views[0].dtype else None
        accs = [np.broadcast_to(f, full) for f in fills]
        accs = fold(ctx, body, accs, views, views[0].shape[rank:], full, seq)
        if seq is not None:
            accs = [signed_zero_fix(seq, accs[0], views[0], axes, fills[0])]
    return [np.broadcast_to(a, full) for a in accs]


# -- select_and_scatter -----------------------------------------------------------------------
def _select(ctx, region, operand: np.ndarray, nb: int, src_shape, dims, strides, padding):
    """Per source element: the flat operand index its window selects (-1: none)."""
    shape = operand.shape[nb:]
    lead = operand.shape[:nb]
    sel_val = np.zeros(lead + tuple(src_shape), operand.dtype)
    sel_pos = np.full(lead + tuple(src_shape), -1, np.int64)
    flat_strides = np.cumprod((1, *shape[:0:-1]))[::-1] if shape else ()
    for w in np.ndindex(*dims):
        idx, valid = [], np.ones((), bool)
        for i, (s, o, lo, size) in enumerate(zip(strides, w, (p[0] for p in padding), shape,
                                                  strict=True)):
            pos = np.arange(src_shape[i]) * s + o - lo
            ok = (pos >= 0) & (pos < size)
            sh = [1] * len(shape)
            sh[i] = -1
            idx.append(np.clip(pos, 0, max(size - 1, 0)).reshape(sh))
            valid = valid & ok.reshape(sh)
        if not valid.any():
            continue
        cur = operand[(Ellipsis, *idx)] if shape else operand
        flat = sum(ix * int(st) for ix, st in zip(idx, flat_strides, strict=True))
        first = valid & (sel_pos < 0)
        sel_val = np.where(first, cur, sel_val)
        sel_pos = np.where(first, flat, sel_pos)
        keep = apply_region(ctx, region, [sel_val, cur], sel_val.shape)[0]
        switch = valid & ~keep.astype(bool)
        sel_val = np.where(switch, cur, sel_val)
        sel_pos = np.where(switch, flat, sel_pos)
    return sel_pos


def _ranks(keys: np.ndarray) -> np.ndarray:
    """For each key, how many equal keys come before it."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]] if len(keys) else np.zeros(0, bool)
    first = np.maximum.accumulate(np.where(starts, np.arange(len(keys)), 0))
    ranks = np.empty(len(keys), np.int64)
    ranks[order] = np.arange(len(keys)) - first
    return ranks


def _scatter(ctx, region, result: np.ndarray, prefix: tuple, procs: np.ndarray,
             targets: np.ndarray, values: np.ndarray) -> None:
    """``result[p, t] = region(value, result[p, t])`` (``result`` is ``[processes,
    elements]``) for each (process, target, value) in order, in place: in rounds where
    every (process, target) occurs once, each round one region run over ``prefix + (the
    round's largest count per process,)`` so that process-varying outer values line up."""
    ufunc = binary_ufunc(region) if result.dtype.kind in "biufc" and \
        np.dtype(result.dtype.str) == result.dtype else None
    ranks = _ranks(procs * result.shape[1] + targets)
    nproc = result.shape[0]
    for r in range(int(ranks.max()) + 1 if len(ranks) else 0):
        pick = ranks == r
        p, t, v = procs[pick], targets[pick], values[pick]
        if ufunc is not None:
            result[p, t] = ufunc(v, result[p, t])
            continue
        counts = np.bincount(p, minlength=nproc)
        slot = np.arange(len(p)) - (np.cumsum(counts) - counts)[p]  # p is ascending
        width = int(counts.max())
        grid_t = np.zeros((nproc, width), np.int64)
        grid_v = np.zeros((nproc, width), result.dtype)
        grid_t[p, slot], grid_v[p, slot] = t, v
        cur = np.take_along_axis(result, grid_t, axis=1)
        new = apply_region(ctx, region, [grid_v.reshape((*prefix, width)),
                                         cur.reshape((*prefix, width))], (*prefix, width))[0]
        result[p, t] = new.reshape(nproc, width)[p, slot]


def _select_and_scatter(ctx, op, operand: Tensor, source: Tensor, init: Tensor) -> Tensor:
    select, scatter = op.regions
    rank = len(operand.shape)
    dims = _ints(op, "window_dimensions", rank, 1)
    strides = _ints(op, "window_strides", rank, 1)
    padding = _padding(op, rank)
    prefix = region_prefix(ctx, select, [operand, source, init])
    prefix = prefix or region_prefix(ctx, scatter, [])
    nb = len(prefix)
    data = batched(ctx, operand, prefix)
    with np.errstate(over="ignore", invalid="ignore"):
        sel_pos = _select(ctx, select, data, nb, source.shape, dims, strides, padding)
        src = batched(ctx, source, prefix)
        fill = init_array(ctx, init, prefix, len(source.shape))
        first = apply_region(ctx, scatter, [np.broadcast_to(fill, src.shape), src],
                             src.shape)[0]
        nproc = int(np.prod(prefix, dtype=np.int64))
        result = np.empty(prefix + tuple(operand.shape), first.dtype)
        result[...] = init_array(ctx, init, prefix, rank)
        result = result.reshape(nproc, -1)
        procs = np.broadcast_to(np.arange(nproc).reshape(prefix + (1,) * len(source.shape)),
                                sel_pos.shape).reshape(-1)
        chosen = sel_pos.reshape(-1) >= 0
        _scatter(ctx, scatter, result, prefix, procs[chosen], sel_pos.reshape(-1)[chosen],
                 first.reshape(-1)[chosen])
    return batching.make(op, result.reshape(prefix + tuple(operand.shape)), nb)


@kernel("stablehlo.select_and_scatter")
def select_and_scatter(ctx, op, operand, source, init) -> Tensor:
    if len(source.shape) != len(operand.shape) or init.shape != ():
        raise InterpreterError(None, "select_and_scatter: source must have the operand's "
                               "rank and init_value must be a scalar")
    return _select_and_scatter(ctx, op, operand, source, init)
