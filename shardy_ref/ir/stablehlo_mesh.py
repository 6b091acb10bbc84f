"""An sdy mesh as StableHLO spells it: the ``#stablehlo.mesh`` attribute and the
``stablehlo.mesh`` dictionary that ``sdy-lift-inlined-meshes`` tags mesh symbols with."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import (
    ArrayAttr,
    Attribute,
    DenseElementsAttr,
    DictionaryAttr,
    IntegerAttr,
    StringAttr,
)
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.stablehlo_attrs import Mesh as StablehloMesh
from shardy_ref.ir.stablehlo_attrs import MeshAxis as StablehloMeshAxis
from shardy_ref.ir.types import I64, RankedTensorType


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
