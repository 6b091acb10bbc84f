"""StableHLO localizers of ``sdy-convert-global-to-local`` for the ops whose local form is not
just local types: iota, pad, slice and concatenate here; dot, dot_general and convolution in
:mod:`.contractions`; gather and scatter in :mod:`.gather_scatter`; dynamic_slice and
dynamic_update_slice in :mod:`.dynamic_slicing`; reduce_window and
select_and_scatter in :mod:`.windows` (upstream ``Stablehlo*OpPattern`` in
``export/convert_global_to_local.cc``). Importing this module registers them all."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import I64, RankedTensorType
from shardy_ref.partition.export.convert_global_to_local import (  # noqa: F401 (they register)
    contractions,
    dynamic_slicing,
    gather_scatter,
    windows,
)
from shardy_ref.partition.export.convert_global_to_local.op_utils import (
    axes_size,
    check,
    constant,
    dim_axes,
    local_result_types,
    op_error,
    replicated,
    stripped_axes,
    tensor,
)
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
    shard_index,
)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@localizer("stablehlo.concatenate")
def localize_concatenate(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloConcatenateOpPattern``: previous passes must have replicated the
    concatenated dimension and sharded every other one alike; the concatenation is local."""
    out = state.result_sharding(op, 0)
    dim = op.attributes["dimension"].value
    if dim_axes(out, dim):
        raise op_error(op, f"dimension {dim} is sharded but the concatenation is on this "
                       "dimension.")
    for index, operand in enumerate(op.operands):
        sharding = state.sharding(operand)
        if replicated(sharding):
            continue
        if dim_axes(sharding, dim):
            raise op_error(op, f"operand {index} is sharded on concatenation dimension {dim}. "
                           "This is not supported.")
        for i in range(sharding.rank):
            if i != dim and dim_axes(sharding, i) != dim_axes(out, i):
                raise op_error(op, f"dimension {i} has mismatched sharding axes "
                               f"({stripped_axes(dim_axes(sharding, i))} vs "
                               f"{stripped_axes(dim_axes(out, i))}). This requires a reshard "
                               "which should have been handled by previous passes.")
    localize_generic(state, op)


@localizer("stablehlo.iota")
def localize_iota(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloIotaOpPattern``: a local iota, plus this device's offset along the
    iota dimension when that dimension is sharded."""
    sharding = state.result_sharding(op, 0)
    if replicated(sharding):
        return
    mesh = state.mesh(sharding)
    if mesh is None:
        raise op_error(op, "failed to resolve mesh")
    local_type = local_result_types(state, op)[0]
    dim = op.attributes["iota_dimension"].value
    b = state.builder(op)
    iota = b.op("stablehlo.iota", types=[local_type],
                attributes={"iota_dimension": IntegerAttr(dim, I64)}).results[0]
    axes = dim_axes(sharding, dim)
    if not axes:
        state.replace(op, [iota])
        return
    offset = state.dimension_offset(b, mesh, axes, local_type.shape[dim])
    offset = b.op("stablehlo.convert", [offset], [tensor((), local_type.element_type)]).results[0]
    offset = b.op("stablehlo.broadcast_in_dim", [offset], [local_type],
                  {"broadcast_dimensions": DenseArrayAttr(I64, ())}).results[0]
    state.replace(op, b.op("stablehlo.add", [iota, offset], [local_type]).results)


@localizer("stablehlo.slice")
def localize_slice(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloSliceOpPattern``: a sharded dimension must keep its axes and be a
    full (or communication-free prefix) slice; it becomes the whole local dimension."""
    operand = op.operands[0]
    in_sharding, out_sharding = state.sharding(operand), state.result_sharding(op, 0)
    if replicated(in_sharding) and replicated(out_sharding):
        localize_generic(state, op)
        return
    global_in = state.global_type(operand)
    local_out = local_result_types(state, op)[0]
    starts = list(op.attributes["start_indices"])
    limits = list(op.attributes["limit_indices"])
    strides = list(op.attributes["strides"])
    for i in range(len(starts)):
        in_axes, out_axes = dim_axes(in_sharding, i), dim_axes(out_sharding, i)
        if in_axes != out_axes:
            raise op_error(op, f"dimension {i} has mismatched sharding axes "
                           f"({stripped_axes(in_axes)} vs {stripped_axes(out_axes)}). This "
                           "requires a reshard which should have been handled by previous "
                           "passes.")
        if not in_axes:
            continue
        full = limits[i] == global_in.shape[i]
        if starts[i] != 0 or not (full or _communication_free_slice_dim(
                state, op, i, in_sharding)):
            raise op_error(op, f"dimension {i} is sharded but the slice is not a full slice "
                           "and requires device communication.")
        starts[i] = 0
        limits[i] = operand.type.shape[i] if full else local_out.shape[i]
    b = state.builder(op)
    new = b.op("stablehlo.slice", [operand], [local_out], {
        "start_indices": DenseArrayAttr(I64, tuple(starts)),
        "limit_indices": DenseArrayAttr(I64, tuple(limits)),
        "strides": DenseArrayAttr(I64, tuple(strides))})
    state.replace(op, new.results)


def _communication_free_slice_dim(state: ConversionState, op: Operation, dim: int,
                                  sharding) -> bool:
    """Upstream ``isCommunicationFreeSliceDim``: a unit-stride prefix slice that leaves each
    shard's size (rounded up) unchanged needs no data from other devices."""
    count = axes_size(dim_axes(sharding, dim), state.mesh(sharding))
    if count <= 1:
        return True
    if op.attributes["start_indices"][dim] != 0 or op.attributes["strides"][dim] != 1:
        return False
    in_size = state.global_type(op.operands[0]).shape[dim]
    out_size = state.global_type(op.results[0]).shape[dim]
    if in_size is None or out_size is None:
        return False
    return _ceil_div(in_size, count) == _ceil_div(out_size, count)


@localizer("stablehlo.pad")
def localize_pad(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloPadOpPattern``: when every device's shard starts at the same
    offset into its padded input, a local pad; otherwise pad enough for every device and
    take this device's window with a ``dynamic_slice`` at offsets from per-device tables."""
    operand = op.operands[0]
    in_sharding, out_sharding = state.sharding(operand), state.result_sharding(op, 0)
    if replicated(in_sharding):
        check(replicated(out_sharding), op, "the result of a pad of a replicated operand must "
              "be replicated")
        localize_generic(state, op)
        return
    mesh = state.mesh(in_sharding)
    if mesh is None:
        raise op_error(op, "failed to resolve mesh")
    offsets = _pad_offsets(state, op, mesh, in_sharding, out_sharding)
    local_out = local_result_types(state, op)[0]
    local_in = operand.type
    interior = list(op.attributes["interior_padding"])
    b = state.builder(op)
    expanded = [(n - 1) * (p + 1) + 1 for n, p in zip(local_in.shape, interior)]
    if all(len(set(row)) == 1 for row in offsets):
        low = [row[0] for row in offsets]
        high = [out - (e + lo) for out, e, lo in zip(local_out.shape, expanded, low)]
        state.replace(op, _pad(b, op, local_out, low, high, interior).results)
        return
    low = [max(0, max(row)) for row in offsets]
    high = [max(0, out - min(row) - e) for row, out, e in zip(offsets, local_out.shape, expanded)]
    safe_type = tensor([lo + e + hi for lo, e, hi in zip(low, expanded, high)],
                       local_in.element_type)
    safe = _pad(b, op, safe_type, low, high, interior).results[0]
    device = state.device_id(b)
    starts = [_table_entry(b, [lo - o for o in row], device)
              for lo, row in zip(low, offsets)]
    state.replace(op, b.op("stablehlo.dynamic_slice", [safe, *starts], [local_out], {
        "slice_sizes": DenseArrayAttr(I64, tuple(local_out.shape))}).results)


def _pad_offsets(state, op, mesh, in_sharding, out_sharding) -> list[list[int]]:
    """Per dimension and device, where the device's input shard starts relative to its
    output shard (global start of its input data minus global start of its output shard)."""
    global_in, global_out = state.global_type(op.operands[0]), state.global_type(op.results[0])
    lows, interiors = op.attributes["edge_padding_low"], op.attributes["interior_padding"]
    offsets = []
    for i, (low, interior) in enumerate(zip(lows, interiors)):
        in_axes, out_axes = dim_axes(in_sharding, i), dim_axes(out_sharding, i)
        check(in_axes == out_axes, op, f"dimension {i} has mismatched sharding axes "
              f"({stripped_axes(in_axes)} vs {stripped_axes(out_axes)}). This requires a "
              "reshard collective which should have been handled by previous passes.")
        count = axes_size(in_axes, mesh)
        s_in, s_out = global_in.shape[i] // count, global_out.shape[i] // count
        check(_pad_dim_is_local(global_in.shape[i], s_in, global_out.shape[i], s_out, low,
                                interior), op,
              f"dimension {i} is sharded but the pad moves data between shards, which "
              "requires a reshard which should have been handled by previous passes.")
        offsets.append([shard_index(d, mesh, in_axes) * s_in * (interior + 1) + low
                        - shard_index(d, mesh, out_axes) * s_out
                        for d in range(mesh.total_size)])
    return offsets


def _pad_dim_is_local(size: int, s_in: int, out_size: int, s_out: int, low: int,
                      interior: int) -> bool:
    """Each input element the pad keeps lands in the output shard of the same index as its
    input shard, so that no device needs another's data (upstream assumes previous passes
    made it so; a pad that breaks it would be computed wrongly, so it is an error here)."""
    for j in range(size):
        pos = low + j * (interior + 1)
        if 0 <= pos < out_size and pos // s_out != j // s_in:
            return False
    return True


def _pad(b, op: Operation, type_: RankedTensorType, low, high, interior) -> Operation:
    return b.op("stablehlo.pad", list(op.operands), [type_], {
        "edge_padding_low": DenseArrayAttr(I64, tuple(low)),
        "edge_padding_high": DenseArrayAttr(I64, tuple(high)),
        "interior_padding": DenseArrayAttr(I64, tuple(interior))})


def _table_entry(b, table: list[int], device):
    """``table[device]`` as a scalar i64: a constant when every device has the same entry,
    else a ``dynamic_slice`` of a constant table."""
    if len(set(table)) == 1:
        return constant(b, tensor((), I64), [table[0]])
    values = constant(b, tensor((len(table),), I64), table)
    piece = b.op("stablehlo.dynamic_slice", [values, device], [tensor((1,), I64)],
                 {"slice_sizes": DenseArrayAttr(I64, (1,))}).results[0]
    return b.op("stablehlo.reshape", [piece], [tensor((), I64)]).results[0]
