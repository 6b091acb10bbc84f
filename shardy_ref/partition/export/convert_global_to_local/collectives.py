"""Localizers of the sdy collectives and ``sdy.constant`` for ``sdy-convert-global-to-local``:
each becomes StableHLO collectives (or a dynamic slice) on local tensors, after upstream's
``AllGatherOpPattern``, ``AllReduceOpPattern``, ``AllSliceOpPattern``, ``AllToAllOpPattern``,
``CollectivePermuteOpPattern``, ``ConstantOpPattern`` and ``ReduceScatterOpPattern`` in
``export/convert_global_to_local.cc``."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import (
    UNIT,
    DenseArrayAttr,
    DenseElementsAttr,
    IntegerAttr,
)
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.replica_groups import ordered_axis_refs
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.stablehlo_attrs import ChannelHandle
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.partition.export.convert_global_to_local.replica_groups import replica_groups
from shardy_ref.partition.export.convert_global_to_local.state import (
    CHANNEL_HANDLE_TYPE,
    ConversionState,
    i64_constant,
    localizer,
    shard_index,
)
from shardy_ref.partition.export.lowering import I64, Builder, zero_scalar

REDUCERS = {ReductionOp.SUM: "stablehlo.add", ReductionOp.MAX: "stablehlo.maximum",
            ReductionOp.MIN: "stablehlo.minimum"}


# -- small builders ---------------------------------------------------------------------

def _tensor(shape, like: Value) -> RankedTensorType:
    return RankedTensorType(tuple(shape), like.type.element_type)


def reshape(b: Builder, value: Value, shape) -> Value:
    return b.op("stablehlo.reshape", [value], [_tensor(shape, value)]).results[0]


def transpose(b: Builder, value: Value, perm) -> Value:
    shape = [value.type.shape[p] for p in perm]
    return b.op("stablehlo.transpose", [value], [_tensor(shape, value)],
                {"permutation": DenseArrayAttr(I64, tuple(perm))}).results[0]


def _i64(value: int) -> IntegerAttr:
    return IntegerAttr(value, I64)


def _channel(state: ConversionState) -> ChannelHandle:
    return ChannelHandle(state.next_channel_id(), CHANNEL_HANDLE_TYPE)


def _reduction_op(op: Operation) -> ReductionOp:
    attr = op.attributes.get("reduction_op")
    return ReductionOp(attr.value) if attr is not None else ReductionOp.SUM


def add_reduce_body(op: Operation, element_type, reduction: ReductionOp) -> None:
    """Upstream ``buildReduceComputation``: ``op``'s region reduces two scalars."""
    scalar = RankedTensorType((), element_type)
    block = Block([scalar, scalar])
    combine = Operation(REDUCERS[reduction], list(block.args), [scalar], location=op.location)
    block.append(combine)
    block.append(Operation("stablehlo.return", [combine.results[0]], location=op.location))
    region = Region()
    region.add_block(block)
    op.add_region(region)


def _mesh(state: ConversionState, op: Operation, sharding) -> Mesh:
    mesh = state.mesh(sharding)
    if mesh is None:
        raise PassError(op.location, f"'{op.name}' op failed to resolve mesh")
    return mesh


def _total_size(axes, mesh: Mesh) -> int:
    n = 1
    for axis in axes:
        n *= axis.size(mesh)
    return n


def dynamic_slice_for_axes(state: ConversionState, b: Builder, value: Value, mesh: Mesh,
                           axes_per_dim, local_type: RankedTensorType) -> Value:
    """Upstream ``emitDynamicSliceForAxes``: this device's piece of ``value``, sliced in
    each dimension by that dimension's axes."""
    starts = []
    for axes, size in zip(axes_per_dim, local_type.shape):
        axes = list(axes)
        starts.append(state.dimension_offset(b, mesh, axes, size) if axes
                      else i64_constant(b, 0))
    return b.op("stablehlo.dynamic_slice", [value, *starts], [local_type],
                {"slice_sizes": DenseArrayAttr(I64, tuple(local_type.shape))}).results[0]


# -- all_gather -------------------------------------------------------------------------

def _all_gather(state: ConversionState, b: Builder, value: Value, dim: int, axes, mesh,
                mesh_or_ref, shape) -> Value:
    groups, _ = replica_groups(axes, mesh, mesh_or_ref, state.options.enable_rgv3)
    return b.op("stablehlo.all_gather", [value], [_tensor(shape, value)], {
        "all_gather_dim": _i64(dim), "channel_handle": _channel(state),
        "replica_groups": groups, "use_global_device_ids": UNIT}).results[0]


@localizer("sdy.all_gather")
def localize_all_gather(state: ConversionState, op: Operation) -> None:
    """Per dimension (last first), or all dimensions at once through a leading dimension."""
    sharding = op.attributes["out_sharding"]
    mesh = _mesh(state, op, sharding)
    per_dim = [list(axes) for axes in op.attributes["gathering_axes"]]
    dims = [d for d, axes in enumerate(per_dim) if axes]
    if not dims:
        raise PassError(op.location, "No-op AllGatherOp should have been removed by "
                        "canonicalization.")
    b = state.builder(op)
    value = op.operands[0]
    if state.options.per_dim_all_gather or len(dims) == 1:
        for dim in reversed(dims):
            _, size = replica_groups(per_dim[dim], mesh, sharding.mesh_or_ref, False)
            shape = list(value.type.shape)
            shape[dim] = None if shape[dim] is None else shape[dim] * size
            value = _all_gather(state, b, value, dim, per_dim[dim], mesh,
                                sharding.mesh_or_ref, shape)
        state.replace(op, [value])
        return
    local = list(value.type.shape)
    factors = [_total_size(per_dim[d], mesh) for d in dims]
    all_axes = [a for d in dims for a in per_dim[d]]
    value = reshape(b, value, [1, *local])
    value = _all_gather(state, b, value, 0, all_axes, mesh, sharding.mesh_or_ref,
                        [_total_size(all_axes, mesh), *local])
    value = reshape(b, value, [*factors, *local])
    perm, k = [], 0
    for i in range(len(local)):
        if i in dims:
            perm.append(k)
            k += 1
        perm.append(i + len(dims))
    value = transpose(b, value, perm)
    final = list(local)
    for d, f in zip(dims, factors):
        final[d] *= f
    state.replace(op, [reshape(b, value, final)])


# -- all_reduce, all_slice --------------------------------------------------------------

@localizer("sdy.all_reduce")
def localize_all_reduce(state: ConversionState, op: Operation) -> None:
    sharding = op.attributes["out_sharding"]
    mesh = _mesh(state, op, sharding)
    groups, _ = replica_groups(list(op.attributes["reduction_axes"]), mesh,
                               sharding.mesh_or_ref, state.options.enable_rgv3)
    b = state.builder(op)
    local = state.local_value_type(op.results[0])
    new = b.op("stablehlo.all_reduce", list(op.operands), [local], {
        "channel_handle": _channel(state), "replica_groups": groups,
        "use_global_device_ids": UNIT})
    add_reduce_body(new, local.element_type, _reduction_op(op))
    state.replace(op, new.results)


@localizer("sdy.all_slice")
def localize_all_slice(state: ConversionState, op: Operation) -> None:
    mesh = _mesh(state, op, op.attributes["out_sharding"])
    b = state.builder(op)
    local = state.local_value_type(op.results[0])
    state.replace(op, [dynamic_slice_for_axes(state, b, op.operands[0], mesh,
                                              op.attributes["slicing_axes"], local)])


@localizer("sdy.replicated_to_unreduced")
def localize_replicated_to_unreduced(state: ConversionState, op: Operation) -> None:
    """Our addition (upstream does not lower it): a sum over the new unreduced axes must
    count the value once, so only the first device along them keeps it and the others hold
    zeros; for max/min every copy may stay."""
    from shardy_ref.partition.export.convert_global_to_local.gather_scatter import keep_on_leaders

    sharding = op.attributes["out_sharding"]
    value = op.operands[0]
    if sharding.reduction_op != ReductionOp.SUM:
        state.replace(op, [value])
        return
    mesh = _mesh(state, op, sharding)
    kept = keep_on_leaders(state, state.builder(op), [value], mesh, list(op.attributes["axes"]),
                           zero_scalar(value.type.element_type))
    state.replace(op, kept)


@localizer("sdy.sharded_to_unreduced")
def localize_sharded_to_unreduced(state: ConversionState, op: Operation) -> None:
    """Our addition (upstream does not lower it): each device's shard, put at its place in
    the larger local value the result has where the axes no longer shard it, and zeros
    around it, so that the sum over the new unreduced axes is the whole value."""
    sharding = op.attributes["out_sharding"]
    if sharding.reduction_op != ReductionOp.SUM:
        raise PassError(op.location, f"'{op.name}' op with the reduction "
                        f"{sharding.reduction_op.name.lower()} is not supported (only sum)")
    mesh = _mesh(state, op, sharding)
    value = op.operands[0]
    b = state.builder(op)
    local = state.local_value_type(op.results[0])
    zero = b.op("stablehlo.constant", types=[local], attributes={
        "value": DenseElementsAttr.from_values(local, [zero_scalar(local.element_type)])})
    starts = []
    for d, axes in enumerate(op.attributes["axes"]):
        if len(axes):
            starts.append(state.dimension_offset(b, mesh, list(axes), value.type.shape[d]))
        else:
            starts.append(i64_constant(b, 0))
    state.replace(op, b.op("stablehlo.dynamic_update_slice", [zero.results[0], value, *starts],
                           [local]).results)


# -- all_to_all -------------------------------------------------------------------------

def _all_to_all_one(state: ConversionState, op: Operation, b: Builder, mesh, mesh_or_ref,
                    value: Value) -> Value:
    param = op.attributes["params"].value[0]
    if not param.axes:
        raise PassError(op.location, f"'{op.name}' op failed to resolve axes")
    groups, n = replica_groups(list(param.axes), mesh, mesh_or_ref,
                               state.options.enable_rgv3)
    shape = list(value.type.shape)
    src, tgt = param.src_dim, param.tgt_dim
    if shape[src] is None or shape[tgt] is None:
        raise PassError(op.location, f"'{op.name}' op dynamic shape not supported")
    if shape[tgt] % n:
        raise PassError(op.location, f"'{op.name}' op dimension not divisible by num "
                        "devices per group")
    shape[src] *= n
    shape[tgt] //= n
    return b.op("stablehlo.all_to_all", [value], [_tensor(shape, value)], {
        "split_dimension": _i64(tgt), "concat_dimension": _i64(src),
        "split_count": _i64(n), "replica_groups": groups,
        "channel_handle": _channel(state)}).results[0]


def _all_to_all_many(state: ConversionState, op: Operation, b: Builder, mesh, mesh_or_ref,
                     value: Value) -> Value:
    params = list(op.attributes["params"].value)
    params.sort(key=lambda p: p.tgt_dim)  # stable, as upstream's sort of distinct dims
    shape = list(value.type.shape)
    rank, n_params = len(shape), len(params)
    sizes = {p.tgt_dim: _total_size(p.axes, mesh) for p in params}
    all_axes = [a for p in params for a in p.axes]
    shape0, perm0 = [], []
    for i in range(rank):
        if i not in sizes:
            shape0.append(shape[i])
            continue
        perm0.append(len(shape0))
        shape0.append(sizes[i])
        if shape[i] is None or shape[i] % sizes[i]:
            raise PassError(op.location, f"'{op.name}' op dynamic shape or dimension not "
                            "divisible by num devices per param")
        shape0.append(shape[i] // sizes[i])
    perm0 += [i for i in range(len(shape0)) if i not in perm0]
    moved = transpose(b, reshape(b, value, shape0), perm0)
    groups, n = replica_groups(all_axes, mesh, mesh_or_ref, state.options.enable_rgv3)
    flat = reshape(b, moved, [n, *moved.type.shape[n_params:]])
    exchanged = b.op("stablehlo.all_to_all", [flat], [flat.type], {
        "split_dimension": _i64(0), "concat_dimension": _i64(0), "split_count": _i64(n),
        "replica_groups": groups, "channel_handle": _channel(state)}).results[0]
    split = reshape(b, exchanged, moved.type.shape)
    perm1 = [i + n_params for i in range(rank)]
    for i, p in enumerate(params):
        perm1.insert(perm1.index(p.src_dim + n_params), i)
    back = transpose(b, split, perm1)
    final, i = [], 0
    while i < len(perm1):
        if perm1[i] < n_params:
            final.append(back.type.shape[i] * back.type.shape[i + 1])
            i += 2
        else:
            final.append(back.type.shape[i])
            i += 1
    return reshape(b, back, final)


@localizer("sdy.all_to_all")
def localize_all_to_all(state: ConversionState, op: Operation) -> None:
    sharding = op.attributes["out_sharding"]
    mesh = _mesh(state, op, sharding)
    b = state.builder(op)
    fn = _all_to_all_one if len(op.attributes["params"].value) == 1 else _all_to_all_many
    state.replace(op, [fn(state, op, b, mesh, sharding.mesh_or_ref, op.operands[0])])


# -- collective_permute -----------------------------------------------------------------

def _sharding_axes(sharding, atoms) -> list:
    """Upstream's ``getShardingAxes``: the atomic axes by dimension, then the others."""
    axes = []
    for dim in sharding.dim_shardings:
        for axis in dim.axes:
            axes.extend(a for a in atoms if a.name == axis.name and axis.contains(a)
                        and a not in axes)
    return axes + [a for a in atoms if a not in axes]


@localizer("sdy.collective_permute")
def localize_collective_permute(state: ConversionState, op: Operation) -> None:
    """Send each device's shard to the device that holds it under the out sharding."""
    out_sharding = op.attributes["out_sharding"]
    in_sharding = state.sharding(op.operands[0])
    if in_sharding is None or in_sharding == out_sharding:
        raise PassError(op.location, "Shardy canonicalizer should have removed no-op "
                        "collective-permute.")
    out_mesh, in_mesh = _mesh(state, op, out_sharding), _mesh(state, op, in_sharding)
    if in_mesh.total_size != out_mesh.total_size:
        raise PassError(op.location, "collective-permute between meshes of different "
                        "sizes is not supported.")
    atoms = ordered_axis_refs([*in_sharding.all_axes(), *out_sharding.all_axes()], out_mesh)
    n = out_mesh.total_size
    out_axes, in_axes = _sharding_axes(out_sharding, atoms), _sharding_axes(in_sharding, atoms)
    target = {shard_index(j, out_mesh, out_axes): j for j in range(n)}
    pairs = []
    for i in range(n):
        pairs += [i, target.get(shard_index(i, in_mesh, in_axes), 0)]
    b = state.builder(op)
    value = op.operands[0]
    new = b.op("stablehlo.collective_permute", [value], [value.type], {
        "source_target_pairs": DenseElementsAttr.from_values(
            RankedTensorType((n, 2), I64), pairs),
        "channel_handle": ChannelHandle(state.next_channel_id(), 1)})
    state.replace(op, new.results)


# -- constant ---------------------------------------------------------------------------

@localizer("sdy.constant")
def localize_constant(state: ConversionState, op: Operation) -> None:
    """A ``stablehlo.constant``: the local splat, or the global constant sliced."""
    global_type = state.global_type(op.results[0])
    local = state.local_value_type(op.results[0])
    attr = op.attributes["value"]
    b = state.builder(op)
    if local == global_type or attr.is_splat:
        value = attr if local == global_type else DenseElementsAttr(local, attr.values, True)
        new = b.op("stablehlo.constant", types=[local], attributes={"value": value})
        state.replace(op, new.results)
        return
    sharding = state.sharding(op.results[0])
    mesh = _mesh(state, op, sharding)
    whole = b.op("stablehlo.constant", types=[global_type], attributes={"value": attr})
    axes = [d.axes for d in sharding.dim_shardings]
    state.replace(op, [dynamic_slice_for_axes(state, b, whole.results[0], mesh, axes, local)])


# -- reduce_scatter ---------------------------------------------------------------------

def _reduce_scatter(state: ConversionState, b: Builder, op: Operation, value: Value, dim: int,
                    axes, mesh, mesh_or_ref, result_type) -> Value:
    groups, _ = replica_groups(axes, mesh, mesh_or_ref, state.options.enable_rgv3)
    new = b.op("stablehlo.reduce_scatter", [value], [result_type], {
        "scatter_dimension": _i64(dim), "channel_handle": _channel(state),
        "replica_groups": groups, "use_global_device_ids": UNIT})
    add_reduce_body(new, value.type.element_type, _reduction_op(op))
    return new.results[0]


def _reduce_scatter_combined(state: ConversionState, b: Builder, op: Operation, value: Value,
                             per_dim, all_axes, mesh, mesh_or_ref, local) -> Value:
    """One reduce-scatter on a leading dimension that combines every scattered one."""
    shape = list(value.type.shape)
    split, factor_dims, factors = [], [], []
    for i, size in enumerate(shape):
        if not per_dim[i]:
            split.append(size)
            continue
        factor = _total_size(per_dim[i], mesh)
        factors.append(factor)
        factor_dims.append(len(split))
        if size is None or size % factor:
            raise PassError(op.location, f"'{op.name}' op dimension not divisible by "
                            "scattering factor")
        split += [factor, size // factor]
    perm = factor_dims + [i for i in range(len(split)) if i not in factor_dims]
    moved = transpose(b, reshape(b, value, split), perm)
    total = _total_size(all_axes, mesh)
    combined = reshape(b, moved, [total, *local.shape])
    scattered = _reduce_scatter(state, b, op, combined, 0, all_axes, mesh, mesh_or_ref,
                                _tensor([1, *local.shape], combined))
    return reshape(b, scattered, local.shape)


def _reduce_scatter_by_slice(state: ConversionState, b: Builder, op: Operation, value: Value,
                             per_dim, all_axes, mesh, mesh_or_ref, local) -> Value:
    """An all-reduce over every axis, then this device's piece sliced out."""
    groups, _ = replica_groups(all_axes, mesh, mesh_or_ref, state.options.enable_rgv3)
    reduced = b.op("stablehlo.all_reduce", [value], [value.type], {
        "channel_handle": _channel(state), "replica_groups": groups,
        "use_global_device_ids": UNIT})
    add_reduce_body(reduced, value.type.element_type, _reduction_op(op))
    return dynamic_slice_for_axes(state, b, reduced.results[0], mesh, per_dim, local)


@localizer("sdy.reduce_scatter")
def localize_reduce_scatter(state: ConversionState, op: Operation) -> None:
    sharding = state.sharding(op.operands[0]) or op.attributes["out_sharding"]
    mesh = _mesh(state, op, sharding)
    per_dim = [list(axes) for axes in op.attributes["reduce_scatter_axes"]]
    dims = [d for d, axes in enumerate(per_dim) if axes]
    if not dims:
        raise PassError(op.location, "Shardy should have canonicalized no-op reduce-scatter.")
    all_axes = [a for d in dims for a in per_dim[d]]
    b = state.builder(op)
    value = op.operands[0]
    local = state.local_value_type(op.results[0])
    if len(dims) == 1:
        new = _reduce_scatter(state, b, op, value, dims[0], per_dim[dims[0]], mesh,
                              sharding.mesh_or_ref, local)
    elif state.options.combine_multi_dimension_reduce_scatter:
        new = _reduce_scatter_combined(state, b, op, value, per_dim, all_axes, mesh,
                                       sharding.mesh_or_ref, local)
    else:
        new = _reduce_scatter_by_slice(state, b, op, value, per_dim, all_axes, mesh,
                                       sharding.mesh_or_ref, local)
    state.replace(op, [new])
