"""``sdy-remove-sharding-groups``: erase every ``sdy.sharding_group`` once propagation has
used them (upstream ``export/remove_sharding_groups.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-remove-sharding-groups)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class RemoveShardingGroupsPass(Pass):
    """Removes sharding groups after propagation."""

    NAME = "sdy-remove-sharding-groups"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk(post_order=True)):
            if nested.name == "sdy.sharding_group":
                nested.erase()
