"""Device groups of mesh axes: the devices that differ only along some (sub-)axes of a
mesh, ordered by those axes (upstream ``getReplicaGroups`` and ``getOrderedAxisRefs`` in
``shardy/dialect/sdy/ir/utils.cc``). The partitioner writes collectives' replica groups
with it, and the interpreter reads ``#stablehlo.replica_group_mesh_axes`` by it."""
from __future__ import annotations

import itertools

import numpy as np

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.types import I64, RankedTensorType


def ordered_axis_refs(axes, mesh: Mesh) -> list[AxisRef]:
    """Upstream ``getOrderedAxisRefs``: the mesh's axes in mesh order, each split into the
    sub-axes that ``axes`` cut it into."""
    cuts: dict[str, set[int]] = {a.name: {1, a.size} for a in mesh.axes}
    split: set[str] = set()
    for axis in axes:
        if axis.is_sub_axis:
            cuts[axis.name] |= {axis.pre_size, axis.next_pre_size(mesh)}
            split.add(axis.name)
    out = []
    for mesh_axis in mesh.axes:
        points = sorted(cuts[mesh_axis.name])
        if mesh_axis.name not in split:
            out.append(AxisRef(mesh_axis.name))
            continue
        out.extend(AxisRef.sub(mesh_axis.name, lo, hi // lo)
                   for lo, hi in itertools.pairwise(points))
    return out


def device_groups(axes: list[AxisRef], mesh: Mesh) -> np.ndarray:
    """``[groups, group size]`` device ids: devices that differ only along ``axes`` form a
    group, ordered by ``axes`` (major to minor); groups in mesh order of the other axes."""
    ordered = ordered_axis_refs(axes, mesh)
    group_size = 1
    for axis in axes:
        group_size *= axis.size(mesh)
    total = mesh.total_size
    others = [i for i, a in enumerate(ordered) if a not in axes]
    perm = others + [ordered.index(a) for a in axes]
    ids = np.array(mesh.device_ids) if mesh.device_ids else np.arange(total)
    array = ids.reshape([a.size(mesh) for a in ordered]).transpose(perm)
    return array.reshape(total // group_size, group_size)


def groups_attr(rows) -> DenseElementsAttr:
    """Device groups as a ``replica_groups`` attribute: ``dense<[[...], ...]> :
    tensor<GxNxi64>``, shorter groups padded with ``-1`` (as StableHLO allows)."""
    rows = [[int(d) for d in row] for row in rows]
    width = max((len(row) for row in rows), default=0)
    values = [d for row in rows for d in row + [-1] * (width - len(row))]
    return DenseElementsAttr.from_values(RankedTensorType((len(rows), width), I64), values)
