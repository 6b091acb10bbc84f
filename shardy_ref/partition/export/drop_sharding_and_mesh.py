"""``sdy-drop-sharding-and-mesh``: remove every ``sdy.sharding`` (on ops, function arguments
and results) and every ``sdy.mesh`` (upstream ``export/drop_sharding_and_mesh.cc``)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import FUNC_OP
from shardy_ref.ir.func_attrs import function_type, set_attrs
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.value_sharding import SHARDING_ATTR
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class DropShardingAndMeshPass(Pass):
    """Drops shardings and meshes from the module."""

    NAME = "sdy-drop-sharding-and-mesh"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk(post_order=True)):
            nested.attributes.pop(SHARDING_ATTR, None)
            if nested.name == FUNC_OP:
                ftype = function_type(nested)
                for kind, count in (("arg", len(ftype.inputs)), ("result", len(ftype.results))):
                    if count:
                        set_attrs(nested, kind, SHARDING_ATTR, dict.fromkeys(range(count)))
        for nested in list(op.walk(post_order=True)):
            if nested.name == "sdy.mesh":
                nested.erase()
