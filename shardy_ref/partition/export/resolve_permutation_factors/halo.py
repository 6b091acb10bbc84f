"""Halo exchange inside an ``sdy.manual_computation`` (upstream
``export/resolve_permutation_factors.cc``: ``assembleHaloExchangeBuffer``,
``exchangeDimWithDynamicOffset``, ``haloDataExchange``, ``rightShiftData``).

Along each sharded dimension that needs it, a device concatenates the shards of its left
and right neighbours (collective permutes) around its own, pads that buffer on both sides,
and dynamic-slices its output window at an offset computed from its shard index.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.operation import Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import IntegerType, RankedTensorType
from shardy_ref.ir.value_sharding import set_sharding
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.partition.export.resolve_permutation_factors import emit
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.geometry import (
    DataExchange,
    DimExchange,
    padded_dim_size,
    shift_source_target_pairs,
)

# (body builder, exchanged local value, local padding value, padded global result type)
PostProcess = Callable[[Builder, Value, Value, RankedTensorType], Value]


@dataclass(frozen=True, slots=True)
class Window:
    """The per-dimension window of the op being resolved: low padding (``-start`` for a
    slice), base dilation (interior padding + 1) and whether the buffer is dilated."""

    pad_low: Sequence[int]
    base_dilations: Sequence[int]
    dilated: bool = True
    fill_missing: bool = False  # neighbours past the ends read as the padding value, not 0


def manual_shard_count(sharding: TensorSharding, dim: int, mesh: Mesh, manual: set[str]) -> int:
    """Upstream ``getManualShardCount``."""
    count = 1
    for axis in sharding.dim_shardings[dim].axes:
        if axis.name in manual:
            count *= axis.size(mesh)
    return count


def _all_manual(sharding: TensorSharding, dim: int, manual: set[str]) -> bool:
    """Whether every axis sharding ``dim`` is manual in the computation."""
    return all(axis.name in manual for axis in sharding.dim_shardings[dim].axes)


def _buffer(b: Builder, value: Value, dim: int, edge: int, padding: Value, ex: DimExchange,
            sharding: TensorSharding, mesh: Mesh, manual: set[str], local: TensorSharding,
            state: State, interior: int, fill_missing: bool) -> Value:
    """Upstream ``assembleHaloExchangeBuffer``: left neighbours, own shard, right
    neighbours, concatenated and padded by ``edge`` on both sides."""
    dim_sharding = ex.target_dim_sharding or sharding.dim_shardings[dim]
    axes = [a for a in dim_sharding.axes if a.name in manual]
    segments = []
    for offset in [*range(ex.left_hops, 0, -1), 0, *range(-1, -ex.right_hops - 1, -1)]:
        if offset == 0:
            segments.append(value)
            continue
        pairs = shift_source_target_pairs(mesh, axes, offset)
        received = emit.collective_permute(b, value, pairs, state, local) if pairs else value
        if pairs and fill_missing:
            received = _or_padding(b, received, pairs, padding, state, local)
        segments.append(received)
    concat = emit.concatenate(b, segments, dim, local)
    rank = len(value.type.shape)
    low, interiors = [0] * rank, [0] * rank
    low[dim], interiors[dim] = edge, interior
    return emit.pad(b, concat, padding, low, low, interiors, local)


def _or_padding(b: Builder, received: Value, pairs, padding: Value, state: State,
                local: TensorSharding) -> Value:
    """A collective permute leaves zeros on devices no one sends to (the ends of the
    dimension); where the op pads with something else, those devices take the padding
    value instead (upstream assumes a zero padding value here). Like every value of the
    exchange, the tensors keep their sharding along the free axes (``local``)."""
    flag_type = RankedTensorType((), IntegerType(1))
    one = b.op("stablehlo.constant", types=[flag_type], attributes={
        "value": DenseElementsAttr.from_values(flag_type, [True])}).results[0]
    got = emit.collective_permute(b, one, pairs, state)
    fill = b.op("stablehlo.broadcast_in_dim", [padding], [received.type],
                {"broadcast_dimensions": emit.i64_array([])})
    set_sharding(fill.results[0], local)
    select = b.op("stablehlo.select", [got, received, fill.results[0]], [received.type])
    set_sharding(select.results[0], local)
    return select.results[0]


def _offset(b: Builder, ex: DimExchange, group_id: Value, s_in: int, pad_low: int,
            dilation: int, window: Window) -> tuple[Value, Value]:
    """The buffer offset of this device's window and a zero for the other dimensions:
    a table for reshape groups, else upstream ``getDeviceOffsetInfo``."""
    if ex.target_dim_sharding is not None:
        offsets = []
        for t, shard in enumerate(ex.shard_exchanges):
            source = shard.source_id if shard.source_id != -1 else t
            hop = ex.left_hops + source - t
            offsets.append(-pad_low + ex.s_footprint + hop * s_in + shard.local_offset)
        entry = emit.dynamic_slice(b, emit.const_i64_vector(b, offsets), [group_id], [1], None)
        offset = emit.reshape(b, entry, group_id.type)
        return offset, emit.const_i64(b, 0)
    s_in_dilated = s_in * dilation
    diff = (ex.s_out or ex.s_footprint) - s_in_dilated
    base = -pad_low + ex.left_hops * s_in_dilated + ex.s_footprint * dilation
    diff_value, base_value = emit.const_i64(b, diff), emit.const_i64(b, base)
    offset = emit.binary(b, "add", emit.binary(b, "multiply", group_id, diff_value), base_value)
    zero = emit.const_i64(b, 0)
    offset = emit.binary(b, "maximum", offset, zero)
    if not window.dilated and dilation != 1:
        offset = emit.binary(b, "divide", offset, emit.const_i64(b, dilation))
    return offset, zero


def exchange_dim(b: Builder, value: Value, padding: Value, dim: int, ex: DimExchange,
                 sharding: TensorSharding, mesh: Mesh, manual: set[str], window: Window,
                 state: State) -> Value:
    """Upstream ``exchangeDimWithDynamicOffset``: one dimension's halo exchange."""
    local = emit.remove_axes(sharding, manual)
    dilation = window.base_dilations[dim] if window.base_dilations else 1
    pad_low = window.pad_low[dim] if window.pad_low else 0
    edge = ex.s_footprint * dilation if window.dilated else ex.s_footprint
    buffer = _buffer(b, value, dim, edge, padding, ex, sharding, mesh, manual, local, state,
                     dilation - 1 if window.dilated else 0, window.fill_missing)
    pid = emit.partition_id(b, state)
    group_id = emit.id_in_group(b, pid, mesh, ex.target_dim_sharding
                                or sharding.dim_shardings[dim])
    offset, zero = _offset(b, ex, group_id, value.type.shape[dim], pad_low, dilation, window)
    offsets = [zero] * len(value.type.shape)
    offsets[dim] = offset
    sizes = list(buffer.type.shape)
    sizes[dim] = ex.s_footprint
    return emit.dynamic_slice(b, buffer, offsets, sizes, local)


def halo_data_exchange(b: Builder, value: Value, info: DataExchange,
                       out_type: RankedTensorType, in_sharding: TensorSharding,
                       out_sharding: TensorSharding, mesh: Mesh, padding: Value,
                       window: Window, post: PostProcess, state: State) -> Value:
    """Upstream ``haloDataExchange``: a manual computation over ``info.manual_axes`` taking
    the divisible input and the padding value, exchanging halos along each sharded dim
    that needs it, then ``post`` computes the local result."""
    manual = info.manual_axes
    local_shape = []
    for dim, size in enumerate(info.divisible_input_shape):
        count = manual_shard_count(in_sharding, dim, mesh, manual)
        assert size % count == 0, (size, count)
        local_shape.append(size // count)
    elem = value.type.element_type
    result_shape = tuple(padded_dim_size(size, d.sharded_size(mesh))
                         for size, d in zip(out_type.shape, out_sharding.dim_shardings,
                                            strict=True))
    result_type = RankedTensorType(result_shape, out_type.element_type)
    replicated = TensorSharding(in_sharding.mesh_or_ref, ())
    op, body = emit.manual_computation(
        b, [value, padding], [in_sharding, replicated], [out_sharding],
        emit.manual_axes_in_mesh_order(mesh, manual), [result_type],
        [RankedTensorType(tuple(local_shape), elem), padding.type])
    local, local_padding = op.regions[0].blocks[0].args
    exchanged: Value = local
    sharded_dims = [d for d, s in enumerate(in_sharding.dim_shardings) if s.sharded_size(mesh) > 1]
    for dim, ex in zip(sharded_dims, info.dim_exchanges, strict=True):
        # Upstream exchanges only dims that need communication; a dim whose shard size
        # changes without any (each window inside its own shard) still needs its window
        # sliced out, else the local result has the wrong shape. A dim also sharded by
        # axes that stay automatic (a reshape's unrelated axis) is not cut by them here.
        resized = ex.s_footprint != exchanged.type.shape[dim] and \
            _all_manual(in_sharding, dim, manual)
        if ex.needs_comm or resized:
            exchanged = exchange_dim(body, exchanged, local_padding, dim, ex, in_sharding, mesh,
                                     manual, window, state)
    emit.finish(body, [post(body, exchanged, local_padding, result_type)])
    return op.results[0]


def _right_shift(b: Builder, value: Value, dim: int, shift: int, sharding: TensorSharding,
                 mesh: Mesh, manual: set[str], state: State) -> Value:
    """Upstream ``rightShiftData``: move every element ``shift`` places up the (global)
    dimension, crossing shard boundaries; zeros come in at the low end."""
    type_ = value.type
    shard, rank = type_.shape[dim], len(type_.shape)
    local = emit.remove_axes(sharding, manual)
    axes = [a for a in sharding.dim_shardings[dim].axes if a.name in manual]
    hops, fraction = divmod(shift, shard)

    def permute(offset: int) -> Value:
        if offset == 0:
            return value
        pairs = shift_source_target_pairs(mesh, axes, offset)
        if pairs:
            return emit.collective_permute(b, value, pairs, state, local)
        zero = emit.zero_scalar(b, type_.element_type)
        op = b.op("stablehlo.broadcast_in_dim", [zero], [type_],
                  {"broadcast_dimensions": emit.i64_array([])})
        set_sharding(op.results[0], local)
        return op.results[0]

    head, tail = permute(hops), permute(hops + 1)
    head_size = shard - fraction
    starts, limits = [0] * rank, list(type_.shape)
    starts[dim] = head_size
    tail_slice = emit.slice_(b, tail, starts, limits, local)
    starts, limits = [0] * rank, list(type_.shape)
    limits[dim] = head_size
    head_slice = emit.slice_(b, head, starts, limits, local)
    return emit.concatenate(b, [tail_slice, head_slice], dim, local)


def halo_right_shift(b: Builder, value: Value, sharding: TensorSharding, mesh: Mesh,
                     manual: set[str], shifts: dict[int, int], state: State) -> Value:
    """Upstream ``haloRightShiftData``: a manual computation shifting the (padded) value
    right along each dim of ``shifts`` so the high padding ends up at the low edge."""
    shape = value.type.shape
    local_shape = tuple(size // manual_shard_count(sharding, dim, mesh, manual)
                        for dim, size in enumerate(shape))
    op, body = emit.manual_computation(
        b, [value], [sharding], [sharding], emit.manual_axes_in_mesh_order(mesh, manual),
        [value.type], [RankedTensorType(local_shape, value.type.element_type)])
    shifted = op.regions[0].blocks[0].args[0]
    for dim, shift in shifts.items():
        shifted = _right_shift(body, shifted, dim, shift, sharding, mesh, manual, state)
    emit.finish(body, [shifted])
    return op.results[0]
