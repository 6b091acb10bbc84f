"""The structural comparison behind ``shardy-ref diff``: two modules agree when every
function has the same ops in the same order (sdy ops with the same non-sharding
attributes, e.g. a collective's axes) and every value (arguments, op results, block
arguments of nested regions, then the function's results) carries the same sharding.

A sharding is compared with its mesh symbol resolved to the mesh itself (``@mesh`` and
``@other`` naming ``<["a"=2]>`` are the same mesh), so mesh names, SSA names and the
printing of either side do not matter; a value without a sharding differs from one with a
fully replicated sharding (openxla.org/shardy/sdy_dialect: an absent sharding is open, not
replicated).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from shardy_ref.ir.func_attrs import function_type, get_result_attr
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.parser.names import NameState


@dataclass(frozen=True, slots=True)
class Entry:
    """One position of a function in program order: an op (``op`` is :func:`op_key`,
    ``sharding`` unused) or a value (``op`` is None) with its normalized sharding (None: none)."""

    where: str  # for messages: "@main %3 (result 0 of stablehlo.add)"
    op: str | None
    sharding: str | None


@dataclass(frozen=True, slots=True)
class Difference:
    """The first position where two modules differ, and what each side has there."""

    where: str
    ours: str
    theirs: str

    def __str__(self) -> str:
        return f"{self.where}: ours {self.ours}, theirs {self.theirs}"


def normalized(sharding, module: Operation) -> str | None:
    """``sharding`` printed with its mesh symbol replaced by the mesh it names (None: the
    value has no sharding); a symbol naming no mesh stays a symbol."""
    if not isinstance(sharding, TensorSharding):
        return None if sharding is None else str(sharding)
    if isinstance(sharding.mesh_or_ref, str):
        mesh = _meshes(module).get(sharding.mesh_or_ref)
        if mesh is not None:
            sharding = dataclasses.replace(sharding, mesh_or_ref=mesh)
    return str(sharding)


def _meshes(module: Operation) -> dict:
    return {op.attributes["sym_name"].value: op.attributes.get("mesh")
            for op in module.regions[0].blocks[0] if op.name == "sdy.mesh"}


def functions(module: Operation) -> dict[str, Operation]:
    return {op.attributes["sym_name"].value: op
            for op in module.regions[0].blocks[0] if op.name == "func.func"}


def entries(module: Operation, func: Operation) -> Iterator[Entry]:
    """``func``'s positions in program order (see the module docstring)."""
    names = NameState(module)
    fname = "@" + func.attributes["sym_name"].value

    def value(v: Value, what: str) -> Entry:
        return Entry(f"{fname} {names.use(v)} ({what})", None,
                     normalized(get_sharding(v), module))

    body = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks else None
    for arg in body.args if body is not None else ():
        yield value(arg, f"argument {arg.index}")
    for op in func.walk():
        if op is func:
            continue
        yield Entry(f"{fname} op {op.name}", op_key(op), None)
        for r in op.results:
            yield value(r, f"result {r.index} of {op.name}")
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    yield value(arg, f"block argument {arg.index} of {op.name}")
    for i in range(len(function_type(func).results)):
        yield Entry(f"{fname} result {i}", None,
                    normalized(get_result_attr(func, i, "sdy.sharding"), module))


_SHARDING_ATTRS = frozenset({"sharding", "out_sharding", "in_shardings", "out_shardings"})


def op_key(op: Operation) -> str:
    """What must match between two ops at the same position: the name and, for sdy ops
    (collectives, manual computations), their attributes other than shardings (a
    collective's axes), which have no mesh symbols to resolve."""
    if not op.name.startswith("sdy."):
        return op.name
    attrs = ", ".join(f"{k} = {v}" for k, v in sorted(op.attributes.items())
                      if k not in _SHARDING_ATTRS)
    return f"{op.name} {{{attrs}}}" if attrs else op.name


def _show(entry: Entry | None) -> str:
    if entry is None:
        return "nothing (fewer ops)"
    if entry.op is not None:
        return f"op {entry.op}"
    return entry.sharding or "no sharding"


def compare(ours: Operation, theirs: Operation) -> Difference | None:
    """The first difference between two modules, or None when they agree structurally."""
    our_funcs, their_funcs = functions(ours), functions(theirs)
    if list(our_funcs) != list(their_funcs):
        return Difference("functions", ", ".join(our_funcs) or "none",
                          ", ".join(their_funcs) or "none")
    for name, func in our_funcs.items():
        mine = list(entries(ours, func))
        other = list(entries(theirs, their_funcs[name]))
        for i in range(max(len(mine), len(other))):
            a = mine[i] if i < len(mine) else None
            b = other[i] if i < len(other) else None
            if a is None or b is None or a.op != b.op or a.sharding != b.sharding:
                where = (a or b).where
                if a is None or b is None or a.op != b.op:
                    where += f" [ours {_op_count(mine)} ops, theirs {_op_count(other)}]"
                return Difference(where, _show(a), _show(b))
    return None


def _op_count(items: list[Entry]) -> int:
    return sum(e.op is not None for e in items)
