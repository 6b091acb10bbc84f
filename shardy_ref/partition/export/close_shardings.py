"""``sdy-close-shardings``: close every dimension of every sharding and drop the replicated
axes, which only mattered while propagating (upstream ``export/close_shardings.cc``,
``TensorShardingAttr::getClosedLike``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-close-shardings)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sharding_walker import transform_shardings
from shardy_ref.ir.utils import closed_like
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class CloseShardingsPass(Pass):
    """Closes tensor shardings and drops replicated axes."""

    NAME = "sdy-close-shardings"

    def run(self, op: Operation, ctx: PassContext) -> None:
        transform_shardings(op, closed_like)
