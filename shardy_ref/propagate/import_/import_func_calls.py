"""``sdy-import-func-calls``: turn every ``func.call`` into an ``sdy.named_computation``
holding the callee's body (upstream ``transforms/import/import_func_calls.cc``; see
https://openxla.org/shardy/sdy_import_passes#-sdy-import-func-calls).

Calls are visited callees-first (``walkCalls`` post order), so a body is moved only once
its own calls are named computations. The named computation takes the callee's original
name (``sdy.original_func_name``, else its symbol), the call's operands, the callee's
argument shardings as ``in_shardings`` (``getFuncArgShardings``), the call's
``sdy.sharding`` as ``out_shardings`` (the callee's result shardings are ignored), the
call's other discardable attributes, and the callee's ``execution_thread``. The first call
of a function moves its body; later calls clone that moved body, with a warning emitted
once per process (upstream's static ``once_flag``). Functions whose body moved are erased.
With ``add-data-flow-edges-on-named-computations`` (default true) every named computation in
the module then gets ``sdy.data_flow_edge``s on its block arguments and results, as
``sdy-add-data-flow-edges`` adds them (its ``add_data_flow_edges``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import StringAttr
from shardy_ref.ir.call_graph import (
    callee_name,
    get_func_or_die,
    original_func_name,
    walk_calls,
)
from shardy_ref.ir.constants import EXECUTION_THREAD_ATTR
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation, Region
from shardy_ref.ir.sdy_sharding import TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import func_arg_shardings
from shardy_ref.ir.value_sharding import SHARDING_ATTR
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.utils import add_data_flow_edges

NAMED_COMPUTATION = "sdy.named_computation"

# warnings already given: upstream warns through a function-local ``static
# llvm::once_flag``, so once per process, across the chunks of a ``-split-input-file`` run
_WARNED_ONCE: set[str] = set()


def _discardable_attrs(op: Operation) -> dict:
    inherent = op_def(op.name).inherent
    return {k: v for k, v in op.attributes.items() if k not in inherent}


def _convert_terminators(region: Region) -> None:
    """The end of upstream ``inlineRegionAndConvertTerminatorOp<ReturnOp>``: each block's
    terminator becomes an ``sdy.return`` of the same operands, at the same location."""
    for block in region.blocks:
        old = block.last_op
        block.append(Operation("sdy.return", old.operands, location=old.location))
        old.erase()


def _move_body(func: Operation, region: Region) -> None:
    """``Region::takeBody``: move the callee's blocks into ``region``."""
    for block in func.regions[0].take_blocks():
        region.add_block(block)


def _import_call(call: Operation, moved: dict[str, Region], table: SymbolTable,
                 ctx: PassContext) -> None:
    """Upstream ``importCallOp``: replace ``call`` by a named computation."""
    name = callee_name(call)
    func = get_func_or_die(name, table, call)
    attributes: dict = {"name": StringAttr(original_func_name(func))}
    in_shardings = func_arg_shardings(func, table)
    if in_shardings is not None:
        attributes["in_shardings"] = in_shardings
    out_shardings = call.attributes.get(SHARDING_ATTR)
    if isinstance(out_shardings, TensorShardingPerValue):
        attributes["out_shardings"] = out_shardings
    attributes.update((k, v) for k, v in _discardable_attrs(call).items() if k != SHARDING_ATTR)
    if EXECUTION_THREAD_ATTR in func.attributes:
        attributes[EXECUTION_THREAD_ATTR] = func.attributes[EXECUTION_THREAD_ATTR]
    named = Operation(NAMED_COMPUTATION, call.operands, call.result_types, attributes,
                      location=call.location)
    region = named.add_region(Region())
    if name in moved:
        if "multiple-call-ops" not in _WARNED_ONCE:
            _WARNED_ONCE.add("multiple-call-ops")
            ctx.warn(call.location, f"function @{name} has multiple call ops, we need to "
                                    "clone the function body for each call")
        clone = moved[name].clone({})
        for block in list(clone.blocks):
            region.add_block(block)
    else:
        _move_body(func, region)
        _convert_terminators(region)
        moved[name] = region
    call.parent.insert_before(call, named)
    call.replace_all_uses_with(named.results)
    call.erase()


@register_pass
@dataclass(frozen=True, slots=True)
class ImportFuncCallsPass(Pass):
    """Inlines calls into ``NamedComputationOp``s. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``ImportFuncCallsPass``)."""

    NAME = "sdy-import-func-calls"

    add_data_flow_edges_on_named_computations: bool = field(
        default=True, metadata={"help": "Whether to add data flow edges on named computations"})

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        moved: dict[str, Region] = {}
        for call in walk_calls(op, table=table):
            _import_call(call, moved, table, ctx)
        for name in moved:
            table.lookup(name).erase()
        if self.add_data_flow_edges_on_named_computations:
            for named in [o for o in op.walk(post_order=True) if o.name == NAMED_COMPUTATION]:
                # no block when the callee was a declaration: the verifier rejects it next
                add_data_flow_edges(named.regions[0].args)
                add_data_flow_edges(named.results)
