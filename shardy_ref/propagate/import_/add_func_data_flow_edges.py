"""``sdy-add-func-data-flow-edges``: put an ``sdy.func_data_flow_edge`` on every argument
of every function but the main one, and on every call result (upstream
``transforms/import/add_func_data_flow_edges.cc``; see
https://openxla.org/shardy/sdy_import_passes#-sdy-add-func-data-flow-edges).

Each edge takes over all other uses of its value and copies the value's sharding into its
own ``sdy.sharding``. Argument edges open the function's entry block, in argument order,
at the function's location; call-result edges follow the call, in result order, at the
call's location. Values that are not static-shaped (tokens) get no edge. The main function
is the only top-level function, else ``@main`` (``getMainFuncOrDie``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.call_graph import CALL_OP, FUNC_OP, has_body
from shardy_ref.ir.location import Location
from shardy_ref.ir.operation import Block, Operation, Value
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import is_static_shaped, main_func_or_die
from shardy_ref.ir.value_sharding import get_sharding, set_shardings
from shardy_ref.pass_manager import Pass, PassContext, register_pass

FUNC_DATA_FLOW_EDGE = "sdy.func_data_flow_edge"


def _add_edges(values: Sequence[Value], location: Location, insert) -> None:
    """An edge on each static-shaped value, in order, placed by ``insert(edge)``."""
    for value in values:
        if not is_static_shaped(value):
            continue
        edge = Operation(FUNC_DATA_FLOW_EDGE, [value], [value.type], location=location)
        insert(edge)
        value.replace_uses_with_if(edge.result, lambda use, e=edge: use.owner is not e)
        sharding = get_sharding(value)
        if sharding is not None:
            set_shardings(edge, [sharding])


def _before(block: Block, anchor: Operation | None):
    """Upstream's fixed insertion point: before ``anchor``, or at the block's end."""
    if anchor is None:
        return block.append
    return lambda edge: block.insert_before(anchor, edge)


def add_func_data_flow_edges(module: Operation) -> None:
    table = SymbolTable(module)
    main = main_func_or_die(module, table)
    for func in [op for op in module.walk(post_order=True) if op.name == FUNC_OP]:
        # a declaration has no arguments to put edges on (upstream would crash)
        if func is main or not has_body(func):
            continue
        block = func.regions[0].blocks[0]
        _add_edges(block.args, func.location, _before(block, block.first_op))
    for call in [op for op in module.walk(post_order=True) if op.name == CALL_OP]:
        _add_edges(call.results, call.location, _before(call.parent, call.next_op))


@register_pass
@dataclass(frozen=True, slots=True)
class AddFuncDataFlowEdgesPass(Pass):
    """Inserts ``FuncDataFlowEdgeOp`` for every func/call data-flow edge. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``AddFuncDataFlowEdgesPass``)."""

    NAME = "sdy-add-func-data-flow-edges"

    def run(self, op: Operation, ctx: PassContext) -> None:
        add_func_data_flow_edges(op)
