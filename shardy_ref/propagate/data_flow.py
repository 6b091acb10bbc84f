"""The ``ShardableDataFlowOpInterface`` queries propagation needs on an ``sdy.data_flow_edge``:
its sources, the edge a source feeds, its non-owner targets, and the manual computation's
view change ("Data flow ops" in https://openxla.org/shardy/propagation).

Upstream: ``DataFlowEdgeOp::{getSources, lookup(OpOperand&), getNonOwnerTargets,
transformTargetSharding}`` in ``ir/dialect.cc`` and the stablehlo implementations in
``ir/extensions/stablehlo_extensions.cc``. The source -> owner mapping is reproduced
as upstream writes it, including its corner cases (a while's condition terminator operand
and a case's index operand map to result 0's edge, by operand number).
"""
from __future__ import annotations

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import BlockArgument, Operation, OpOperand, OpResult, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    add_free_axes,
    erase_manual_axes,
    owning_op,
)

DATA_FLOW_EDGE = "sdy.data_flow_edge"
_REGION_BASED = frozenset({"sdy.named_computation", "sdy.manual_computation"})


def body_terminator_operands(op: Operation, region: int = 0) -> list[Value]:
    """Upstream ``getBodyTerminatorOpOperands``: the operands of the terminator of the
    single block of ``op``'s region."""
    return list(op.regions[region].blocks[0].terminator.operands)


def edge_sources(edge: Operation) -> list[Value]:
    """``DataFlowEdgeOp::getSources``: the values flowing into the edge's owner."""
    owner = edge.operands[0]
    op = owning_op(owner)
    if op is None or op.name not in DATA_FLOW_OPS:
        raise _not_on_a_data_flow_op(edge, owner, op)
    n = owner.index
    if op.name == "stablehlo.while":
        return [op.operands[n], body_terminator_operands(op, 1)[n]]
    if op.name == "stablehlo.case":
        return [region.blocks[0].terminator.operands[n] for region in op.regions]
    if op.name == "stablehlo.optimization_barrier":
        return [op.operands[n]]
    if isinstance(owner, BlockArgument):
        return [op.operands[n]]
    return [body_terminator_operands(op)[n]]


def _not_on_a_data_flow_op(edge: Operation, owner: Value, op: Operation | None) -> PassError:
    """The verifier accepts an edge on any value not defined by another sdy op, but only a
    data-flow op's results and block arguments have sources: upstream dereferences a null
    ``ShardableDataFlowOpInterface`` here and crashes."""
    what = "block argument" if isinstance(owner, BlockArgument) else "result"
    holder = f"'{op.name}'" if op is not None else "no op"
    return PassError(edge.location, f"'{DATA_FLOW_EDGE}' op input must be a result or block "
                     f"argument of {', '.join(DATA_FLOW_OPS)}, not a {what} of {holder}")


def _edge_owner_from_source(op: Operation, use: OpOperand) -> Value | None:
    """``getEdgeOwnerFromSource``, by operand number like upstream."""
    if op.name in _REGION_BASED and not is_terminator(use.owner):
        return op.operands[use.index]
    return op.results[use.index] if use.index < op.num_results else None


def edge_of_source(use: OpOperand) -> Operation | None:
    """``DataFlowEdgeOp::lookup(OpOperand&)``: the edge whose owner ``use`` feeds (the use
    is an operand of a data-flow op or of the terminator of one of its regions)."""
    op = use.owner
    if is_terminator(op):
        op = op.parent_op
    if op is None or op.name not in DATA_FLOW_OPS:
        return None
    owner = _edge_owner_from_source(op, use)
    if owner is None or not owner.has_one_use:
        return None
    user = owner.uses[0].owner
    return user if user.name == DATA_FLOW_EDGE else None


def non_owner_targets(edge: Operation) -> list[Value]:
    """``DataFlowEdgeOp::getNonOwnerTargets``: for a while result, the condition's and
    the body's block argument of the same number; nothing for other ops."""
    owner = edge.operands[0]
    op = owning_op(owner)
    if op.name != "stablehlo.while" or not isinstance(owner, OpResult):
        return []
    n = owner.index
    return [op.regions[0].blocks[0].args[n], op.regions[1].blocks[0].args[n]]


def transform_target_sharding(edge: Operation, sharding: TensorSharding,
                              before_propagation: bool) -> TensorSharding:
    """``DataFlowEdgeOp::transformTargetSharding``: only a manual computation changes
    the view. Its body-argument edge is seen with the manual axes of its in-sharding
    during propagation (its sources are global), its result edge without them (its source
    is the local ``sdy.return`` operand); afterwards each goes back to its stored view."""
    owner = edge.operands[0]
    op = owning_op(owner)
    if op.name != "sdy.manual_computation":
        return sharding
    manual = tuple(op.attributes.get("manual_axes") or ())
    is_arg = isinstance(owner, BlockArgument)
    if is_arg == before_propagation:
        outer = op.attributes["in_shardings" if is_arg else "out_shardings"][owner.index]
        return add_free_axes(outer, sharding, manual)
    return erase_manual_axes(sharding, manual)
