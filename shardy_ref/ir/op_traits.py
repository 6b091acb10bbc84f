"""Memory effects of registered ops, and MLIR's trivially-dead test built on them.

MLIR erases an unused op only when it is provably free of side effects
(``mlir/lib/Interfaces/SideEffectInterfaces.cpp``: ``wouldOpBeTriviallyDead``): the op must
implement ``MemoryEffectOpInterface`` with nothing but reads (``Pure`` and
``NoMemoryEffect`` declare no effects at all), or carry ``RecursiveMemoryEffects`` with every
nested op free of effects. An op without either (``sdy.sharding_constraint``,
``sdy.data_flow_edge``, ``sdy.sharding_group``, the sdy collectives, ``stablehlo.all_reduce``,
``func.call``, unregistered ops) conservatively has effects and is never erased. Terminators
and symbols (``func.func``, ``sdy.mesh``) are never trivially dead.

The effects come from the traits of each op's definition (:mod:`shardy_ref.ir.opdefs`,
declared in the ``dialect_*`` modules from sdy's ``ir/ops.td``, StableHLO's
``stablehlo/dialect/StablehloOps.td`` and ``ChloOps.td`` at the pinned commits, and
https://mlir.llvm.org/docs/Dialects/ for ``func``/``arith``/``builtin``).
"""
from __future__ import annotations

from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation

NO_EFFECTS: tuple[str, ...] = ()  # MemoryEffectOpInterface with no effects (Pure, NoMemoryEffect)
RECURSIVE = "recursive"  # HasRecursiveMemoryEffects: the op's effects are its nested ops'

# Pure upstream ops this implementation has no definition of (they parse and print in
# generic form only, as ops of a registered dialect it does not know).
_UNDEFINED_PURE = frozenset({"builtin.unrealized_conversion_cast", "func.constant"})


def op_effects(op: Operation) -> tuple[str, ...] | str | None:
    """The op's declared memory effects, ``RECURSIVE``, or None (no effect interface:
    it may have any effect)."""
    d = op_def(op.name)
    if d is None:
        return NO_EFFECTS if op.name in _UNDEFINED_PURE else None
    if d.memory_effects is not None:
        return d.memory_effects(op) if callable(d.memory_effects) else d.memory_effects
    if "Pure" in d.traits or "NoMemoryEffect" in d.traits:
        return NO_EFFECTS
    if "RecursiveMemoryEffects" in d.traits:
        return RECURSIVE
    return None


def is_terminator(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and d.terminator


def is_symbol(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and d.symbol


def is_constant_like(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and "ConstantLike" in d.traits


def constant_value(op: Operation):
    """``matchPattern(op, m_Constant(&attr))``: the folded value of a ConstantLike op (every
    ConstantLike op here folds to its ``value``)."""
    return op.attributes.get("value") if is_constant_like(op) else None


def would_op_be_trivially_dead(op: Operation) -> bool:
    """MLIR ``wouldOpBeTriviallyDead``: erasable if its results were unused."""
    if is_terminator(op) or is_symbol(op):
        return False
    stack = [op]
    while stack:
        current = stack.pop()
        effects = op_effects(current)
        if effects == RECURSIVE:
            for region in current.regions:
                for block in region.blocks:
                    stack.extend(block)
            continue
        if effects is None:
            return False
        if any(kind != "read" for kind in effects):
            return False
    return True


def is_op_trivially_dead(op: Operation) -> bool:
    """MLIR ``isOpTriviallyDead``: no result is used and the op has no side effects."""
    for result in op.results:
        if result.has_uses:
            return False
    return would_op_be_trivially_dead(op)
