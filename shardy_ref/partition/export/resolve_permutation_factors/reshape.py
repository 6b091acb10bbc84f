"""``stablehlo.reshape`` with indivisibly sharded dimensions (upstream
``export/resolve_permutation_factors.cc``: ``ReshapeShardingAnalysis``, ``handleReshapeOp``,
``handleReshapeHaloExchange``, ``handleReshapeOpReplicate``; ``ReshapeGroupInfo`` and
``isCommunicationFreeReshape`` of ``export/utils.cc``).

A reshape splits into groups of input and output dims with equal volumes. When padding
each side to divisible shard sizes makes the shards hold different elements, a group that
splits one input dim is fixed by halo exchange (each device fetches the part of its output
tile held by a neighbour); otherwise the axes of such groups are resharded away around
the reshape.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.axis_lists import add_axis_or_merge, axis_set_diff
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_reshard_cse import is_sharding_equivalent_across_reshapes
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.partition.export.resolve_permutation_factors import emit
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.geometry import (
    DataExchange,
    DimExchange,
    ceil_div,
    padded_dim_size,
    record_target,
)
from shardy_ref.partition.export.resolve_permutation_factors.halo import (
    Window,
    halo_data_exchange,
    manual_shard_count,
)


def _prod(values) -> int:
    n = 1
    for v in values:
        n *= v
    return n


@dataclass(frozen=True, slots=True)
class ReshapeGroup:
    """Upstream ``ReshapeGroupInfo``: input dims ``[in_start, in_last)`` and output dims
    ``[out_start, out_last)`` of equal volume, with their counts of dims of size > 1."""

    in_start: int
    in_last: int
    out_start: int
    out_last: int
    in_nontrivial: int
    out_nontrivial: int

    @property
    def is_split(self) -> bool:
        return self.in_nontrivial <= 1 < self.out_nontrivial

    @property
    def is_passthrough(self) -> bool:
        return self.in_nontrivial <= 1 and self.out_nontrivial <= 1

    @property
    def is_neither(self) -> bool:
        return self.in_nontrivial > 1 and self.out_nontrivial > 1

    def in_dims(self) -> range:
        return range(self.in_start, self.in_last)

    def out_dims(self) -> range:
        return range(self.out_start, self.out_last)

    def padded(self, padded_in, padded_out, in_type, out_type) -> bool:
        """Whether padding changed any of the group's dims."""
        return any(padded_in[d] != in_type.shape[d] for d in self.in_dims()) or \
            any(padded_out[d] != out_type.shape[d] for d in self.out_dims())

    def indivisible(self, in_sharding, out_sharding, mesh, in_type, out_type) -> bool:
        """Whether a dim of the group is sharded indivisibly."""
        return any(_indivisible(in_sharding, d, mesh, in_type) for d in self.in_dims()) or \
            any(_indivisible(out_sharding, d, mesh, out_type) for d in self.out_dims())

    def axes(self, in_sharding: TensorSharding, out_sharding: TensorSharding) -> list[AxisRef]:
        return [a for d in self.in_dims() for a in in_sharding.dim_shardings[d].axes] + \
            [a for d in self.out_dims() for a in out_sharding.dim_shardings[d].axes]


def _indivisible(sharding: TensorSharding, dim: int, mesh: Mesh, type_) -> bool:
    count = sharding.dim_shardings[dim].sharded_size(mesh)
    return count > 1 and type_.shape[dim] % count != 0


def reshape_groups(in_type: RankedTensorType, out_type: RankedTensorType) -> list[ReshapeGroup]:
    """Upstream ``buildReshapeGroupInfos``: grow each group until both volumes agree."""
    groups = []
    in_shape, out_shape = in_type.shape, out_type.shape
    i = o = 0
    while i < len(in_shape) or o < len(out_shape):
        i0, o0 = i, o
        in_prod = out_prod = 1
        if i < len(in_shape):
            in_prod, i = in_shape[i], i + 1
        if o < len(out_shape):
            out_prod, o = out_shape[o], o + 1
        while in_prod != out_prod and (i < len(in_shape) or o < len(out_shape)):
            if in_prod < out_prod and i < len(in_shape):
                in_prod *= in_shape[i]
                i += 1
            elif out_prod < in_prod and o < len(out_shape):
                out_prod *= out_shape[o]
                o += 1
            else:
                break
        groups.append(ReshapeGroup(i0, i, o0, o, sum(d != 1 for d in in_shape[i0:i]),
                                   sum(d != 1 for d in out_shape[o0:o])))
    return groups


@dataclass(slots=True)
class _Analysis:
    """Upstream ``ReshapeShardingAnalysis``."""

    groups: list[ReshapeGroup]
    communication_free: bool = False
    padded_in: list[int] = field(default_factory=list)
    padded_out: list[int] = field(default_factory=list)
    non_divisible_axes: set[str] = field(default_factory=set)
    halo_groups: list[ReshapeGroup] | None = None


def _analyse(op: Operation, in_sharding, out_sharding, mesh: Mesh, halo: bool) -> _Analysis:
    in_type, out_type = op.operands[0].type, op.results[0].type
    a = _Analysis(reshape_groups(in_type, out_type))
    if not is_sharding_equivalent_across_reshapes(in_sharding, in_type, out_sharding, out_type,
                                                  op, allow_non_divisible=True):
        return a
    if is_sharding_equivalent_across_reshapes(in_sharding, in_type, out_sharding, out_type, op) \
            or all(g.is_passthrough for g in a.groups):
        a.communication_free = True
        return a
    a.padded_in, a.padded_out = list(in_type.shape), list(out_type.shape)
    for g in a.groups:
        indivisible = False
        for dims, sharding, type_, padded in ((g.in_dims(), in_sharding, in_type, a.padded_in),
                                              (g.out_dims(), out_sharding, out_type,
                                               a.padded_out)):
            for d in dims:
                if _indivisible(sharding, d, mesh, type_):
                    indivisible = True
                    padded[d] = padded_dim_size(type_.shape[d],
                                                sharding.dim_shardings[d].sharded_size(mesh))
        if indivisible:
            a.non_divisible_axes.update(x.name for x in g.axes(in_sharding, out_sharding))
    if a.non_divisible_axes and halo:
        a.halo_groups = _halo_groups(a, in_type, out_type)
    return a


def _halo_group_ok(g: ReshapeGroup, a: _Analysis, in_type, out_type) -> bool:
    """Upstream ``getReshapeHaloInfo``'s conditions on one group with padding."""
    if g.in_nontrivial != g.in_last - g.in_start or g.out_nontrivial != g.out_last - g.out_start:
        return False
    in_size, out_size = in_type.shape[g.in_start], out_type.shape[g.out_start]
    if in_size % out_size and out_size % in_size:
        return False
    if _prod(a.padded_in[d] for d in g.in_dims()) != _prod(a.padded_out[d]
                                                           for d in g.out_dims()):
        return False
    return g.is_split


def _halo_groups(a: _Analysis, in_type, out_type) -> list[ReshapeGroup] | None:
    """Upstream ``getReshapeHaloInfo``: the padded groups, if halo exchange can do all."""
    active = []
    for g in a.groups:
        if g.is_passthrough or not g.padded(a.padded_in, a.padded_out, in_type, out_type):
            continue
        if g.is_neither or not _halo_group_ok(g, a, in_type, out_type):
            return None
        active.append(g)
    return active or None


def _group_exchange(op: Operation, out_sharding: TensorSharding, mesh: Mesh, g: ReshapeGroup,
                    dim: int, count: int, divisible_in) -> DimExchange:
    """Upstream ``getDimExchangeInfoForReshapeGroup``: for each output tile of the group,
    the input shard holding its first element and the one holding its last."""
    in_type, out_type = op.operands[0].type, op.results[0].type
    s_out = divisible_in[dim] // count
    out_dims = list(g.out_dims())
    axes = tuple(a for d in out_dims for a in out_sharding.dim_shardings[d].axes)
    info = DimExchange(s_out, s_out, target_dim_sharding=DimensionSharding(axes))
    strides, stride = [1] * len(out_dims), 1
    for k in range(len(out_dims) - 1, -1, -1):
        strides[k] = stride
        stride *= out_type.shape[out_dims[k]]
    size = in_type.shape[dim]
    tile = ceil_div(size, count)
    spans = [(s * tile, max(0, min(tile, size - s * tile))) for s in range(count)]
    for t in range(count):
        start, rest = 0, t
        for k in range(len(out_dims) - 1, -1, -1):
            shards = out_sharding.dim_shardings[out_dims[k]].sharded_size(mesh)
            start += (rest % shards) * ceil_div(out_type.shape[out_dims[k]], shards) * strides[k]
            rest //= shards
        limit = start + s_out - 1
        source, offset, last = -1, 0, -1
        for s, (first, n) in enumerate(spans):
            if n > 0 and first <= start < first + n:
                source, offset = s, start - first
            if n > 0 and first <= limit < first + n:
                last = s
        record_target(info, t, source, offset, last)
    if info.left_hops > 1 or info.right_hops > 1:
        info.can_use_halo = False
    return info


def _data_exchange(op: Operation, in_sharding, out_sharding, mesh: Mesh, a: _Analysis):
    """Upstream ``getReshapeDataExchangeInfo``."""
    info = DataExchange(list(a.padded_in), set(a.non_divisible_axes))
    groups = iter(a.halo_groups)
    group = next(groups, None)
    for dim, dim_sharding in enumerate(in_sharding.dim_shardings):
        count = dim_sharding.sharded_size(mesh)
        if count <= 1:
            continue
        if group is not None and group.in_last - 1 == dim:
            info.dim_exchanges.append(_group_exchange(op, out_sharding, mesh, group, dim, count,
                                                      a.padded_in))
            group = next(groups, None)
        else:
            local = a.padded_in[dim] // count
            info.dim_exchanges.append(DimExchange(local, local))
    return info


def _remove_axis_refs(sharding: TensorSharding, axes, mesh: Mesh) -> TensorSharding:
    """Upstream ``removeAxisRefsFromSharding``."""
    if not axes:
        return sharding
    dims = tuple(d.replace(axes=tuple(axis_set_diff(d.axes, axes, mesh)))
                 for d in sharding.dim_shardings)
    return sharding.replace(dim_shardings=dims)


def replicate_reshape(op: Operation, in_sharding, out_sharding, mesh: Mesh,
                      groups: list[ReshapeGroup], every_group: bool = False) -> None:
    """Upstream ``handleReshapeOpReplicate``: reshard away the axes of the groups that
    have indivisible dims (with ``every_group``, of every group that is not a
    pass-through), reshape, reshard back. If the shardings left still do not hold the same
    elements on each device (our check; upstream assumes they do), every axis goes."""
    in_type, out_type = op.operands[0].type, op.results[0].type
    remove = [a for g in groups if not g.is_passthrough
              and (every_group or g.indivisible(in_sharding, out_sharding, mesh, in_type,
                                                out_type))
              for a in g.axes(in_sharding, out_sharding)]
    new_in = _remove_axis_refs(in_sharding, remove, mesh)
    new_out = _remove_axis_refs(out_sharding, remove, mesh)
    if not is_sharding_equivalent_across_reshapes(new_in, in_type, new_out, out_type, op,
                                                  allow_non_divisible=True):
        new_in = _remove_axis_refs(new_in, _ordered_axes(new_in, mesh), mesh)
        new_out = _remove_axis_refs(new_out, _ordered_axes(new_out, mesh), mesh)
    operand = reshard(op.operands[0], new_in, op)
    new = Operation("stablehlo.reshape", [operand.results[0]], [out_type],
                    location=op.location)
    op.parent.insert_after(op, new)
    set_sharding(new.results[0], new_out)
    back = reshard(new.results[0], out_sharding, new.next_op)
    op.results[0].replace_all_uses_with(back.results[0])
    op.erase()


def _halo_reshape(op: Operation, in_sharding, out_sharding, mesh: Mesh, a: _Analysis,
                  state: State) -> None:
    """Upstream ``handleReshapeHaloExchange``."""
    info = _data_exchange(op, in_sharding, out_sharding, mesh, a)
    if not info.can_use_halo:
        replicate_reshape(op, in_sharding, out_sharding, mesh, a.groups)
        return
    out_type = op.results[0].type
    b = Builder(op)
    padding = emit.zero_scalar(b, out_type.element_type)
    divisible = emit.pad_high_to_shape(b, op.operands[0], a.padded_in, in_sharding)
    manual = info.manual_axes

    def post(body: Builder, value: Value, _padding: Value, _type) -> Value:
        shape = tuple(a.padded_out[d] // manual_shard_count(out_sharding, d, mesh, manual)
                      for d in range(len(out_type.shape)))
        return emit.reshape(body, value, RankedTensorType(shape, out_type.element_type),
                            emit.remove_axes(out_sharding, manual))

    rank = len(a.padded_in)
    result = halo_data_exchange(b, divisible, info, out_type, in_sharding, out_sharding, mesh,
                                padding, Window([0] * rank, [1] * rank), post, state)
    result = emit.slice_high_to_shape(b, result, out_type, out_sharding)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def _ordered_axes(sharding: TensorSharding, mesh: Mesh) -> list[AxisRef]:
    axes: list[AxisRef] = []
    for d in sharding.dim_shardings:
        for axis in d.axes:
            add_axis_or_merge(axes, axis, mesh)
    return axes


def handle_reshape(op: Operation, halo: bool, state: State) -> None:
    """Upstream ``handleReshapeOp``, after :func:`align_reshape_axes`."""
    in_sharding, out_sharding = get_sharding(op.operands[0]), get_sharding(op.results[0])
    if (in_sharding is None and out_sharding is None) or \
            not isinstance(op.operands[0].type, RankedTensorType):
        return
    if in_sharding is None or out_sharding is None:  # the other side is replicated
        mesh_ref = (in_sharding or out_sharding).mesh_or_ref
        in_sharding = in_sharding or TensorSharding.fully_closed(
            mesh_ref, len(op.operands[0].type.shape))
        out_sharding = out_sharding or TensorSharding.fully_closed(
            mesh_ref, len(op.results[0].type.shape))
    mesh = mesh_or_lookup(state.table, in_sharding.mesh_or_ref)
    if mesh is None:
        return
    if _ordered_axes(in_sharding, mesh) != _ordered_axes(out_sharding, mesh):
        op = align_reshape_axes(op, in_sharding, out_sharding, mesh)
        in_sharding, out_sharding = get_sharding(op.operands[0]), get_sharding(op.results[0])
    a = _analyse(op, in_sharding, out_sharding, mesh, halo)
    if a.communication_free:
        return
    if a.halo_groups is not None:
        _halo_reshape(op, in_sharding, out_sharding, mesh, a, state)
        return
    # with no indivisible dimension, the shards differ because the axes sit elsewhere on
    # each side (8x12 -> 12x8 sharded {y, z} -> {y, z:(1)2}, {z:(2)2}): upstream assumes
    # explicit reshards prevent it, and leaves the reshape to run on mismatched shards
    replicate_reshape(op, in_sharding, out_sharding, mesh, a.groups,
                      every_group=not a.non_divisible_axes)


def align_reshape_axes(op: Operation, in_sharding: TensorSharding,
                       out_sharding: TensorSharding, mesh: Mesh) -> Operation:
    """A reshape whose operand and result are sharded by different axes (or in another
    order) cannot reshape each shard on its own; upstream assumes explicit reshards made
    them agree. They need not: a size-1 dimension keeps the axes of the factor it was
    sliced from (only the first shard holds its element, the others padding), which a
    reshape drops. Our fix: reshard away the axes on size-1 dimensions around the
    reshape; if the two sides still differ, every axis (the reshape then runs on whole
    values). Returns the new reshape."""
    in_type, out_type = op.operands[0].type, op.results[0].type
    new_in = _without_unit_dim_axes(in_sharding, in_type)
    new_out = _without_unit_dim_axes(out_sharding, out_type)
    if _ordered_axes(new_in, mesh) != _ordered_axes(new_out, mesh):
        new_in = _remove_axis_refs(new_in, _ordered_axes(new_in, mesh), mesh)
        new_out = _remove_axis_refs(new_out, _ordered_axes(new_out, mesh), mesh)
    operand = reshard(op.operands[0], new_in, op).results[0]
    new = Operation("stablehlo.reshape", [operand], [out_type], location=op.location)
    op.parent.insert_after(op, new)
    set_sharding(new.results[0], new_out)
    back = reshard(new.results[0], out_sharding, new.next_op)
    op.results[0].replace_all_uses_with(back.results[0])
    op.erase()
    return new


def _without_unit_dim_axes(sharding: TensorSharding, type_: RankedTensorType
                           ) -> TensorSharding:
    return sharding.replace(dim_shardings=tuple(
        d.replace(axes=()) if n == 1 else d
        for d, n in zip(sharding.dim_shardings, type_.shape, strict=True)))
