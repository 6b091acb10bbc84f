"""``cse``: MLIR's common subexpression elimination (``mlir/lib/Transforms/CSE.cpp``).

Ops are visited in order, each block with a scope of the equivalent ops seen so far: a
region of an op sees the ops before that op (its scope is a child of the enclosing one), an
``IsolatedFromAbove`` op's regions start empty. An op without memory effects and without
regions whose name, attributes, operands and result types equal an op already in scope is
replaced by it (locations do not count, as ``OperationEquivalence::IgnoreLocations``); an op
found trivially dead when visited is erased, as upstream's CSE does.
"""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass

from shardy_ref.ir.op_traits import NO_EFFECTS, is_op_trivially_dead, is_terminator, op_effects
from shardy_ref.ir.operation import Operation
from shardy_ref.pass_manager import Pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class CSEPass(Pass):
    NAME = "cse"
    DESCRIPTION = "Eliminate common sub-expressions (MLIR's cse)."
    ANCHOR = "any"

    def run(self, op: Operation, ctx) -> None:
        for region in op.regions:
            _simplify_region(region, ChainMap())


def _simplify_region(region, known: ChainMap) -> None:
    for block in region.blocks:
        # one block: it continues the enclosing scope; several: no dominance across them
        _simplify_block(block, known.new_child() if len(region.blocks) == 1 else ChainMap())


def _simplify_block(block, known: ChainMap) -> None:
    from shardy_ref.ir.verify.core import is_isolated

    for op in list(block):
        if not is_terminator(op) and is_op_trivially_dead(op):
            op.erase()
            continue
        for region in op.regions:
            _simplify_region(region, ChainMap() if is_isolated(op) else known)
        if op.regions or op_effects(op) != NO_EFFECTS or is_terminator(op):
            continue
        key = _key(op)
        if key is None:
            continue
        existing = known.get(key)
        if existing is None:
            known[key] = op
            continue
        op.replace_all_uses_with(existing.results)
        op.erase()


def _key(op: Operation):
    """What makes two ops equivalent; None when an attribute cannot be compared."""
    attrs = []
    for name, attr in sorted(op.attributes.items(), key=lambda item: item[0]):
        try:
            hash(attr)
            attrs.append((name, attr))
        except TypeError:
            attrs.append((name, type(attr).__name__, str(attr)))
    try:
        return (op.name, tuple(attrs), tuple(op.operands), tuple(op.result_types))
    except TypeError:
        return None
