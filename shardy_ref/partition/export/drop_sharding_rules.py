"""``sdy-drop-sharding-rules``: drop every non-custom ``sdy.sharding_rule`` (upstream
``export/drop_sharding_rules.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-drop-sharding-rules)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.utils import remove_sharding_rules
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class DropShardingRulesPass(Pass):
    """Drops ``OpShardingRuleAttr`` from all registered ops (custom rules stay)."""

    NAME = "sdy-drop-sharding-rules"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        remove_sharding_rules(op)
