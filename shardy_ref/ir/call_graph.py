"""The module's call graph, walked as upstream's ``walkCalls`` and ``iterateFuncs`` walk it
(``shardy/dialect/sdy/ir/utils.cc``), and the func/call helpers the call passes share:
``getFuncOpOrDie``, ``getOriginalFuncName``, ``cloneFuncRecursively`` and MLIR's
``SymbolTable::insert``.

Upstream iterates functions in (reverse) post order of MLIR's ``CallGraph``: a node per
function with a body, reached from an external caller node that has an edge to every
top-level function in module order; a function's edges are its nested functions, then its
callees in walk order. Calls to declarations (no body) go to an external node and are
not followed. Post order processes callees before their callers; pre order (the reverse)
callers first.
"""
from __future__ import annotations

from collections.abc import Iterator

from shardy_ref.ir.builtin_attrs import StringAttr, SymbolRefAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import SymbolTable, symbol_name

FUNC_OP = "func.func"
CALL_OP = "func.call"
ORIGINAL_FUNC_NAME = "sdy.original_func_name"  # upstream ``kOriginalFuncName``


def callee_name(call: Operation) -> str:
    return call.attributes["callee"].root


def set_callee(call: Operation, name: str) -> None:
    call.attributes["callee"] = SymbolRefAttr(name)


def has_body(func: Operation) -> bool:
    """A definition, not a declaration (MLIR ``getCallableRegion`` is non-null)."""
    return bool(func.regions) and bool(func.regions[0].blocks)


def get_func_or_die(name: str, table: SymbolTable, call: Operation | None = None) -> Operation:
    """Upstream ``getFuncOpOrDie`` (a crash there; a pass error here)."""
    func = table.lookup(name)
    if func is None or func.name != FUNC_OP:
        raise PassError(call.location if call is not None else None,
                        f"Failed to lookup function: {name}")
    return func


def original_func_name(func: Operation) -> str:
    """Upstream ``getOriginalFuncName``: ``sdy.original_func_name`` if set, else the name."""
    attr = func.attributes.get(ORIGINAL_FUNC_NAME)
    return attr.value if isinstance(attr, StringAttr) else symbol_name(func)


class InsertingSymbolTable(SymbolTable):
    """A :class:`SymbolTable` that can insert new symbols the way MLIR's
    ``SymbolTable::insert`` does: at the end of the body, renamed ``name_<n>`` on a clash,
    with one uniquing counter per table that every clash advances."""

    def __init__(self, op: Operation):
        super().__init__(op)
        self.uniquing_counter = 0

    def insert(self, symbol: Operation) -> str:
        if symbol.parent is None:  # a module body has no terminator to insert before
            self.op.regions[0].blocks[0].append(symbol)
        name = symbol_name(symbol)
        if self.symbols.setdefault(name, symbol) is symbol:
            return name
        while True:
            candidate = f"{name}_{self.uniquing_counter}"
            self.uniquing_counter += 1
            if candidate not in self.symbols:
                break
        self.symbols[candidate] = symbol
        symbol.attributes["sym_name"] = StringAttr(candidate)
        return candidate


def clone_func_recursively(func: Operation, table: InsertingSymbolTable,
                           _cloning: tuple[Operation, ...] = ()) -> Operation:
    """Upstream ``cloneFuncRecursively``: a detached clone of ``func`` marked with its
    original name, whose calls go to (inserted) recursive clones of their callees.

    On a recursive call graph upstream recurses until it crashes; this raises instead."""
    if func in _cloning:
        cycle = " -> ".join(f"@{symbol_name(f)}" for f in (*_cloning, func))
        raise PassError(func.location, f"cannot clone a recursive call graph: {cycle}")
    clone = func.clone()
    clone.attributes[ORIGINAL_FUNC_NAME] = StringAttr(original_func_name(func))
    for op in clone.walk():
        if op.name == CALL_OP:
            callee = get_func_or_die(callee_name(op), table, op)
            set_callee(op, table.insert(clone_func_recursively(callee, table,
                                                               (*_cloning, func))))
    return clone


class CallGraph:
    """MLIR's ``CallGraph`` restricted to ``func.func``/``func.call``: ``roots`` are the
    external caller's edges; ``edges[func]`` a function's nested functions, then callees."""

    def __init__(self, module: Operation, table: SymbolTable | None = None):
        self.table = table if table is not None else SymbolTable(module)
        self.roots: list[Operation] = []
        self.edges: dict[Operation, list[Operation]] = {}
        self._compute(module, None, resolve_calls=False)
        self._compute(module, None, resolve_calls=True)

    def _compute(self, op: Operation, parent: Operation | None, resolve_calls: bool) -> None:
        if op.name == CALL_OP:
            if resolve_calls and parent is not None:
                callee = self.table.lookup(callee_name(op))
                if callee is not None and callee in self.edges:
                    self.edges[parent].append(callee)
            return
        if op.name == FUNC_OP:
            if not has_body(op):
                return
            if op not in self.edges:
                self.edges[op] = []
                (self.edges[parent] if parent is not None else self.roots).append(op)
            parent = op
        for region in op.regions:
            for block in region.blocks:
                for nested in block:
                    self._compute(nested, parent, resolve_calls)

    def post_order(self) -> list[Operation]:
        """Functions in DFS post order from the external caller (LLVM ``po_iterator``)."""
        order: list[Operation] = []
        visited: set[Operation] = set()
        for root in self.roots:
            if root in visited:
                continue
            visited.add(root)
            stack = [(root, iter(self.edges[root]))]
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    order.append(node)
                elif child not in visited:
                    visited.add(child)
                    stack.append((child, iter(self.edges[child])))
        return order


def funcs_in_call_graph_order(module: Operation, pre_order: bool = False,
                              table: SymbolTable | None = None) -> list[Operation]:
    """Upstream ``iterateFuncs``: callees before callers, or callers first if ``pre_order``."""
    order = CallGraph(module, table).post_order()
    return order[::-1] if pre_order else order


def walk_calls(module: Operation, pre_order: bool = False,
               table: SymbolTable | None = None) -> Iterator[Operation]:
    """Upstream ``walkCalls``: every ``func.call`` in each function's body, functions in
    :func:`funcs_in_call_graph_order` (fixed before the walk starts, as the call graph is
    built once upstream); the calls of a body in op order either way."""
    for func in funcs_in_call_graph_order(module, pre_order, table):
        for region in func.regions:
            for block in region.blocks:
                for op in block:
                    yield from (o for o in op.walk() if o.name == CALL_OP)
