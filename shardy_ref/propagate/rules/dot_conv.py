"""Sharding rules of contractions: ``dot``, ``dot_general`` and
``convolution``. Batching and non-contracting dimensions pass through to the result;
contracting dimensions (and the convolution's input feature and window-size dimensions)
are reduction factors. See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.stablehlo_attrs import ConvDimensionNumbers, DotDimensionNumbers
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    int_attr,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule


@rule("stablehlo.dot", op_local=True)
def dot_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Vector/matrix dot: non-contracting lhs dim 0 and rhs dim 1 (of matrices), then the
    contracting dimension as a reduction factor."""
    lhs, rhs = (tensor_shape(t) for t in op.operand_types)
    lhs_matrix, rhs_matrix = len(lhs) == 2, len(rhs) == 2
    builder = OpShardingRuleBuilder.for_op(op)
    if lhs_matrix:
        builder.add_factor((0, NULL_DIM), 0, lhs[0])
    if rhs_matrix:
        builder.add_factor((NULL_DIM, 1), 1 if lhs_matrix else 0, rhs[1])
    builder.add_factor((1 if lhs_matrix else 0, 0), NULL_DIM, rhs[0], FactorType.REDUCTION)
    return builder.build()


@rule("stablehlo.dot_general", op_local=True)
def dot_general_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Batching dims, lhs then rhs free dims (in result order), then the contracting dims
    as reduction factors."""
    nums: DotDimensionNumbers = op.attributes["dot_dimension_numbers"]
    lhs, rhs = (tensor_shape(t) for t in op.operand_types)
    builder = OpShardingRuleBuilder.for_op(op)
    out_dim = 0
    for lhs_dim, rhs_dim in zip(nums.lhs_batching_dimensions, nums.rhs_batching_dimensions,
                                strict=True):
        builder.add_factor((lhs_dim, rhs_dim), out_dim, lhs[lhs_dim])
        out_dim += 1
    for i, size in enumerate(lhs):
        if i not in nums.lhs_contracting_dimensions and i not in nums.lhs_batching_dimensions:
            builder.add_factor((i, NULL_DIM), out_dim, size)
            out_dim += 1
    for i, size in enumerate(rhs):
        if i not in nums.rhs_contracting_dimensions and i not in nums.rhs_batching_dimensions:
            builder.add_factor((NULL_DIM, i), out_dim, size)
            out_dim += 1
    for lhs_dim, rhs_dim in zip(nums.lhs_contracting_dimensions,
                                nums.rhs_contracting_dimensions, strict=True):
        builder.add_factor((lhs_dim, rhs_dim), NULL_DIM, lhs[lhs_dim], FactorType.REDUCTION)
    return builder.build()


def _add_spatial_factors(builder: OpShardingRuleBuilder, nums: ConvDimensionNumbers,
                         lhs: tuple[int, ...], rhs: tuple[int, ...],
                         out: tuple[int, ...]) -> None:
    """Each input spatial dimension splits into a number-of-windows factor (permutation,
    shared with the output) and a window-size factor (reduction, shared with the kernel),
    the larger one major; each is capped by what is left of the input size and skipped
    when that is 1."""
    for lhs_dim, rhs_dim, out_dim in zip(nums.input_spatial_dimensions,
                                         nums.kernel_spatial_dimensions,
                                         nums.output_spatial_dimensions, strict=True):
        remaining = lhs[lhs_dim]
        num_windows, window_size = out[out_dim], rhs[rhs_dim]
        order = ((num_windows, False), (window_size, True))
        if num_windows < window_size:
            order = order[::-1]
        for size, contracting in order:
            size = min(remaining, size)
            if size <= 1:
                continue
            if contracting:
                builder.add_factor((lhs_dim, rhs_dim), NULL_DIM, size, FactorType.REDUCTION)
            else:
                builder.add_factor((lhs_dim, NULL_DIM), out_dim, size, FactorType.PERMUTATION)
            remaining //= size


@rule("stablehlo.convolution", op_local=True)
def convolution_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """Batch groups, per-group batch, spatial factors (not in conservative mode), feature
    groups, the per-group input feature reduction and the output feature factor."""
    nums: ConvDimensionNumbers = op.attributes["dimension_numbers"]
    lhs, rhs = (tensor_shape(t) for t in op.operand_types)
    out = tensor_shape(op.result_types[0])
    batch_groups = int_attr(op, "batch_group_count", 1)
    feature_groups = int_attr(op, "feature_group_count", 1)
    builder = OpShardingRuleBuilder.for_op(op)
    if batch_groups > 1:
        builder.add_factor((nums.input_batch_dimension, nums.kernel_output_feature_dimension),
                           nums.output_feature_dimension, batch_groups)
    builder.add_factor((nums.input_batch_dimension, NULL_DIM), nums.output_batch_dimension,
                       out[nums.output_batch_dimension])
    if not conservative:
        _add_spatial_factors(builder, nums, lhs, rhs, out)
    if feature_groups > 1:
        builder.add_factor((nums.input_feature_dimension, nums.kernel_output_feature_dimension),
                           nums.output_feature_dimension, feature_groups)
    builder.add_factor((nums.input_feature_dimension, nums.kernel_input_feature_dimension),
                       NULL_DIM, rhs[nums.kernel_input_feature_dimension],
                       FactorType.REDUCTION)
    output_feature_size = out[nums.output_feature_dimension] // (batch_groups * feature_groups)
    if output_feature_size > 1:
        builder.add_factor((NULL_DIM, nums.kernel_output_feature_dimension),
                           nums.output_feature_dimension, output_feature_size)
    return builder.build()
