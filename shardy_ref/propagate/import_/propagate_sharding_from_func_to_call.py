"""``sdy-propagate-sharding-from-func-to-call``: give a ``func.call`` without result
shardings those of its callee's results (upstream
``transforms/import/propagate_sharding_from_func_to_call.cc``; see
https://openxla.org/shardy/sdy_import_passes#-sdy-propagate-sharding-from-func-to-call).

A call that has ``sdy.sharding`` keeps it, even if every sharding in it is empty. The
callee's result shardings come from ``getFuncResultShardings``: none unless some result
has a sharding on a non-maximal mesh; results without one get a fully open sharding on
the first such mesh.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.call_graph import CALL_OP, callee_name, get_func_or_die
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.value_sharding import SHARDING_ATTR, get_func_result_sharding, set_shardings
from shardy_ref.pass_manager import Pass, register_pass


def _mesh(sharding: TensorSharding, table: SymbolTable) -> Mesh | None:
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh_op = table.lookup(sharding.mesh_or_ref)
    return mesh_op.attributes.get("mesh") if mesh_op is not None else None


def func_result_shardings(func: Operation, table: SymbolTable) -> list[TensorSharding] | None:
    """Upstream ``getFuncResultShardings``: one sharding per result (empty ones fully open
    on the first non-maximal mesh), or None when no result has a non-maximal sharding."""
    results = func.attributes["function_type"].value.results
    shardings = [get_func_result_sharding(func, i) for i in range(len(results))]
    mesh_or_ref = next((s.mesh_or_ref for s in shardings
                        if s is not None and not getattr(_mesh(s, table), "is_maximal", True)),
                       None)
    if mesh_or_ref is None:
        return None
    return [s if s is not None else TensorSharding.fully_open(mesh_or_ref, tensor_rank(t))
            for s, t in zip(shardings, results)]


@register_pass
@dataclass(frozen=True, slots=True)
class PropagateShardingFromFuncToCallPass(Pass):
    """Sets call result shardings to the func result shardings, if the call has none. See
    ``shardy/dialect/sdy/transforms/import/passes.td``
    (``PropagateShardingFromFuncToCallPass``)."""

    NAME = "sdy-propagate-sharding-from-func-to-call"

    def run(self, op: Operation, ctx) -> None:
        table = SymbolTable(op)
        for call in op.walk():
            if call.name != CALL_OP or SHARDING_ATTR in call.attributes:
                continue
            func = get_func_or_die(callee_name(call), table, call)
            shardings = func_result_shardings(func, table)
            if shardings is not None:
                set_shardings(call, shardings)
