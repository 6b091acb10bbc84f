"""A snapshot of everything the verifier reads in an op and what it nests, cheap to take
and to compare: whether a pass changed the IR, found by looking rather than counting
(``--mlir-print-ir-after-change``, ``fuzz --stats``, and the cross-check of the change
count the pass manager skips the verifier by: :mod:`shardy_ref.ir.change_count`).

Equal snapshots mean the same ops in the same places, with the same names, attributes
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
    """One flat tuple per op (one per block, and counts), each group led by its length so
    that equal tuples mean equal groups: a tuple per attribute and per group would cost a
    third more."""
    stack = [op]
    while stack:
        current = stack.pop()
        attributes = current.attributes
        results = current.results
        successors = current.successors
        yield (current, current.name, current.properties, len(current.regions),
               len(attributes), *attributes.keys(), *attributes.values(),
               len(results), *[r.type for r in results], len(successors), *successors,
               *[o.value for o in current._operands])
        for region in current.regions:
            yield len(region.blocks)
            for block in region.blocks:
                yield (block, *[a.type for a in block.args])
                ops = block.ops
                yield len(ops)
                stack.extend(reversed(ops))
