"""``sdy-constant-or-scalar-merger``: merge the constants (and broadcasts of scalars) that
``sdy-constant-or-scalar-splitter`` duplicated, when they are identical and in the same
region (upstream ``export/constant_or_scalar_merger.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-constant-or-scalar-merger)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.op_traits import is_constant_like
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.utils import is_scalar
from shardy_ref.pass_manager import Pass, PassContext, register_pass


def _attr_key(op: Operation):
    """The op's attribute dictionary, as MLIR compares it (sorted by name)."""
    return tuple(sorted(op.attributes.items()))


@register_pass
@dataclass(frozen=True, slots=True)
class ConstantOrScalarMergerPass(Pass):
    """Deduplicates constants and scalar broadcasts with equal attributes in one region
    (post-order walk; a duplicate's uses go to the first one seen)."""

    NAME = "sdy-constant-or-scalar-merger"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        constants: dict = {}
        broadcasts: dict = {}
        for nested in list(op.walk(post_order=True)):
            if nested.name == "sdy.constant" or is_constant_like(nested):
                key = (_attr_key(nested), id(nested.parent_region))
                cache = constants
            elif nested.name == "stablehlo.broadcast_in_dim" and is_scalar(nested.operands[0]):
                key = (_attr_key(nested), id(nested.parent_region), nested.result_types[0],
                       nested.operands[0])
                cache = broadcasts
            else:
                continue
            first = cache.setdefault(key, nested)
            if first is not nested:
                for old, new in zip(nested.results, first.results, strict=True):
                    old.replace_all_uses_with(new)
                nested.erase()
