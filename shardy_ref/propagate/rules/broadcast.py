"""Sharding rules of data-movement ops that keep or permute whole dimensions:
``broadcast_in_dim``, ``concatenate`` and ``transpose``.
See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    int_attr,
    ints_attr,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule


@rule("stablehlo.broadcast_in_dim", op_local=True)
def broadcast_in_dim_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Each result dimension is a factor, shared with the operand dimension mapped to it
    unless that one has size 1 and is expanded (it then gets its own size-1 factor)."""
    builder = OpShardingRuleBuilder.for_op(op)
    in_shape = tensor_shape(op.operand_types[0])
    out_shape = tensor_shape(op.result_types[0])
    out_dim_to_in_dim = [NULL_DIM] * len(out_shape)
    for in_dim, out_dim in enumerate(ints_attr(op, "broadcast_dimensions")):
        out_dim_to_in_dim[out_dim] = in_dim
    for out_dim, out_size in enumerate(out_shape):
        in_dim = out_dim_to_in_dim[out_dim]
        if in_dim != NULL_DIM and in_shape[in_dim] == 1 and out_size != 1:
            builder.add_factor(in_dim, NULL_DIM, 1)  # expanded in place
            in_dim = NULL_DIM
        builder.add_factor(in_dim, out_dim, out_size)
    return builder.build()


def _is_slice(value: Value) -> bool:
    owner = value.defining_op
    return owner is not None and owner.name == "stablehlo.slice"


def _operand_before_slice(value: Value) -> Value:
    """Upstream ``findOperandBeforeSlice``: the input of the slice defining ``value``."""
    return value.defining_op.operands[0] if _is_slice(value) else value


def _concat_dim_factor_type(op: Operation) -> FactorType:
    """Permutation for ``concat(slice(l), slice(r))`` and ``concat(slice(x), x, slice(x))``
    patterns (the data is only shifted), need-replication otherwise."""
    operands = op.operands
    if all(_is_slice(v) for v in operands):
        return FactorType.PERMUTATION
    same = _operand_before_slice(operands[0])
    if all(_operand_before_slice(v) is same for v in operands) and any(map(_is_slice, operands)):
        return FactorType.PERMUTATION
    return FactorType.NEED_REPLICATION


@rule("stablehlo.concatenate")
def concatenate_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """Pointwise; the concatenated dimension is a permutation or need-replication factor,
    and in conservative mode gets no shared factor at all."""
    concat_dim = int_attr(op, "dimension")

    def factor_type(dim: int) -> FactorType:
        return FactorType.PASS_THROUGH if dim != concat_dim else _concat_dim_factor_type(op)

    return OpShardingRuleBuilder.for_op(op).add_pointwise_if(
        tensor_shape(op.result_types[0]), lambda d: not conservative or d != concat_dim,
        factor_type).build()


@rule("stablehlo.transpose", op_local=True)
def transpose_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Result dimension ``i`` and operand dimension ``permutation[i]`` share a factor."""
    builder = OpShardingRuleBuilder.for_op(op)
    in_shape = tensor_shape(op.operand_types[0])
    for out_dim, in_dim in enumerate(ints_attr(op, "permutation")):
        builder.add_factor(in_dim, out_dim, in_shape[in_dim])
    return builder.build()
