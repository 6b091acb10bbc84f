"""Rewrite every sharding of a module: upstream ``transformShardings``
(``transforms/common/sharding_walker.cc``), and finding ``sdy.mesh`` symbols.

Upstream's walker knows where each op keeps its shardings; here one generic replacer
rebuilds every attribute that nests a :class:`TensorSharding` (function arg/result
dictionaries, ``sdy.sharding`` lists, the inherent shardings of sdy ops, in/out shardings
of manual and named computations ...). Ops are visited pre-order and an op's attributes in
name order, as MLIR's sorted attribute dictionary does; for the ops holding several
shardings (``arg_attrs`` < ``res_attrs``, ``in_shardings`` < ``out_shardings``) that is
upstream's walk order.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from shardy_ref.ir.builtin_attrs import Attribute, DictionaryAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable

MESH_OP = "sdy.mesh"


def replace_nested(attr, cls: type, fn: Callable):
    """``attr`` with every nested instance of ``cls`` replaced by ``fn(instance)`` (outer
    first; a replaced value is not searched further). Returns ``attr`` itself when
    nothing changed, so callers can tell by identity (MLIR ``AttrTypeReplacer``). Walks
    with a stack, as attributes nest without limit."""
    if type(attr) is TensorShardingPerValue and cls is TensorSharding:  # most ops' shardings
        old = attr.shardings
        if all(type(s) is TensorSharding for s in old):
            new_shardings = tuple(fn(s) for s in old)
            if all(n is o for n, o in zip(new_shardings, old)):
                return attr
            return TensorShardingPerValue(new_shardings)
    order: list = []  # pre-order: (attribute, indices of its children in `order`)
    todo = [(attr, None)]
    while todo:
        node, parent = todo.pop()
        if parent is not None:
            order[parent][1].append(len(order))
        order.append((node, []))
        if not isinstance(node, cls):
            here = len(order) - 1
            todo.extend((child, here) for child in reversed(_children(node)))
    new = [fn(node) if isinstance(node, cls) else node for node, _ in order]
    for i in range(len(order) - 1, -1, -1):
        node, kids = order[i]
        if kids and any(new[k] is not order[k][0] for k in kids):
            new[i] = _rebuild(node, [new[k] for k in kids])
    return new[0]


SHARDING_ATTR = "sdy.sharding"


def _holds_shardings(name: str) -> bool:
    """Whether upstream's walker looks at the attribute ``name``: the inherent attributes
    of an op, and of the discardable ones (names with a dialect prefix, as in function
    argument dictionaries) only ``sdy.sharding``. A sharding under another name (say
    ``sdy.`` in a mutated module) is left as it is, as upstream does."""
    return "." not in name or name == SHARDING_ATTR


def _children(attr) -> list:
    """The attributes directly inside ``attr`` that :func:`replace_nested` searches."""
    if isinstance(attr, DictionaryAttr):
        return [v for k, v in attr.value if _holds_shardings(k)]
    if not (isinstance(attr, Attribute) and dataclasses.is_dataclass(attr)):
        return []
    out = []
    for f in dataclasses.fields(attr):
        value = getattr(attr, f.name)
        if isinstance(value, tuple) and value and isinstance(value[0], Attribute):
            out.extend(value)
        elif isinstance(value, Attribute):
            out.append(value)
    return out


def _rebuild(attr, children: list):
    """``attr`` with the values :func:`_children` lists replaced by ``children``."""
    if isinstance(attr, DictionaryAttr):
        rest = iter(children)
        return DictionaryAttr(tuple((k, next(rest) if _holds_shardings(k) else v)
                                    for k, v in attr.value))
    changes, rest = {}, iter(children)
    for f in dataclasses.fields(attr):
        value = getattr(attr, f.name)
        if isinstance(value, tuple) and value and isinstance(value[0], Attribute):
            items = tuple(next(rest) for _ in value)
            if any(n is not v for n, v in zip(items, value, strict=True)):
                changes[f.name] = items
        elif isinstance(value, Attribute):
            item = next(rest)
            if item is not value:
                changes[f.name] = item
    return dataclasses.replace(attr, **changes) if changes else attr


def replace_in_op(op: Operation, cls: type, fn: Callable) -> None:
    """Apply :func:`replace_nested` to each attribute of ``op``, in name order."""
    for name in sorted(op.attributes):
        if not _holds_shardings(name):
            continue
        old = op.attributes[name]
        new = replace_nested(old, cls, fn)
        if new is not old:
            op.attributes[name] = new


def transform_shardings(root: Operation,
                        fn: Callable[[TensorSharding], TensorSharding]) -> None:
    """Upstream ``transformShardings``: replace every sharding under ``root`` (ops
    pre-order) by ``fn(sharding)``."""
    for op in root.walk():
        replace_in_op(op, TensorSharding, fn)


def mesh_ops(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].blocks[0] if op.name == MESH_OP]


def lookup_mesh(table: SymbolTable, name: str) -> Mesh | None:
    """Upstream ``getMeshAttr(symbolTable, name)``: the mesh of ``sdy.mesh @name``."""
    op = table.lookup(name)
    return op.attributes.get("mesh") if op is not None and op.name == MESH_OP else None
