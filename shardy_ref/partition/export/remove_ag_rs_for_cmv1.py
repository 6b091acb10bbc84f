"""``sdy-remove-all-gather-reduce-scatter-for-cmv1``: for collective matmul V1, drop the
all-gather feeding a dot and the reduce-scatter consuming one (upstream
``export/remove_ag_rs_for_cmv1.cc``, a temporary upstream workaround)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation, OpResult
from shardy_ref.ir.value_sharding import get_sharding, set_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass

DOTS = frozenset({"stablehlo.dot", "stablehlo.dot_general"})


@register_pass
@dataclass(frozen=True, slots=True)
class RemoveAllGatherReduceScatterForCMV1Pass(Pass):
    """Removes ``sdy.all_gather`` in all-gather + dot and ``sdy.reduce_scatter`` in dot +
    reduce-scatter; the dot then takes the reduce-scatter's sharding."""

    NAME = "sdy-remove-all-gather-reduce-scatter-for-cmv1"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        to_replace: list[Operation] = []
        for dot in op.walk(post_order=True):
            if dot.name not in DOTS:
                continue
            gathered = False
            for operand in dot.operands:
                if isinstance(operand, OpResult) and operand.op.name == "sdy.all_gather" \
                        and operand.has_one_use:
                    to_replace.append(operand.op)
                    gathered = True
            if gathered or not dot.results[0].has_one_use:
                continue
            user = dot.results[0].uses[0].owner
            sharding = get_sharding(dot.results[0])
            if user.name == "sdy.reduce_scatter" and (sharding is None
                                                     or not sharding.unreduced_axes):
                set_shardings(dot, [get_sharding(user.results[0])])
                to_replace.append(user)
        for collective in to_replace:
            collective.results[0].replace_all_uses_with(collective.operands[0])
            collective.erase()
