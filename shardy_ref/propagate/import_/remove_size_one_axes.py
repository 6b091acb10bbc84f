"""``sdy-remove-size-one-axes``: drop axes of size one from every sharding
(https://openxla.org/shardy/sdy_import_passes#-sdy-remove-size-one-axes). Upstream
``transforms/import/remove_size_one_axes.cc``.

The pass does nothing unless some ``sdy.mesh`` of the module has a size-one axis; then every
sharding (inline meshes included) loses its size-one axes in dimension shardings,
replicated and unreduced axes. A closed dimension left without axes also loses its
priority, which the verifier would reject. Meshes and ``manual_axes`` keep the axes.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.sharding_walker import lookup_mesh, mesh_ops, transform_shardings
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.pass_manager import Pass, register_pass


def has_size_one_axes(mesh: Mesh) -> bool:
    return any(axis.size == 1 for axis in mesh.axes)


def _remove_from_dim(dim: DimensionSharding, mesh: Mesh) -> DimensionSharding:
    axes = tuple(a for a in dim.axes if a.size(mesh) != 1)
    priority = None if not axes and dim.is_closed else dim.priority
    return DimensionSharding(axes, dim.is_closed, priority)


def remove_size_one_axes(sharding: TensorSharding, table: SymbolTable) -> TensorSharding:
    """Upstream ``removeSizeOneAxes``: the sharding without axes of size one."""
    mesh = sharding.mesh_or_ref
    if not isinstance(mesh, Mesh):
        mesh = lookup_mesh(table, mesh)
        assert mesh is not None, "unknown mesh"
    new = sharding.replace(
        dim_shardings=tuple(_remove_from_dim(d, mesh) for d in sharding.dim_shardings),
        replicated_axes=tuple(a for a in sharding.replicated_axes if a.size(mesh) != 1),
        unreduced_axes=tuple(a for a in sharding.unreduced_axes if a.size(mesh) != 1))
    return sharding if new == sharding else new


@register_pass
@dataclass(frozen=True, slots=True)
class RemoveSizeOneAxesPass(Pass):
    """Removes axes of size one from all shardings. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``RemoveSizeOneAxesPass``)."""

    NAME = "sdy-remove-size-one-axes"

    def run(self, op: Operation, ctx) -> None:
        if not any(has_size_one_axes(m.attributes["mesh"]) for m in mesh_ops(op)):
            return
        table = SymbolTable(op)
        transform_shardings(op, lambda sharding: remove_size_one_axes(sharding, table))
