"""``sdy-insert-func-call-reshards``: where a call's result sharding differs from the
callee's result sharding, reshard the call result, and give the call the callee's result
shardings (upstream ``export/insert_func_call_reshards.cc`` and
``insertReshardsOnFuncResults`` in ``ir/utils.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-insert-func-call-reshards)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import CALL_OP, callee_name, get_func_or_die
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import (
    func_result_shardings,
    insert_after_value,
    is_equivalent,
)
from shardy_ref.ir.value_sharding import get_sharding, set_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass


def fully_closed(mesh_or_ref, rank: int) -> TensorSharding:
    return TensorSharding.fully_closed(mesh_or_ref, rank)


def insert_reshards_on_func_results(func: Operation, call: Operation,
                                    table: SymbolTable) -> None:
    """Upstream ``insertReshardsOnFuncResults(funcOp, callOp, ...)``."""
    shardings = func_result_shardings(func, table)
    if shardings is None:
        existing = call.attributes.get("sdy.sharding")
        if not isinstance(existing, TensorShardingPerValue):
            return
        shardings = [fully_closed(s.mesh_or_ref, s.rank) for s in existing]
    for sharding, result in zip(shardings, call.results, strict=True):
        current = get_sharding(result)
        if is_equivalent(sharding, current):
            continue
        target = current if current is not None else fully_closed(sharding.mesh_or_ref,
                                                                  sharding.rank)
        reshard = Operation("sdy.reshard", [result], [result.type], {"sharding": target},
                            location=call.location)
        insert_after_value(result, reshard)
        result.replace_uses_with_if(reshard.results[0], lambda use, r=reshard: use.owner is not r)
    set_shardings(call, shardings)


@register_pass
@dataclass(frozen=True, slots=True)
class InsertFuncCallReshardsPass(Pass):
    """Inserts reshards on the results of calls whose callee's result shardings differ."""

    NAME = "sdy-insert-func-call-reshards"

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        for call in list(op.walk(post_order=True)):
            if call.name == CALL_OP:
                insert_reshards_on_func_results(
                    get_func_or_die(callee_name(call), table, call), call, table)
