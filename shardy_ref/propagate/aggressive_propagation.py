"""``sdy-aggressive-propagate``: the basic driver run once per factor propagation strategy
of ``propagation-strategy`` (upstream ``transforms/propagation/aggressive_propagation.cc``;
see https://openxla.org/shardy/sdy_propagation_passes#-sdy-aggressive-propagate)."""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.basic_factor_propagation import BasicFactorPropagation
from shardy_ref.propagate.basic_propagation import BasicPropagationPassImpl, GetDirectionToPropagate
from shardy_ref.propagate.sharding_group_map import ShardingGroupMap

STRATEGIES = ("basic", "aggressive", "basic-then-aggressive")


def factor_propagations(strategy: str) -> list:
    """The factor propagation strategies ``propagation-strategy=strategy`` runs, in order."""
    from shardy_ref.propagate.aggressive_factor_propagation import AggressiveFactorPropagation
    basic, aggressive = BasicFactorPropagation(), AggressiveFactorPropagation()
    return {"basic": [basic], "aggressive": [aggressive],
            "basic-then-aggressive": [basic, aggressive]}[strategy]


@dataclass(frozen=True, slots=True)
class AggressivePropagationPassImpl(BasicPropagationPassImpl):
    """Upstream ``AggressivePropagationPassImpl``: the basic driver once per factor
    propagation strategy of ``propagation-strategy``."""

    propagation_strategy: str = field(default="aggressive", metadata={"help": (
        "Which factor propagation strategy to use: basic, aggressive or basic-then-aggressive")})

    def __post_init__(self):
        if self.propagation_strategy not in STRATEGIES:
            raise PassError(None, f"Invalid value '{self.propagation_strategy}' for option "
                            "propagation-strategy: expected one of " + ", ".join(STRATEGIES))

    def propagate(self, module: Operation, ctx: PassContext, groups: ShardingGroupMap,
                  direction: GetDirectionToPropagate, factor_propagation=None) -> None:
        for strategy in factor_propagations(self.propagation_strategy):
            BasicPropagationPassImpl.propagate(self, module, ctx, groups, direction, strategy)
