"""``sdy-sink-data-flow-edges``: move each ``sdy.data_flow_edge``'s sharding back to its edge
owner and replace the edge by its input (upstream
``transforms/export/sink_data_flow_edges.cc`` and ``getShardingsFromDataFlowEdges`` in
``transforms/propagation/utils.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-sink-data-flow-edges).

The inverse of ``sdy-add-data-flow-edges``. When some owners of an op have an edge with a
sharding, owners without one get a fully open sharding on the same mesh.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.value_sharding import DATA_FLOW_OPS, add_free_axes
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.debugging.source_sharding import sink_debug_info
from shardy_ref.propagate.imports.data_flow_edges import (
    DATA_FLOW_EDGE,
    block_argument_edge_owners,
    lookup_data_flow_edge,
)


def _rank(value: Value) -> int:
    """Upstream ``getTensorRank``: 0 for a non-shaped type."""
    shape = getattr(value.type, "shape", None)
    return len(shape) if shape is not None else 0


def shardings_from_data_flow_edges(owners: Sequence[Value]) -> list[TensorSharding]:
    """Upstream ``getShardingsFromDataFlowEdges``: the sharding of each owner's edge, fully
    open (on the first edge sharding's mesh) where an owner has none; empty if no edge
    has a sharding."""
    shardings: list[TensorSharding | None] = []
    mesh_or_ref = None
    for owner in owners:
        edge = lookup_data_flow_edge(owner)
        sharding = edge.attributes.get("sharding") if edge is not None else None
        if sharding is not None and mesh_or_ref is None:
            mesh_or_ref = sharding.mesh_or_ref
        shardings.append(sharding)
    if mesh_or_ref is None:
        return []
    return [s if s is not None else TensorSharding.fully_open(mesh_or_ref, _rank(owner))
            for s, owner in zip(shardings, owners, strict=True)]


def _set_block_arg_shardings(op: Operation, shardings: list[TensorSharding]) -> None:
    """``setBlockArgumentEdgeOwnerShardings``: a manual computation keeps the manual axes
    of its in-shardings in front of the (free) edge axes."""
    flow = DATA_FLOW_OPS[op.name]
    if flow.erase_manual_axes:
        manual = tuple(op.attributes.get("manual_axes") or ())
        shardings = [add_free_axes(outer, new, manual)
                     for outer, new in zip(op.attributes[flow.block_arg_shardings], shardings,
                                           strict=True)]
    op.attributes[flow.block_arg_shardings] = TensorShardingPerValue(tuple(shardings))


@register_pass
@dataclass(frozen=True, slots=True)
class SinkDataFlowEdgesPass(Pass):
    """Sinks all ``sdy.data_flow_edge`` ops into their input; the debug options gather the
    edges' sharding origins / propagation edges into arrays on the data-flow op."""

    NAME = "sdy-sink-data-flow-edges"
    ANCHOR = "func.func"
    sink_debug_sharding_origins: bool = field(default=False, metadata={"help": (
        "Whether to sink the debug sharding origins info (see debug-sharding-origins)")})
    sink_debug_propagation_edge_sharding: bool = field(default=False, metadata={"help": (
        "Whether to sink the debug propagation edge sharding info (see "
        "debug-propagation-edge-sharding)")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        # pre-order: a data-flow op comes before its edges (users or in its regions)
        for nested in list(op.walk()):
            if nested.name == DATA_FLOW_EDGE:
                nested.results[0].replace_all_uses_with(nested.operands[0])
                nested.erase()
                continue
            flow = DATA_FLOW_OPS.get(nested.name)
            if flow is None:
                continue
            arg_owners = block_argument_edge_owners(nested)
            arg_shardings = shardings_from_data_flow_edges(arg_owners)
            if arg_shardings:
                _set_block_arg_shardings(nested, arg_shardings)
            sink_debug_info(arg_owners, nested, self.sink_debug_sharding_origins,
                            self.sink_debug_propagation_edge_sharding, "block_arg")
            result_shardings = shardings_from_data_flow_edges(list(nested.results))
            if result_shardings:
                nested.attributes[flow.result_shardings] = \
                    TensorShardingPerValue(tuple(result_shardings))
            sink_debug_info(list(nested.results), nested, self.sink_debug_sharding_origins,
                            self.sink_debug_propagation_edge_sharding, "result")
