"""Symbols: ops with a ``sym_name`` (functions, meshes) and the attributes that refer to them."""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from contextvars import ContextVar

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.run_memo import pipeline_memo


def symbol_name(op: Operation) -> str | None:
    attr = op.attributes.get("sym_name")
    return attr.value if isinstance(attr, StringAttr) else None


def is_private(op: Operation) -> bool:
    attr = op.attributes.get("sym_visibility")
    return isinstance(attr, StringAttr) and attr.value == "private"


class SymbolTable:
    """The symbols defined directly in one region-holding op (normally the module)."""

    def __init__(self, op: Operation):
        self.op = op
        self.symbols: dict[str, Operation] = {}
        for region in op.regions:
            for block in region.blocks:
                for child in block:
                    name = symbol_name(child)
                    if name is not None and name not in self.symbols:
                        self.symbols[name] = child

    def lookup(self, name: str) -> Operation | None:
        return self.symbols.get(name)


# ops whose symbols stay put -> their table, built on first use (see `symbols_fixed`)
_FIXED: ContextVar[dict[Operation, SymbolTable | None] | None] = ContextVar(
    "fixed_symbol_tables", default=None)
# the same ops -> other facts of their symbols, kept as long (see `facts_while_fixed`)
_FIXED_FACTS: ContextVar[dict[Operation, dict] | None] = ContextVar(
    "fixed_symbol_facts", default=None)


@contextmanager
def symbols_fixed(op: Operation):
    """While a pass runs on each op nested in ``op`` (a function pass on every function of
    a module), ``symbol_table(op)`` builds ``op``'s table once instead of once per nested
    op, which made function passes quadratic in the number of functions. Sound by MLIR's
    rule for nested passes: they do not add, remove or rename the symbols of the ops
    enclosing them (``mlir/docs/PassManagement.md``, "Operation Pass")."""
    outer = _FIXED.get()
    token = _FIXED.set({**(outer or {}), op: (outer or {}).get(op)})
    outer_facts = _FIXED_FACTS.get() or {}
    facts_token = _FIXED_FACTS.set({**outer_facts, op: outer_facts.get(op, {})})
    try:
        yield
    finally:
        _FIXED_FACTS.reset(facts_token)
        _FIXED.reset(token)


def facts_while_fixed(op: Operation) -> dict | None:
    """A dict for what is derived from ``op``'s symbols (the verifier's module environment),
    shared while they are fixed (:func:`symbols_fixed`); None when they are not."""
    facts = _FIXED_FACTS.get()
    return None if facts is None else facts.get(op)


def symbol_table(op: Operation) -> SymbolTable:
    """``SymbolTable(op)``, shared while ``op``'s symbols are fixed (:func:`symbols_fixed`)."""
    fixed = _FIXED.get()
    if fixed is None or op not in fixed:
        return SymbolTable(op)
    table = fixed[op]
    if table is None:
        table = fixed[op] = SymbolTable(op)
    return table


_NO_SYMBOLS = frozenset({str, int, float, bool, bytes, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}  # per attribute class: its dataclass fields


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls)) \
            if dataclasses.is_dataclass(cls) else ()
        _FIELDS[cls] = names
    return names


def _collect(attr, out: set[str]) -> None:
    """Add the root names of the symbol references inside ``attr`` (sdy mesh refs too); a
    stack rather than recursion, as attributes nest without limit."""
    todo = [attr]
    while todo:
        attr = todo.pop()
        cls = type(attr)
        if cls in _NO_SYMBOLS:
            continue
        if cls is SymbolRefAttr:
            out.add(attr.root)
        elif cls is ArrayAttr:
            todo.extend(attr.value)
        elif cls is DictionaryAttr:
            todo.extend(a for _, a in attr.value)
        elif cls is tuple or cls is list:
            todo.extend(attr)
        else:
            if cls.__name__ == "TensorSharding" and isinstance(attr.mesh_or_ref, str):
                out.add(attr.mesh_or_ref)
            todo.extend(getattr(attr, name) for name in _field_names(cls))


def op_symbol_uses(op: Operation) -> set[str]:
    """Symbols referenced by ``op`` or any op nested in it."""
    out: set[str] = set()
    memo = pipeline_memo("symbol_uses")
    for nested in op.walk():
        for attr in nested.attributes.values():
            if memo is None:
                _collect(attr, out)
            else:
                out |= _attr_symbol_uses(attr, memo)
    return out


def _attr_symbol_uses(attr, memo: dict) -> frozenset[str]:
    """The symbols ``attr`` refers to, memoised by identity while a pipeline runs (symbol-dce
    runs several times in the propagation pipeline, and attributes are immutable); the memo
    holds ``attr``, so its id is not reused."""
    hit = memo.get(id(attr))
    if hit is not None and hit[0] is attr:
        return hit[1]
    found: set[str] = set()
    _collect(attr, found)
    names = frozenset(found)
    memo[id(attr)] = (attr, names)
    return names


def unique_symbol_name(base: str, taken, counter: int = 0) -> str:
    """``base`` if free, else the first free ``base_<n>`` for n = counter, counter+1, ...:
    MLIR's ``SymbolTable::generateSymbolName``, used when a symbol is inserted under a
    name that is already taken."""
    if base not in taken:
        return base
    while f"{base}_{counter}" in taken:
        counter += 1
    return f"{base}_{counter}"
