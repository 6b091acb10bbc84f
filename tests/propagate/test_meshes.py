"""``sdy-lift-inlined-meshes`` and ``sdy-inline-meshes``, and the generic sharding replacer
they share. Both passes are idempotent on modules without StableHLO meshes in
``replica_groups`` (lifting those can add a mesh equal to an existing one, which the next
run deduplicates)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr, StringAttr
from shardy_ref.ir.sharding_walker import replace_nested
from shardy_ref.parser.reader import parse_attribute

from .pass_helpers import assert_idempotent, assert_like_oracle, examples, run_pipeline
from .strategies_meshes import sharded_modules

LIFT, INLINE = "sdy-lift-inlined-meshes", "sdy-inline-meshes"
T = "tensor<8x8xf32>"


def mesh_lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("sdy.mesh")]


def test_replace_nested_reaches_into_arrays_dicts_and_attributes():
    sharding = parse_attribute('#sdy.sharding<mesh<["x"=2]>, [{"x"}]>')
    per_value = parse_attribute('#sdy.sharding_per_value<[<mesh<["x"=2]>, [{}]>]>')
    attr = ArrayAttr((DictionaryAttr.of({"a": sharding, "b": StringAttr("s")}), per_value))
    out = replace_nested(attr, type(sharding), lambda s: s.replace(mesh_or_ref="m"))
    assert str(out) == ('[{a = #sdy.sharding<@m, [{"x"}]>, b = "s"}, '
                        '#sdy.sharding_per_value<[<@m, [{}]>]>]')
    untouched = DictionaryAttr.of({"b": StringAttr("s")})
    assert replace_nested(untouched, type(sharding), lambda s: s) is untouched


def test_lift_names_are_uniqued_against_all_symbols_with_one_counter():
    text = f"""func.func @mesh(
    %arg0: {T} {{sdy.sharding = #sdy.sharding<mesh<["x"=2]>, [{{}}, {{}}]>}})
    -> ({T} {{sdy.sharding = #sdy.sharding<mesh<["y"=2]>, [{{}}, {{}}]>}}) {{
  return %arg0 : {T}
}}
func.func @mesh_1(
    %arg0: {T} {{sdy.sharding = #sdy.sharding<mesh<["z"=2]>, [{{}}, {{}}]>}}) -> {T} {{
  return %arg0 : {T}
}}
"""
    out = run_pipeline(text, LIFT)
    # @mesh is a function: mesh_0 (counter 1), mesh_1 is taken (counter 2), mesh_2
    assert [line.split(" = ")[0] for line in mesh_lines(out)] == [
        "sdy.mesh @mesh_0", "sdy.mesh @mesh_2", "sdy.mesh @mesh_3"]
    assert out.index("sdy.mesh @mesh_0") < out.index("func.func @mesh(")


def test_lift_dedupes_meshes_and_inserts_after_the_last_kept_one():
    text = f"""sdy.mesh @a = <["x"=2]>
func.func @f(%arg0: {T} {{sdy.sharding = #sdy.sharding<@b, [{{"x"}}, {{}}]>}}) -> {T} {{
  %0 = sdy.sharding_constraint %arg0 <mesh<["x"=2]>, [{{}}, {{"x"}}]> : {T}
  %1 = sdy.sharding_constraint %0 <mesh<[], device_ids=[3]>, []> : {T}
  return %1 : {T}
}}
sdy.mesh @b = <["x"=2]>
sdy.mesh @c = <[]>
"""
    out = run_pipeline(text, LIFT)
    assert [line.split(" {")[0] for line in mesh_lines(out)] == [
        'sdy.mesh @a = <["x"=2]>', "sdy.mesh @c = <[]>",
        "sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>"]
    assert "#sdy.sharding<@a, [{\"x\"}, {}]>" in out
    assert "sharding_constraint %arg0 <@a, [{}, {\"x\"}]>" in out
    assert out.rstrip().endswith("sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]> "
                                 "{stablehlo.mesh = {axes = [], device_ids = dense<3> : "
                                 "tensor<1xi64>}}\n}")


def test_lift_tags_meshes_with_stablehlo_mesh_dict_once():
    text = ('sdy.mesh @m = <["x"=2, "y"=1], device_ids=[1, 0]>\n'
            'sdy.mesh @n = <["z"=4]> {stablehlo.mesh = "keep"}\n')
    out = run_pipeline(text, LIFT)
    assert mesh_lines(out) == [
        'sdy.mesh @m = <["x"=2, "y"=1], device_ids=[1, 0]> {stablehlo.mesh = {axes = '
        '[{name = "x", size = 2 : i64}, {name = "y", size = 1 : i64}], '
        'device_ids = dense<[1, 0]> : tensor<2xi64>}}',
        'sdy.mesh @n = <["z"=4]> {stablehlo.mesh = "keep"}']


def test_lift_reaches_manual_and_named_computations():
    text = f"""func.func @f(%arg0: {T}) -> {T} {{
  %0 = sdy.named_computation<"g">(%arg0) in_shardings=[<mesh<["a"=2]>, [{{"a"}}, {{}}]>]
      out_shardings=[<mesh<["b"=2]>, [{{}}, {{"b"}}]>] (%arg1: {T}) {{
    %1 = sdy.manual_computation(%arg1) in_shardings=[<mesh<["c"=2]>, [{{}}, {{}}]>]
        out_shardings=[<mesh<["c"=2]>, [{{}}, {{}}]>] manual_axes={{}} (%arg2: {T}) {{
      sdy.return %arg2 : {T}
    }} : ({T}) -> {T}
    sdy.return %1 : {T}
  }} : ({T}) -> {T}
  return %0 : {T}
}}
"""
    out = run_pipeline(text, LIFT)
    # pre-order: the outer op's in_shardings, then out_shardings, then the nested op
    assert [line.split(" {")[0] for line in mesh_lines(out)] == [
        'sdy.mesh @mesh = <["a"=2]>', 'sdy.mesh @mesh_0 = <["b"=2]>',
        'sdy.mesh @mesh_1 = <["c"=2]>']
    assert "in_shardings=[<@mesh_1, [{}, {}]>] out_shardings=[<@mesh_1, [{}, {}]>]" in out


REPLICA = ('%0 = "stablehlo.all_reduce"(%arg0) ({{\n'
           '  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
           '    %s = stablehlo.add %a, %b : tensor<f32>\n'
           '    stablehlo.return %s : tensor<f32>\n'
           '  }}) {{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = {mesh}, '
           'axes = [#stablehlo.axis_ref<name = "x">]>}} : (tensor<4xf32>) -> tensor<4xf32>')


def replica_module(mesh: str) -> str:
    return ('sdy.mesh @mesh = <["x"=2]>\n'
            "func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  "
            + REPLICA.format(mesh=mesh) + "\n  return %0 : tensor<4xf32>\n}\n")


def test_lift_stablehlo_mesh_always_gets_a_new_mesh_without_device_ids():
    stablehlo_mesh = ('#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>], '
                      "device_ids = dense<[1, 0]> : tensor<2xi64>>")
    out = run_pipeline(replica_module(stablehlo_mesh), LIFT)
    assert [line.split(" {")[0] for line in mesh_lines(out)] == [
        'sdy.mesh @mesh = <["x"=2]>', 'sdy.mesh @mesh_0 = <["x"=2]>']
    assert "mesh = @mesh_0," in out
    # not idempotent here: the next run merges the two equal meshes
    assert "mesh = @mesh," in run_pipeline(out, LIFT)


def test_inline_replica_groups_and_erase_meshes():
    out = run_pipeline(replica_module("@mesh"), INLINE)
    assert "sdy.mesh" not in out
    assert ('#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes=[<name = "x", '
            'size = 2>]>' in out)


def test_inline_keeps_inline_meshes_and_inlines_refs():
    text = f"""sdy.mesh @m = <["x"=2], device_ids=[1, 0]>
func.func @f(%arg0: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}, {{}}]>}}) -> {T} {{
  %0 = stablehlo.add %arg0, %arg0
      {{sdy.sharding = #sdy.sharding_per_value<[<mesh<["y"=4]>, [{{}}, {{"y"}}]>]>}} : {T}
  return %0 : {T}
}}
"""
    out = assert_idempotent(text, INLINE)
    assert '#sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}]>' in out
    assert '<mesh<["y"=4]>, [{}, {"y"}]>' in out and "sdy.mesh" not in out


@settings(max_examples=50, deadline=None)
@given(sharded_modules())
def test_lift_idempotent_and_verifies(text):
    out = assert_idempotent(text, LIFT)
    assert "mesh<" not in out.replace("sdy.mesh", "")  # no inline mesh is left
    meshes = [line.split(" = ", 1)[1].split(" {")[0] for line in mesh_lines(out)]
    assert len(set(meshes)) == len(meshes)


@settings(max_examples=50, deadline=None)
@given(sharded_modules())
def test_inline_idempotent_and_undoes_lift(text):
    inlined = assert_idempotent(text, INLINE)
    assert run_pipeline(text, f"{LIFT},{INLINE}") == inlined


@pytest.mark.oracle
@pytest.mark.parametrize("pipeline", [LIFT, INLINE])
def test_random_modules_like_real_shardy(pipeline):
    texts = examples(sharded_modules(sum_only=True), 40)
    assert_like_oracle(texts, pipeline)
