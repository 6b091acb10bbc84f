"""``sdy-insert-func-call-reshards``: where a call's result sharding differs from the
callee's result sharding, reshard the call result, and give the call the callee's result
shardings (upstream ``export/insert_func_call_reshards.cc`` and
``insertReshardsOnFuncResults`` in ``ir/utils.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-insert-func-call-reshards)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding, set_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.imports.call_graph import CALL_OP, callee_name, get_func_or_die
from shardy_ref.propagate.imports.data_flow_edges import insert_after_value
from shardy_ref.propagate.imports.manual_axes_cleanup import mesh_or_lookup


def _rank(type_) -> int:
    shape = getattr(type_, "shape", None)
    return len(shape) if shape is not None else 0


def is_equivalent(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """Upstream ``TensorShardingAttr::isEquivalent`` (unreduced axes compared): both fully
    replicated, or the same mesh, unreduced axes and dimension axes (open/closed and
    priorities ignored)."""
    def replicated(s: TensorSharding | None) -> bool:
        return s is None or (not s.unreduced_axes and all(not d.axes for d in s.dim_shardings))

    if replicated(a):
        return replicated(b)
    if b is None or a.mesh_or_ref != b.mesh_or_ref or a.unreduced_axes != b.unreduced_axes:
        return False
    return len(a.dim_shardings) == len(b.dim_shardings) and all(
        x.axes == y.axes for x, y in zip(a.dim_shardings, b.dim_shardings))


def non_maximal_mesh_or_ref(count: int, table: SymbolTable,
                            get: Callable[[int], TensorSharding | None]):
    """Upstream ``getMeshOrRef``: the mesh of the first sharding on a non-maximal mesh."""
    for i in range(count):
        sharding = get(i)
        if sharding is not None and not mesh_or_lookup(table, sharding.mesh_or_ref).is_maximal:
            return sharding.mesh_or_ref
    return None


def fully_closed(mesh_or_ref, rank: int) -> TensorSharding:
    return TensorSharding.fully_closed(mesh_or_ref, rank)


def func_result_shardings(func: Operation, table: SymbolTable) -> list[TensorSharding] | None:
    """Upstream ``getFuncResultShardings``: every result's sharding (fully open where it
    has none), or None if no result is sharded on a non-maximal mesh."""
    results = function_type(func).results
    mesh_or_ref = non_maximal_mesh_or_ref(len(results), table,
                                          lambda i: get_func_result_sharding(func, i))
    if mesh_or_ref is None:
        return None
    return [get_func_result_sharding(func, i) or TensorSharding.fully_open(mesh_or_ref, _rank(t))
            for i, t in enumerate(results)]


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
