"""Sharding rules of the linear-algebra and miscellaneous ops:
``cholesky``, ``triangular_solve``, ``fft``, ``batch_norm_inference``,
``rng_bit_generator`` and ``bitcast_convert``. Batch dimensions are pass-through; the
dimensions an op computes across need replication. See upstream
``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule


@rule("stablehlo.bitcast_convert", op_local=True)
def bitcast_convert_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Pointwise over the shorter shape; the extra innermost dimension of the shape with the
    smaller element bit width needs replication."""
    in_shape = tensor_shape(op.operands[0].type)
    out_shape = tensor_shape(op.result_types[0])
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise(in_shape if len(in_shape) < len(out_shape) else out_shape)
    if len(in_shape) < len(out_shape):
        builder.add_factor(NULL_DIM, len(out_shape) - 1, out_shape[-1],
                           FactorType.NEED_REPLICATION)
    elif len(in_shape) > len(out_shape):
        builder.add_factor(len(in_shape) - 1, NULL_DIM, in_shape[-1],
                           FactorType.NEED_REPLICATION)
    return builder.build()


@rule("stablehlo.batch_norm_inference", op_local=True)
def batch_norm_inference_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(operand, scale, offset, mean, variance)``: every operand dimension maps to
    the result; the feature dimension is also the only dimension of the 1-D operands."""
    feature_index = op.attributes["feature_index"].value
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, dim_size in enumerate(tensor_shape(op.operands[0].type)):
        operand_dims = [0 if dim == feature_index else NULL_DIM] * len(op.operands)
        operand_dims[0] = dim
        builder.add_factor(operand_dims, dim, dim_size)
    return builder.build()


@rule("stablehlo.cholesky", op_local=True)
def cholesky_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """The leading dimensions are batch dimensions; the last two (the decomposed matrix)
    need replication."""
    shape = tensor_shape(op.operands[0].type)
    num_batch_dims = len(shape) - 2
    return OpShardingRuleBuilder.for_op(op).add_pointwise(
        shape, lambda dim: (FactorType.PASS_THROUGH if dim < num_batch_dims
                            else FactorType.NEED_REPLICATION)).build()


@rule("stablehlo.fft", op_local=True)
def fft_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Non-fft (leading) dimensions are batch dimensions; fft dimensions need replication,
    and propagation is blocked along the last one when the op truncates or expands it
    (``RFFT``/``IRFFT``)."""
    in_shape = tensor_shape(op.operands[0].type)
    out_shape = tensor_shape(op.result_types[0])
    num_batch_dims = len(in_shape) - len(op.attributes["fft_length"])
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, dim_size in enumerate(in_shape):
        if dim < num_batch_dims:
            builder.add_factor_all(dim, dim_size)
        elif dim < len(in_shape) - 1:
            builder.add_factor_all(dim, dim_size, FactorType.NEED_REPLICATION)
        else:
            builder.add_factor_all(dim, dim_size, FactorType.NEED_REPLICATION,
                                   in_shape[-1] != out_shape[-1])
    return builder.build()


@rule("stablehlo.rng_bit_generator", op_local=True)
def rng_bit_generator_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Results ``(output_state, output)``. The initial and output states must be replicated
    and shardings must not propagate between them; the output has its own factors."""
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, dim_size in enumerate(tensor_shape(op.operands[0].type)):
        builder.add_factor(dim, (dim, NULL_DIM), dim_size, FactorType.NEED_REPLICATION,
                           is_blocked=True)
    for dim, dim_size in enumerate(tensor_shape(op.result_types[1])):
        builder.add_factor(NULL_DIM, (NULL_DIM, dim), dim_size)
    return builder.build()


@rule("stablehlo.triangular_solve", op_local=True)
def triangular_solve_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(a, b)``. Leading dimensions are batch dimensions; the equation is
    ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b``, and its non-contracting and
    contracting dimensions all need replication."""
    a_shape = tensor_shape(op.operands[0].type)
    b_shape = tensor_shape(op.operands[1].type)
    builder = OpShardingRuleBuilder.for_op(op)
    builder.add_pointwise(a_shape[:-2])
    dim1, dim2 = len(a_shape) - 2, len(a_shape) - 1
    transpose = op.attributes.get("transpose_a")
    is_a_transposed = transpose is not None and transpose.value in ("TRANSPOSE", "ADJOINT")
    left_side = op.attributes.get("left_side")
    replicated = FactorType.NEED_REPLICATION
    if left_side is not None and left_side.value:
        a_non_contracting = dim2 if is_a_transposed else dim1
        a_contracting = dim1 if is_a_transposed else dim2
        (builder
         .add_factor((a_non_contracting, dim1), NULL_DIM, a_shape[a_non_contracting],
                     replicated)
         .add_factor((NULL_DIM, dim2), dim2, b_shape[dim2], replicated)
         .add_factor((a_contracting, NULL_DIM), dim1, a_shape[a_contracting], replicated))
    else:
        a_non_contracting = dim1 if is_a_transposed else dim2
        a_contracting = dim2 if is_a_transposed else dim1
        (builder
         .add_factor((NULL_DIM, dim1), dim1, b_shape[dim1], replicated)
         .add_factor((a_non_contracting, dim2), NULL_DIM, a_shape[a_non_contracting],
                     replicated)
         .add_factor((a_contracting, NULL_DIM), dim2, a_shape[a_contracting], replicated))
    return builder.build()
