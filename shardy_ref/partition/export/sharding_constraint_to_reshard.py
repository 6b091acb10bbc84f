"""``sdy-sharding-constraint-to-reshard``: after propagation a sharding constraint is a
reshard (upstream ``export/sharding_constraint_to_reshard.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-sharding-constraint-to-reshard)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class ShardingConstraintToReshardPass(Pass):
    """Converts every ``sdy.sharding_constraint`` into an ``sdy.reshard`` with the same
    input, sharding, location and discardable attributes."""

    NAME = "sdy-sharding-constraint-to-reshard"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk()):
            if nested.name != "sdy.sharding_constraint":
                continue
            reshard = Operation("sdy.reshard", list(nested.operands), list(nested.result_types),
                                dict(nested.attributes), location=nested.location)
            nested.parent.insert_before(nested, reshard)
            nested.results[0].replace_all_uses_with(reshard.results[0])
            nested.erase()
