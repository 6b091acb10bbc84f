"""``sdy-lift-inlined-meshes`` and ``sdy-inline-meshes``: move meshes between ``sdy.mesh``
symbols and the shardings (and ``replica_groups``) that use them
(https://openxla.org/shardy/sdy_import_passes#-sdy-lift-inlined-meshes). Upstream
``transforms/import/lift_inlined_meshes.cc`` and ``transforms/common/inline_meshes.cc``.

Both rewrite every sharding in the module with
:func:`shardy_ref.ir.sharding_walker.transform_shardings`, whose walk order (upstream's)
decides the names of lifted meshes.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import (
    ArrayAttr,
    Attribute,
    DenseElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
)
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_walker import (
    MESH_OP,
    lookup_mesh,
    mesh_ops,
    transform_shardings,
)
from shardy_ref.ir.stablehlo_attrs import Mesh as StablehloMesh
from shardy_ref.ir.stablehlo_attrs import MeshAxis as StablehloMeshAxis
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes
from shardy_ref.ir.symbols import SymbolTable, symbol_name
from shardy_ref.ir.types import I64, RankedTensorType
from shardy_ref.pass_manager import Pass, register_pass

EMPTY_MESH_SYMBOL = "empty_mesh"  # upstream ``kEmptyMeshSymbol``
STABLEHLO_MESH_ATTR = "stablehlo.mesh"
REPLICA_GROUPS = "replica_groups"
# ops whose ``replica_groups`` may name a mesh, in the order upstream lifts them
REPLICA_GROUP_OPS = ("stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
                     "stablehlo.all_to_all", "stablehlo.collective_broadcast")


# -- meshes and symbols ------------------------------------------------------------------

def to_stablehlo_mesh(mesh: Mesh) -> StablehloMesh:
    """Upstream ``convertMeshAttr`` (``export/utils.cc``)."""
    ids = None
    if mesh.device_ids:
        ids = DenseElementsAttr.from_values(
            RankedTensorType((len(mesh.device_ids),), I64), mesh.device_ids)
    return StablehloMesh(tuple(StablehloMeshAxis(a.name, a.size) for a in mesh.axes), ids)


def stablehlo_mesh_dict(mesh: Mesh) -> DictionaryAttr:
    """Upstream ``getStablehloMeshAttrAsDict``: ``{axes = [{name = "a", size = 4 : i64}],
    device_ids = dense<...> : tensor<Nxi64>}`` (device ids only when explicit)."""
    axes = ArrayAttr(tuple(DictionaryAttr.of({"name": StringAttr(a.name),
                                              "size": IntegerAttr(a.size, I64)})
                           for a in mesh.axes))
    fields: dict[str, Attribute] = {"axes": axes}
    if mesh.device_ids:
        fields["device_ids"] = DenseElementsAttr.from_values(
            RankedTensorType((len(mesh.device_ids),), I64), mesh.device_ids)
    return DictionaryAttr.of(fields)


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


# -- sdy-inline-meshes ---------------------------------------------------------------------

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
