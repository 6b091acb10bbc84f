"""``sdy-user-priority-propagate``: op-priority propagation once per user priority
``p0 < p1 < ...`` (upstream ``transforms/propagation/user_priority_propagation.cc``; see
https://openxla.org/shardy/sdy_propagation_passes#-sdy-user-priority-propagate and
"Conflict resolution hierarchy" in https://openxla.org/shardy/propagation).

Before the first round every dimension with a priority > 0 is emptied and closed, its axes
moved to the replicated ones, so only priority-0 (and unprioritised) dimensions propagate;
each later round restores the dimensions of its priority and propagates again.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import FUNC_OP, has_body
from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import mesh_axis_key
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import lookup_data_flow_edge, mesh_or_lookup
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    block_argument_edge_owners,
    set_func_result_sharding,
    set_sharding,
)
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.basic_propagation import GetDirectionToPropagate
from shardy_ref.propagate.op_priority_propagation import OpPriorityPropagationPassImpl
from shardy_ref.propagate.provenance import FuncResult, log_of, set_round, sharding_of
from shardy_ref.propagate.sharding_group_map import ShardingGroupMap


@dataclass(slots=True)
class ShardingReference:
    """Where a sharding lives (a value, or a function result) and its original sharding."""

    key: Value | FuncResult
    original: TensorSharding

    def get(self) -> TensorSharding | None:
        return sharding_of(self.key)

    def set(self, sharding: TensorSharding) -> None:
        _set(self.key, sharding)


def _set(key: Value | FuncResult, sharding: TensorSharding) -> None:
    if isinstance(key, FuncResult):
        set_func_result_sharding(key.func, key.index, sharding)
    else:
        set_sharding(key, sharding)


def _sharding_locations(module: Operation):
    """Every place a sharding lives (a value or a :class:`FuncResult`), ops pre-order
    (upstream ``transformShardings``), but not the owners of data-flow edges: the edge
    holds their sharding."""
    for op in module.walk():
        if op.name == FUNC_OP:
            if has_body(op):
                yield from op.regions[0].blocks[0].args
            for index in range(len(function_type(op).results)):
                yield FuncResult(op, index)
            continue
        owners = (block_argument_edge_owners(op) + list(op.results)
                  if op.name in DATA_FLOW_OPS else list(op.results))
        for value in owners:
            if op.name in DATA_FLOW_OPS and lookup_data_flow_edge(value) is not None:
                continue
            yield value


def initialized_sharding(sharding: TensorSharding, table: SymbolTable) -> TensorSharding:
    """Upstream ``getInitializedSharding``: dimensions with a priority > 0 become closed and
    empty, their axes replicated (sorted in mesh order); explicit ``p0`` is dropped."""
    dims, replicated = [], list(sharding.replicated_axes)
    for dim in sharding.dim_shardings:
        if dim.priority_or_default == 0:
            dims.append(dim.replace(priority=None))
        else:
            replicated.extend(dim.axes)
            dims.append(DimensionSharding((), True))
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    replicated.sort(key=mesh_axis_key(mesh))
    return sharding.replace(dim_shardings=tuple(dims), replicated_axes=tuple(replicated))


def updated_sharding_for_priority(current: TensorSharding, original: TensorSharding,
                                  priority: int) -> TensorSharding:
    """Upstream ``getUpdatedShardingForPriority``: the dimensions of ``priority`` get their
    original sharding back (without the priority) and leave the replicated axes."""
    dims, seen = list(current.dim_shardings), set()
    for i, orig in enumerate(original.dim_shardings):
        if orig.priority_or_default == priority:
            dims[i] = orig.replace(priority=None)
            seen.update(orig.axes)
    return current.replace(dim_shardings=tuple(dims), replicated_axes=tuple(
        a for a in current.replicated_axes if a not in seen))


def references_per_priority_and_initialize(module: Operation
                                           ) -> list[tuple[int, list[ShardingReference]]]:
    """Initialise every sharding for the first round and return, by increasing priority
    > 0, the references of the shardings having a dimension of that priority."""
    table = SymbolTable(module)
    per_priority: dict[int, list[ShardingReference]] = {}
    for key in list(_sharding_locations(module)):
        sharding = sharding_of(key)
        if sharding is None:
            continue
        for priority in {d.priority_or_default for d in sharding.dim_shardings} - {0}:
            per_priority.setdefault(priority, []).append(ShardingReference(key, sharding))
        new = initialized_sharding(sharding, table)
        if new != sharding:
            _set(key, new)
    return sorted(per_priority.items())


@dataclass(frozen=True, slots=True)
class UserPriorityPropagationPassImpl(OpPriorityPropagationPassImpl):
    """Upstream ``UserPriorityPropagationPassImpl``: dimension shardings propagate in the
    order of their user priorities, each round a full op-priority propagation."""


    def propagate(self, module: Operation, ctx: PassContext, groups: ShardingGroupMap,
                  direction: GetDirectionToPropagate, factor_propagation=None) -> None:
        rounds = references_per_priority_and_initialize(module)
        set_round(ctx, user_priority=0)
        OpPriorityPropagationPassImpl.propagate(self, module, ctx, groups, direction)
        for priority, references in rounds:
            set_round(ctx, user_priority=priority)
            log = log_of(ctx)
            for ref in references:
                old = ref.get()
                new = updated_sharding_for_priority(old, ref.original, priority)
                ref.set(new)
                if log is not None:
                    log.record_priority_restore(self.NAME, ref.key, old, new)
            OpPriorityPropagationPassImpl.propagate(self, module, ctx, groups, direction)
        set_round(ctx, user_priority=None)
