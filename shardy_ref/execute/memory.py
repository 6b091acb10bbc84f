"""How much memory a simulated run needs, estimated before it starts, so a run that cannot
fit is refused with a number instead of swapping the machine to a halt.

The simulator stores a value once per distinct copy: a uniform value (the same on every
device: constants, fully replicated arguments, an ``all_reduce`` over every device) once,
an argument or an ``all_gather``/``all_reduce`` result shared along some mesh axes once per
group, anything else once per device. The interpreter frees a value after its last use, so
the estimate walks the entry function in order and keeps the largest sum of live values
(plus the collectives' gather buffer, as large as their operand); nested regions count as
their op's results. It is an estimate, not a bound: kernels' temporaries are not counted.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.types import RankedTensorType

# ops whose result is one value per device even when their operands are uniform
_PER_DEVICE = frozenset({"stablehlo.partition_id", "stablehlo.replica_id",
                         "stablehlo.collective_permute", "stablehlo.all_to_all",
                         "stablehlo.reduce_scatter", "stablehlo.rng_bit_generator",
                         "stablehlo.rng", "stablehlo.recv", "stablehlo.infeed"})
# collectives that give every member of a group the same value
_SHARED_BY_GROUP = frozenset({"stablehlo.all_gather", "stablehlo.all_reduce"})
_COLLECTIVES = _PER_DEVICE | _SHARED_BY_GROUP


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


def _group_size(op) -> int:
    attr = op.attributes.get("replica_groups")
    shape = getattr(getattr(attr, "type", None), "shape", None)
    return int(shape[1]) if shape and len(shape) == 2 and shape[1] else 1


def _copies(op, operand_copies: list[int], devices: int) -> int:
    """How many distinct copies of each result of ``op`` the simulator stores."""
    if op.name in _SHARED_BY_GROUP:
        return max(1, devices // _group_size(op))
    if op.name in _PER_DEVICE:
        return devices
    return max(operand_copies, default=1) if all(c == 1 for c in operand_copies) \
        else devices


def estimate_peak(func, devices: int, arg_copies: list[int], held: int = 0
                  ) -> MemoryEstimate:
    """The peak live bytes of running ``func`` (a per-device ``func.func``) on ``devices``
    devices whose arguments are stored ``arg_copies`` times; ``held`` bytes are held by
    the caller throughout (the global inputs)."""
    block = func.regions[0].blocks[0]
    ops = list(block)
    copies: dict = {}
    last: dict = {}
    for arg, n in zip(block.args, arg_copies, strict=True):
        copies[arg] = n
        last[arg] = -1
    for i, op in enumerate(ops):
        for inner in op.walk():
            for v in inner.operands:
                if v in last:
                    last[v] = i
        for r in op.results:
            last[r] = i
    live = held + sum(_bytes(a.type) * copies[a] for a in block.args)
    peak, where = live, "the arguments"
    dying: dict = {}
    for v, i in last.items():
        dying.setdefault(max(i, 0), []).append(v)
    for i, op in enumerate(ops):
        operands = [copies.get(v, devices) for v in op.operands]
        n = _copies(op, operands, devices)
        results = sum(_bytes(r.type) * n for r in op.results)
        for r in op.results:
            copies[r] = n
        transient = sum(_bytes(v.type) * devices for v in op.operands) \
            if op.name in _COLLECTIVES else 0
        if live + results + transient > peak:
            peak, where = live + results + transient, _describe(op)
        live += results
        for v in dying.get(i, ()):
            live -= _bytes(v.type) * copies.get(v, devices)
    return MemoryEstimate(int(peak), f"at its peak at {where}")


def _describe(op) -> str:
    loc = op.location
    at = f" ({loc})" if loc is not None and getattr(loc, "is_known", False) else ""
    return f"'{op.name}'{at}"


def global_bytes(arrays) -> int:
    return sum(int(np.asarray(a).nbytes) for a in arrays)
