"""Propagation debugging (``shardy_ref/propagate/debugging/source_sharding.py``): the
``sdy.sharding_origins`` and ``sdy.propagation_edges`` that ``debug-sharding-origins`` /
``debug-propagation-edge-sharding`` record, hand-checked on small programs (the expected
texts agree with real Shardy's), plus the attribute builder's ordering rules."""
from __future__ import annotations

import re

from shardy_ref.ir.sdy_axes import AxisRef
from shardy_ref.ir.sdy_debug import EdgeValueRef
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.debugging.source_sharding import (
    OriginSharding,
    OriginType,
    PropagationEdge,
    propagation_edges_attr,
)

from .pass_helpers import run_pipeline

# %arg0's "a" flows forward through the transpose; the constraint's "b" is applied to
# %arg1, then flows from the multiply's operand 1 to its operand 0 and result, and on back
# through the transpose to %arg0 (its dimension 1).
TRANSPOSE_MULTIPLY = """sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>},
                %arg1: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %1 = sdy.sharding_constraint %arg1 <@mesh, [{"b"}, {}]> : tensor<16x8xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}"""

# a manual computation whose in-sharding gives "a" and out-sharding gives "b"
MANUAL = """sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a", ?}, {?}]>]
      out_shardings=[<@mesh, [{?}, {"b", ?}]>] manual_axes={} (%arg1: tensor<8x8xf32>) {
    %1 = stablehlo.negate %arg1 : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}"""


def debug_pipeline(option: str, propagate: str = "sdy-basic-propagate") -> str:
    return (f"sdy-add-data-flow-edges,sdy-apply-sharding-constraints{{{option}=true}},"
            f"{propagate}{{{option}=true}},sdy-sink-data-flow-edges{{sink-{option}=true}}")


def op_line(out: str, op: str) -> str:
    return next(line for line in out.splitlines() if f" {op} " in line)


def test_origins_name_the_user_sharding_each_axis_came_from():
    out = run_pipeline(TRANSPOSE_MULTIPLY, debug_pipeline("debug-sharding-origins"))
    assert '%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b", ?}]>, ' \
        'sdy.sharding_origins = {a = "self", b = "constraint_0"}}' in out
    assert '-> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", ?}, {?}]>, ' \
        'sdy.sharding_origins = {b = "constraint_0"}})' in out
    assert 'sdy.sharding_origins = [{a = "input: 0", b = "constraint_0"}]' in \
        op_line(out, "stablehlo.transpose")
    assert 'sdy.sharding_origins = [{b = "constraint_0"}]' in op_line(out, "stablehlo.multiply")
    assert '{sdy.sharding_origin_name = "constraint_0", sdy.sharding_origins = {b = "self"}}' in \
        op_line(out, "sdy.sharding_constraint")


def test_edges_number_the_steps_across_both_passes():
    out = run_pipeline(TRANSPOSE_MULTIPLY, debug_pipeline("debug-propagation-edge-sharding"))
    # step 0 is the applied constraint; propagation continues at 1
    assert '#sdy.propagation_edges<[{step-0 = [{"b" = result-0 -> [operand-0]}]}]>' in \
        op_line(out, "sdy.sharding_constraint")
    assert ('#sdy.propagation_edges<[{step-1 = [{"a" = operand-0 -> [result-0]}]}, '
            '{step-3 = [{"b" = result-0 -> [operand-0]}]}]>') in op_line(out, "stablehlo.transpose")
    assert '{step-2 = [{"b" = operand-1 -> [operand-0, result-0]}]}' in \
        op_line(out, "stablehlo.multiply")
    # the func result got "b" from the returned value in the final func-result step
    assert ('-> (tensor<16x8xf32> {sdy.propagation_edges = #sdy.propagation_edges<'
            '[{step-4 = [{"b" = operand-0 -> [result-0]}]}]>') in out
    assert "sharding_origins" not in out


def test_manual_computation_origins_are_sunk_onto_the_op():
    out = run_pipeline(MANUAL, debug_pipeline("debug-sharding-origins"))
    assert 'sdy.sharding_origins = {a = "mc_0_input: 0", b = "mc_0_output: 0"}' in out
    assert ('{sdy.block_arg_sharding_origins = [{a = "self", b = "mc_0_output: 0"}], '
            'sdy.result_sharding_origins = [{a = "mc_0_input: 0", b = "self"}], '
            'sdy.sharding_origin_name = "mc_0"}') in out
    assert "sdy.data_flow_edge" not in out


def test_manual_computation_edges_are_sunk_onto_the_op():
    out = run_pipeline(MANUAL, debug_pipeline("debug-propagation-edge-sharding",
                                              "sdy-aggressive-propagate"))
    assert ('sdy.block_arg_propagation_edges = [#sdy.propagation_edges<[{step-1 = [{"a" = '
            'result-0 -> [operand-0]}]}, {step-5 = [{"b" = result-0 -> [operand-0]}]}]>]') in out
    assert ('sdy.result_propagation_edges = [#sdy.propagation_edges<[{step-3 = [{"a" = '
            'operand-0 -> [result-0]}, {"b" = result-0 -> [operand-0]}]}]>]') in out


def test_without_the_options_nothing_is_recorded():
    ctx = PassContext()
    out = run_pipeline(TRANSPOSE_MULTIPLY, "sdy-add-data-flow-edges,"
                       "sdy-apply-sharding-constraints,sdy-user-priority-propagate,"
                       "sdy-sink-data-flow-edges", ctx)
    assert not re.search(r"origin|propagation_edges", out)
    assert ctx.sharding_debug is None


def test_remove_propagation_debug_info_drops_everything_recorded():
    both = ("sdy-add-data-flow-edges,sdy-apply-sharding-constraints{debug-sharding-origins=true "
            "debug-propagation-edge-sharding=true},sdy-op-priority-propagate{"
            "debug-sharding-origins=true debug-propagation-edge-sharding=true},"
            "sdy-sink-data-flow-edges{sink-debug-sharding-origins=true "
            "sink-debug-propagation-edge-sharding=true}")
    out = run_pipeline(MANUAL, both)
    assert "sharding_origins" in out and "propagation_edges" in out
    cleaned = run_pipeline(out, "sdy-remove-propagation-debug-info")
    assert not re.search(r"sharding_origins|propagation_edges", cleaned)
    # the origin name of a constraint or manual computation is not debug info upstream
    assert 'sdy.sharding_origin_name = "mc_0"' in cleaned


def test_origin_names():
    assert OriginSharding(OriginType.INPUT, 1).name() == "input: 1"
    assert OriginSharding(OriginType.OUTPUT, 0).name() == "output: 0"
    assert OriginSharding(OriginType.CONSTRAINT, 0, 3).name() == "constraint_3"
    assert OriginSharding(OriginType.MC_INPUT, 2, 1).name() == "mc_1_input: 2"
    assert OriginSharding(OriginType.MC_OUTPUT, 0, 4).name() == "mc_4_output: 0"


def test_edges_attr_keeps_earliest_step_and_sorts():
    op0, op1, res0 = EdgeValueRef("operand", 0), EdgeValueRef("operand", 1), \
        EdgeValueRef("result", 0)
    a, b, c2 = AxisRef("a"), AxisRef("b"), AxisRef.sub("c", 1, 2)
    attr = propagation_edges_attr({
        c2: [PropagationEdge(op1, res0, 4)],
        b: [PropagationEdge(res0, op1, 2), PropagationEdge(res0, op0, 2)],
        # the same edge again later (a constraint recorded it before propagation did)
        a: [PropagationEdge(op0, res0, 5), PropagationEdge(op0, res0, 1)],
    })
    assert attr.params() == ('<[{step-1 = [{"a" = operand-0 -> [result-0]}]}, '
                             '{step-2 = [{"b" = result-0 -> [operand-0, operand-1]}]}, '
                             '{step-4 = [{"c":(1)2 = operand-1 -> [result-0]}]}]>')


def test_axes_from_an_op_sharding_given_before_propagation_have_no_origin():
    """Only function inputs/outputs, constraints and manual computations are origins. An
    op's pre-set sharding is none of them: upstream reads a missing map entry here (its
    release build prints ``": 0"``, a debug build asserts); we record nothing."""
    text = """sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>]>}
      : tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}"""
    out = run_pipeline(text, "sdy-basic-propagate{debug-sharding-origins=true}")
    assert 'stablehlo.abs %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>]>}' in out
    assert "sharding_origins" not in out
