"""Small wrong edits of a per-device program, which a judge of partitioned programs must
catch (issue 31: ``check --partitioner xla`` reporting XLA's program edited the way real
partitioner bugs go wrong).

Each kind edits one op of the program and only where the edit changes what some device
computes (a collective over groups of one device, or a slice that takes the whole
dimension, is left alone):

* ``drop_all_reduce``: an ``all_reduce`` over groups of two or more devices is removed,
  its uses take its operand (a missing reduction, as openxla/xla#40034);
* ``regroup``: the replica groups of a collective are changed: two devices of different
  groups trade places, or, for a collective whose order matters and that has one group,
  the first two members swap;
* ``swap_permute_pair``: two pairs of a ``collective_permute`` swap their targets;
* ``shift_dynamic_slice``: a ``dynamic_slice`` start that can move is offset by one.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.replica_groups import groups_attr

KINDS = ("drop_all_reduce", "regroup", "swap_permute_pair", "shift_dynamic_slice")
_GROUPED = ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
            "stablehlo.all_to_all")
_ORDERED = ("stablehlo.all_gather", "stablehlo.reduce_scatter", "stablehlo.all_to_all")


@dataclass(frozen=True, slots=True)
class Mutant:
    """One edited program: the kind of edit, the op edited (name and position), the text."""

    kind: str
    where: str
    text: str


def mutants(text: str, kinds=KINDS, *, debug_info: bool = False) -> list[Mutant]:
    """Every edit of ``kinds`` that applies to the program ``text``, one mutant each
    (printed with its locations when ``debug_info``)."""
    from shardy_ref.parser import parse_module, print_module

    out = []
    for kind in kinds:
        count = len(_sites(kind, parse_module(text)))
        for index in range(count):
            module = parse_module(text)  # a fresh copy per mutant
            op = _sites(kind, module)[index]
            where = f"{op.name} at {op.location}"
            _EDITS[kind](module, op)
            out.append(Mutant(kind, where, print_module(module, debug_info=debug_info)))
    return out


def _sites(kind: str, module: Operation) -> list[Operation]:
    return [op for op in module.walk() if _APPLIES[kind](module, op)]


# -- where each edit applies ------------------------------------------------------------------
def _groups(module: Operation, op: Operation) -> list[list[int]] | None:
    """The replica groups of ``op`` as device ids (mesh-axes groups resolved)."""
    from shardy_ref.execute.errors import InterpreterError
    from shardy_ref.execute.spmd import replica_groups
    from shardy_ref.ir.module import Module

    if "replica_groups" not in op.attributes:
        return None
    try:
        return replica_groups(op, symbols=Module(module))
    except InterpreterError:  # groups the interpreter cannot read: not an edit site
        return None


def _can_drop(module: Operation, op: Operation) -> bool:
    groups = _groups(module, op) if op.name == "stablehlo.all_reduce" else None
    return bool(groups) and max(len(g) for g in groups) > 1 and all(
        o.type == r.type for o, r in zip(op.operands, op.results, strict=True))


def _can_regroup(module: Operation, op: Operation) -> bool:
    groups = _groups(module, op) if op.name in _GROUPED else None
    if not groups:
        return False
    big = [g for g in groups if len(g) > 1]
    return (len(groups) > 1 and bool(big)) or (op.name in _ORDERED and bool(big))


def _can_swap_pairs(module: Operation, op: Operation) -> bool:
    pairs = op.attributes.get("source_target_pairs")
    return op.name == "stablehlo.collective_permute" and pairs is not None and \
        pairs.type.shape[0] > 1


def _can_shift(module: Operation, op: Operation) -> bool:
    return op.name == "stablehlo.dynamic_slice" and _movable_dim(op) is not None


def _movable_dim(op: Operation) -> int | None:
    sizes = op.attributes["slice_sizes"].value
    shape = op.operands[0].type.shape
    return next((d for d, (n, s) in enumerate(zip(shape, sizes, strict=True)) if s < n), None)


# -- the edits ------------------------------------------------------------------------------
def _drop(module: Operation, op: Operation) -> None:
    op.replace_all_uses_with(op.operands)
    op.erase()


def _regroup(module: Operation, op: Operation) -> None:
    groups = [list(g) for g in _groups(module, op)]
    big = next(i for i, g in enumerate(groups) if len(g) > 1)
    other = next((i for i in range(len(groups)) if i != big), None)
    if other is not None:
        groups[big][-1], groups[other][0] = groups[other][0], groups[big][-1]
    else:
        groups[big][0], groups[big][1] = groups[big][1], groups[big][0]
    op.attributes["replica_groups"] = groups_attr(groups)


def _swap_pairs(module: Operation, op: Operation) -> None:
    attr = op.attributes["source_target_pairs"]
    values = [int(v) for v in attr.flat_values()]
    values[1], values[3] = values[3], values[1]
    op.attributes["source_target_pairs"] = DenseElementsAttr.from_values(attr.type, values)


def _shift(module: Operation, op: Operation) -> None:
    dim = _movable_dim(op)
    start = op.operands[1 + dim]
    one = Operation("stablehlo.constant", [], [start.type], {
        "value": DenseElementsAttr.from_values(start.type, [1])}, location=op.location)
    moved = Operation("stablehlo.add", [start, one.results[0]], [start.type],
                      location=op.location)
    block = op.parent
    block.insert_before(op, one)
    block.insert_before(op, moved)
    op.set_operand(1 + dim, moved.results[0])


_APPLIES = {"drop_all_reduce": _can_drop, "regroup": _can_regroup,
            "swap_permute_pair": _can_swap_pairs, "shift_dynamic_slice": _can_shift}
_EDITS = {"drop_all_reduce": _drop, "regroup": _regroup, "swap_permute_pair": _swap_pairs,
          "shift_dynamic_slice": _shift}
