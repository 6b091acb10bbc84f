"""``sdy-explicit-gather-scatter-batching``: turn an implicit batch dimension of a
``stablehlo.gather``/``stablehlo.scatter`` into explicit batching dimensions, so that
propagation can shard it like any batch dimension (upstream
``transforms/import/explicit_gather_scatter_batching.cc``; see
https://openxla.org/shardy/sdy_import_passes#-sdy-explicit-gather-scatter-batching).

Only dimension 0 of the operand and of the indices is recognised as an implicit batch: both
must have the same size, dimension 0 must be collapsed (inserted), and the index component
that addresses operand dimension 0 must come from an ``iota`` along dimension 0 (possibly
through reshape, broadcast_in_dim, clamp or select, and as one input of a concatenate along
the index vector dimension). That component is then removed from the indices (dropped from
the concatenate, or sliced out) and dimension 0 becomes an operand/indices batching pair.
The two patterns run under MLIR's greedy driver with its default config, so the iota and the
old concatenate, now dead, are erased by the driver.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr, bool_attr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, OpResult, Region, Value
from shardy_ref.ir.pattern_match import PatternRewriter, rewrite_pattern
from shardy_ref.ir.stablehlo_attrs import GatherDimensionNumbers, ScatterDimensionNumbers
from shardy_ref.ir.types import I64, RankedTensorType
from shardy_ref.pass_manager import Pass, register_pass
from shardy_ref.transforms.greedy import GreedyRewriteConfig, apply_patterns_greedily

GATHER = "stablehlo.gather"
SCATTER = "stablehlo.scatter"
CONCATENATE = "stablehlo.concatenate"
SLICE = "stablehlo.slice"
IOTA = "stablehlo.iota"

# MLIR's ``ShapedType::kDynamic``, which upstream would write into a slice limit.
_DYNAMIC = -(2 ** 63)


def _defining_op(value: Value, name: str) -> Operation | None:
    if isinstance(value, OpResult) and value.op.name == name:
        return value.op
    return None


def _int_attr(op: Operation, name: str, default: int = 0) -> int:
    attr = op.attributes.get(name)
    return attr.value if isinstance(attr, IntegerAttr) else default


def _i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(values))


def _dim_size(t: RankedTensorType, dim: int) -> int:
    size = t.shape[dim]
    return _DYNAMIC if size is None else size


def _with_dim(shape: tuple, dim: int, size) -> tuple:
    return (*shape[:dim], size, *shape[dim + 1:])


def slice_and_concatenate_indices(rewriter: PatternRewriter, op: Operation, indices: Value,
                                  index_vector_dim: int, removed_idx: int) -> Value:
    """Upstream ``sliceAndConcatenateIndices``: ``indices`` without component
    ``removed_idx`` of the index vector dimension. A concatenate along that dimension with
    one input per component just loses that input; otherwise the components before and
    after it are sliced out and concatenated."""
    t: RankedTensorType = indices.type
    shape, total = t.shape, t.shape[index_vector_dim]
    reduced_type = RankedTensorType(
        _with_dim(shape, index_vector_dim, total - 1), t.element_type)

    concat = _defining_op(indices, CONCATENATE)
    if (concat is not None and _int_attr(concat, "dimension") == index_vector_dim
            and len(concat.operands) == total):
        inputs = list(concat.operands)
        del inputs[removed_idx]
        if len(inputs) == 1:
            return inputs[0]
        return rewriter.create(CONCATENATE, inputs, [reduced_type],
                               {"dimension": IntegerAttr(index_vector_dim, I64)},
                               location=op.location).result

    kept: list[Value] = []
    for start_idx, end_idx in ((0, removed_idx), (removed_idx + 1, total)):
        if start_idx >= end_idx:
            continue
        start = [0] * t.rank
        limit = [_dim_size(t, d) for d in range(t.rank)]
        start[index_vector_dim], limit[index_vector_dim] = start_idx, end_idx
        slice_type = RankedTensorType(
            _with_dim(shape, index_vector_dim, end_idx - start_idx), t.element_type)
        kept.append(rewriter.create(
            SLICE, [indices], [slice_type],
            {"start_indices": _i64_array(start), "limit_indices": _i64_array(limit),
             "strides": _i64_array([1] * t.rank)}, location=op.location).result)
    if len(kept) == 1:
        return kept[0]
    return rewriter.create(CONCATENATE, kept, [reduced_type],
                           {"dimension": IntegerAttr(index_vector_dim, I64)},
                           location=op.location).result


def unwrap_reshapes(value: Value) -> Value:
    """Upstream ``unwrapReshapes``: follow reshape, broadcast_in_dim and clamp to their
    (main) operand, and select to its false branch if that is an iota, else its true
    branch."""
    while isinstance(value, OpResult):
        op = value.op
        if op.name in ("stablehlo.reshape", "stablehlo.broadcast_in_dim"):
            value = op.operands[0]
        elif op.name == "stablehlo.clamp":
            value = op.operands[1]  # clamp(min, operand, max)
        elif op.name == "stablehlo.select":
            on_true, on_false = op.operands[1], op.operands[2]
            value = on_false if _defining_op(on_false, IOTA) is not None else on_true
        else:
            break
    return value


def verify_iota_origin(indices: Value, index_vector_dim: int, removed_idx: int) -> bool:
    """Upstream ``verifyIotaOrigin``: index component ``removed_idx`` is an iota along
    dimension 0 (as the matching input of a concatenate along the index vector dim, or the
    whole indices)."""
    candidate = indices
    concat = _defining_op(indices, CONCATENATE)
    if concat is not None:
        if (_int_attr(concat, "dimension") != index_vector_dim
                or removed_idx >= len(concat.operands)):
            return False
        candidate = concat.operands[removed_idx]
    iota = _defining_op(unwrap_reshapes(candidate), IOTA)
    return iota is not None and _int_attr(iota, "iota_dimension") == 0


def _match_implicit_batch(operand_type, indices: Value, index_vector_dim: int,
                          index_map: tuple[int, ...]) -> int | None:
    """Checks shared by both patterns; the position of operand dim 0 in ``index_map``."""
    indices_type = indices.type
    if operand_type.rank == 0 or indices_type.rank == 0:
        return None
    # The index vector dimension cannot shrink below size 1.
    if (index_vector_dim >= indices_type.rank
            or _dim_size(indices_type, index_vector_dim) <= 1):
        return None
    if _dim_size(indices_type, 0) != _dim_size(operand_type, 0):
        return None
    if 0 not in index_map:
        return None
    removed_idx = index_map.index(0)
    if not verify_iota_origin(indices, index_vector_dim, removed_idx):
        return None
    return removed_idx


def _without(values: tuple[int, ...], value: int) -> tuple[int, ...]:
    i = values.index(value)
    return values[:i] + values[i + 1:]


def _copy_attributes(op: Operation, attributes: dict, excluded: tuple[str, ...]) -> dict:
    """Upstream ``copyAttributes``: every attribute of ``op`` not in ``excluded``."""
    for name, value in op.attributes.items():
        if name not in excluded:
            attributes[name] = value
    return attributes


@rewrite_pattern(GATHER)
def explicit_gather_batching(op: Operation, rewriter: PatternRewriter) -> bool:
    """Upstream ``ExplicitGatherBatchingPattern``."""
    dims: GatherDimensionNumbers = op.attributes["dimension_numbers"]
    if dims.operand_batching_dims:
        return False
    operand, start_indices = op.operands[0], op.operands[1]
    removed_idx = _match_implicit_batch(operand.type, start_indices, dims.index_vector_dim,
                                        dims.start_index_map)
    if removed_idx is None or 0 not in dims.collapsed_slice_dims:
        return False
    new_indices = slice_and_concatenate_indices(
        rewriter, op, start_indices, dims.index_vector_dim, removed_idx)
    start_index_map = dims.start_index_map
    new_dims = GatherDimensionNumbers(
        offset_dims=dims.offset_dims,
        collapsed_slice_dims=_without(dims.collapsed_slice_dims, 0),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,),
        start_index_map=start_index_map[:removed_idx] + start_index_map[removed_idx + 1:],
        index_vector_dim=dims.index_vector_dim)
    sorted_attr = op.attributes.get("indices_are_sorted")
    attributes = {
        "dimension_numbers": new_dims,
        "slice_sizes": op.attributes["slice_sizes"],
        "indices_are_sorted": sorted_attr if sorted_attr is not None else bool_attr(False)}
    _copy_attributes(op, attributes, ("dimension_numbers", "indices_are_sorted"))
    new = rewriter.create(GATHER, [operand, new_indices], [r.type for r in op.results],
                          attributes, location=op.location)
    rewriter.replace_op(op, new)
    return True


@rewrite_pattern(SCATTER)
def explicit_scatter_batching(op: Operation, rewriter: PatternRewriter) -> bool:
    """Upstream ``ExplicitScatterBatchingPattern``; the update computation region is moved
    into the new scatter."""
    dims: ScatterDimensionNumbers = op.attributes["scatter_dimension_numbers"]
    if dims.input_batching_dims:
        return False
    num_inputs = (len(op.operands) - 1) // 2
    inputs = op.operands[:num_inputs]
    scatter_indices = op.operands[num_inputs]
    updates = op.operands[num_inputs + 1:]
    removed_idx = _match_implicit_batch(inputs[0].type, scatter_indices,
                                        dims.index_vector_dim,
                                        dims.scatter_dims_to_operand_dims)
    if removed_idx is None or 0 not in dims.inserted_window_dims:
        return False
    new_indices = slice_and_concatenate_indices(
        rewriter, op, scatter_indices, dims.index_vector_dim, removed_idx)
    to_operand = dims.scatter_dims_to_operand_dims
    new_dims = ScatterDimensionNumbers(
        update_window_dims=dims.update_window_dims,
        inserted_window_dims=_without(dims.inserted_window_dims, 0),
        input_batching_dims=(0,), scatter_indices_batching_dims=(0,),
        scatter_dims_to_operand_dims=to_operand[:removed_idx] + to_operand[removed_idx + 1:],
        index_vector_dim=dims.index_vector_dim)
    attributes = {"scatter_dimension_numbers": new_dims}
    for name in ("indices_are_sorted", "unique_indices"):
        attr = op.attributes.get(name)
        attributes[name] = attr if attr is not None else bool_attr(False)
    _copy_attributes(op, attributes,
                     ("scatter_dimension_numbers", "indices_are_sorted", "unique_indices"))
    new = rewriter.create(SCATTER, [*inputs, new_indices, *updates],
                          [r.type for r in op.results], attributes, [Region()],
                          location=op.location)
    _inline_region_before(rewriter, op.regions[0], new.regions[0])
    rewriter.replace_op(op, new)
    return True


def _inline_region_before(rewriter: PatternRewriter, source: Region, dest: Region) -> None:
    """``RewriterBase::inlineRegionBefore(source, dest, dest.end())``: move the blocks,
    notifying each block's insertion (its ops are not re-queued)."""
    for block in list(source.blocks):
        source.remove_block(block)
        dest.add_block(block)
        if rewriter.listener is not None:
            rewriter.listener.notify_block_inserted(block)


@register_pass
@dataclass(frozen=True, slots=True)
class ExplicitGatherScatterBatchingPass(Pass):
    """Runs both patterns greedily with MLIR's default config on each function."""

    NAME = "sdy-explicit-gather-scatter-batching"
    DESCRIPTION = "Makes the batching dimensions of gathers and scatters explicit."
    ANCHOR = "func.func"

    def run(self, op, ctx) -> None:
        result = apply_patterns_greedily(
            op, [explicit_gather_batching, explicit_scatter_batching],
            GreedyRewriteConfig(), ctx.diagnostics)
        if not result.converged:
            # Upstream calls signalPassFailure() without a message.
            raise PassError(op.location, "sdy-explicit-gather-scatter-batching failed to "
                                         "converge")
