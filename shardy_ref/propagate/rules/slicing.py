"""Sharding rules of the slicing ops: ``slice``, ``dynamic_slice``,
``dynamic_update_slice``, ``pad`` and ``reverse``. All are pointwise; they differ in the
type of the factors of the dimensions they slice, pad or reverse. See upstream
``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.opdefs import ops_with_trait
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule

# Ops with MLIR's ``ConstantLike`` trait (``mhlo.constant`` too, an op this implementation
# does not define), plus ``sdy.constant`` (upstream checks both).
CONSTANT_LIKE_OPS = frozenset((*ops_with_trait("ConstantLike"), "mhlo.constant",
                               "sdy.constant"))


@rule("stablehlo.slice", op_local=True)
def slice_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """Sliced dimensions are permutation factors (the start indices are static, so the data
    can be shifted to keep them sharded), blocked in conservative mode."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise_with_diff_type_for_mismatch(
        tensor_shape(op.operands[0].type), tensor_shape(op.result_types[0]),
        FactorType.PERMUTATION, mismatch_factor_is_blocked=conservative).build()


@rule("stablehlo.dynamic_slice", op_local=True)
def dynamic_slice_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Sliced dimensions need replication and never propagate (dynamic start indices)."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise_with_diff_type_for_mismatch(
        tensor_shape(op.operands[0].type), tensor_shape(op.result_types[0]),
        FactorType.NEED_REPLICATION, mismatch_factor_is_blocked=True).build()


@rule("stablehlo.dynamic_update_slice")
def dynamic_update_slice_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(operand, update, start_indices...)``. A sliced dimension keeps the
    operand/result sharded (a pass-through factor: each device updates its local shard)
    and gives the update its own factor, which needs replication unless all start indices
    are constants."""
    operand_shape = tensor_shape(op.operands[0].type)
    update_shape = tensor_shape(op.operands[1].type)
    builder = OpShardingRuleBuilder.for_op(op)
    all_indices_constant = all(_is_constant(v) for v in op.operands[2:])
    operand_dims = [NULL_DIM] * len(op.operands)
    for dim, (operand_size, update_size) in enumerate(
            zip(operand_shape, update_shape, strict=True)):
        if operand_size == update_size:
            builder.add_factor_all(dim, operand_size)
            continue
        operand_dims[0], operand_dims[1] = dim, NULL_DIM
        builder.add_factor(operand_dims, dim, operand_size)
        operand_dims[0], operand_dims[1] = NULL_DIM, dim
        builder.add_factor(operand_dims, NULL_DIM, update_size,
                           FactorType.PASS_THROUGH if all_indices_constant
                           else FactorType.NEED_REPLICATION)
    return builder.build()


def _is_constant(value: Value) -> bool:
    defining_op = value.defining_op
    return defining_op is not None and defining_op.name in CONSTANT_LIKE_OPS


@rule("stablehlo.pad", op_local=True)
def pad_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """Padded dimensions are permutation factors, blocked in conservative mode; the padding
    value is a scalar."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise_with_diff_type_for_mismatch(
        tensor_shape(op.operands[0].type), tensor_shape(op.result_types[0]),
        FactorType.PERMUTATION, mismatch_factor_is_blocked=conservative).build()


@rule("stablehlo.reverse", op_local=True)
def reverse_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Reversed dimensions are permutation factors."""
    reversed_dims = tuple(op.attributes["dimensions"])
    return OpShardingRuleBuilder.for_op(op).add_pointwise(
        tensor_shape(op.result_types[0]),
        lambda dim: (FactorType.PERMUTATION if dim in reversed_dims
                     else FactorType.PASS_THROUGH)).build()
