"""``sdy-add-data-flow-edges``: put an ``sdy.data_flow_edge`` on every data-flow edge owner
(https://openxla.org/shardy/sdy_import_passes#-sdy-add-data-flow-edges). Upstream
``transforms/import/add_data_flow_edges.cc`` with ``addDataFlowEdges`` from
``transforms/propagation/utils.cc``.

The owners are those of ``ShardableDataFlowOpInterface`` (``DATA_FLOW_OPS``): the results of
every data-flow op, and the body arguments of named and manual computations. Each
static-shaped owner gets an edge op right after its definition (at the start of the block
for a block argument) carrying the owner's current sharding, and every other use of the
owner now uses the edge instead. Not idempotent upstream: a second run would stack an edge
on an edge, which the verifier rejects (DFE-2).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.types import RankedTensorType, VectorType
from shardy_ref.ir.value_sharding import DATA_FLOW_OPS, get_sharding, owning_op, value_location
from shardy_ref.pass_manager import Pass, register_pass

DATA_FLOW_EDGE = "sdy.data_flow_edge"


def is_static_shaped(value: Value) -> bool:
    """``isStaticShapedType``: a ranked shaped type without dynamic dimensions."""
    t = value.type
    return isinstance(t, (RankedTensorType, VectorType)) and None not in t.shape


def block_argument_edge_owners(op: Operation) -> list[Value]:
    """``getBlockArgumentEdgeOwners``: the body arguments of ops that shard them."""
    flow = DATA_FLOW_OPS[op.name]
    return list(op.regions[0].blocks[0].args) if flow.block_arg_shardings else []


def op_result_edge_owners(op: Operation) -> list[Value]:
    """``getOpResultEdgeOwners``: every result of a data-flow op."""
    return list(op.results)


def lookup_data_flow_edge(target: Value) -> Operation | None:
    """Upstream ``DataFlowEdgeOp::lookup(target)``: the ``sdy.data_flow_edge`` on the edge
    owner of ``target`` when ``target`` belongs to a data-flow op, else None."""
    op = owning_op(target)
    flow = DATA_FLOW_OPS.get(op.name) if op is not None else None
    if flow is None:
        return None
    owner = flow.owner_of(op, target)
    if owner is None or not owner.has_one_use:
        return None
    user = owner.uses[0].owner
    return user if user.name == DATA_FLOW_EDGE else None


def insert_after_value(value: Value, op: Operation) -> None:
    """``setInsertionPointAfterValue`` then insert: right after the defining op, or at the
    start of the block for a block argument."""
    if isinstance(value, BlockArgument):
        value.parent_block.prepend(op)
    else:
        value.op.parent.insert_after(value.op, op)


def add_data_flow_edges(edge_owners: Sequence[Value]) -> None:
    """Upstream ``addDataFlowEdges``: owners are visited last to first so the edges, each
    inserted right after its owner, keep the owners' order."""
    for owner in reversed(edge_owners):
        if not is_static_shaped(owner):
            continue
        sharding = get_sharding(owner)
        edge = Operation(DATA_FLOW_EDGE, [owner], [owner.type],
                         {"sharding": sharding} if sharding is not None else {},
                         location=value_location(owner))
        insert_after_value(owner, edge)
        owner.replace_uses_with_if(edge.results[0], lambda use: use.owner is not edge)


@register_pass
@dataclass(frozen=True, slots=True)
class AddDataFlowEdgesPass(Pass):
    """Inserts ``DataFlowEdgeOp`` for every data-flow edge. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``AddDataFlowEdgesPass``)."""

    NAME = "sdy-add-data-flow-edges"

    def run(self, op: Operation, ctx) -> None:
        for flow_op in [o for o in op.walk(post_order=True) if o.name in DATA_FLOW_OPS]:
            add_data_flow_edges(block_argument_edge_owners(flow_op))
            add_data_flow_edges(op_result_edge_owners(flow_op))
