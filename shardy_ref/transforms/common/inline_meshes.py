"""``sdy-inline-meshes``: put the mesh of every sharding (and ``replica_groups``) that names
one inline, then erase the ``sdy.mesh`` ops. Upstream ``transforms/common/inline_meshes.cc``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/common/inline_meshes.cc);
the inverse of ``sdy-lift-inlined-meshes``."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import SymbolRefAttr
from shardy_ref.ir.constants import REPLICA_GROUPS
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_walker import lookup_mesh, mesh_ops, transform_shardings
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes
from shardy_ref.ir.stablehlo_mesh import to_stablehlo_mesh
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.pass_manager import Pass, register_pass


@register_pass
@dataclass(frozen=True, slots=True)
class InlineMeshesPass(Pass):
    """Inlines the mesh of every sharding (and ``replica_groups``) that names one, then
    erases all ``sdy.mesh`` ops, so shardings are self-contained. See
    ``shardy/dialect/sdy/transforms/common/passes.td`` (``InlineMeshesPass``)."""

    NAME = "sdy-inline-meshes"

    def run(self, op: Operation, ctx) -> None:
        table = SymbolTable(op)

        def inline(sharding: TensorSharding) -> TensorSharding:
            name = sharding.mesh_name
            if name is None:
                return sharding
            mesh = lookup_mesh(table, name)
            assert mesh is not None, "unknown mesh"
            return sharding.replace(mesh_or_ref=mesh)

        transform_shardings(op, inline)
        for nested in op.walk():
            attr = nested.attributes.get(REPLICA_GROUPS)
            if isinstance(attr, ReplicaGroupMeshAxes) and isinstance(attr.mesh, SymbolRefAttr):
                mesh = lookup_mesh(table, attr.mesh.root)
                if mesh is not None:
                    nested.attributes[REPLICA_GROUPS] = dataclasses.replace(
                        attr, mesh=to_stablehlo_mesh(mesh))
        for mesh_op in mesh_ops(op):
            mesh_op.erase()
