"""``sdy-apply-sharding-constraints``: a closed constraint that alone dictates its input's
sharding sets it; data-flow edge targets route their uses through the constraint instead;
chains take over the later uses of their input. Upstream's pass is idempotent: an applied
sharding blocks re-application, and a moved constraint already sits where it would move."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.parser import parse_module
from shardy_ref.parser.reader import parse_attribute
from shardy_ref.propagate.import_.apply_sharding_constraints import (
    is_fully_closed,
    pointwise_sharding_rule,
)

from .pass_helpers import assert_idempotent, assert_like_oracle, examples, run_pipeline
from .strategies_constraints import constraint_modules

PASS = "sdy-apply-sharding-constraints"
MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
T = "tensor<8x8xf32>"
RULE = "{sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8}>}"


def func(body: str, results: str = T, args: str = f"%arg0: {T}") -> str:
    return MESH + f"func.func @f({args}) -> ({results}) {{\n{body}\n}}\n"


def lines_of(text: str, pipeline: str = PASS) -> list[str]:
    out = run_pipeline(text, pipeline).splitlines()
    start = next(i for i, line in enumerate(out) if "func.func" in line)
    return [line.strip() for line in out[start + 1:]]


def test_closed_sole_constraint_sets_its_inputs_sharding_and_rule():
    lines = lines_of(func(f"""  %0 = stablehlo.add %arg0, %arg0 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{}}]> : {T}
  return %1 : {T}"""))
    assert lines[:2] == [
        f'%0 = stablehlo.add %arg0, %arg0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, '
        f'[{{"a"}}, {{}}]>]>}} : {T}',
        f'%1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{}}]> {RULE} : {T}']


@pytest.mark.parametrize("body", [
    # open dimension
    f'%1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{?}}]> : {T}',
    # another constraint wants something else
    f'%1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{}}]> : {T}\n'
    f'  %2 = sdy.sharding_constraint %0 <@mesh, [{{}}, {{"a"}}]> : {T}',
    # a manual computation wants something else
    f'%1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{}}]> : {T}\n'
    f'  %2 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{{}}, {{"a"}}]>] '
    f'out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{}} (%x: {T}) {{\n'
    f'    sdy.return %x : {T}\n  }} : ({T}) -> {T}',
], ids=["open", "other-constraint", "other-manual-computation"])
def test_constraint_not_dictating_its_input_changes_nothing(body):
    text = func(f"  %0 = stablehlo.add %arg0, %arg0 : {T}\n  {body}\n  return %0 : {T}")
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_input_with_a_sharding_keeps_it():
    text = func(f"""  %1 = sdy.sharding_constraint %arg0 <@mesh, [{{"a"}}, {{}}]> : {T}
  return %1 : {T}""", args=f'%arg0: {T} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"b"}}]>}}')
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_identical_constraints_and_manual_computation_agree_and_apply():
    lines = lines_of(func(f"""  %0 = stablehlo.add %arg0, %arg0 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{}}]> : {T}
  %2 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{{"a"}}, {{}}]>]
      out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{}} (%x: {T}) {{
    sdy.return %x : {T}
  }} : ({T}) -> {T}
  return %2 : {T}"""))
    assert 'sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>' in lines[0]


def test_scalar_block_argument_of_a_non_function_region_is_skipped():
    text = MESH + """func.func @f(%arg0: tensor<8xf32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%arg0 init: %arg1) across dimensions = [0]
      : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %1 = sdy.sharding_constraint %a <@mesh, []> : tensor<f32>
    %2 = stablehlo.add %1, %b : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}
"""
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_data_flow_edge_target_routes_its_uses_through_the_moved_constraint():
    lines = lines_of(func(f"""  %0 = stablehlo.optimization_barrier %arg0 : {T}
  %1 = sdy.data_flow_edge %0 : {T}
  %2 = stablehlo.add %1, %1 : {T}
  %3 = sdy.sharding_constraint %1 <@mesh, [{{"a"}}, {{}}], unreduced={{"b"}}> : {T}
  return %2 : {T}"""))
    assert lines[1:4] == [
        f'%1 = sdy.data_flow_edge %0 sharding=<@mesh, [{{?}}, {{?}}], unreduced={{"b"}}> : {T}',
        f'%2 = sdy.sharding_constraint %1 <@mesh, [{{"a"}}, {{}}], unreduced={{"b"}}> : {T}',
        f"%3 = stablehlo.add %2, %2 : {T}"]


def test_manual_computation_operand_from_an_edge_gets_a_new_constraint():
    lines = lines_of(func(f"""  %0 = stablehlo.optimization_barrier %arg0 : {T}
  %1 = sdy.data_flow_edge %0 : {T}
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{{"a"}}, {{}}]>]
      out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{}} (%x: {T}) {{
    sdy.return %x : {T}
  }} : ({T}) -> {T}
  return %2 : {T}"""))
    assert lines[2] == f'%2 = sdy.sharding_constraint %1 <@mesh, [{{"a"}}, {{}}]> : {T}'
    assert lines[3].startswith("%3 = sdy.manual_computation(%2)")


def test_chain_takes_over_later_non_return_uses_in_its_block():
    lines = lines_of(func(f"""  %0 = stablehlo.add %arg0, %arg0 : {T}
  %1 = stablehlo.negate %0 : {T}
  %2 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{?}}]> : {T}
  %3 = sdy.sharding_constraint %2 <@mesh, [{{}}, {{"b"}}]> : {T}
  %4 = stablehlo.multiply %0, %1 : {T}
  return %0, %3, %4 : {T}, {T}, {T}""", results=f"{T}, {T}, {T}"))
    assert lines[1] == f"%1 = stablehlo.negate %0 : {T}"
    assert lines[4] == f"%4 = stablehlo.multiply %3, %1 : {T}"
    assert lines[5] == f"return %0, %3, %4 : {T}, {T}, {T}"


def test_chain_input_used_by_another_constraint_is_not_a_chain():
    text = func(f"""  %0 = stablehlo.add %arg0, %arg0 : {T}
  %1 = sdy.sharding_constraint %0 <@mesh, [{{"a"}}, {{?}}]> : {T}
  %2 = sdy.sharding_constraint %1 <@mesh, [{{}}, {{"b"}}]> : {T}
  %3 = sdy.sharding_constraint %0 <@mesh, [{{?}}, {{?}}]> : {T}
  %4 = stablehlo.multiply %0, %0 : {T}
  return %4 : {T}""")
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_pointwise_rule_and_closedness():
    assert is_fully_closed(parse_attribute('#sdy.sharding<@mesh, [{"a"}, {}]>'))
    assert not is_fully_closed(parse_attribute('#sdy.sharding<@mesh, [{"a"}, {?}]>'))
    module_text = func(f"  %0 = sdy.sharding_constraint %arg0 <@mesh, [{{}}, {{}}]> : {T}\n"
                       f"  return %0 : {T}")
    op = next(o for o in parse_module(module_text, "t").walk()
              if o.name == "sdy.sharding_constraint")
    assert str(pointwise_sharding_rule(op)) == RULE.split(" = ", 1)[1][:-1]


@settings(max_examples=40, deadline=None)
@given(constraint_modules())
def test_idempotent_and_verifies(text):
    assert_idempotent(text, PASS)


@pytest.mark.oracle
@pytest.mark.parametrize("pipeline", [PASS, f"sdy-add-data-flow-edges,{PASS}"])
def test_random_modules_like_real_shardy(pipeline):
    kinds = ("constraint", "constraint", "constraint", "add", "manual", "barrier", "named",
             "loop") + (("edge",) if pipeline == PASS else ())
    texts = examples(constraint_modules(kinds), 40)
    assert_like_oracle(texts, pipeline)
