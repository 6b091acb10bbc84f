"""Localizers of ``sdy.manual_computation`` (its body, made local, is inlined) and
``sdy.named_computation`` (kept, with local types inside and out), after upstream's
``ManualComputationOpPattern`` and ``NamedComputationOpPattern`` in
``export/convert_global_to_local.cc``."""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
)

localizer("sdy.named_computation")(localize_generic)


@localizer("sdy.manual_computation")
def localize_manual_computation(state: ConversionState, op: Operation) -> None:
    """Convert the body (its arguments see the in-shardings without the manual axes), then
    inline it in place of the op."""
    body = op.regions[0].blocks[0]
    for arg in body.args:
        arg.type = state.local_value_type(arg)
    state.convert_block(body)
    for arg, operand in zip(body.args, op.operands):
        arg.replace_all_uses_with(operand)
    terminator = body.terminator
    body_ops = [inner for inner in body if inner is not terminator]
    for inner in list(body):
        if inner is not terminator:
            inner.move_before(op)
    results = list(terminator.operands)
    terminator.erase()
    moved = {id(inner) for inner in body_ops}
    for result, value in zip(op.results, results):
        # Later ops read a value's global type and sharding (upstream reads the original
        # result's): a value made in the body now stands for the op's result.
        if value.defining_op is not None and id(value.defining_op) in moved:
            state.global_types[value] = state.global_type(result)
            state.shardings[value] = state.sharding(result)
    op.replace_all_uses_with(results)
    op.erase()
