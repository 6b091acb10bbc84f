"""``inline``: MLIR's inliner pass (``mlir/lib/Transforms/InlinerPass.cpp``) as StableHLO's
and JAX's test pipelines run it before ``stablehlo-translate --interpret``.

Every ``func.call`` of a function defined in the module with a single-block body is
replaced by a copy of that body (its arguments mapped to the call's operands, its
``func.return`` operands to the call's results), transitively; calls within a recursive
cycle of functions are kept. Private functions no call or other op refers to any more are
erased (MLIR deletes dead discardable callables). Then the inliner's default pipeline,
``canonicalize``, runs on every function, as upstream's ``default-pipeline`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import SymbolTable, is_private, op_symbol_uses, symbol_name
from shardy_ref.pass_manager import Pass, PassContext, make_pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class InlinerPass(Pass):
    """``default-pipeline``: run on each function afterwards (upstream's default:
    ``canonicalize``; empty: none)."""

    NAME = "inline"
    DESCRIPTION = "Inline function calls (MLIR's inliner), then canonicalize."
    default_pipeline: str = field(default="canonicalize", metadata={"help": (
        "The optimizer pass run over the module after inlining (empty: none)")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        recursive = _recursive_functions(op, table)
        while _inline_once(op, table, recursive):
            pass
        _erase_dead_private_functions(op, table)
        if self.default_pipeline:
            make_pass(self.default_pipeline).run(op, ctx)


def _functions(module: Operation) -> list[Operation]:
    return [child for region in module.regions for block in region.blocks for child in block
            if child.name == "func.func"]


def _callee(call: Operation, table: SymbolTable) -> Operation | None:
    ref = call.attributes.get("callee")
    target = table.lookup(getattr(ref, "root", None)) if ref is not None else None
    if target is None or target.name != "func.func" or not target.regions:
        return None
    region = target.regions[0]
    return target if len(region.blocks) == 1 else None


def _recursive_functions(module: Operation, table: SymbolTable) -> set[str]:
    """Names of functions that can reach themselves through calls."""
    calls = {}
    for func in _functions(module):
        calls[symbol_name(func)] = {getattr(c.attributes.get("callee"), "root", None)
                                    for c in func.walk() if c.name == "func.call"}
    recursive = set()
    for start in calls:
        stack, seen = list(calls[start]), set()
        while stack:
            name = stack.pop()
            if name == start:
                recursive.add(start)
                break
            if name in seen or name not in calls:
                continue
            seen.add(name)
            stack.extend(calls[name])
    return recursive


def _inline_once(module: Operation, table: SymbolTable, recursive: set[str]) -> bool:
    changed = False
    for call in [o for o in module.walk() if o.name == "func.call"]:
        callee = _callee(call, table)
        if callee is None or symbol_name(callee) in recursive:
            continue
        _inline(call, callee)
        changed = True
    return changed


def _inline(call: Operation, callee: Operation) -> None:
    block = callee.regions[0].blocks[0]
    mapping = dict(zip(block.args, call.operands, strict=True))
    returned = None
    for op in block:
        if op.name == "func.return":
            returned = [mapping.get(v, v) for v in op.operands]
            break
        call.parent.insert_before(call, op.clone(mapping))
    call.replace_all_uses_with(returned or [])
    call.erase()


def _erase_dead_private_functions(module: Operation, table: SymbolTable) -> None:
    while True:
        used = {name for child in module.walk() for name in op_symbol_uses(child)}
        dead = [f for f in _functions(module) if is_private(f) and symbol_name(f) not in used]
        if not dead:
            return
        for func in dead:
            func.erase()
