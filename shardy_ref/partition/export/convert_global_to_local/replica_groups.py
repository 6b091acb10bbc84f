"""Replica groups of the StableHLO collectives that sdy collectives lower to: the V1 dense
``[groups, group size]`` device-id form (upstream ``getReplicaGroups`` and
``getOrderedAxisRefs`` in ``ir/utils.cc``) and the V3 mesh-axes form
(``getReplicaGroupsV3`` in ``export/convert_global_to_local.cc``)."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import ArrayAttr, DenseElementsAttr, SymbolRefAttr
from shardy_ref.ir.replica_groups import device_groups, groups_attr
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.stablehlo_attrs import AxisRef as ShloAxisRef
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes
from shardy_ref.ir.stablehlo_attrs import SubAxisInfo as ShloSubAxisInfo


def replica_groups_v1(axes, mesh: Mesh) -> DenseElementsAttr:
    """Upstream ``getReplicaGroups``: devices that differ only along ``axes`` form a
    group, ordered by ``axes`` (major to minor)."""
    return groups_attr(device_groups(list(axes), mesh))


def _shlo_axis(axis: AxisRef) -> ShloAxisRef:
    """Upstream ``convertAxisRefAttr``."""
    if axis.is_sub_axis:
        info = axis.sub_axis_info
        return ShloAxisRef(axis.name, ShloSubAxisInfo(info.pre_size, info.size))
    return ShloAxisRef(axis.name)


class InvalidAxes(ValueError):
    """Axes a collective names that do not cut its mesh (upstream does not verify them and
    computes garbage groups); the pass reports it at the op."""


def check_axes(axes: list, mesh: Mesh) -> None:
    sizes = {a.name: a.size for a in mesh.axes}
    for axis in axes:
        full = sizes.get(axis.name)
        if full is None:
            raise InvalidAxes(f"axis {axis.params()} is not in the mesh")
        if axis.is_sub_axis and (axis.pre_size < 1 or axis.size(mesh) <= 1
                                 or full % axis.next_pre_size(mesh)):
            raise InvalidAxes(f"sub-axis {axis.params()} does not divide axis "
                              f"\"{axis.name}\" of size {full}")


def replica_groups(axes, mesh: Mesh, mesh_or_ref, enable_rgv3: bool):
    """Upstream ``getReplicaGroupsAndSize``: the replica groups attribute (V3 when enabled
    and no axis is a sub-axis) and the number of devices in each group."""
    axes = list(axes)
    check_axes(axes, mesh)
    if enable_rgv3 and not any(a.is_sub_axis for a in axes):
        size = 1
        for axis in axes:
            size *= axis.size(mesh)
        ref = SymbolRefAttr(mesh_or_ref) if isinstance(mesh_or_ref, str) else mesh_or_ref
        return ReplicaGroupMeshAxes(ref, ArrayAttr(tuple(_shlo_axis(a) for a in axes))), size
    groups = replica_groups_v1(axes, mesh)
    return groups, groups.type.shape[-1]
