"""``sdy-ref-erase-propagation-barriers``: replace every ``sdy.propagation_barrier`` by its
operand once propagation is done (our own pass; upstream leaves the barriers to XLA's export,
which lowers them to their operand). The barrier only steers propagation
(https://openxla.org/shardy/sdy_dialect#sdypropagation_barrier-sdypropagationbarrierop):
the per-device program computes the same without it."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class ErasePropagationBarriersPass(Pass):
    """Replaces each propagation barrier by its operand."""

    NAME = "sdy-ref-erase-propagation-barriers"

    def run(self, op: Operation, ctx: PassContext) -> None:
        for nested in list(op.walk(post_order=True)):
            if nested.name == "sdy.propagation_barrier":
                nested.results[0].replace_all_uses_with(nested.operands[0])
                nested.erase()
