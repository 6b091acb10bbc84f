"""Halo exchange for ``stablehlo.pad`` and ``stablehlo.slice`` sharded along the dimensions
they change (upstream ``export/resolve_permutation_factors.cc``: ``handlePadOp``,
``handleSliceOp`` and their ``get*DataExchangeInfo`` / ``handleReplicated*Dims``).

The input is padded at the high edges to divisible shard sizes, each device gathers the
neighbour shards its output window reads, slices that window, applies the op's own
padding or slicing on the replicated dimensions, and the padded result is cut back to the
op's type. ``False`` means halo exchange cannot do it (the caller replicates instead).
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.partition.export.resolve_permutation_factors import emit
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.geometry import (
    DataExchange,
    ceil_div,
    dim_exchange,
    padded_dim_size,
)
from shardy_ref.partition.export.resolve_permutation_factors.halo import (
    Window,
    halo_data_exchange,
    manual_shard_count,
)
from shardy_ref.partition.export.resolve_permutation_factors.replicate import (
    communication_free_slice_dim,
)


def _ints(op: Operation, name: str) -> list[int]:
    return list(op.attributes[name].value)


def data_exchange(sharding: TensorSharding, mesh: Mesh, in_type: RankedTensorType,
                  out_type: RankedTensorType, pad_low, dilations) -> DataExchange:
    """Upstream ``buildDataExchangeInfo`` for a pad (``pad_low``, interior + 1) or a slice
    (``-start``, 1): one exchange per sharded dimension."""
    info = DataExchange(list(in_type.shape))
    for dim, dim_sharding in enumerate(sharding.dim_shardings):
        count = dim_sharding.sharded_size(mesh)
        if count <= 1:
            continue
        info.manual_axes.update(a.name for a in dim_sharding.axes)
        info.divisible_input_shape[dim] = padded_dim_size(in_type.shape[dim], count)
        s_in = info.divisible_input_shape[dim] // count
        s_out = ceil_div(out_type.shape[dim], count)
        info.dim_exchanges.append(dim_exchange(count, s_in, s_out, s_out, pad_low[dim], 1,
                                               dilations[dim], in_type.shape[dim]))
    return info


def _sharding_and_mesh(op: Operation, state: State) -> tuple[TensorSharding, Mesh] | None:
    """The operand's sharding and mesh when it is sharded on a non-maximal mesh."""
    sharding = get_sharding(op.operands[0])
    if sharding is None or sharding.is_fully_replicated or \
            not isinstance(op.operands[0].type, RankedTensorType):
        return None
    mesh = mesh_or_lookup(state.table, sharding.mesh_or_ref)
    if mesh is None or mesh.is_maximal:
        return None
    return sharding, mesh


def _local_pad(sharding: TensorSharding, mesh: Mesh, manual: set[str], low, high, interior):
    """Upstream ``handleReplicatedPadDims``: the op's padding on unsharded dimensions."""
    def post(b: Builder, value: Value, padding: Value, result_type: RankedTensorType) -> Value:
        rank = len(value.type.shape)
        lo, hi, inner = [0] * rank, [0] * rank, [0] * rank
        for i in range(rank):
            if sharding.dim_shardings[i].sharded_size(mesh) > 1:
                continue
            lo[i], hi[i], inner[i] = low[i], high[i], interior[i]
        if not any(lo) and not any(hi) and not any(inner):
            return value
        result = emit.pad(b, value, padding, lo, hi, inner, emit.remove_axes(sharding, manual))
        expected = tuple(result_type.shape[i] // manual_shard_count(sharding, i, mesh, manual)
                         for i in range(rank))
        assert result.type.shape == expected, (result.type, expected)
        return result
    return post


def _is_zero_constant(value: Value) -> bool:
    op = value.defining_op
    if op is None or op.name != "stablehlo.constant":
        return False
    return all(v == 0 for v in op.attributes["value"].values)


def handle_pad(op: Operation, state: State) -> bool:
    """Upstream ``handlePadOp``."""
    found = _sharding_and_mesh(op, state)
    if found is None:
        return True
    sharding, mesh = found
    low, high = _ints(op, "edge_padding_low"), _ints(op, "edge_padding_high")
    interior = _ints(op, "interior_padding")
    dilations = [i + 1 for i in interior]
    operand, padding = op.operands
    info = data_exchange(sharding, mesh, operand.type, op.results[0].type, low, dilations)
    if not info.manual_axes or not info.needs_comm:
        return True
    if not info.can_use_halo:
        return False
    b = Builder(op)
    divisible = emit.pad_high_to_shape(b, operand, info.divisible_input_shape, sharding, padding)
    post = _local_pad(sharding, mesh, info.manual_axes, low, high, interior)
    window = Window(low, dilations, fill_missing=not _is_zero_constant(padding))
    result = halo_data_exchange(b, divisible, info, op.results[0].type, sharding, sharding, mesh,
                                padding, window, post, state)
    result = emit.slice_high_to_shape(b, result, op.results[0].type, sharding)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def _local_slice(sharding: TensorSharding, mesh: Mesh, manual: set[str], starts, limits,
                 strides):
    """Upstream ``handleReplicatedSliceDims``: the op's slicing on unsharded dimensions,
    with the op's strides there (upstream drops them, giving a wrongly shaped result)."""
    def post(b: Builder, value: Value, padding: Value, result_type: RankedTensorType) -> Value:
        shape = value.type.shape
        lo, hi, step = [0] * len(shape), list(shape), [1] * len(shape)
        for i in range(len(shape)):
            if sharding.dim_shardings[i].sharded_size(mesh) > 1:
                continue
            lo[i], hi[i], step[i] = starts[i], limits[i], strides[i]
        if lo == [0] * len(shape) and hi == list(shape) and step == [1] * len(shape):
            return value
        return emit.slice_(b, value, lo, hi, emit.remove_axes(sharding, manual), step)
    return post


def _locally_sliceable(op: Operation, sharding: TensorSharding, mesh: Mesh) -> bool:
    """Whether every sharded dimension is a slice the later passes can take on each shard
    as it is (upstream ``isCommunicationFreeSliceDim``). A slice whose windows stay in
    their devices' shards at other offsets (``[1:6]`` of 8 on 2 devices) needs no
    communication but a per-device offset: upstream leaves it, and
    ``sdy-pad-for-divisibility`` then cannot extend it; the halo exchange (with no hops)
    takes each window at its offset."""
    return all(communication_free_slice_dim(d, op, sharding, mesh)
               for d in range(len(sharding.dim_shardings)))


def handle_slice(op: Operation, state: State) -> bool:
    """Upstream ``handleSliceOp`` (slices strided along a sharded dim are left to
    replication: the window arithmetic assumes unit strides)."""
    found = _sharding_and_mesh(op, state)
    if found is None:
        return True
    sharding, mesh = found
    starts, limits = _ints(op, "start_indices"), _ints(op, "limit_indices")
    operand = op.operands[0]
    rank = len(starts)
    strides = _ints(op, "strides")
    if any(stride != 1 and d.sharded_size(mesh) > 1
           for stride, d in zip(strides, sharding.dim_shardings, strict=True)):
        return False
    info = data_exchange(sharding, mesh, operand.type, op.results[0].type,
                         [-s for s in starts], [1] * rank)
    if not info.manual_axes or (not info.needs_comm and _locally_sliceable(op, sharding, mesh)):
        return True
    if not info.can_use_halo:
        return False
    b = Builder(op)
    divisible = emit.pad_high_to_shape(b, operand, info.divisible_input_shape, sharding)
    padding = emit.zero_scalar(b, operand.type.element_type)
    post = _local_slice(sharding, mesh, info.manual_axes, starts, limits, strides)
    result = halo_data_exchange(b, divisible, info, op.results[0].type, sharding, sharding, mesh,
                                padding, Window([-s for s in starts], [1] * rank), post, state)
    result = emit.slice_high_to_shape(b, result, op.results[0].type, sharding)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True
