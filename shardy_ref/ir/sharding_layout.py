"""Which device holds which block of a tensor: a sharding laid out over its mesh.

A dimension sharded by axes ``[a1, ..., ak]`` is cut into ``prod(size(ai))`` blocks of
``ceil(dim / count)`` elements, the block index mixed-radix over the axes' coordinates
(``a1`` most major); the last blocks of a non-divisible dimension are short and padded
(https://openxla.org/shardy/sdy_dialect#tensorshardingattr). A sub-axis ``"x":(m)k`` of an
axis of size ``n`` is the middle dimension of ``n`` reshaped to ``[m, k, n/(m*k)]``. Devices
are numbered row-major over the mesh's axes; position ``i`` is device ``device_ids[i]``.
Axes that shard no dimension (explicitly replicated, unreduced or free) leave every block on
several devices: each block is held ``replication`` times.

This is the same layout :mod:`shardy_ref.execute.shards` cuts arrays into (a test checks
they agree); it lives here, without NumPy arrays, so tools that only *describe* a
sharding (``shardy-ref show``) need not load the interpreter.
See https://openxla.org/shardy/sharding_representation.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding


@dataclass(frozen=True, slots=True)
class DeviceBlock:
    """The block one device holds: its block index per dimension and the element ranges
    ``[start, stop)`` of the global tensor it covers (``padding`` elements past ``stop``
    fill the local shard of a non-divisible dimension)."""

    device: int
    position: int  # in the mesh's row-major device order
    coords: tuple[int, ...]  # one per mesh axis
    index: tuple[int, ...]  # block index per tensor dimension
    ranges: tuple[tuple[int, int], ...]
    padding: tuple[int, ...]

    replace = dataclasses.replace


@dataclass(frozen=True, slots=True)
class Layout:
    """A tensor of ``shape`` sharded by ``sharding`` on ``mesh``: every device's block."""

    shape: tuple[int, ...]
    sharding: TensorSharding
    mesh: Mesh
    counts: tuple[int, ...]  # blocks per dimension
    local_shape: tuple[int, ...]  # per-device shape, padded
    blocks: tuple[DeviceBlock, ...]  # one per device, in mesh order

    replace = dataclasses.replace

    @property
    def num_blocks(self) -> int:
        n = 1
        for c in self.counts:
            n *= c
        return n

    @property
    def replication(self) -> int:
        """How many devices hold each block."""
        return len(self.blocks) // self.num_blocks

    @property
    def is_padded(self) -> bool:
        return any(d % c for d, c in zip(self.shape, self.counts, strict=True))

    def holders(self) -> dict[tuple[int, ...], list[int]]:
        """Block index -> the ids of the devices holding it (mesh order), by block index."""
        out: dict[tuple[int, ...], list[int]] = {}
        for b in self.blocks:
            out.setdefault(b.index, []).append(b.device)
        return dict(sorted(out.items()))

    def ranges_of(self, index: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        return block_ranges(self.shape, self.local_shape, index)

    def unused_axes(self, also_used=()) -> tuple[AxisRef, ...]:
        """The mesh axes, or the parts of them (sub-axes), that cut no dimension (nor are
        among ``also_used``): the ones each block is replicated along, in mesh order."""
        used = [r for d in dim_axes(self.sharding, self.mesh, len(self.shape)) for r in d]
        return tuple(piece for axis in self.mesh.axes
                     for piece in _gaps(axis.name, axis.size, [*used, *also_used], self.mesh))


def _gaps(name: str, size: int, refs, mesh: Mesh) -> list[AxisRef]:
    """The parts of axis ``name`` (of ``size``) that none of ``refs`` covers, major to
    minor: the whole axis if none names it, else sub-axes ``"x":(m)k`` between the used
    ranges ``[pre-size, pre-size * size)``."""
    spans = sorted((r.sub_axis_info.pre_size, r.sub_axis_info.pre_size * r.size(mesh))
                   if r.is_sub_axis else (1, size) for r in refs if r.name == name)
    if not spans:
        return [AxisRef(name)]
    out, at = [], 1
    for start, stop in [*spans, (size, size)]:
        if start > at:
            out.append(AxisRef.sub(name, at, start // at))
        at = max(at, stop)
    return out


def dim_axes(sharding: TensorSharding, mesh: Mesh, rank: int) -> list[tuple[AxisRef, ...]]:
    """The axes sharding each dimension (none on a maximal mesh or an empty sharding)."""
    if mesh.is_maximal or not sharding.dim_shardings:
        return [()] * rank
    if len(sharding.dim_shardings) != rank:
        raise ValueError(f"sharding {sharding} has rank {len(sharding.dim_shardings)}, the "
                         f"tensor has rank {rank}")
    return [tuple(d.axes) for d in sharding.dim_shardings]


def mesh_coordinates(mesh: Mesh, position: int) -> tuple[int, ...]:
    """The coordinate along each mesh axis of the device at ``position`` (row-major)."""
    coords = []
    for axis in reversed(mesh.axes):
        position, c = divmod(position, axis.size)
        coords.append(c)
    return tuple(reversed(coords))


def axis_coordinate(mesh: Mesh, ref: AxisRef, coords: tuple[int, ...]) -> int:
    """The coordinate along axis or sub-axis ``ref`` of the device at mesh ``coords``."""
    minor = mesh.axis_size(ref.name) // ref.next_pre_size(mesh)
    return (coords[mesh.axis_index(ref.name)] // minor) % ref.size(mesh)


def block_ranges(shape, local, index) -> tuple[tuple[int, int], ...]:
    """The ``[start, stop)`` of each dimension that block ``index`` covers (clipped)."""
    return tuple((min(b * n, d), min((b + 1) * n, d))
                 for d, n, b in zip(shape, local, index, strict=True))


def device_positions(mesh: Mesh) -> list[tuple[int, int]]:
    """(position, device id) of every device of the mesh (the one of a maximal mesh)."""
    if mesh.is_maximal:
        return [(0, mesh.maximal_device_id)]
    ids = mesh.device_ids or tuple(range(mesh.total_size))
    return list(enumerate(ids))


def layout(shape, sharding: TensorSharding, mesh: Mesh) -> Layout:
    """Every device's block of a tensor of static ``shape`` sharded by ``sharding``."""
    shape = tuple(int(d) for d in shape)
    axes = dim_axes(sharding, mesh, len(shape))
    counts = tuple(_product(r.size(mesh) for r in dim) for dim in axes)
    local = tuple(-(-d // c) for d, c in zip(shape, counts, strict=True))
    blocks = []
    for position, device in device_positions(mesh):
        coords = mesh_coordinates(mesh, position) if not mesh.is_maximal else ()
        index = block_index_at(mesh, axes, coords)
        ranges = block_ranges(shape, local, index)
        padding = tuple(n - (stop - start) for n, (start, stop) in zip(local, ranges,
                                                                         strict=True))
        blocks.append(DeviceBlock(device, position, coords, index, ranges, padding))
    return Layout(shape, sharding, mesh, counts, local, tuple(blocks))


def block_index_at(mesh: Mesh, axes: list[tuple[AxisRef, ...]],
                   coords: tuple[int, ...]) -> tuple[int, ...]:
    """The block of each dimension (sharded by ``axes``, major to minor) that the device at
    mesh ``coords`` holds: mixed radix over the axes' coordinates."""
    index = []
    for dim in axes:
        block = 0
        for ref in dim:
            block = block * ref.size(mesh) + axis_coordinate(mesh, ref, coords)
        index.append(block)
    return tuple(index)


def _product(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n
