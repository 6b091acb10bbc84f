"""``sdy-convert-global-to-local`` localizers of gather and scatter (upstream
``StablehloGatherOpPattern``, ``StablehloScatterOpPattern`` and their helpers in
``export/convert_global_to_local.cc``).

A sharded operand dimension taken whole slices locally (smaller slice size). One indexed
with slices of size 1 ("trivial slice dimension") holds each index on one device only:
indices become local (minus this device's offset), a gather zeroes what other devices hold
(their ``sdy.all_reduce`` sums the pieces), and a scatter whose updates are split over
devices lets only one device of each group keep the operand's value (the others start
from the reduction's identity).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from shardy_ref.ir.axis_lists import sort_and_merge_axes
from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr, bool_attr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.stablehlo_attrs import compare_attrs
from shardy_ref.ir.types import I64, FloatType, IntegerType, RankedTensorType
from shardy_ref.partition.export.convert_global_to_local.op_utils import (
    I1,
    axes_size,
    check,
    constant,
    dim_axes,
    local_result_types,
    op_error,
    rebuild,
    reducing_user,
    replicated,
    tensor,
)
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
    shard_index,
)
from shardy_ref.partition.export.lowering import Builder, common_reduction_op, zero_scalar


def _dims(values) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(values))


def _broadcast(b: Builder, value: Value, type_: RankedTensorType, dims=()) -> Value:
    return b.op("stablehlo.broadcast_in_dim", [value], [type_],
                {"broadcast_dimensions": _dims(dims)}).results[0]


def _compare(b: Builder, direction: str, lhs: Value, rhs: Value) -> Value:
    return b.op("stablehlo.compare", [lhs, rhs], [tensor(lhs.type.shape, I1)],
                compare_attrs(direction)).results[0]


def _and(b: Builder, lhs: Value, rhs: Value) -> Value:
    return b.op("stablehlo.and", [lhs, rhs], [lhs.type]).results[0]


@dataclass(frozen=True, slots=True)
class _Indexing:
    """What the index arithmetic needs to know about one gather or scatter."""

    mesh: Mesh
    sharding: TensorSharding  # of the operand
    global_type: RankedTensorType  # of the operand
    local_type: RankedTensorType  # of the operand
    index_vector_dim: int
    start_index_map: tuple[int, ...]
    trivial_dims: tuple[int, ...]

    def vector_like(self, b: Builder, indices: RankedTensorType, values: list[int]) -> Value:
        """Upstream ``clampGatherIndices``' ``buildIndicesLikeTensor``: ``values`` laid
        along the index vector dimension of an indices-shaped tensor."""
        ivd = self.index_vector_dim
        if ivd < len(indices.shape) and len(values) > 1:
            row = constant(b, tensor((len(values),), indices.element_type), values)
            return _broadcast(b, row, indices, (ivd,))
        return constant(b, indices, [values[0]])

    def bounds_tensor(self, b: Builder, indices: RankedTensorType, bounds: list[Value]) -> Value:
        """Upstream ``buildBoundsTensor``: scalar bounds, one per index vector entry, laid
        along the index vector dimension of an indices-shaped tensor."""
        ivd = self.index_vector_dim
        if ivd >= len(indices.shape) or indices.shape[ivd] == 1:
            return _broadcast(b, bounds[0], indices)
        one = tensor((1,), indices.element_type)
        pieces = [b.op("stablehlo.reshape", [x], [one]).results[0] for x in bounds]
        row = b.op("stablehlo.concatenate", pieces, [tensor((len(bounds),),
                                                             indices.element_type)],
                   {"dimension": IntegerAttr(0, I64)}).results[0]
        return _broadcast(b, row, indices, (ivd,))


def _slice_dim_bounds(state: ConversionState, b: Builder, ix: _Indexing, element_type,
                      with_max: bool) -> tuple[list[Value], list[Value]]:
    """Upstream ``getTrivialSliceDimBounds``: per indexed dimension, the global index range
    this device holds: the whole dimension unless it is a trivial slice dimension, then
    ``[offset, offset + shard size - 1]``."""
    scalar = tensor((), element_type)
    lows, highs = [], []
    for dim in ix.start_index_map:
        if dim not in ix.trivial_dims:
            lows.append(constant(b, scalar, [0]))
            if with_max:
                highs.append(constant(b, scalar, [ix.global_type.shape[dim] - 1]))
            continue
        shard = ix.local_type.shape[dim]
        offset = state.dimension_offset(b, ix.mesh, dim_axes(ix.sharding, dim), shard)
        offset = b.op("stablehlo.convert", [offset], [scalar]).results[0]
        lows.append(offset)
        if with_max:
            last = constant(b, scalar, [shard - 1])
            highs.append(b.op("stablehlo.add", [offset, last], [scalar]).results[0])
    return lows, highs


def _local_indices_and_mask(state: ConversionState, b: Builder, indices: Value,
                            ix: _Indexing, gather: bool,
                            with_mask: bool = True) -> tuple[Value, Value | None]:
    """Upstream ``computeLocalIndicesAndMask``: indices made local along the trivial slice
    dimensions they index, and (``with_mask``) whether this device holds each index: its
    indexed range contains it, and for trivial dimensions not indexed, this device's shard
    starts at 0."""
    indices_type = indices.type
    adjusted, mask = indices, None
    if any(d in ix.start_index_map for d in ix.trivial_dims):
        base = indices
        if gather:
            top = [ix.global_type.shape[d] - 1 for d in ix.start_index_map]
            low = ix.vector_like(b, indices_type, [0])
            high = ix.vector_like(b, indices_type, top)
            base = b.op("stablehlo.clamp", [low, indices, high], [indices_type]).results[0]
        lows, highs = _slice_dim_bounds(state, b, ix, indices_type.element_type, with_mask)
        low = ix.bounds_tensor(b, indices_type, lows)
        high = ix.bounds_tensor(b, indices_type, highs) if with_mask else None
        adjusted = b.op("stablehlo.subtract", [base, low], [indices_type]).results[0]
        if with_mask:
            mask = _and(b, _compare(b, "GE", base, low), _compare(b, "LE", base, high))
    if not with_mask:
        return adjusted, None
    partition_mask = None
    for dim in ix.trivial_dims:
        if dim in ix.start_index_map:
            continue
        offset = state.dimension_offset(b, ix.mesh, dim_axes(ix.sharding, dim),
                                        ix.local_type.shape[dim])
        at_zero = _compare(b, "EQ", offset, constant(b, offset.type, [0]))
        partition_mask = at_zero if partition_mask is None else _and(b, partition_mask, at_zero)
    if partition_mask is not None:
        if mask is None:
            mask = partition_mask
        else:
            mask = _and(b, mask, _broadcast(b, partition_mask, mask.type))
    return adjusted, mask


def _local_slice_sizes(op: Operation, ix: _Indexing, sizes: list[int], batching) -> list[int]:
    """Upstream ``computeLocalSliceSizes``: a sharded dimension sliced whole (not a batching
    or size-1 dimension) takes the whole local dimension."""
    sizes = list(sizes)
    for i, size in enumerate(sizes):
        axes = dim_axes(ix.sharding, i)
        if size == 1 or i in batching or not axes:
            continue
        total = axes_size(axes, ix.mesh)
        check(size == ix.global_type.shape[i] and size % total == 0, op,
              f"gather slice size {size} of sharded operand dimension {i} must be the whole "
              f"dimension ({ix.global_type.shape[i]}), divisible by {total}")
        sizes[i] = size // total
    return sizes


def _and_reducer(b: Builder, input_: Value, init: Value, dim: int, type_) -> Value:
    """``stablehlo.reduce`` with an ``and`` body over ``dim`` (upstream ``buildReduceBody``)."""
    scalar = tensor((), I1)
    block = Block([scalar, scalar])
    lhs, rhs = block.args
    conj = Operation("stablehlo.and", [lhs, rhs], [scalar], location=b.anchor.location)
    block.append(conj)
    block.append(Operation("stablehlo.return", [conj.results[0]], location=b.anchor.location))
    return b.op("stablehlo.reduce", [input_, init], [type_], {"dimensions": _dims((dim,))},
                [Region([block])]).results[0]


@localizer("stablehlo.gather")
def localize_gather(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloGatherOpPattern``."""
    operand, indices = op.operands
    sharding = state.sharding(operand)
    if replicated(sharding):
        localize_generic(state, op)
        return
    mesh = state.mesh(sharding)
    if mesh is None:
        raise op_error(op, "failed to resolve mesh")
    dn = op.attributes["dimension_numbers"]
    sizes = list(op.attributes["slice_sizes"])
    global_type = state.global_type(operand)
    trivial, reduction = [], []
    for i in range(len(global_type.shape)):
        axes = dim_axes(sharding, i)
        if axes and axes_size(axes, mesh) > 1 and sizes[i] == 1 and \
                i not in dn.operand_batching_dims:
            trivial.append(i)
            reduction.extend(axes)
    ix = _Indexing(mesh, sharding, global_type, operand.type, dn.index_vector_dim,
                   tuple(dn.start_index_map), tuple(trivial))
    attrs = dict(op.attributes)
    attrs["slice_sizes"] = _dims(_local_slice_sizes(op, ix, sizes, dn.operand_batching_dims))
    attrs["indices_are_sorted"] = bool_attr(_flag(op, "indices_are_sorted"))
    result_type = local_result_types(state, op)[0]
    b = state.builder(op)
    if not trivial:
        state.replace(op, rebuild(b, op, [operand, indices], [result_type], attrs).results)
        return
    adjusted, mask = _local_indices_and_mask(state, b, indices, ix, gather=True)
    result = rebuild(b, op, [operand, adjusted], [result_type], attrs).results[0]
    ivd = dn.index_vector_dim
    if mask.type.shape and ivd < len(mask.type.shape):
        shape = [n for i, n in enumerate(mask.type.shape) if i != ivd]
        true = constant(b, tensor((), I1), [True])
        mask = _and_reducer(b, mask, true, ivd, tensor(shape, I1))
    batch_dims = [i for i in range(len(result_type.shape)) if i not in dn.offset_dims]
    mask = _broadcast(b, mask, tensor(result_type.shape, I1),
                      batch_dims if mask.type.shape else ())
    zero = constant(b, result_type, [zero_scalar(result_type.element_type)])
    result = b.op("stablehlo.select", [mask, result, zero], [result_type]).results[0]
    reduce = reducing_user(op)
    check(reduce is not None, op,
          "Expected the gather to have one user and the user is an sdy.all_reduce.")
    check(sort_and_merge_axes(list(reduce.attributes["reduction_axes"]), mesh)
          == sort_and_merge_axes(reduction, mesh), op,
          "The axes of the sdy.all_reduce should match the sharded collapsed operand "
          "dimensions of the gather.")
    state.replace(op, [result])


def _flag(op: Operation, name: str) -> bool:
    attr = op.attributes.get(name)
    return bool(attr.value) if attr is not None else False


# -- scatter ----------------------------------------------------------------------------

def _scatter_reduction_axes(op: Operation, updates_sharding, operand_sharding) -> list:
    """Upstream ``getScatterReductionAxes``: the axes sharding the updates' batch
    dimensions that do not also shard the operand (each device scatters a part of the
    updates, so the results must be combined)."""
    if replicated(updates_sharding):
        return []
    window = op.attributes["scatter_dimension_numbers"].update_window_dims
    operand_axes = set() if replicated(operand_sharding) else {
        a for d in operand_sharding.dim_shardings for a in d.axes}
    updates_rank = len(op.operands[-1].type.shape)
    return [axis for i in range(updates_rank) if i not in window
            for axis in dim_axes(updates_sharding, i) if axis not in operand_axes]


def _identity(kind: str, element_type):
    """The identity of the reduction ``kind`` in ``element_type`` (upstream
    ``getScatterReductionIdentity``; max/min use the infinities where the type has them
    (upstream takes the finite extremes, and a max-scatter into an operand of -inf then
    comes out as -3.4e38 where no update lands), else the finite extremes; signed extremes
    for integers)."""
    if kind in ("stablehlo.add", "stablehlo.or"):
        return zero_scalar(element_type)
    if kind in ("stablehlo.and", "stablehlo.multiply"):
        if isinstance(element_type, FloatType):
            return 1.0
        return True if element_type == I1 else 1
    if isinstance(element_type, FloatType):
        top = math.inf if _has_infinity(element_type) else _float_max(element_type)
        return -top if kind == "stablehlo.maximum" else top
    if isinstance(element_type, IntegerType):
        return _int_extreme(element_type, kind == "stablehlo.maximum")
    return None


def _has_infinity(element_type: FloatType) -> bool:
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf).astype(numpy_dtype(element_type.name))))


def _float_max(element_type: FloatType) -> float:
    import numpy as np

    from shardy_ref.ir.dtypes import numpy_dtype
    dtype = numpy_dtype(element_type.name)
    if dtype in (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)):
        return float(np.finfo(dtype).max)
    import ml_dtypes
    return float(ml_dtypes.finfo(dtype).max)


def _int_extreme(element_type: IntegerType, minimum: bool) -> int | bool:
    """The bits of the signed minimum (or maximum) of the width, read in the type's own
    signedness (as upstream's ``APInt::getSignedMinValue``)."""
    width = element_type.width
    if width == 1:
        return minimum
    value = -(1 << (width - 1)) if minimum else (1 << (width - 1)) - 1
    if element_type.signedness == "unsigned":
        value &= (1 << width) - 1
    return value


def _leader_inputs(state: ConversionState, b: Builder, op: Operation, inputs: list[Value],
                   mesh, reduction: list) -> list[Value]:
    """Keep the inputs on the first device of each reduction group; others start from the
    reduction's identity, so the ``sdy.all_reduce`` after the scatter counts them once."""
    local_type = inputs[0].type
    kind = common_reduction_op(op, len(inputs))
    value = _identity(kind, local_type.element_type) if kind is not None else None
    if value is None:
        raise PassError(op.location, "failed to get scatter reduction identity.")
    return keep_on_leaders(state, b, inputs, mesh, reduction, value)


def keep_on_leaders(state: ConversionState, b: Builder, inputs: list[Value], mesh,
                    axes: list, identity_value) -> list[Value]:
    """Each input kept on the devices at coordinate 0 of ``axes``; the others hold
    ``identity_value`` (so a reduction over ``axes`` counts the input once)."""
    local_type = inputs[0].type
    identity = constant(b, tensor((), local_type.element_type), [identity_value])
    device = state.device_id(b)
    n = mesh.total_size
    table = constant(b, tensor((n,), I1),
                     [shard_index(d, mesh, axes) == 0 for d in range(n)])
    leader = b.op("stablehlo.dynamic_slice", [table, device], [tensor((1,), I1)],
                  {"slice_sizes": _dims((1,))}).results[0]
    leader = _broadcast(b, leader, tensor(local_type.shape, I1), (0,))
    identity = _broadcast(b, identity, local_type)
    return [b.op("stablehlo.select", [leader, x, identity], [x.type]).results[0]
            for x in inputs]


def _indexed_input_dims(op: Operation, sharding, mesh) -> list[int]:
    """The sharded operand dimensions the scatter indexes (others must not be inserted
    window dimensions)."""
    if replicated(sharding):
        return []
    dn = op.attributes["scatter_dimension_numbers"]
    dims = []
    for i, dim_sharding in enumerate(sharding.dim_shardings):
        if not dim_sharding.axes:
            continue
        check(axes_size(dim_sharding.axes, mesh) > 1, op,
              "We should have removed trivial sharding in a previous pass.")
        if i in dn.scatter_dims_to_operand_dims:
            dims.append(i)
        elif i in dn.inserted_window_dims:
            raise op_error(op, f"sharding operand dimension {i} that is not indexed but in "
                           "inserted window dimension is not supported.")
    return dims


@localizer("stablehlo.scatter")
def localize_scatter(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloScatterOpPattern``."""
    n = (op.num_operands - 1) // 2
    inputs, indices, updates = list(op.operands[:n]), op.operands[n], op.operands[n + 1:]
    input_sharding = state.sharding(inputs[0])
    updates_sharding = state.sharding(updates[0])
    if replicated(input_sharding) and replicated(updates_sharding):
        localize_generic(state, op)
        return
    mesh = state.mesh(input_sharding if input_sharding is not None else updates_sharding)
    if mesh is None:
        raise PassError(op.location, "failed to resolve mesh.")
    reduction = _scatter_reduction_axes(op, updates_sharding, input_sharding)
    if not reduction and replicated(input_sharding):
        localize_generic(state, op)
        return
    b = state.builder(op)
    if reduction:
        inputs = _leader_inputs(state, b, op, inputs, mesh, reduction)
    indexed = _indexed_input_dims(op, input_sharding, mesh)
    if not indexed and not reduction:
        localize_generic(state, op)
        return
    dn = op.attributes["scatter_dimension_numbers"]
    if not replicated(input_sharding):
        ix = _Indexing(mesh, input_sharding, state.global_type(op.operands[0]),
                       op.operands[0].type, dn.index_vector_dim,
                       tuple(dn.scatter_dims_to_operand_dims), tuple(indexed))
        indices, _ = _local_indices_and_mask(state, b, indices, ix, gather=False,
                                             with_mask=False)
    attrs = dict(op.attributes)
    attrs["indices_are_sorted"] = bool_attr(_flag(op, "indices_are_sorted"))
    attrs["unique_indices"] = bool_attr(_flag(op, "unique_indices"))
    new = rebuild(b, op, [*inputs, indices, *updates], local_result_types(state, op), attrs)
    state.replace(op, new.results)
