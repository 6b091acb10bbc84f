"""Builders for the StableHLO ops halo exchange emits (upstream
``export/resolve_permutation_factors.cc``, "Pad and slice helpers", "Core HALO exchange
helpers"): constants, edge pads and slices, channel-numbered collective permutes, the
partition id projected onto a dimension's shard index, and ``sdy.manual_computation``
shells whose bodies the callers fill."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import (
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.ir.stablehlo_attrs import ChannelHandle
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.ir.value_sharding import set_sharding
from shardy_ref.partition.export.lowering import I64, SCALAR_I64, Builder, device_id, zero_attr
from shardy_ref.partition.export.resolve_permutation_factors.geometry import shard_index


@dataclass(slots=True)
class State:
    """Upstream ``ResolutionState``: the module's symbols, meshes by value (for reversed
    meshes), the next free channel id and the device-id kind."""

    module: Operation
    table: SymbolTable
    replica_count: int = 1
    partition_count: int = 1
    next_channel: int = 1
    mesh_names: dict = field(default_factory=dict)


def i64_array(values: Sequence[int]) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(int(v) for v in values))


def const_i64(b: Builder, value: int) -> Value:
    attr = DenseElementsAttr.from_values(SCALAR_I64, [int(value)])
    return b.op("stablehlo.constant", types=[SCALAR_I64], attributes={"value": attr}).results[0]


def const_i64_vector(b: Builder, values: Sequence[int]) -> Value:
    type_ = RankedTensorType((len(values),), I64)
    attr = DenseElementsAttr.from_values(type_, [int(v) for v in values])
    return b.op("stablehlo.constant", types=[type_], attributes={"value": attr}).results[0]


def zero_scalar(b: Builder, element_type) -> Value:
    type_ = RankedTensorType((), element_type)
    return b.op("stablehlo.constant", types=[type_],
                attributes={"value": zero_attr(type_)}).results[0]


def binary(b: Builder, name: str, lhs: Value, rhs: Value) -> Value:
    return b.op(f"stablehlo.{name}", [lhs, rhs], [lhs.type]).results[0]


def _sharded(op: Operation, sharding: TensorSharding | None) -> Value:
    if sharding is not None:
        set_sharding(op.results[0], sharding)
    return op.results[0]


def pad(b: Builder, value: Value, padding: Value, low, high, interior,
        sharding: TensorSharding | None) -> Value:
    """``stablehlo.pad`` with its result type computed."""
    type_ = value.type
    shape = tuple((d - 1) * (i + 1) + 1 + lo + hi if d > 0 else lo + hi
                  for d, lo, hi, i in zip(type_.shape, low, high, interior, strict=True))
    op = b.op("stablehlo.pad", [value, padding], [RankedTensorType(shape, type_.element_type)],
              {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
               "interior_padding": i64_array(interior)})
    return _sharded(op, sharding)


def slice_(b: Builder, value: Value, starts, limits, sharding: TensorSharding | None,
           strides: Sequence[int] | None = None) -> Value:
    """A ``stablehlo.slice`` (unit strides unless ``strides`` is given)."""
    strides = list(strides) if strides is not None else [1] * len(starts)
    shape = tuple(-((lo - hi) // step) if hi > lo else 0
                  for lo, hi, step in zip(starts, limits, strides, strict=True))
    op = b.op("stablehlo.slice", [value], [RankedTensorType(shape, value.type.element_type)],
              {"start_indices": i64_array(starts), "limit_indices": i64_array(limits),
               "strides": i64_array(strides)})
    return _sharded(op, sharding)


def concatenate(b: Builder, values: Sequence[Value], dim: int,
                sharding: TensorSharding | None) -> Value:
    shape = list(values[0].type.shape)
    shape[dim] = sum(v.type.shape[dim] for v in values)
    op = b.op("stablehlo.concatenate", list(values),
              [RankedTensorType(tuple(shape), values[0].type.element_type)],
              {"dimension": IntegerAttr(dim, I64)})
    return _sharded(op, sharding)


def pad_high_to_shape(b: Builder, value: Value, shape: Sequence[int], sharding: TensorSharding,
                      padding: Value | None = None) -> Value:
    """Upstream ``padHighSideToShape``: pad the high edges up to ``shape`` (zero if no
    ``padding``); ``value`` itself if it already has that shape."""
    type_ = value.type
    if tuple(shape) == tuple(type_.shape):
        return value
    if padding is None:
        padding = zero_scalar(b, type_.element_type)
    rank = len(shape)
    high = [s - d for s, d in zip(shape, type_.shape, strict=True)]
    return pad(b, value, padding, [0] * rank, high, [0] * rank, sharding)


def slice_high_to_shape(b: Builder, value: Value, type_: RankedTensorType,
                        sharding: TensorSharding) -> Value:
    """Upstream ``sliceHighSideToShape``: cut the high edges back to ``type_``."""
    if value.type == type_:
        return value
    return slice_(b, value, [0] * len(type_.shape), list(type_.shape), sharding)


def collective_permute(b: Builder, value: Value, pairs: Sequence[tuple[int, int]],
                       state: State, sharding: TensorSharding | None = None) -> Value:
    """A ``stablehlo.collective_permute`` on a fresh channel."""
    pairs_type = RankedTensorType((len(pairs), 2), I64)
    attrs = {"channel_handle": ChannelHandle(state.next_channel, 1),
             "source_target_pairs": DenseElementsAttr.from_values(
                 pairs_type, [v for pair in pairs for v in pair])}
    state.next_channel += 1
    return _sharded(b.op("stablehlo.collective_permute", [value], [value.type], attrs), sharding)


def dynamic_slice(b: Builder, value: Value, offsets: Sequence[Value], sizes: Sequence[int],
                  sharding: TensorSharding | None) -> Value:
    op = b.op("stablehlo.dynamic_slice", [value, *offsets],
              [RankedTensorType(tuple(sizes), value.type.element_type)],
              {"slice_sizes": i64_array(sizes)})
    return _sharded(op, sharding)


def reshape(b: Builder, value: Value, type_: RankedTensorType,
            sharding: TensorSharding | None = None) -> Value:
    return _sharded(b.op("stablehlo.reshape", [value], [type_]), sharding)


def partition_id(b: Builder, state: State) -> Value:
    return device_id(b, state.replica_count, state.partition_count)


def id_in_group(b: Builder, pid: Value, mesh: Mesh, dim_sharding: DimensionSharding) -> Value:
    """Upstream ``convertPartitionIdToIdInGroup``: the device's shard index along a
    dimension sharded by ``dim_sharding``, from a lookup table for meshes with explicit
    device ids, else by dividing and taking remainders of the id."""
    axes = dim_sharding.axes
    if mesh.device_ids:
        table = [shard_index(d, mesh, axes) for d in range(mesh.total_size)]
        entry = dynamic_slice(b, const_i64_vector(b, table), [pid], [1], None)
        return reshape(b, entry, SCALAR_I64)
    total = mesh.total_size
    result = None
    for axis in axes:
        size = axis.size(mesh)
        k = mesh.axis_index(axis.name)
        suffix = 1
        for mesh_axis in mesh.axes[k + 1:]:
            suffix *= mesh_axis.size
        divisor = suffix * (mesh.axis_size(axis.name) // (axis.pre_size * size))
        coord = pid
        if divisor > 1:
            coord = binary(b, "divide", coord, const_i64(b, divisor))
        if size < total:
            coord = binary(b, "remainder", coord, const_i64(b, size))
        if result is None:
            result = coord
        else:
            result = binary(b, "add", binary(b, "multiply", result, const_i64(b, size)), coord)
    return result if result is not None else const_i64(b, 0)


def manual_axes_in_mesh_order(mesh: Mesh, manual: set[str]) -> ManualAxes:
    return ManualAxes(tuple(a.name for a in mesh.axes if a.name in manual))


def manual_computation(b: Builder, operands: Sequence[Value], in_shardings, out_shardings,
                       manual: ManualAxes, result_types, local_types) -> tuple[Operation,
                                                                               Builder]:
    """An ``sdy.manual_computation`` before the builder's anchor with an empty body ending
    in ``sdy.return`` (no operands yet), and a builder inserting before that return."""
    region = Region()
    block = Block(local_types)
    region.add_block(block)
    op = b.op("sdy.manual_computation", operands, result_types,
              {"in_shardings": TensorShardingPerValue(tuple(in_shardings)),
               "out_shardings": TensorShardingPerValue(tuple(out_shardings)),
               "manual_axes": manual}, [region])
    ret = Operation("sdy.return", [], [], location=b.anchor.location)
    block.append(ret)
    return op, Builder(ret)


def finish(body: Builder, values: Sequence[Value]) -> None:
    """Give the manual computation's ``sdy.return`` its operands."""
    body.anchor.set_operands(values)


def remove_axes(sharding: TensorSharding, axes: set[str]) -> TensorSharding:
    """Upstream ``removeAxesFromSharding``: drop every axis named in ``axes``."""
    dims = tuple(d.replace(axes=tuple(a for a in d.axes if a.name not in axes))
                 for d in sharding.dim_shardings)
    return sharding.replace(dim_shardings=dims)
