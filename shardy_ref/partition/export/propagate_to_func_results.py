"""``sdy-propagate-to-func-results``: every function but the main one gets its returned
values' shardings as result shardings (upstream ``export/propagate_to_func_results.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-propagate-to-func-results). The main
function's results were already updated by propagation itself."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import FUNC_OP, has_body
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import main_func_or_die
from shardy_ref.ir.value_sharding import get_sharding, set_func_result_sharding
from shardy_ref.pass_manager import Pass, PassContext, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class PropagateToFuncResultsPass(Pass):
    """Sets each non-main function's result shardings from its ``func.return`` operands
    (removing them where the returned value has none)."""

    NAME = "sdy-propagate-to-func-results"

    def run(self, op: Operation, ctx: PassContext) -> None:
        main = main_func_or_die(op, SymbolTable(op))
        for func in op.regions[0].blocks[0]:
            if func.name != FUNC_OP or func is main or not has_body(func):
                continue
            terminator = func.regions[0].blocks[0].terminator
            if terminator is None or terminator.name != "func.return":
                continue
            for index, value in enumerate(terminator.operands):
                set_func_result_sharding(func, index, get_sharding(value))
