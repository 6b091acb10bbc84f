"""``sdy-remove-propagation-debug-info``: remove the propagation debugging attributes
(propagation edges and sharding origins) from ops and function arguments/results
(upstream ``export/remove_propagation_debug_info.cc``)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import FUNC_OP
from shardy_ref.ir.func_attrs import function_type, set_attrs
from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, PassContext, register_pass

DEBUG_ATTRS = ("sdy.propagation_edges", "sdy.block_arg_propagation_edges",
               "sdy.result_propagation_edges", "sdy.sharding_origins",
               "sdy.block_arg_sharding_origins", "sdy.result_sharding_origins")


@register_pass
@dataclass(frozen=True, slots=True)
class RemovePropagationDebugInfoPass(Pass):
    """Removes propagation debug info (edges and origins) from the module."""

    NAME = "sdy-remove-propagation-debug-info"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in op.walk(post_order=True):
            if nested.name != FUNC_OP:
                for name in DEBUG_ATTRS:
                    nested.attributes.pop(name, None)
                continue
            ftype = function_type(nested)
            for name in DEBUG_ATTRS:
                for kind, count in (("arg", len(ftype.inputs)), ("result", len(ftype.results))):
                    if count:
                        set_attrs(nested, kind, name, dict.fromkeys(range(count)))
