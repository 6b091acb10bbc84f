"""``sdy-unflatten-call-graph``: calls of functions with the same origin
(``sdy.original_func_name``), manual axes and argument/result shardings all go to one of
them; with ``dedup-functions-fully`` shardings are ignored and the most-called variant wins
(upstream ``export/unflatten_call_graph.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-unflatten-call-graph). The now-unused
copies are left for ``symbol-dce``."""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import SymbolRefAttr
from shardy_ref.ir.call_graph import (
    CALL_OP,
    FUNC_OP,
    ORIGINAL_FUNC_NAME,
    callee_name,
    get_func_or_die,
    original_func_name,
)
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import func_arg_shardings, func_result_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass

FUNC_MANUAL_AXES = "sdy.func_manual_axes"  # upstream ``kFuncManualAxes``


def computation_key(func: Operation, table: SymbolTable, ignore_shardings: bool = False):
    """Upstream ``getComputationKey``: origin, manual axes, argument and result shardings."""
    if ignore_shardings:
        args = results = None
    else:
        args = func_arg_shardings(func, table)
        results = func_result_shardings(func, table)
        results = tuple(results) if results is not None else None
    return (original_func_name(func), func.attributes.get(FUNC_MANUAL_AXES), args, results)


def _calls(module: Operation) -> list[Operation]:
    return [op for op in module.walk(post_order=True) if op.name == CALL_OP]


def func_cache(module: Operation, table: SymbolTable, dedup_fully: bool) -> dict:
    """Upstream ``populateFuncCache``: key -> the function its calls will call."""
    cache: dict = {}
    for call in _calls(module):
        func = get_func_or_die(callee_name(call), table, call)
        cache.setdefault(computation_key(func, table, dedup_fully), func)
    if dedup_fully:
        counts: dict = {}
        for call in _calls(module):
            func = get_func_or_die(callee_name(call), table, call)
            key = computation_key(func, table, ignore_shardings=True)
            own = computation_key(func, table)
            counts[own] = counts.get(own, 0) + 1
            cached = computation_key(cache[key], table)
            if counts[own] > counts.get(cached, 0):
                cache[key] = func
    return cache


@register_pass
@dataclass(frozen=True, slots=True)
class UnflattenCallGraphPass(Pass):
    """Deduplicates the functions that flattening the call graph cloned."""

    NAME = "sdy-unflatten-call-graph"
    dedup_functions_fully: bool = field(default=False, metadata={"help": (
        "Dedup functions of the same origin whatever their shardings (else only equal ones)")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        cache = func_cache(op, table, self.dedup_functions_fully)
        for call in _calls(op):
            func = get_func_or_die(callee_name(call), table, call)
            target = cache[computation_key(func, table, self.dedup_functions_fully)]
            call.attributes["callee"] = SymbolRefAttr(target.attributes["sym_name"].value)
        for func in op.walk(post_order=True):
            if func.name == FUNC_OP:
                func.attributes.pop(ORIGINAL_FUNC_NAME, None)
                func.attributes.pop(FUNC_MANUAL_AXES, None)
