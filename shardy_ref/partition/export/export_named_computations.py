"""``sdy-export-named-computations``: turn every ``sdy.named_computation`` back into a private
``func.func`` and a ``func.call`` (upstream ``export/export_named_computations.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-export-named-computations), the inverse
of ``sdy-import-func-calls``.

Named computations are visited in post order (nested ones first). The function is named
after the computation (uniqued MLIR's way on a clash), remembers that name as
``sdy.original_func_name``, takes the body (``sdy.return`` becomes ``func.return``) and the
in-shardings, refreshed from the data-flow edges, as argument shardings; the call takes the
out-shardings (also refreshed from the edges) and the other discardable attributes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import StringAttr, SymbolRefAttr, TypeAttr
from shardy_ref.ir.call_graph import (
    CALL_OP,
    FUNC_OP,
    ORIGINAL_FUNC_NAME,
    InsertingSymbolTable,
)
from shardy_ref.ir.constants import DATA_FLOW_EDGE, EXECUTION_THREAD_ATTR
from shardy_ref.ir.func_attrs import set_arg_attr
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation, Region, Value
from shardy_ref.ir.sdy_sharding import TensorShardingPerValue
from shardy_ref.ir.types import FunctionType
from shardy_ref.ir.value_sharding import SHARDING_ATTR, set_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.utils import shardings_from_data_flow_edges

NAMED_COMPUTATION = "sdy.named_computation"


def remove_data_flow_edges(values: Sequence[Value]) -> None:
    """Replace a data-flow edge that is a value's (first) user by the value."""
    for value in values:
        if not value.has_uses:
            continue
        user = value.uses[0].owner
        if user.name == DATA_FLOW_EDGE:
            user.results[0].replace_all_uses_with(value)
            user.erase()


def _create_func(named: Operation, table: InsertingSymbolTable,
                 in_shardings: TensorShardingPerValue | None) -> str:
    """Upstream ``createFuncOp``: a private function holding the named computation's body."""
    body = named.regions[0]
    ftype = FunctionType(tuple(a.type for a in body.blocks[0].args), tuple(named.result_types))
    func = Operation(FUNC_OP, attributes={
        "sym_name": named.attributes["name"], "function_type": TypeAttr(ftype),
        "sym_visibility": StringAttr("private")}, location=named.location)
    func.attributes[ORIGINAL_FUNC_NAME] = named.attributes["name"]
    region = func.add_region(Region())
    for block in body.take_blocks():
        region.add_block(block)
    for block in region.blocks:
        old = block.last_op
        block.append(Operation("func.return", old.operands, location=old.location))
        old.erase()
    remove_data_flow_edges(region.blocks[0].args)
    if in_shardings is not None:
        for index, sharding in enumerate(in_shardings):
            set_arg_attr(func, index, SHARDING_ATTR, sharding)
    if EXECUTION_THREAD_ATTR in named.attributes:
        func.attributes[EXECUTION_THREAD_ATTR] = named.attributes[EXECUTION_THREAD_ATTR]
    return table.insert(func)


def export_named_computations(module: Operation) -> None:
    table = InsertingSymbolTable(module)
    inherent = op_def(NAMED_COMPUTATION).inherent
    call_results: list[Value] = []
    for named in [op for op in module.walk(post_order=True) if op.name == NAMED_COMPUTATION]:
        arg_shardings = shardings_from_data_flow_edges(named.regions[0].blocks[0].args)
        if arg_shardings:
            named.attributes["in_shardings"] = TensorShardingPerValue(tuple(arg_shardings))
        result_shardings = shardings_from_data_flow_edges(list(named.results))
        if result_shardings:
            named.attributes["out_shardings"] = TensorShardingPerValue(tuple(result_shardings))
        out_shardings = named.attributes.get("out_shardings")
        name = _create_func(named, table, named.attributes.get("in_shardings"))
        attributes = {k: v for k, v in named.attributes.items()
                      if k not in inherent and k != EXECUTION_THREAD_ATTR}
        call = Operation(CALL_OP, named.operands, named.result_types,
                         {"callee": SymbolRefAttr(name), **attributes},
                         location=named.location)
        named.parent.insert_before(named, call)
        named.replace_all_uses_with(call.results)
        named.erase()
        call_results += call.results
        if isinstance(out_shardings, TensorShardingPerValue):
            set_shardings(call, out_shardings)
    remove_data_flow_edges(call_results)


@register_pass
@dataclass(frozen=True, slots=True)
class ExportNamedComputationsPass(Pass):
    """Creates a private function and a call for every ``sdy.named_computation``."""

    NAME = "sdy-export-named-computations"

    def run(self, op: Operation, ctx: PassContext) -> None:
        export_named_computations(op)
