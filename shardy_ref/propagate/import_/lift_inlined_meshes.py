"""``sdy-lift-inlined-meshes``: move inlined meshes of shardings (and ``replica_groups``)
into ``sdy.mesh`` symbols
(https://openxla.org/shardy/sdy_import_passes#-sdy-lift-inlined-meshes). Upstream
``transforms/import/lift_inlined_meshes.cc``; its inverse is
:mod:`shardy_ref.transforms.common.inline_meshes`.

It rewrites every sharding in the module with
:func:`shardy_ref.ir.sharding_walker.transform_shardings`, whose walk order (upstream's)
decides the names of lifted meshes.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import (
    StringAttr,
    SymbolRefAttr,
)
from shardy_ref.ir.constants import REPLICA_GROUPS
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_walker import (
    MESH_OP,
    mesh_ops,
    transform_shardings,
)
from shardy_ref.ir.stablehlo_attrs import Mesh as StablehloMesh
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes
from shardy_ref.ir.stablehlo_mesh import stablehlo_mesh_dict
from shardy_ref.ir.symbols import SymbolTable, symbol_name
from shardy_ref.pass_manager import Pass, register_pass

EMPTY_MESH_SYMBOL = "empty_mesh"  # upstream ``kEmptyMeshSymbol``
STABLEHLO_MESH_ATTR = "stablehlo.mesh"
# ops whose ``replica_groups`` may name a mesh, in the order upstream lifts them
REPLICA_GROUP_OPS = ("stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
                     "stablehlo.all_to_all", "stablehlo.collective_broadcast")


# -- meshes and symbols ------------------------------------------------------------------


def _new_mesh_name(mesh: Mesh) -> str:
    """Upstream ``createNewMeshOp``'s names: ``maximal_mesh_<id>``, ``empty_mesh``, ``mesh``."""
    if mesh.maximal_device_id is not None:
        return f"maximal_mesh_{mesh.maximal_device_id}"
    return EMPTY_MESH_SYMBOL if mesh.is_empty else "mesh"


class _MeshInserter:
    """Creates ``sdy.mesh`` ops at one insertion point (after the last kept mesh, or at the
    start of the module), in creation order, uniquing names as MLIR's
    ``SymbolTable::insert`` does: ``name_<n>`` with one counter for the whole table."""

    def __init__(self, module: Operation, taken: set[str], anchor: Operation | None):
        self.block = module.regions[0].blocks[0]
        self.taken = taken
        self.anchor = anchor  # insert before this op; None: at the end
        self.counter = 0

    def insert(self, name: str, mesh: Mesh, location) -> str:
        if name in self.taken:
            base = name
            while True:
                name = f"{base}_{self.counter}"
                self.counter += 1
                if name not in self.taken:
                    break
        self.taken.add(name)
        op = Operation(MESH_OP, attributes={"sym_name": StringAttr(name), "mesh": mesh},
                       location=location)
        if self.anchor is None:
            self.block.append(op)
        else:
            self.block.insert_before(self.anchor, op)
        return name


# -- sdy-lift-inlined-meshes ---------------------------------------------------------------

def _dedupe_mesh_ops(module: Operation, table: SymbolTable,
                     new_names: dict) -> Operation | None:
    """Erase each ``sdy.mesh`` equal to an earlier one, mapping its name to the kept one;
    map every kept mesh to its name. Returns the last kept mesh op."""
    last = None
    for op in mesh_ops(module):
        mesh, name = op.attributes["mesh"], symbol_name(op)
        if mesh in new_names:
            new_names[name] = new_names[mesh]
            table.symbols.pop(name, None)
            op.erase()
        else:
            new_names[mesh] = name
            last = op
    return last


def _lift_replica_groups(module: Operation, new_names: dict, inserter: _MeshInserter) -> None:
    """Replace an inline (StableHLO) mesh or a deduplicated mesh name in ``replica_groups``
    by a mesh symbol. As upstream, a StableHLO mesh never matches an sdy mesh (so it gets
    a new ``@mesh`` even when an equal one exists) and its device ids are dropped."""
    for op_name in REPLICA_GROUP_OPS:
        for op in module.walk():
            attr = op.attributes.get(REPLICA_GROUPS) if op.name == op_name else None
            if not isinstance(attr, ReplicaGroupMeshAxes):
                continue
            key = attr.mesh.root if isinstance(attr.mesh, SymbolRefAttr) else attr.mesh
            name = new_names.get(key)
            if name is None and isinstance(attr.mesh, StablehloMesh):
                mesh = Mesh(tuple(MeshAxis(a.name, a.size) for a in attr.mesh.axes))
                name = new_names[key] = inserter.insert("mesh", mesh, op.location)
            if name is not None:
                op.attributes[REPLICA_GROUPS] = dataclasses.replace(
                    attr, mesh=SymbolRefAttr(name))


@register_pass
@dataclass(frozen=True, slots=True)
class LiftInlinedMeshesPass(Pass):
    """Lifts inlined meshes in shardings into ``sdy.mesh`` symbols, deduplicating equal
    meshes, and tags every mesh with a discardable ``stablehlo.mesh`` dictionary. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``LiftInlinedMeshesPass``)."""

    NAME = "sdy-lift-inlined-meshes"

    def run(self, op: Operation, ctx) -> None:
        table = SymbolTable(op)
        # mesh (inline or kept) or erased mesh name -> name of the mesh symbol to use
        new_names: dict[Mesh | StablehloMesh | str, str] = {}
        last = _dedupe_mesh_ops(op, table, new_names)
        anchor = last.next_op if last is not None else op.regions[0].blocks[0].first_op
        inserter = _MeshInserter(op, set(table.symbols), anchor)

        def lift(sharding: TensorSharding) -> TensorSharding:
            key = sharding.mesh_or_ref
            name = new_names.get(key)
            if name is None and isinstance(key, Mesh):
                name = new_names[key] = inserter.insert(_new_mesh_name(key), key, op.location)
            return sharding if name is None else sharding.replace(mesh_or_ref=name)

        transform_shardings(op, lift)
        _lift_replica_groups(op, new_names, inserter)
        for mesh_op in mesh_ops(op):
            if STABLEHLO_MESH_ATTR not in mesh_op.attributes:
                mesh_op.attributes[STABLEHLO_MESH_ATTR] = stablehlo_mesh_dict(
                    mesh_op.attributes["mesh"])
