"""``sdy-sink-func-data-flow-edges``: move each ``sdy.func_data_flow_edge``'s sharding to its
operand (a function argument or a call result) and replace the edge by the operand
(upstream ``export/sink_func_data_flow_edges.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-sink-func-data-flow-edges)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class SinkFuncDataFlowEdgesPass(Pass):
    """Sinks all ``sdy.func_data_flow_edge`` ops into their operand; an operand whose edge
    has no sharding but that had one becomes fully open."""

    NAME = "sdy-sink-func-data-flow-edges"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk()):
            if nested.name != "sdy.func_data_flow_edge":
                continue
            operand, result = nested.operands[0], nested.results[0]
            old = get_sharding(operand)
            sharding = get_sharding(result)
            if sharding is not None:
                set_sharding(operand, sharding)
            elif old is not None:
                set_sharding(operand, TensorSharding.fully_open(old.mesh_or_ref, old.rank))
            result.replace_all_uses_with(operand)
            nested.erase()
