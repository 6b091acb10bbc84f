"""The integer math of halo exchange: where a shard's output data comes from, which devices
hold neighbouring shards, and how a reversed mesh orders its devices (upstream
``export/resolve_permutation_factors.cc``, "Coordinate math" and "Core HALO exchange
helpers"). No IR is built here."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import DimensionSharding


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def padded_dim_size(size: int, shard_count: int) -> int:
    """``size`` rounded up to a multiple of ``shard_count``."""
    return ceil_div(size, shard_count) * shard_count


@dataclass(frozen=True, slots=True)
class ShardExchange:
    """Where target shard ``t`` starts: its first source shard (-1: only padding) and the
    offset in that shard."""

    source_id: int
    local_offset: int


@dataclass(slots=True)
class DimExchange:
    """Upstream ``DimExchangeInfo``: the exchange one sharded dimension needs.

    ``s_out`` is the output shard size, ``s_footprint`` the input length each device needs,
    ``left_hops``/``right_hops`` how many neighbour shards on each side it reads.
    ``target_dim_sharding`` is set for a reshape group (the combined output axes whose
    shard index picks a device's row of ``shard_exchanges``)."""

    s_out: int
    s_footprint: int
    shard_exchanges: list[ShardExchange] = field(default_factory=list)
    left_hops: int = 0
    right_hops: int = 0
    needs_comm: bool = False
    can_use_halo: bool = True
    target_dim_sharding: DimensionSharding | None = None


@dataclass(slots=True)
class DataExchange:
    """Upstream ``DataExchangeInfo``: the padded (divisible) input shape, the manual axes
    (every axis sharding a sharded dimension) and one :class:`DimExchange` per sharded dim."""

    divisible_input_shape: list[int]
    manual_axes: set[str] = field(default_factory=set)
    dim_exchanges: list[DimExchange] = field(default_factory=list)

    @property
    def needs_comm(self) -> bool:
        return any(d.needs_comm for d in self.dim_exchanges)

    @property
    def can_use_halo(self) -> bool:
        return all(d.can_use_halo for d in self.dim_exchanges)


def record_target(info: DimExchange, t: int, source: int, offset: int, last: int) -> None:
    """Upstream's per-target bookkeeping: hops and whether the shard reads another's data."""
    if (source != -1 and source != t) or (last != -1 and last != t):
        info.needs_comm = True
    if source != -1 and source < t:
        info.left_hops = max(info.left_hops, t - source)
    if last != -1 and last > t:
        info.right_hops = max(info.right_hops, last - t)
    info.shard_exchanges.append(ShardExchange(source, offset))


def dim_exchange(shard_count: int, s_in: int, s_out: int, s_footprint: int, pad_low: int,
                 stride: int, base_dilation: int, input_dim_size: int) -> DimExchange:
    """Upstream ``getDimExchangeInfo``: for each target shard, the input shards its window
    ``[start, start + s_footprint)`` (in undilated input space) touches."""
    info = DimExchange(s_out, s_footprint)
    for t in range(shard_count):
        start = _trunc_div(t * s_out * stride - pad_low, base_dilation)
        limit = start + s_footprint - 1
        valid_start, valid_limit = max(0, start), min(input_dim_size - 1, limit)
        source, offset, last = -1, 0, -1
        if valid_start <= valid_limit:
            source = valid_start // s_in
            offset = start - source * s_in
            last = valid_limit // s_in
        record_target(info, t, source, offset, last)
        if source == -1:
            info.needs_comm = True
    if info.left_hops + info.right_hops + 1 >= shard_count and \
            (info.left_hops > 1 or info.right_hops > 1):
        info.can_use_halo = False
    return info


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (rounds towards zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def mesh_coordinates(index: int, mesh: Mesh) -> list[int]:
    """Upstream ``getMeshCoordinates``: row-major coordinates of a logical device index."""
    coords = [0] * len(mesh.axes)
    for j in range(len(mesh.axes) - 1, -1, -1):
        coords[j] = index % mesh.axes[j].size
        index //= mesh.axes[j].size
    return coords


def linear_index(coords: Sequence[int], mesh: Mesh) -> int:
    """Upstream ``getLinearIndexFromCoordinates``."""
    index, multiplier = 0, 1
    for j in range(len(mesh.axes) - 1, -1, -1):
        index += coords[j] * multiplier
        multiplier *= mesh.axes[j].size
    return index


def _post_size(axis: AxisRef, mesh: Mesh) -> int:
    """The stride of ``axis`` (a sub-axis or a full axis) inside its mesh axis."""
    return mesh.axis_size(axis.name) // (axis.pre_size * axis.size(mesh))


def shard_index(device_id: int, mesh: Mesh, axes: Sequence[AxisRef]) -> int:
    """Upstream ``getShardIndex`` (``export/utils.cc``): the index, along a dimension
    sharded by ``axes``, of the shard a (physical) device holds."""
    logical = mesh.device_ids.index(device_id) if mesh.device_ids else device_id
    coords = mesh_coordinates(logical, mesh)
    index = 0
    for axis in axes:
        size = axis.size(mesh)
        coord = (coords[mesh.axis_index(axis.name)] // _post_size(axis, mesh)) % size
        index = index * size + coord
    return index


def shift_source_target_pairs(mesh: Mesh, axes: Sequence[AxisRef],
                              shard_offset: int) -> list[tuple[int, int]]:
    """Upstream ``getDataShiftSourceTargetPairs``: each device paired with the device
    ``shard_offset`` shards further along the dimension sharded by ``axes`` (major first),
    devices shifted past either end left out."""
    pairs = []
    for i in range(mesh.total_size):
        coords = mesh_coordinates(i, mesh)
        new = list(coords)
        carry = shard_offset
        for axis in reversed(axes):
            if carry == 0:
                break
            k = mesh.axis_index(axis.name)
            size, post = axis.size(mesh), _post_size(axis, mesh)
            sub = (coords[k] // post) % size
            moved = sub + carry
            carry = moved // size
            new[k] += (moved % size - sub) * post
        if carry == 0:
            target = linear_index(new, mesh)
            ids = mesh.device_ids
            pairs.append((ids[i], ids[target]) if ids else (i, target))
    return pairs


def reversed_device_ids(mesh: Mesh, axes: Sequence[AxisRef]) -> tuple[int, ...]:
    """Upstream ``getMeshWithReversedAxes``: the device ids of ``mesh`` with the device
    order along each of ``axes`` reversed; () when that is the iota order."""
    total = mesh.total_size
    original = mesh.device_ids or tuple(range(total))
    new_ids = []
    for i in range(total):
        coords = mesh_coordinates(i, mesh)
        new = list(coords)
        for axis in axes:
            k = mesh.axis_index(axis.name)
            size, post = axis.size(mesh), _post_size(axis, mesh)
            sub = (coords[k] // post) % size
            new[k] += (size - 1 - 2 * sub) * post
        new_ids.append(original[linear_index(new, mesh)])
    return () if new_ids == list(range(total)) else tuple(new_ids)
