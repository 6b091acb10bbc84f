"""Sharding rules of StableHLO collectives (see "Operation sharding rule" in
https://openxla.org/shardy/propagation). ``all_reduce``,
``collective_permute``, ``collective_broadcast`` and ``cross-replica-sum`` are pointwise;
``all_gather``, ``all_to_all`` and ``reduce_scatter`` are pointwise except on the
dimensions they gather, split or concatenate, which get a need-replication factor on the
operands and another on the results. See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    FactorType,
    OpShardingRuleBuilder,
    int_attr,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule

_NEED_REPLICATION = FactorType.NEED_REPLICATION


@rule("stablehlo.all_reduce", "stablehlo.collective_broadcast",
      "stablehlo.collective_permute", "stablehlo.cross-replica-sum", op_local=True)
def pointwise_collective_rule(op: Operation, _conservative: bool) -> OpShardingRule | None:
    return OpShardingRuleBuilder.build_pointwise(op)


def _replicated_dim_rule(op: Operation, dims: tuple[int, ...]) -> OpShardingRule:
    """Pointwise on all dimensions but ``dims``; each of ``dims`` (deduplicated) gets one
    need-replication factor for all operands, then one for all results."""
    operand_shape = tensor_shape(op.operand_types[0])
    result_shape = tensor_shape(op.result_types[0])
    builder = OpShardingRuleBuilder.for_op(op).add_pointwise_if(
        operand_shape, lambda d: d not in dims)
    for dim in dict.fromkeys(dims):
        builder.add_factor_same_for_all_operands(dim, operand_shape[dim], _NEED_REPLICATION)
        builder.add_factor_same_for_all_results(dim, result_shape[dim], _NEED_REPLICATION)
    return builder.build()


@rule("stablehlo.all_gather", op_local=True)
def all_gather_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    return _replicated_dim_rule(op, (int_attr(op, "all_gather_dim"),))


@rule("stablehlo.all_to_all", op_local=True)
def all_to_all_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    return _replicated_dim_rule(op, (int_attr(op, "split_dimension"),
                                     int_attr(op, "concat_dimension")))


@rule("stablehlo.reduce_scatter", op_local=True)
def reduce_scatter_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    return _replicated_dim_rule(op, (int_attr(op, "scatter_dimension"),))
