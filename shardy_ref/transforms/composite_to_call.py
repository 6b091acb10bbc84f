"""``stablehlo-legalize-composite-to-call``: replace each ``stablehlo.composite`` by a
``func.call`` of its decomposition function (upstream's ``ReplaceCompositeWithCall``).
Composites whose name is in ``except`` are kept. See
https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/transforms/StablehloLegalizeCompositeToCall.cpp
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import SymbolRefAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class StablehloLegalizeCompositeToCallPass(Pass):
    """``except`` (upstream's ``exceptListOption``) lists composite names to keep."""

    NAME = "stablehlo-legalize-composite-to-call"
    DESCRIPTION = "Replaces each stablehlo.composite by a call to its decomposition."
    ANCHOR = "func.func"  # upstream runs it on each func.func
    except_: tuple[str, ...] = field(
        default=(), metadata={"help": "Names of composites that should not be replaced with calls"})

    def run(self, op, ctx) -> None:
        for composite in [o for o in op.walk() if o.name == "stablehlo.composite"]:
            name = composite.attributes.get("name")
            if name is not None and name.value in self.except_:
                continue
            callee = composite.attributes["decomposition"]
            call = Operation("func.call", composite.operands, composite.result_types,
                             {"callee": SymbolRefAttr(callee.root, callee.nested)},
                             location=composite.location)
            composite.parent.insert_before(composite, call)
            composite.replace_all_uses_with(call.results)
            composite.erase()
