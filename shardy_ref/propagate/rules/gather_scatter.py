"""Sharding rules of ``stablehlo.gather`` and ``stablehlo.scatter``.

Both ops relate an *input* (gather's operand, scatter's inputs), *indices* and *slices*
(gather's result, scatter's updates) the same way, so one walk over the slices dimensions
adds the factors of both: offset dimensions pair with the input's non-collapsed,
non-batching dimensions, batch dimensions with the indices (and, for explicit batching
dimensions, with the input too); then the collapsed / inserted dimensions and the index
vector dimension get their own factors. See upstream ``addGatherScatterFactors`` in
``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.types import IntegerType, RankedTensorType
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import rule
from shardy_ref.transforms.common.op_properties import LOGICAL_REDUCTION_OPS, REDUCTION_OPS

AddFactorFn = Callable[[int, int, int, int, FactorType, bool], None]
"""``fn(input_dim, indices_dim, slices_dim, factor_size, factor_type, is_blocked)``."""

def add_gather_scatter_factors(
        is_scatter: bool, input_shape: Sequence[int], slices_shape: Sequence[int],
        indices_shape: Sequence[int], index_vector_dim: int, offset_dims: Sequence[int],
        collapsed_slice_dims: Sequence[int], input_batching_dims: Sequence[int],
        indices_batching_dims: Sequence[int], scatter_reduces: bool,
        add_factor: AddFactorFn) -> None:
    """Upstream ``addGatherScatterFactors``. ``scatter_reduces``: the scatter's update
    computation is a supported reduction, so an implicit batch dimension (only in the
    indices and updates) is a reduction factor rather than a need-replication one."""
    input_dim = 0
    batch_dim_pos = 0
    for slices_dim, slices_dim_size in enumerate(slices_shape):
        if slices_dim in offset_dims:
            while input_dim in collapsed_slice_dims or input_dim in input_batching_dims:
                input_dim += 1
            _add_offset_dim_factors(is_scatter, input_dim, input_shape[input_dim],
                                    slices_dim, slices_dim_size, add_factor)
            input_dim += 1
            continue
        # A batch dimension: find which dimension of the indices it is.
        indices_dim = batch_dim_pos if batch_dim_pos < index_vector_dim else batch_dim_pos + 1
        is_explicit = indices_dim in indices_batching_dims
        input_batch_dim = (input_batching_dims[list(indices_batching_dims).index(indices_dim)]
                           if is_explicit else NULL_DIM)
        factor_type = FactorType.PASS_THROUGH
        if is_scatter and not is_explicit:
            # The dimension exists only in the indices and updates: the results need an
            # all-reduce if it is sharded.
            factor_type = (FactorType.REDUCTION if scatter_reduces
                           else FactorType.NEED_REPLICATION)
        add_factor(input_batch_dim, indices_dim, slices_dim, slices_dim_size, factor_type,
                   False)
        batch_dim_pos += 1

    for collapsed_dim in collapsed_slice_dims:
        dim_size = input_shape[collapsed_dim]
        if is_scatter:
            factor_type = FactorType.PASS_THROUGH
        else:
            # Sharding a gathered dimension of size > 1 means an all-reduce on the result;
            # a size-1 one is not worth sharding.
            factor_type = (FactorType.NEED_REPLICATION if dim_size == 1
                           else FactorType.REDUCTION)
        add_factor(collapsed_dim, NULL_DIM, NULL_DIM, dim_size, factor_type, False)

    if index_vector_dim < len(indices_shape):
        add_factor(NULL_DIM, index_vector_dim, NULL_DIM, indices_shape[index_vector_dim],
                   FactorType.NEED_REPLICATION, False)


def _add_offset_dim_factors(is_scatter: bool, input_dim: int, input_dim_size: int,
                            slices_dim: int, slices_dim_size: int,
                            add_factor: AddFactorFn) -> None:
    """The factors of an offset (update window) dimension: shared with the input dimension
    if it is not sliced, else separate factors (see upstream)."""
    if input_dim_size == slices_dim_size:
        add_factor(input_dim, NULL_DIM, slices_dim, input_dim_size,
                   FactorType.PASS_THROUGH, False)
    elif is_scatter:
        add_factor(input_dim, NULL_DIM, NULL_DIM, input_dim_size,
                   FactorType.NEED_REPLICATION, False)
        add_factor(NULL_DIM, NULL_DIM, slices_dim, slices_dim_size,
                   FactorType.NEED_REPLICATION, False)
    elif slices_dim_size == 1:
        # Sharding the operand dimension needs an all-reduce on the result.
        add_factor(input_dim, NULL_DIM, NULL_DIM, input_dim_size, FactorType.REDUCTION,
                   False)
        add_factor(NULL_DIM, NULL_DIM, slices_dim, slices_dim_size,
                   FactorType.NEED_REPLICATION, False)
    else:
        add_factor(input_dim, NULL_DIM, slices_dim, input_dim_size,
                   FactorType.NEED_REPLICATION, True)


@rule("stablehlo.gather")
def gather_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(operand, start_indices)``, result = the slices."""
    builder = OpShardingRuleBuilder.for_op(op)
    dims = op.attributes["dimension_numbers"]

    def add_factor(input_dim, indices_dim, slices_dim, size, factor_type, is_blocked):
        builder.add_factor((input_dim, indices_dim), slices_dim, size, factor_type,
                           is_blocked)

    add_gather_scatter_factors(
        False, tensor_shape(op.operands[0].type), tensor_shape(op.result_types[0]),
        tensor_shape(op.operands[1].type), dims.index_vector_dim, dims.offset_dims,
        dims.collapsed_slice_dims, dims.operand_batching_dims,
        dims.start_indices_batching_dims, False, add_factor)
    return builder.build()


@rule("stablehlo.scatter")
def scatter_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Operands ``(inputs..., scatter_indices, updates...)``, results like the inputs; all
    inputs (and all updates) have the same shape, so the first ones are looked at."""
    builder = OpShardingRuleBuilder.for_op(op)
    num_inputs = (len(op.operands) - 1) // 2
    dims = op.attributes["scatter_dimension_numbers"]

    def add_factor(input_dim, indices_dim, slices_dim, size, factor_type, is_blocked):
        operand_dims = [input_dim] * num_inputs + [indices_dim] + [slices_dim] * num_inputs
        builder.add_factor(operand_dims, [input_dim] * num_inputs, size, factor_type,
                           is_blocked)

    add_gather_scatter_factors(
        True, tensor_shape(op.operands[0].type),
        tensor_shape(op.operands[num_inputs + 1].type),
        tensor_shape(op.operands[num_inputs].type), dims.index_vector_dim,
        dims.update_window_dims, dims.inserted_window_dims, dims.input_batching_dims,
        dims.scatter_indices_batching_dims, common_supported_reduction_op(op) is not None,
        add_factor)
    return builder.build()


def common_supported_reduction_op(scatter: Operation) -> Operation | None:
    """Upstream ``getCommonSupportedReductionOp``: the op kind (add, multiply, maximum,
    minimum; and/or on i1) every result of the update computation applies to its pair of
    block arguments ``(i, i + N)``, or ``None`` if there is no such common op."""
    region = scatter.regions[0] if scatter.regions else None
    if region is None or not region.blocks:
        return None
    block = region.blocks[0]
    num_inputs = (len(scatter.operands) - 1) // 2
    if len(block.args) != 2 * num_inputs:
        return None
    ret = block.terminator
    if ret is None or ret.name != "stablehlo.return" or len(ret.operands) != num_inputs:
        return None
    reduction_op = None
    for index, value in enumerate(ret.operands):
        cur = value.defining_op
        if cur is None or len(cur.operands) != 2 or not _is_reduction(cur, value):
            return None
        if reduction_op is None:
            reduction_op = cur
        elif reduction_op.name != cur.name:
            return None
        lhs, rhs = cur.operands
        if not ((_is_arg(lhs, block, index) and _is_arg(rhs, block, index + num_inputs))
                or (_is_arg(lhs, block, index + num_inputs) and _is_arg(rhs, block, index))):
            return None
    return reduction_op


def _is_reduction(op: Operation, value: Value) -> bool:
    if not isinstance(value.type, RankedTensorType):
        return False
    element = value.type.element_type
    is_i1 = isinstance(element, IntegerType) and element.width == 1
    return op.name in REDUCTION_OPS or (is_i1 and op.name in LOGICAL_REDUCTION_OPS)


def _is_arg(value: Value, block, index: int) -> bool:
    return isinstance(value, BlockArgument) and value.block is block and value.index == index
