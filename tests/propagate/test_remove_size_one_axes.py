"""``sdy-remove-size-one-axes``: shardings lose their size-one axes when some ``sdy.mesh``
has one. Upstream's pass is idempotent (the meshes keep the axes; no sharding uses them)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.sharding_walker import mesh_ops, transform_shardings
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.parser import parse_module
from shardy_ref.propagate.import_.remove_size_one_axes import (
    has_size_one_axes,
    remove_size_one_axes,
)

from .pass_helpers import assert_idempotent, assert_like_oracle, examples, run_pipeline
from .strategies_meshes import sharded_modules

PASS = "sdy-remove-size-one-axes"
T = "tensor<8x8xf32>"
MESH = Mesh((MeshAxis("a", 1), MeshAxis("b", 2), MeshAxis("c", 1)))


def test_priority_dropped_only_from_closed_dims_left_empty():
    sharding = TensorSharding(MESH, (
        DimensionSharding((AxisRef("a"),), True, 1),
        DimensionSharding((AxisRef("c"),), False, 2),
        DimensionSharding((AxisRef("a"), AxisRef("b")), True, 3)), (AxisRef("c"),),
        (AxisRef("a"),))
    out = remove_size_one_axes(sharding, SymbolTable(parse_module("", "t")))
    assert out.body() == 'mesh<["a"=1, "b"=2, "c"=1]>, [{}, {?}p2, {"b"}p3]'


def test_unchanged_sharding_is_returned_as_is():
    sharding = TensorSharding(MESH, (DimensionSharding((AxisRef("b"),)),))
    assert remove_size_one_axes(sharding, SymbolTable(parse_module("", "t"))) is sharding


def func(arg_sharding: str, meshes: str) -> str:
    return meshes + f"""func.func @f(
    %arg0: {T} {{sdy.sharding = #sdy.sharding{arg_sharding}}}) -> {T} {{
  return %arg0 : {T}
}}
"""


def test_nothing_happens_without_a_size_one_mesh_axis_in_a_mesh_op():
    text = func('<mesh<["a"=1, "b"=2]>, [{"a", "b"}, {}]>', 'sdy.mesh @m = <["x"=2]>\n')
    assert '[{"a", "b"}, {}]' in run_pipeline(text, PASS)


def test_inline_meshes_cleaned_once_some_mesh_op_has_a_size_one_axis():
    text = func('<mesh<["a"=1, "b"=2]>, [{"a", "b"}, {}]>', 'sdy.mesh @m = <["x"=1]>\n')
    out = run_pipeline(text, PASS)
    assert '#sdy.sharding<mesh<["a"=1, "b"=2]>, [{"b"}, {}]>' in out
    assert 'sdy.mesh @m = <["x"=1]>' in out


def test_manual_axes_keep_size_one_axes():
    text = f"""sdy.mesh @m = <["a"=1, "b"=2]>
func.func @f(%arg0: {T}) -> {T} {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{{"a", "b"}}, {{}}]>]
      out_shardings=[<@m, [{{"a", "b"}}, {{}}]>] manual_axes={{"a", "b"}}
      (%arg1: tensor<4x8xf32>) {{
    sdy.return %arg1 : tensor<4x8xf32>
  }} : ({T}) -> {T}
  return %0 : {T}
}}
"""
    out = run_pipeline(text, PASS)
    assert 'in_shardings=[<@m, [{"b"}, {}]>] out_shardings=[<@m, [{"b"}, {}]>] ' \
           'manual_axes={"a", "b"}' in out


def shardings_with_size_one_axes(text: str) -> list[TensorSharding]:
    """The shardings of ``text`` that still use a size-one axis."""
    module = parse_module(text, "t")
    table, found = SymbolTable(module), []

    def check(sharding: TensorSharding) -> TensorSharding:
        if remove_size_one_axes(sharding, table) is not sharding:
            found.append(sharding)
        return sharding

    transform_shardings(module, check)
    return found


@settings(max_examples=50, deadline=None)
@given(sharded_modules(size_one=True))
def test_idempotent_and_verifies(text):
    out = assert_idempotent(text, PASS)
    meshes = [op.attributes["mesh"] for op in mesh_ops(parse_module(out, "t"))]
    if any(has_size_one_axes(mesh) for mesh in meshes):
        assert not shardings_with_size_one_axes(out)
    else:
        assert out == run_pipeline(text, "")


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = examples(sharded_modules(size_one=True, sum_only=True), 40)
    assert_like_oracle(texts, PASS)


def test_shardings_under_other_attribute_names_are_left_alone():
    """Upstream's walker looks at ``sdy.sharding``, not at a sharding under another
    dialect-prefixed name (here ``sdy.``, whose axis "c" the mesh does not have: a
    KeyError before, found by tests/fuzz_pipeline.py, seed 54); real Shardy keeps it."""
    text = """sdy.mesh @m = <["a"=1, "b"=2, "x"=1]>
func.func @f(%arg0: tensor<8xf32> {sdy. = #sdy.sharding<@m, [{"a", "b", "c"}]>,
                              sdy.sharding = #sdy.sharding<@m, [{"a", "b"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
"""
    out = run_pipeline(text, PASS)
    assert 'sdy. = #sdy.sharding<@m, [{"a", "b", "c"}]>' in out
    assert 'sdy.sharding = #sdy.sharding<@m, [{"b"}]>' in out
