"""Running a scalar region (a ``reduce`` body, a ``sort`` comparator, a ``scatter`` update...)
on whole arrays at once.

Such a region maps ``tensor<E>`` arguments to ``tensor<E>`` results. Instead of calling it
once per element as the reference interpreter does, we run it once with every argument
*varying* over a batch of the arrays' shape (:func:`apply_region`): each op of the body then
costs one NumPy call whatever the number of elements. :func:`binary_ufunc` recognises the
bodies JAX emits for sums, products, maxima and logical reductions, whose NumPy ufunc can
reduce a whole axis in one call.
"""
from __future__ import annotations

import weakref
from collections import ChainMap

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.values import Tensor


def free_values(region) -> tuple:
    """The values ``region`` reads that are defined outside it (cached per region, and
    computed from its nested regions' own free values, so all regions of a nest of depth
    d cost O(size) rather than O(d * size))."""
    free = _FREE.get(region)
    if free is None:
        defined = set()
        used: dict = {}
        for block in region.blocks:
            defined.update(block.args)
            for op in block.ops:
                defined.update(op.results)
                used.update(dict.fromkeys(op.operands))
                for inner in op.regions:
                    used.update(dict.fromkeys(free_values(inner)))
        free = _FREE[region] = tuple(v for v in used if v not in defined)
    return free


def values_used(op) -> tuple:
    """The values ``op`` reads: its operands and what its regions read from outside."""
    if not op.regions:
        return tuple(op.operands)
    used = dict.fromkeys(op.operands)
    for region in op.regions:
        used.update(dict.fromkeys(free_values(region)))
    return tuple(used)


_FREE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _captured(ctx, inner, value):
    """An outer value as a region run by ``inner`` (over a batch of elements) sees it: one
    process's entry when ``ctx`` runs a single batch element, else broadcast from the
    processes in front (:meth:`Context.lift`)."""
    if isinstance(value, Tensor) and value.batch and ctx.index is not None and ctx.nb == 0:
        return value.at(ctx.index[:value.batch])
    return inner.lift(value)


def apply_region(ctx, region, arrays: list[np.ndarray], batch_shape: tuple[int, ...] | None = None
                 ) -> list[np.ndarray]:
    """Apply a region elementwise: ``arrays[i]`` (of shape ``batch_shape``, or broadcastable
    to it) feeds block argument ``i``; returns one array of ``batch_shape`` per result.
    Values the region reads from outside are seen per element of the new batch
    (:func:`_captured`); the region's own values go to a scope of their own."""
    block = region.blocks[0]
    if batch_shape is None:
        batch_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    batch_shape = tuple(batch_shape)
    scope: dict = {}
    inner = ctx.replace(batch_shape=batch_shape, active=None, lifting=False, index=None,
                        env=ChainMap(scope, ctx.env))
    scope.update((v, _captured(ctx, inner, ctx.env[v])) for v in free_values(region)
                 if v in ctx.env)
    args = []
    for arg, data in zip(block.args, arrays, strict=True):
        t = arg.type
        extra = tuple(t.shape)
        data = np.broadcast_to(data, batch_shape + extra) if data.shape != batch_shape + extra \
            else data
        args.append(Tensor(t, data, len(batch_shape)))
    outs = inner.run_region(region, args)
    return [np.broadcast_to(o.data, batch_shape + tuple(o.shape)) if o.batch != len(batch_shape)
            else o.data for o in outs]


def binary_op(region):
    """A function ``(a, b) -> array`` computing a recognised body (:func:`binary_ufunc`)
    with the body's exact semantics, or None: NumPy's float maximum/minimum return either
    argument on a tie of -0 and +0, the reference (``llvm::maximum``) +0 for maximum and -0
    for minimum."""
    ufunc = binary_ufunc(region)
    if ufunc is None or ufunc not in (np.maximum, np.minimum):
        return ufunc
    negative = ufunc is np.minimum

    def exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = ufunc(a, b)
        if out.dtype.kind in "fc":
            both = (a == 0) & (b == 0)
            if both.any():
                zero = -((-a) + (-b)) if negative else a + b  # IEEE: -0 + +0 == +0
                out = np.where(both, zero, out)
        return out
    return exact


# body op -> the NumPy ufunc that computes it on arrays of the element type
_UFUNCS = {
    "stablehlo.add": np.add, "stablehlo.multiply": np.multiply,
    "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
    "stablehlo.and": np.bitwise_and, "stablehlo.or": np.bitwise_or,
    "stablehlo.xor": np.bitwise_xor,
}


def binary_ufunc(region):
    """The ufunc of a body ``{^bb0(%a, %b): %r = op %a, %b; return %r}`` for one of the ops in
    ``_UFUNCS`` (either argument order: all are commutative), or None."""
    block = region.blocks[0] if len(region.blocks) == 1 else None
    if block is None or len(block.args) != 2:
        return None
    ops = block.ops
    if len(ops) != 2 or ops[0].name not in _UFUNCS or ops[1].operands != (ops[0].results[0],):
        return None
    if set(ops[0].operands) != set(block.args) or ops[0].operands[0] is ops[0].operands[1]:
        return None
    t = block.args[0].type
    if ops[0].results[0].type != t or block.args[1].type != t:
        return None
    dtype = storage_dtype(t.element_type)
    if np.dtype(dtype.str) != dtype:  # ml_dtypes types: run the body's kernel instead
        return None
    return _UFUNCS[ops[0].name]
