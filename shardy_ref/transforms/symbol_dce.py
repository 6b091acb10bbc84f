"""``symbol-dce``: delete private symbols that nothing live refers to (MLIR's SymbolDCE).

Public symbols (no ``sym_visibility`` or ``public``) are live; a private symbol becomes
live when a live op refers to it, transitively. See
https://mlir.llvm.org/docs/Passes/#-symbol-dce.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.symbols import SymbolTable, is_private, op_symbol_uses, symbol_name
from shardy_ref.pass_manager import Pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class SymbolDCEPass(Pass):
    NAME = "symbol-dce"

    def run(self, op, ctx) -> None:
        body = [child for region in op.regions for block in region.blocks for child in block]
        private = {name for child in body
                   if (name := symbol_name(child)) is not None and is_private(child)}
        if not private:  # only private symbols are deleted: no walk for their uses
            return
        table = SymbolTable(op)
        live: set[str] = set()
        worklist = [child for child in body if symbol_name(child) is None or not is_private(child)]
        seen = set()
        while worklist and not private <= live:  # once all are live, no use can matter
            child = worklist.pop()
            if id(child) in seen:
                continue
            seen.add(id(child))
            name = symbol_name(child)
            if name is not None:
                live.add(name)
            for used in op_symbol_uses(child):
                target = table.lookup(used)
                if target is not None and used not in live:
                    live.add(used)
                    worklist.append(target)
        for child in body:
            name = symbol_name(child)
            if name is not None and is_private(child) and name not in live:
                child.erase()
