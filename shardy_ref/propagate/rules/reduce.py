"""Sharding rules of the reduction-style ops: ``reduce``,
``reduce_window``, ``select_and_scatter`` and ``sort``. See upstream
``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from collections.abc import Sequence

from shardy_ref.ir.builtin_attrs import Attribute
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule


def _ints(attr: Attribute | None) -> tuple[int, ...]:
    """The integers of an optional ``array<i64: ...>`` or ``dense<...>`` attribute, row-major
    (``()`` when absent)."""
    if attr is None:
        return ()
    if hasattr(attr, "flat_values"):
        return tuple(attr.flat_values())
    return tuple(attr)


def is_window_passthrough_dim(padding: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], dim: int) -> bool:
    """Upstream ``isWindowPassthroughDim``: window size 1, stride 1 and no padding make
    dimension ``dim`` a 1-1 map between operand and result. ``padding`` is the flattened
    ``[[low, high], ...]`` (empty when absent), as are the others when absent."""
    if padding and (padding[2 * dim] != 0 or padding[2 * dim + 1] != 0):
        return False
    return ((not window_strides or window_strides[dim] == 1)
            and (not window_dimensions or window_dimensions[dim] == 1))


@rule("stablehlo.reduce", op_local=True)
def reduce_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(inputs..., init_values...)``. A reduced dimension is a reduction factor of
    the inputs only; any other dimension maps the inputs to the next result dimension. The
    init values are scalars."""
    builder = OpShardingRuleBuilder.for_op(op)
    num_inputs = len(op.operands) // 2
    dimensions = tuple(op.attributes["dimensions"])
    operand_dims = [NULL_DIM] * len(op.operands)
    out_dim = 0
    for in_dim, dim_size in enumerate(tensor_shape(op.operands[0].type)):
        operand_dims[:num_inputs] = [in_dim] * num_inputs
        if in_dim in dimensions:
            builder.add_factor(operand_dims, [NULL_DIM] * num_inputs, dim_size,
                               FactorType.REDUCTION)
        else:
            builder.add_factor(operand_dims, [out_dim] * num_inputs, dim_size)
            out_dim += 1
    return builder.build()


@rule("stablehlo.reduce_window", op_local=True)
def reduce_window_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """One factor per result dimension (its size is the number of windows along it):
    pass-through for a 1-1 dimension, otherwise a permutation factor, blocked in
    conservative mode."""
    padding = _ints(op.attributes.get("padding"))
    window_dimensions = _ints(op.attributes.get("window_dimensions"))
    window_strides = _ints(op.attributes.get("window_strides"))

    def factor_type(dim: int) -> FactorType:
        return (FactorType.PASS_THROUGH
                if is_window_passthrough_dim(padding, window_dimensions, window_strides, dim)
                else FactorType.PERMUTATION)

    return OpShardingRuleBuilder.for_op(op).add_pointwise(
        tensor_shape(op.result_types[0]), factor_type,
        lambda t: conservative and t == FactorType.PERMUTATION).build()


@rule("stablehlo.select_and_scatter", op_local=True)
def select_and_scatter_rule(op: Operation, conservative: bool) -> OpShardingRule:
    """Operands ``(operand, source, init_value)``. A 1-1 dimension is one pointwise factor;
    otherwise the source dimension (number of windows) needs replication and the operand
    dimension is permuted to the result, both blocked in conservative mode."""
    padding = _ints(op.attributes.get("padding"))
    window_dimensions = _ints(op.attributes.get("window_dimensions"))
    window_strides = _ints(op.attributes.get("window_strides"))
    source_shape = tensor_shape(op.operands[1].type)
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, out_dim_size in enumerate(tensor_shape(op.result_types[0])):
        if is_window_passthrough_dim(padding, window_dimensions, window_strides, dim):
            builder.add_factor_all(dim, out_dim_size)
            continue
        builder.add_factor((NULL_DIM, dim, NULL_DIM), NULL_DIM, source_shape[dim],
                           FactorType.NEED_REPLICATION, conservative)
        builder.add_factor((dim, NULL_DIM, NULL_DIM), dim, out_dim_size,
                           FactorType.PERMUTATION, conservative)
    return builder.build()


@rule("stablehlo.sort", op_local=True)
def sort_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Pointwise; the sort dimension needs replication, and is blocked when every other
    dimension has size 1 (nothing else could be sharded). ``dimension`` defaults to -1,
    which, as upstream compares it unnormalized, matches no dimension."""
    shape = tensor_shape(op.operands[0].type)
    dimension_attr = op.attributes.get("dimension")
    sort_dim = dimension_attr.value if dimension_attr is not None else -1
    blocked = all(dim == sort_dim or size == 1 for dim, size in enumerate(shape))
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, dim_size in enumerate(shape):
        if dim == sort_dim:
            builder.add_factor_all(dim, dim_size, FactorType.NEED_REPLICATION, blocked)
        else:
            builder.add_factor_all(dim, dim_size)
    return builder.build()
