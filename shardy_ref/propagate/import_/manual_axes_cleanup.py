"""``sdy-manual-axes-cleanup``: normalise the manual axes of ``sdy.manual_computation`` ops
(https://openxla.org/shardy/sdy_import_passes#-sdy-manual-axes-cleanup). Upstream
``transforms/import/manual_axes_cleanup.cc``.

Each manual computation gets its ``manual_axes`` sorted in mesh order, and every in/out
sharding of a tensor that does not use some manual axis gets it as a replicated axis
(sorted and merged), so all in/out shardings of the body are explicit about every manual
axis. Such a sharding is also rebound to the computation's common mesh (replacing an empty
mesh). A computation with manual axes but no in/out shardings must have an empty body.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.axis_lists import axis_set_diff, sort_and_merge_axes
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import ManualAxes, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType, Type, UnrankedTensorType, VectorType
from shardy_ref.ir.utils import common_mesh_or_ref, mesh_or_lookup
from shardy_ref.pass_manager import Pass, register_pass

MANUAL_COMPUTATION = "sdy.manual_computation"
SHAPED_TYPES = (RankedTensorType, UnrankedTensorType, VectorType)
_NO_IO_ERROR = ("op has manual_axes when there are no in/out shardings and the body is not "
                "empty. This isn't allowed at this stage, please contact the Shardy team or "
                "file a bug.")


def add_unused_manual_axes(shardings: Sequence[TensorSharding], types: Sequence[Type],
                           manual_axes: list[AxisRef], mesh_or_ref: str | Mesh,
                           mesh: Mesh) -> list[TensorSharding] | None:
    """Upstream ``addUnusedManualAxesToReplicatedAxes``: the shardings with the manual
    axes each one does not use added to its replicated axes, or None if none changed."""
    out, modified = [], False
    for sharding, type_ in zip(shardings, types, strict=True):
        unused = [] if not isinstance(type_, SHAPED_TYPES) else axis_set_diff(
            manual_axes, list(sharding.all_axes()), mesh)
        if not unused:
            out.append(sharding)
            continue
        replicated = sort_and_merge_axes([*sharding.replicated_axes, *unused], mesh)
        out.append(sharding.replace(mesh_or_ref=mesh_or_ref, replicated_axes=tuple(replicated)))
        modified = True
    return out if modified else None


def cleanup_manual_computation(op: Operation, table: SymbolTable) -> str | None:
    """Sort the manual axes and make in/out shardings replicate unused ones; returns an
    error message if the op cannot be handled."""
    in_shardings = op.attributes["in_shardings"].shardings
    out_shardings = op.attributes["out_shardings"].shardings
    manual_axes: ManualAxes = op.attributes["manual_axes"]
    if not in_shardings and not out_shardings:
        body = op.regions[0].blocks[0]
        if manual_axes.value and body.first_op.name != "sdy.return":
            return _NO_IO_ERROR
        return None
    mesh_or_ref = common_mesh_or_ref([*in_shardings, *out_shardings], table)
    mesh = mesh_or_lookup(table, mesh_or_ref) if mesh_or_ref is not None else None
    if mesh is None:  # an SDY_CHECK upstream (it crashes)
        return "expected inputs and outputs to have a common mesh"
    names = sorted(manual_axes.value, key=mesh.axis_index)
    if list(manual_axes.value) != names:
        op.attributes["manual_axes"] = ManualAxes(tuple(names))
    axes = [AxisRef(name) for name in names]
    for attr, types in (("in_shardings", [v.type for v in op.operands]),
                        ("out_shardings", op.result_types)):
        new = add_unused_manual_axes(op.attributes[attr].shardings, types, axes,
                                     mesh_or_ref, mesh)
        if new is not None:
            op.attributes[attr] = TensorShardingPerValue(tuple(new))
    return None


@register_pass
@dataclass(frozen=True, slots=True)
class ManualAxesCleanupPass(Pass):
    """Sorts manual axes in mesh order and adds unused manual axes to the replicated axes
    of in/out shardings. See ``shardy/dialect/sdy/transforms/import/passes.td``
    (``ManualAxesCleanupPass``)."""

    NAME = "sdy-manual-axes-cleanup"

    def run(self, op: Operation, ctx) -> None:
        table = SymbolTable(op)
        errors = []
        for nested in op.walk(post_order=True):
            if nested.name == MANUAL_COMPUTATION:
                message = cleanup_manual_computation(nested, table)
                if message is not None:
                    errors.append(PassError(nested.location, message))
        if errors:
            errors[0].others = errors[1:]
            raise errors[0]
