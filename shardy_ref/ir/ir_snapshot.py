"""A snapshot of everything the verifier reads in an op and what it nests, cheap to take
and to compare, so the pass manager can skip verifying IR it verified before.

MLIR skips the verifier after a pass that declares it preserved all analyses (it cannot
have changed the IR); our passes declare nothing, so the pass manager observes instead:
equal snapshots mean the same ops in the same places, with the same names, attributes
(immutable, compared by identity first), operands, result and block-argument types. The
snapshot holds references, so no object it names can be freed and its id reused.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation


def ir_snapshot(op: Operation) -> tuple:
    """``op`` and everything nested in it, as a tuple that compares equal exactly when the
    verifier would see the same IR."""
    return tuple(_parts(op))


def unchanged_since(snapshot: tuple, op: Operation) -> bool:
    """Whether ``op`` is still the IR ``snapshot`` was taken of. Compares part by part while
    walking, stopping at the first difference, so no second snapshot is built (each part
    is freed as soon as it is compared: no garbage piles up for the collector)."""
    parts = _parts(op)
    for old in snapshot:
        if next(parts, _END) != old:
            return False
    return next(parts, _END) is _END


_END = object()


def _parts(op: Operation):
    stack = [op]
    while stack:
        current = stack.pop()
        yield (current, current.name, tuple(current.attributes.items()), current.properties,
               current.operands, tuple(r.type for r in current.results),
               tuple(current.successors), len(current.regions))
        for region in current.regions:
            yield len(region.blocks)
            for block in region.blocks:
                yield (block, tuple(a.type for a in block.args))
                ops = block.ops
                yield len(ops)
                stack.extend(reversed(ops))
