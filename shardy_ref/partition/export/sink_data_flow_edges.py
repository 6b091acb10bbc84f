"""``sdy-sink-data-flow-edges``: move each ``sdy.data_flow_edge``'s sharding back to its edge
owner and replace the edge by its input (upstream
``transforms/export/sink_data_flow_edges.cc`` and ``getShardingsFromDataFlowEdges`` in
``transforms/propagation/utils.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-sink-data-flow-edges).

The inverse of ``sdy-add-data-flow-edges``. When some owners of an op have an edge with a
sharding, owners without one get a fully open sharding on the same mesh.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.constants import DATA_FLOW_EDGE
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorShardingPerValue
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    block_argument_edge_owners,
    set_block_arg_shardings,
)
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.debugging.source_sharding import sink_debug_info
from shardy_ref.propagate.utils import shardings_from_data_flow_edges


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
                set_block_arg_shardings(nested, arg_shardings)
            sink_debug_info(arg_owners, nested, self.sink_debug_sharding_origins,
                            self.sink_debug_propagation_edge_sharding, "block_arg")
            result_shardings = shardings_from_data_flow_edges(list(nested.results))
            if result_shardings:
                nested.attributes[flow.result_shardings] = \
                    TensorShardingPerValue(tuple(result_shardings))
            sink_debug_info(list(nested.results), nested, self.sink_debug_sharding_origins,
                            self.sink_debug_propagation_edge_sharding, "result")
