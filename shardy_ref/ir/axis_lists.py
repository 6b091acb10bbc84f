"""Algebra of axis-ref lists (upstream ``utils.cc``): merging consecutive sub-axes,
sorting in mesh order, and set difference at sub-axis granularity ("Axis splitting and
sub-axes" in https://openxla.org/shardy/sharding_representation)."""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from shardy_ref.ir.sdy_axes import AxisRef, Mesh, mesh_axis_key


def add_axis_or_merge(axes: list[AxisRef], axis: AxisRef, mesh: Mesh) -> None:
    """Upstream ``addAxisOrMerge``: append ``axis``, merged into the last one if they are
    consecutive sub-axes (a merge covering the whole axis gives the full axis)."""
    if axes and axes[-1].can_merge(axis):
        axes[-1] = axes[-1].merge(axis, mesh)
    else:
        axes.append(axis)


def sort_and_merge_axes(axes: Sequence[AxisRef], mesh: Mesh) -> list[AxisRef]:
    """Upstream ``sortAndMergeAxes`` (assumes no two axes overlap): sorted w.r.t. the mesh,
    with consecutive sub-axes merged."""
    merged: list[AxisRef] = []
    for axis in sorted(axes, key=mesh_axis_key(mesh)):
        add_axis_or_merge(merged, axis, mesh)
    return merged


def axis_set_diff(axes_a: Sequence[AxisRef], axes_b: Sequence[AxisRef],
                  mesh: Mesh) -> list[AxisRef]:
    """``getAxisSetDiff``: the parts of ``axes_a`` that no axis of ``axes_b`` covers."""
    if not axes_a or list(axes_a) == list(axes_b):
        return []
    set_b = sorted(axes_b)
    result: list[AxisRef] = []
    for axis in axes_a:
        rest: AxisRef | None = axis
        while rest is not None:
            other = _first_overlapping(rest, set_b)
            if other is None:
                result.append(rest)
                break
            prefix = rest.prefix_without_overlap(other)
            if prefix is not None:
                result.append(prefix)
            rest = rest.suffix_without_overlap(other, mesh)
    return result


def _first_overlapping(axis: AxisRef, ordered: list[AxisRef]) -> AxisRef | None:
    """``AxisRefAttr::getFirstOverlapping`` in ``ordered`` (sorted, non-overlapping)."""
    after = bisect_left(ordered, axis)
    if after > 0 and axis.overlaps(ordered[after - 1]):
        return ordered[after - 1]
    if after < len(ordered) and axis.overlaps(ordered[after]):
        return ordered[after]
    return None
