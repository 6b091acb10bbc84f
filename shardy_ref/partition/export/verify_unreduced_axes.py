"""``sdy-verify-unreduced-axes``: unreduced axes may only appear where a reduction can leave
them (dot contractions, reductions, sdy collectives) and only disappear through an explicit
reshard (upstream ``export/verify_unreduced_axes.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-verify-unreduced-axes). Runs before
explicit reshards are inserted, to catch propagation dropping or inventing unreduced axes.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.call_graph import CALL_OP, FUNC_OP, callee_name, has_body
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import Operation, OpResult, Value
from shardy_ref.ir.sdy_axes import AxisRef
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.value_sharding import erase_manual_axes, get_func_result_sharding
from shardy_ref.ir.verify import VerifyContext, op_error, verify_op
from shardy_ref.ir.verify.sharding import (
    sharding_bypassing_barriers,
    verify_unreduced_axes_transition,
)
from shardy_ref.pass_manager import Pass, PassContext, register_pass

EXPLICIT_RESHARDS = frozenset({"sdy.reshard", "sdy.sharding_constraint"})
RETURN_LIKE = frozenset({"func.return", "sdy.return"})  # ReturnLike (not stablehlo.return)
_BODY_REDUCTIONS = {"stablehlo.add": ReductionOp.SUM, "stablehlo.maximum": ReductionOp.MAX,
                    "stablehlo.minimum": ReductionOp.MIN}


def _defined_by_explicit_reshard(value: Value) -> bool:
    while isinstance(value, OpResult) and value.op.name == "sdy.propagation_barrier":
        value = value.op.operands[0]
    return isinstance(value, OpResult) and value.op.name in EXPLICIT_RESHARDS


def _unreduced(sharding: TensorSharding | None) -> list[AxisRef]:
    return list(sharding.unreduced_axes) if sharding is not None else []


def _verify_equal(source: Sequence[AxisRef], target: Sequence[AxisRef], op: Operation,
                  suffix: str) -> None:
    """Upstream ``verifyEqual``: the same set of unreduced axes, else an error naming the
    mismatching axes."""
    if sorted(set(source)) == sorted(set(target)):
        return
    names = sorted({a.name for a in source if a not in target}
                   | {a.name for a in target if a not in source})
    raise op_error(op, f"has unreduced axes mismatch for '{', '.join(names)}{suffix}")


def _operand_shardings(op: Operation, values: Sequence[Value]) -> list:
    return [None if _defined_by_explicit_reshard(v) else sharding_bypassing_barriers(v)
            for v in values]


def _result_shardings(values: Sequence[Value]) -> list:
    return [sharding_bypassing_barriers(v) for v in values]


def _reduction_type(op: Operation) -> ReductionOp | None:
    """Upstream ``getReductionType``: the one reduction (add/max/min) every operand of the
    body's ``stablehlo.return`` is computed by, or None."""
    if not op.regions or not op.regions[0].blocks:
        return None
    ret = op.regions[0].blocks[0].terminator
    if ret is None or ret.name != "stablehlo.return" or not ret.operands:
        return None
    result = None
    for operand in ret.operands:
        definer = operand.defining_op
        kind = _BODY_REDUCTIONS.get(definer.name) if definer is not None else None
        if kind is None or (result is not None and kind != result):
            return None
        result = kind
    return result


def _verify_call(call: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """Upstream ``verifyCall``: operands and results keep the unreduced axes of the
    callee's arguments and results."""
    callee = table.lookup(callee_name(call))
    if callee is None or callee.name != FUNC_OP:
        return
    for i, operand in enumerate(call.operands):
        if _defined_by_explicit_reshard(operand) or not has_body(callee):
            continue
        arg = callee.regions[0].blocks[0].args[i]
        _verify_equal(_unreduced(sharding_bypassing_barriers(operand)),
                      _unreduced(sharding_bypassing_barriers(arg)), call,
                      f"' at call argument {i}.")
    for i, result in enumerate(call.results):
        _verify_equal(_unreduced(get_func_result_sharding(callee, i)),
                      _unreduced(sharding_bypassing_barriers(result)), call,
                      f"' at call result {i}.")


def _verify_return_pair(operand: Value, result_sharding, op: Operation, index: int) -> None:
    if _defined_by_explicit_reshard(operand) or result_sharding is None:
        return
    _verify_equal(_unreduced(sharding_bypassing_barriers(operand)), _unreduced(result_sharding),
                  op, f"' at return value {index} without a blessed operation (e.g., "
                  "sdy.reshard). This is an invalid transition from unreduced to reduced.")


def _verify_terminator(op: Operation) -> None:
    parent = op.parent_op
    if parent.name == FUNC_OP:
        for i, operand in enumerate(op.operands):
            _verify_return_pair(operand, get_func_result_sharding(parent, i), op, i)
        return
    for i, operand in enumerate(op.operands[:parent.num_results]):
        sharding = sharding_bypassing_barriers(parent.results[i])
        if parent.name == "sdy.manual_computation" and sharding is not None:
            sharding = erase_manual_axes(sharding,
                                         tuple(parent.attributes.get("manual_axes") or ()))
        _verify_return_pair(operand, sharding, op, i)


def _verify_explicit_reshard(op: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """An explicit reshard may change unreduced axes: only its own verifier runs."""
    verify_op(op, ctx)


def _verify_reduce(op: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """Upstream ``verifyReduce``: results may add unreduced axes of the body's reduction."""
    n = op.num_results
    verify_unreduced_axes_transition(
        op, _operand_shardings(op, op.operands[:n]), _result_shardings(op.results), ctx,
        _reduction_type(op))


def _verify_dot(op: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """Upstream ``verifyDot``: results may add sum unreduced axes."""
    verify_unreduced_axes_transition(
        op, _operand_shardings(op, op.operands), _result_shardings(op.results), ctx,
        ReductionOp.SUM)


def _verify_sdy_reduction(op: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """An ``sdy.all_reduce`` or ``sdy.reduce_scatter``: its operand must be sharded, then
    its own verifier runs."""
    if sharding_bypassing_barriers(op.operands[0]) is None:
        raise op_error(op, "operand must be sharded.")
    verify_op(op, ctx)


def _verify_stablehlo_collective(op: Operation, ctx: VerifyContext,
                                 table: SymbolTable) -> None:
    """Upstream ``verifyStablehloCollective``: a sharded collective may only remove
    unreduced axes of its body's reduction."""
    operand = sharding_bypassing_barriers(op.operands[0])
    result = sharding_bypassing_barriers(op.results[0])
    if operand is not None or result is not None:
        verify_unreduced_axes_transition(op, [operand], [result], ctx, None,
                                         _reduction_type(op))


def _verify_default_op(op: Operation, ctx: VerifyContext) -> None:
    """Upstream ``verifyDefaultOp``: unreduced axes pass through, sum ones may be added."""
    verify_unreduced_axes_transition(
        op, _operand_shardings(op, op.operands), _result_shardings(op.results), ctx,
        ReductionOp.SUM)


_VERIFIERS = {
    **dict.fromkeys(EXPLICIT_RESHARDS, _verify_explicit_reshard),
    "stablehlo.reduce": _verify_reduce,
    "stablehlo.dot_general": _verify_dot,
    "stablehlo.dot": _verify_dot,
    "sdy.all_reduce": _verify_sdy_reduction,
    "sdy.reduce_scatter": _verify_sdy_reduction,
    "stablehlo.all_reduce": _verify_stablehlo_collective,
    "stablehlo.reduce_scatter": _verify_stablehlo_collective,
    CALL_OP: _verify_call,
}


def verify_unreduced_axes(func: Operation, ctx: VerifyContext, table: SymbolTable) -> None:
    """Raise the first violation, ops in post order like upstream's walk."""
    for op in func.walk(post_order=True):
        if op is func:
            continue
        verifier = _VERIFIERS.get(op.name)
        if verifier is not None:
            verifier(op, ctx, table)
        elif is_terminator(op):
            if op.name in RETURN_LIKE:
                _verify_terminator(op)
        else:
            _verify_default_op(op, ctx)


@register_pass
@dataclass(frozen=True, slots=True)
class VerifyUnreducedAxesPass(Pass):
    """Verifies that no op drops or introduces unreduced axes without a blessed op."""

    NAME = "sdy-verify-unreduced-axes"
    ANCHOR = "func.func"

    def run(self, op: Operation, ctx: PassContext) -> None:
        module = op.parent_op
        while module is not None and module.name != "builtin.module":
            module = module.parent_op
        module = module or op
        verify_unreduced_axes(op, VerifyContext(module), symbol_table(module))
