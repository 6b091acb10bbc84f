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

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    block_argument_edge_owners,
    op_result_edge_owners,
)
from shardy_ref.pass_manager import Pass, register_pass
from shardy_ref.propagate.utils import add_data_flow_edges


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
