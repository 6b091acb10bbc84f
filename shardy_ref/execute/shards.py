"""Global arrays <-> the per-device shards an sdy sharding lays them out as, so a partitioned
program can be fed and read back from Python (and a simulator built on it).

The mesh's devices are numbered in row-major order over its axes; device ``i`` of that
order has id ``device_ids[i]`` (``i`` without ``device_ids``), the process id
(``partition_id``) the per-device program runs as. A sub-axis ``"x":(m)k`` of an axis of
size ``n`` is the middle dimension of ``n`` reshaped to ``[m, k, n/(m*k)]``. A dimension
sharded by axes ``[a1, ..., ak]`` is cut into ``prod(size(ai))`` blocks of ``ceil(dim /
count)`` elements (the last ones padded), block index mixed-radix over the axes' coordinates,
``a1`` most major. Replicated and free axes leave the shard alike on their devices.
See https://openxla.org/shardy/sharding_representation and
``shardy/dialect/sdy/transforms/export/convert_global_to_local.cc`` at the pinned commit.
"""
from __future__ import annotations

import functools

import numpy as np

from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_layout import (  # the layout this module cuts arrays into
    block_index_at,
    block_ranges,
    device_positions,
    dim_axes,
    mesh_coordinates,
)


class ShardMismatch(ValueError):
    """Devices that must hold the same block of a tensor hold different data."""


def device_ids(mesh: Mesh) -> tuple[int, ...]:
    """The device id of each position of the mesh's row-major device order."""
    if mesh.device_ids:
        return tuple(mesh.device_ids)
    return tuple(range(mesh.total_size))


def block_counts(sharding: TensorSharding, mesh: Mesh, rank: int) -> tuple[int, ...]:
    """How many blocks each dimension is cut into."""
    return tuple(int(np.prod([a.size(mesh) for a in axes], dtype=np.int64))
                 for axes in dim_axes(sharding, mesh, rank))


def local_shape(shape, sharding: TensorSharding, mesh: Mesh) -> tuple[int, ...]:
    """The per-device shape: each dimension divided by its block count, rounded up."""
    counts = block_counts(sharding, mesh, len(shape))
    return tuple(-(-d // c) for d, c in zip(shape, counts, strict=True))


def is_divisible(shape, sharding: TensorSharding, mesh: Mesh) -> bool:
    counts = block_counts(sharding, mesh, len(shape))
    return all(d % c == 0 for d, c in zip(shape, counts, strict=True))


def block_index(sharding: TensorSharding, mesh: Mesh, rank: int, position: int
                ) -> tuple[int, ...]:
    """The block of each dimension the device at ``position`` holds."""
    return block_index_at(mesh, dim_axes(sharding, mesh, rank), mesh_coordinates(mesh, position))


@functools.lru_cache(maxsize=256)
def device_blocks(sharding: TensorSharding, mesh: Mesh, rank: int
                  ) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """(device id, :func:`block_index`) of every device in mesh order: the same for every
    array a sharding lays out, so worked out once (a simulated run puts each result
    together from every device's block)."""
    return tuple((device, block_index(sharding, mesh, rank, position))
                 for position, device in device_positions(mesh))


def block_slices(shape, local, index) -> tuple[slice, ...]:
    return tuple(slice(start, stop) for start, stop in block_ranges(shape, local, index))


def shard(array: np.ndarray, sharding: TensorSharding, mesh: Mesh, pad_value=0
          ) -> dict[int, np.ndarray]:
    """Device id -> the local shard of global ``array`` that device holds (blocks past the
    end of a non-divisible dimension filled with ``pad_value``)."""
    array = np.asarray(array)
    local = local_shape(array.shape, sharding, mesh)
    out = {}
    for position, device in device_positions(mesh):
        index = block_index(sharding, mesh, array.ndim, position)
        piece = array[block_slices(array.shape, local, index)]
        if piece.shape != local:
            padded = np.full(local, pad_value, dtype=array.dtype)
            padded[tuple(slice(0, n) for n in piece.shape)] = piece
            piece = padded
        out[device] = np.ascontiguousarray(piece)
    return out


def unshard(shards, shape, sharding: TensorSharding, mesh: Mesh) -> np.ndarray:
    """The global array of ``shape`` that per-device ``shards`` (device id -> local array,
    a mapping or a sequence indexed by device id) hold; raises :class:`ShardMismatch` when
    two devices that hold the same block disagree (NaNs compare equal). Unreduced axes are
    not supported."""
    if sharding.unreduced_axes:
        raise ValueError(f"sharding {sharding} has unreduced axes; unshard needs it reduced")
    shape = tuple(shape)
    local = local_shape(shape, sharding, mesh)
    out, seen, seen_pieces = None, {}, {}
    for device, index in device_blocks(sharding, mesh, len(shape)):
        piece = np.asarray(shards[device])
        if piece.shape != local:
            raise ShardMismatch(f"device {device} holds a {list(piece.shape)} shard, "
                                f"expected {list(local)} for {sharding}")
        if out is None:
            out = np.zeros(shape, dtype=piece.dtype)
        region = block_slices(shape, local, index)
        valid = piece[tuple(slice(0, s.stop - s.start) for s in region)]
        if index in seen:
            if _same_memory(seen_pieces[index], piece):
                continue
            if not np.array_equal(out[region], valid, equal_nan=valid.dtype.kind in "fc"):
                raise ShardMismatch(f"devices {seen[index]} and {device} hold block "
                                    f"{list(index)} of {sharding} with different values")
            continue
        seen[index] = device
        seen_pieces[index] = piece
        out[region] = valid
    return out



def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Two views of the very same elements (a broadcast copy), equal without looking."""
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0] \
        and a.strides == b.strides and a.shape == b.shape


# -- the simulator's layout: devices over the mesh's axes -----------------------------------
def mesh_shape(mesh: Mesh) -> tuple[int, ...]:
    """The process dimensions of a mesh's devices: one per axis (``(1,)`` for a mesh
    without axes)."""
    return tuple(a.size for a in mesh.axes) or (1,)


def sharded_axes(sharding: TensorSharding) -> set[str]:
    """The names of the mesh axes a sharding cuts dimensions along (fully or by a
    sub-axis)."""
    return {ref.name for d in sharding.dim_shardings for ref in d.axes}


def shard_compact(array: np.ndarray, sharding: TensorSharding, mesh: Mesh, pad_value=0
                  ) -> np.ndarray:
    """The shards of ``array`` laid out over the mesh's axes, ``[*mesh_shape, *local]``
    with size 1 along the axes the sharding does not use: each distinct shard stored
    once (broadcast it to the full mesh shape to give every device its own)."""
    array = np.asarray(array)
    view = _shard_view(array, sharding, mesh)
    if view is not None:
        return view
    local = local_shape(array.shape, sharding, mesh)
    used = sharded_axes(sharding) if not mesh.is_maximal else set()
    full = mesh_shape(mesh)
    shape = tuple(n if a.name in used else 1 for a, n in zip(mesh.axes, full, strict=False)) \
        or (1,)
    out = np.full(shape + local, pad_value, dtype=array.dtype)
    for compact in np.ndindex(*shape):
        position = int(np.ravel_multi_index(compact, full)) if mesh.axes else 0
        index = block_index(sharding, mesh, array.ndim, position)
        piece = array[block_slices(array.shape, local, index)]
        out[compact + tuple(slice(0, n) for n in piece.shape)] = piece
    return out


def _shard_view(array: np.ndarray, sharding: TensorSharding, mesh: Mesh) -> np.ndarray | None:
    """:func:`shard_compact` as a view of ``array`` (nothing copied): each sharded dimension
    split into its axes' sizes and the block size, the axes moved in front in mesh order.
    None when a dimension does not divide or a sub-axis is used."""
    if mesh.is_maximal or not mesh.axes:
        return None
    dims = dim_axes(sharding, mesh, array.ndim)
    if any(ref.sub_axis_info is not None for axes in dims for ref in axes) \
            or not is_divisible(array.shape, sharding, mesh):
        return None
    split, axis_at, local_at = [], {}, []
    for n, axes in zip(array.shape, dims, strict=True):
        for ref in axes:
            axis_at[ref.name] = len(split)
            split.append(mesh.axis_size(ref.name))
        local_at.append(len(split))
        split.append(n // int(np.prod([mesh.axis_size(r.name) for r in axes], dtype=np.int64)))
    order = [axis_at[a.name] for a in mesh.axes if a.name in axis_at] + local_at
    moved = array.reshape(split).transpose(order)
    shape = tuple(a.size if a.name in axis_at else 1 for a in mesh.axes)
    return moved.reshape(shape + moved.shape[len(axis_at):])


def unshard_compact(data: np.ndarray, layout, shape, sharding: TensorSharding, mesh: Mesh
                    ) -> np.ndarray:
    """The global array of ``shape`` that per-device values ``data`` (``[*layout.shape,
    *local]`` over a :class:`~shardy_ref.execute.context.ProcessLayout`, possibly a
    broadcast view) hold; like :func:`unshard`, devices that hold the same block must agree
    (copies that share memory are not compared)."""
    return unshard(_ByDevice(data, layout), shape, sharding, mesh)


class _ByDevice:
    """Device id -> that device's local value, read from an array over process positions."""

    def __init__(self, data: np.ndarray, layout):
        self.data = data
        self.coords = np.unravel_index(layout.position, layout.shape)  # of every device

    def __getitem__(self, device: int) -> np.ndarray:
        return self.data[tuple(int(c[device]) for c in self.coords)]


# -- unreduced axes: partial values whose reduction is the global value ---------------------
def _first_along_unreduced(sharding: TensorSharding, mesh: Mesh) -> np.ndarray:
    """A ``mesh_shape``-shaped mask: True on the devices at coordinate 0 of every unreduced
    axis (or sub-axis)."""
    full = mesh_shape(mesh)
    mask = np.ones(full, dtype=bool)
    names = [a.name for a in mesh.axes]
    for ref in sharding.unreduced_axes:
        i = names.index(ref.name)
        coord = np.arange(full[i])
        if ref.sub_axis_info is not None:  # pre-size counts the sub-axes major to it
            coord = (coord // (full[i] // ref.next_pre_size(mesh))) % ref.sub_axis_info.size
        shape = [1] * len(full)
        shape[i] = full[i]
        mask &= (coord == 0).reshape(shape)
    return mask


def split_unreduced(data: np.ndarray, sharding: TensorSharding, mesh: Mesh) -> np.ndarray:
    """Per-device parts ``[*mesh_shape, *local]`` of shards ``data`` (laid out as
    :func:`shard_compact` gives them) for a sharding with unreduced axes: their reduction
    along those axes is ``data`` (a sum: the value on the first device, zeros elsewhere;
    max/min: a copy everywhere). See the unreduced axes of
    https://openxla.org/shardy/sdy_dialect#tensorshardingattr."""
    if not sharding.unreduced_axes or sharding.reduction_op != ReductionOp.SUM:
        return data
    full = mesh_shape(mesh)
    mask = _first_along_unreduced(sharding, mesh).reshape(full + (1,) * (data.ndim - len(full)))
    return np.where(mask, data, np.zeros((), data.dtype))


def reduce_unreduced(data: np.ndarray, sharding: TensorSharding, mesh: Mesh) -> np.ndarray:
    """Per-device values ``[*mesh_shape, *local]`` with the sharding's unreduced axes
    reduced (sum, max or min) and the result given to every device along them."""
    if not sharding.unreduced_axes:
        return data
    full = mesh_shape(mesh)
    data = np.broadcast_to(data, full + data.shape[len(full):])
    names = [a.name for a in mesh.axes]
    combine = {ReductionOp.SUM: np.add, ReductionOp.MAX: np.maximum,
               ReductionOp.MIN: np.minimum}[sharding.reduction_op]
    for ref in sharding.unreduced_axes:
        i = names.index(ref.name)
        pre, size = (ref.sub_axis_info.pre_size, ref.sub_axis_info.size) \
            if ref.sub_axis_info is not None else (1, full[i])
        # the axis as (major sub-axes, this sub-axis, minor sub-axes): pre-size is major
        split = (*data.shape[:i], pre, size, full[i] // (pre * size), *data.shape[i + 1:])
        reduced = combine.reduce(data.reshape(split), axis=i + 1, keepdims=True)
        data = np.broadcast_to(reduced, split).reshape(data.shape)
    return data
