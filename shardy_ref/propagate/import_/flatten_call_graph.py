"""``sdy-flatten-call-graph``: give every call site a function of its own, so that each
function has at most one caller (upstream ``transforms/import/flatten_call_graph.cc``;
see https://openxla.org/shardy/sdy_import_passes#-sdy-flatten-call-graph).

Calls are visited callees-first (``walkCalls`` post order). The first call of a function
keeps it; every later call gets a recursive clone, inserted at the end of the module under
MLIR's uniqued name (``foo_0``, ``foo_1``, ... one counter for the whole pass) and marked
``sdy.original_func_name``. Callees are visited before callers, so a function's own calls
are already flattened when it is cloned. The pass has no options; upstream's C++-only
predicate (flatten only under some calls) is :func:`flatten_call_graph`'s ``under``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.call_graph import (
    CALL_OP,
    InsertingSymbolTable,
    callee_name,
    clone_func_recursively,
    get_func_or_die,
    set_callee,
    walk_calls,
)
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import symbol_name
from shardy_ref.pass_manager import Pass, register_pass


def flatten_call_graph(module: Operation,
                       under: Callable[[Operation], bool] | None = None) -> None:
    """Clone callees per call site; with ``under``, only calls it accepts are flattened,
    and the first such call of a function clones the call graph below it instead."""
    table = InsertingSymbolTable(module)
    seen: set[str] = set()
    for call in walk_calls(module, table=table):
        if under is not None and not under(call):
            continue
        func = get_func_or_die(callee_name(call), table, call)
        name = symbol_name(func)
        if name not in seen:
            seen.add(name)
            if under is not None:
                for nested in [op for op in func.walk() if op.name == CALL_OP]:
                    callee = get_func_or_die(callee_name(nested), table, nested)
                    set_callee(nested, table.insert(clone_func_recursively(callee, table)))
            continue
        set_callee(call, table.insert(clone_func_recursively(func, table)))


@register_pass
@dataclass(frozen=True, slots=True)
class FlattenCallGraphPass(Pass):
    """Clones callees so that each ``func.call`` has its own function. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``FlattenCallGraphPass``)."""

    NAME = "sdy-flatten-call-graph"

    def run(self, op: Operation, ctx) -> None:
        flatten_call_graph(op)
