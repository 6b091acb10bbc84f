"""How much memory a simulated run needs, estimated before it starts, so a run that cannot
fit is refused with a number instead of swapping the machine to a halt.

The simulator stores a value once per distinct copy: it lays devices out over the mesh's
axes, and a value holds one copy per combination of the axes it varies along (an argument:
the axes its sharding uses; an ``all_gather``/``all_reduce``: its operand's, less the axes
its groups span; an op that does not depend on the device: its operands' together; the
device-dependent ops: all of them). The interpreter frees a value after its last use, so
the estimate walks the entry function in order and keeps the largest sum of live values
(plus the collectives' gather buffer, as large as their operand); nested regions count as
their op's results. It is an estimate, not a bound: kernels' temporaries are not counted.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.types import RankedTensorType

# collectives whose result differs along the process dimensions their groups span
_SPREADING = frozenset({"stablehlo.reduce_scatter", "stablehlo.all_to_all"})
# collectives that give every member of a group the same value
_SHARED_BY_GROUP = frozenset({"stablehlo.all_gather", "stablehlo.all_reduce"})


@dataclass(frozen=True, slots=True)
class MemoryEstimate:
    """``peak`` bytes, and ``why``: where the peak is reached."""

    peak: int
    why: str


def format_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _bytes(type_) -> int:
    if not isinstance(type_, RankedTensorType) or not type_.has_static_shape:
        return 0
    try:
        return type_.num_elements * storage_dtype(type_.element_type).itemsize
    except KeyError:
        return 0


def _groups(op) -> np.ndarray | None:
    attr = op.attributes.get("replica_groups")
    if attr is None or not hasattr(attr, "flat_values"):
        return None
    shape = attr.type.shape
    if len(shape) != 2:
        return None
    values = np.array([int(v) for v in attr.flat_values()], dtype=np.int64).reshape(shape)
    return None if (values < 0).any() else values


def _varying(op, operands: list[frozenset], everything: frozenset, layout) -> frozenset:
    """The process dimensions ``op``'s results vary along, given its operands'."""
    from shardy_ref.execute.compaction import PROCESS_DEPENDENT
    from shardy_ref.execute.spmd import fiber_dims

    union = frozenset().union(*operands)
    if op.name in _SHARED_BY_GROUP | _SPREADING:
        groups = _groups(op)
        spanned = fiber_dims(layout, groups) if groups is not None and \
            groups.size == layout.ids.size else None
        if spanned is None:
            return everything
        return union - set(spanned) if op.name in _SHARED_BY_GROUP else union | set(spanned)
    if op.name in PROCESS_DEPENDENT or op.name.split(".")[0] not in ("stablehlo", "chlo"):
        return everything if op.name in PROCESS_DEPENDENT else union
    return union


def estimate_peak(func, layout, arg_varying: list[frozenset], held: int = 0
                  ) -> MemoryEstimate:
    """The peak live bytes of running ``func`` (a per-device ``func.func``) over the
    processes of ``layout`` when argument ``i`` varies along process dimensions
    ``arg_varying[i]`` (one copy per combination of them); ``held`` bytes are held by the
    caller throughout (the global inputs)."""
    everything = frozenset(range(layout.ndim))
    from shardy_ref.execute.interpreter import value_deaths

    block = func.regions[0].blocks[0]
    ops = list(block)
    varying: dict = dict(zip(block.args, arg_varying, strict=True))
    dying = value_deaths(block, ops)

    def size(v) -> int:
        dims = varying.get(v, everything)
        return _bytes(v.type) * int(np.prod([layout.shape[d] for d in dims], dtype=np.int64))

    live = held + sum(size(a) for a in block.args)
    peak, where = live, "the arguments"
    for i, op in enumerate(ops):
        out = _varying(op, [varying.get(v, everything) for v in op.operands], everything,
                       layout)
        for r in op.results:
            varying[r] = out
        results = sum(size(r) for r in op.results)
        transient = sum(size(v) for v in op.operands) \
            if op.name in _SHARED_BY_GROUP | _SPREADING else 0
        if live + results + transient > peak:
            peak, where = live + results + transient, _describe(op)
        live += results
        for v in dying.get(i, ()):
            live -= size(v)
    return MemoryEstimate(int(peak), f"at its peak at {where}")


def _describe(op) -> str:
    loc = op.location
    at = f" ({loc})" if loc is not None and getattr(loc, "is_known", False) else ""
    return f"'{op.name}'{at}"


def global_bytes(arrays) -> int:
    return sum(int(np.asarray(a).nbytes) for a in arrays)
