"""``sdy-populate-op-sharding-rules``: give every op of a function its sharding rule
(https://openxla.org/shardy/sdy_propagation_passes#-sdy-populate-op-sharding-rules; a
debugging/testing pass, propagation does this just in time).

Ops are visited post-order, like MLIR's ``walk``; an op that already has a
``sdy.sharding_rule`` (a custom rule) keeps it. See
``shardy/dialect/sdy/transforms/propagation/populate_op_sharding_rules.cc`` and ``passes.td``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule


@register_pass
@dataclass(frozen=True, slots=True)
class PopulateOpShardingRulesPass(Pass):
    """Populates all registered ops with an ``OpShardingRuleAttr``; with
    ``conservative-propagation`` rules never map a dimension to factors that could shard it
    along axes not dividing its size."""

    NAME = "sdy-populate-op-sharding-rules"
    ANCHOR = "func.func"
    conservative_propagation: bool = field(default=False, metadata={"help": (
        "Whether to disallow rules that can propagate non-divisible sharding axes")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk(post_order=True)):
            get_or_create_sharding_rule(nested, self.conservative_propagation, ctx=ctx)
