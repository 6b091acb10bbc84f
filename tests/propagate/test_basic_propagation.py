"""Unit tests of ``sdy-basic-propagate``'s driver: what it rejects, what it keeps, and the
upstream behaviours a reader would not guess (dead ops erased, group conflicts, barriers,
maximal meshes, func results). The random-program properties and the oracle differential
test live in ``test_basic_propagation_props.py``."""
from __future__ import annotations

import re

import pytest

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.pass_manager import PassContext

from .pass_helpers import run_pipeline

PASS = "sdy-basic-propagate"
MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'


def sharding_of(out: str, ssa: str) -> str:
    """The ``sdy.sharding_per_value`` text printed on the op defining ``%ssa``."""
    m = re.search(rf"%{ssa} = [^\n]*sdy\.sharding = #sdy\.sharding_per_value<\[<([^\n]*?)>\]>",
                  out)
    return m.group(1) if m else ""


def arg_sharding(out: str, index: int) -> str:
    m = re.search(rf"%arg{index}: tensor<[^>]*> \{{sdy\.sharding = #sdy\.sharding<([^\n]*?)>\}}",
                  out)
    return m.group(1) if m else ""


def test_dynamic_shapes_are_rejected_with_upstreams_message():
    text = MESH + """func.func @main(%arg0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}"""
    with pytest.raises(ShardyRefError, match=re.escape(
            "Shardy propagation only supports ranked tensors with a static shape. "
            "type: 'tensor<?x8xf32>'")):
        run_pipeline(text, PASS)


def test_tuples_are_rejected():
    text = MESH + """func.func @main(%arg0: tensor<8xf32>) -> tuple<tensor<8xf32>> {
  %0 = stablehlo.tuple %arg0 : tuple<tensor<8xf32>>
  return %0 : tuple<tensor<8xf32>>
}"""
    with pytest.raises(ShardyRefError, match="doesn't support tuples: 'tuple<tensor<8xf32>>'"):
        run_pipeline(text, PASS)


def test_debug_options_record_origins_only_when_on():
    text = MESH + "func.func @main(%arg0: tensor<8xf32> {sdy.sharding = " \
        "#sdy.sharding<@mesh, [{\"a\"}]>}) -> tensor<8xf32> {\n" \
        "  return %arg0 : tensor<8xf32>\n}"
    assert "origins" not in run_pipeline(text, f"{PASS}{{debug-sharding-origins=false}}")
    out = run_pipeline(text, f"{PASS}{{debug-sharding-origins=true}}")
    assert 'sdy.sharding_origins = {a = "self"}' in out  # the argument's own axis
    assert 'sdy.sharding_origins = {a = "input: 0"}' in out  # the result's, from the argument


ELEMENTWISE = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>},
                 %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}"""


def test_shardings_flow_forward_backward_and_to_func_results():
    out = run_pipeline(ELEMENTWISE, PASS)
    assert arg_sharding(out, 1) == '@mesh, [{"a", ?}, {"b", ?}]'
    assert sharding_of(out, "1") == '@mesh, [{"a", ?}, {"b", ?}]'
    assert '-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>})' \
        in out


def test_sharding_rules_are_dropped_unless_kept_and_custom_ones_stay():
    assert "sdy.sharding_rule" not in run_pipeline(ELEMENTWISE, PASS)
    kept = run_pipeline(ELEMENTWISE, f"{PASS}{{keep-sharding-rules=true}}")
    assert kept.count("sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j])") \
        == 1
    custom = ELEMENTWISE.replace(
        "%0 = stablehlo.add %arg0, %arg1 :",
        "%0 = stablehlo.add %arg0, %arg1 {sdy.sharding_rule = "
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=8}, custom>} :")
    assert "custom>" in run_pipeline(custom, PASS)


def test_conflicting_operands_propagate_nothing_along_the_factor():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>},
                 %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, PASS)
    assert sharding_of(out, "0") == ""


def test_closed_dimensions_and_replicated_axes_are_respected():
    text = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>},
                 %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}], replicated={"b"}>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}"""
    out = run_pipeline(text, PASS)
    assert arg_sharding(out, 1) == '@mesh, [{}, {?}], replicated={"b"}'
    assert sharding_of(out, "0") == ""


def test_trivially_dead_ops_are_erased_as_by_mlirs_greedy_driver():
    text = MESH + """func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.abs %arg0 : tensor<8xf32>
  %1 = stablehlo.negate %arg0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}"""
    out = run_pipeline(text, PASS)
    assert "stablehlo.abs" not in out and "stablehlo.negate" in out


def test_maximal_meshes_do_not_propagate():
    text = """sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, PASS)
    assert "sharding_per_value" not in out


@pytest.mark.parametrize(("direction", "forward", "backward"), [
    ("FORWARD", True, False), ("BACKWARD", False, True), ("NONE", False, False)])
def test_propagation_barrier_lets_through_only_its_direction(direction, forward, backward):
    text = MESH + f"""func.func @main(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}]>}},
                 %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {{
  %0 = sdy.propagation_barrier %arg0 allowed_direction={direction} : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  %2 = stablehlo.negate %arg1 : tensor<8xf32>
  %3 = sdy.propagation_barrier %2 allowed_direction={direction} : tensor<8xf32>
  %4 = sdy.sharding_constraint %3 <@mesh, [{{"b"}}]> : tensor<8xf32>
  return %1, %4 : tensor<8xf32>, tensor<8xf32>
}}"""
    out = run_pipeline(text, PASS)
    assert (sharding_of(out, "1") == '@mesh, [{"a", ?}]') == forward
    assert (sharding_of(out, "2") == '@mesh, [{"b", ?}]') == backward


def test_group_members_with_different_shardings_get_open_constraints_and_a_warning():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>},
                 %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=0 : tensor<8xf32>
  %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    ctx = PassContext()
    out = run_pipeline(text, PASS, ctx)
    assert [d.message[:60] for d in ctx.diagnostics] == [
        "The initial operand shardings on the sharding groups of grou"]
    assert out.count("sdy.sharding_constraint") == 2
    assert re.search(r"sdy\.sharding_group %\d+ group_id=0", out)


def test_group_members_share_every_update():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}]>},
                 %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  %1 = stablehlo.abs %arg1 : tensor<8xf32>
  sdy.sharding_group %0 group_id=0 : tensor<8xf32>
  sdy.sharding_group %1 group_id=0 : tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}"""
    out = run_pipeline(text, PASS)
    assert sharding_of(out, "1") == '@mesh, [{"a", ?}]'
    assert arg_sharding(out, 1) == '@mesh, [{"a", ?}]'


def test_running_twice_changes_nothing_on_these_programs():
    once = run_pipeline(ELEMENTWISE, PASS)
    assert run_pipeline(once, PASS) == once
