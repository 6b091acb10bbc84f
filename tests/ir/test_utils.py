"""Helpers of ``shardy_ref.ir.utils`` that several passes share."""
from __future__ import annotations

from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import common_mesh_or_ref
from shardy_ref.parser import parse_module

MODULE = """sdy.mesh @a = <["x"=2]>
sdy.mesh @b = <["y"=2]>
sdy.mesh @empty = <[]>
sdy.mesh @empty2 = <[]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
"""


def _sharding(mesh_or_ref) -> TensorSharding:
    return TensorSharding(mesh_or_ref, (DimensionSharding((), True),))


def test_common_mesh_or_ref():
    """Upstream ``getCommonMeshOrRef``: the first non-empty mesh, the last if all are
    empty; None when two non-empty meshes differ."""
    table = SymbolTable(parse_module(MODULE))
    inline = Mesh((MeshAxis("x", 2),))

    def common(*refs):
        return common_mesh_or_ref([_sharding(r) for r in refs], table)

    assert common("a", "a", "a") == "a"
    assert common("empty", "a", "empty", "a") == "a"
    assert common("empty", "empty2") == "empty2"
    assert common("empty", "empty2", "empty") == "empty"
    assert common("empty", "empty") == "empty"
    assert common("a", "b") is None
    assert common("a", "a", "b") is None
    assert common("b", "empty", "a") is None
    assert common(inline, "a") == inline  # the same mesh inline and by name
    assert common() is None
