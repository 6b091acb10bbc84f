"""Computing replicated data once: in a vectorized run whose processes are laid out over a
mesh's axes, a varying value that is the same along some process dimensions is a NumPy
broadcast view (stride 0 along them). An op that does not depend on which process runs it,
whose varying operands all repeat along the same dimensions, runs once per distinct copy:
its kernel sees those dimensions as size 1, and its results are broadcast back. So a layer
norm of activations replicated over a "model" axis costs what it costs on one device, and
its result is stored once per "data" shard, as a compiled SPMD program would hold it.
"""
from __future__ import annotations

import weakref

import numpy as np

from shardy_ref.execute.values import Tensor, Token, TupleValue

# ops whose result depends on the process running them, or that talk to other processes
PROCESS_DEPENDENT = frozenset(f"stablehlo.{n}" for n in """
    partition_id replica_id all_gather all_reduce all_to_all collective_permute
    collective_broadcast collective_reduce reduce_scatter send recv infeed outfeed
    rng rng_bit_generator custom_call""".split())


def process_agnostic(op) -> bool:
    """Whether ``op`` computes the same on every process given the same operands: StableHLO
    or CHLO ops only (no calls, prints or checks), none of them process-dependent, and no
    region reading values from outside the op."""
    from shardy_ref.execute.regions import free_values

    return _agnostic_itself(op) and all(_agnostic_region(r) for r in op.regions) and \
        not any(free_values(region) for region in op.regions)


def _agnostic_itself(op) -> bool:
    return op.name.split(".")[0] in ("stablehlo", "chlo") and op.name not in PROCESS_DEPENDENT


def _agnostic_region(region) -> bool:
    """Every op in ``region``, nested ones too, is agnostic by name (cached per region, so
    a nest of depth d is looked at once, not d times)."""
    known = _AGNOSTIC.get(region)
    if known is None:
        known = _AGNOSTIC[region] = all(
            _agnostic_itself(op) and all(_agnostic_region(r) for r in op.regions)
            for block in region.blocks for op in block.ops)
    return known


_AGNOSTIC: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def shared_dims(ctx, args: list) -> tuple[int, ...]:
    """The process dimensions every varying operand repeats along (stride 0 or size 1);
    empty when there is no varying operand or nothing to share."""
    dims = None
    for value in args:
        for tensor in _tensors(value):
            if not tensor.batch:
                continue
            if tensor.batch != ctx.nb:
                return ()
            data = tensor.data
            mine = {d for d in range(ctx.nb) if data.shape[d] == 1 or data.strides[d] == 0}
            dims = mine if dims is None else dims & mine
            if not dims:
                return ()
    if not dims:
        return ()
    return tuple(sorted(d for d in dims if ctx.batch_shape[d] > 1))


def run_once_per_copy(ctx, fn, op, args: list, shared: tuple[int, ...]):
    """Run kernel ``fn`` with the ``shared`` process dimensions cut to size 1, and broadcast
    its results back to the full batch."""
    full = ctx.batch_shape
    small = tuple(1 if d in shared else n for d, n in enumerate(full))
    index = tuple(slice(0, 1) if d in shared else slice(None) for d in range(len(full)))
    inner = ctx.replace(batch_shape=small)
    out = fn(inner, op, *[_narrow(a, index) for a in args])
    if isinstance(out, (list, tuple)):
        return type(out)(_widen(v, full) for v in out)
    return _widen(out, full)


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, TupleValue):
        for e in value.elements:
            yield from _tensors(e)


def _narrow(value, index: tuple):
    if isinstance(value, Tensor):
        return Tensor(value.type, value.data[index], value.batch) if value.batch else value
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_narrow(e, index) for e in value.elements))
    return value


def _widen(value, full: tuple[int, ...]):
    if isinstance(value, Tensor) and value.batch:
        rest = value.data.shape[value.batch:]
        return Tensor(value.type, np.broadcast_to(value.data, full + rest), value.batch)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_widen(e, full) for e in value.elements))
    if isinstance(value, Token) or value is None:
        return value
    return value
