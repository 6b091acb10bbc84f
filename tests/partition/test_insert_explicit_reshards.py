"""``sdy-insert-explicit-reshards`` (minimal and full version), ``sdy-verify-unreduced-axes``
and the common-axes heuristic: our own cases, and propagated random programs against real
Shardy."""
from __future__ import annotations

import pytest

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.parser import parse_attribute
from shardy_ref.partition.export.explicit_reshards_util.common_axes import (
    strict_prefix_of,
    truncate_without_overlap,
)
from shardy_ref.testing.programs import random_program
from tests.propagate.pass_helpers import run_pipeline

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
FULL = "func.func(sdy-insert-explicit-reshards{enable-full-version=true})"
MINIMAL = "func.func(sdy-insert-explicit-reshards)"


def axes(text: str):
    return tuple(parse_attribute(f'#sdy.sharding<@m, [{{{text}}}]>').dim_shardings[0].axes)


def test_axis_list_prefixes_and_truncation():
    assert strict_prefix_of((), axes('"x"'))
    assert strict_prefix_of(axes('"x"'), axes('"x", "y"'))
    assert strict_prefix_of(axes('"x":(1)2'), axes('"x", "y"'))
    assert not strict_prefix_of(axes('"x", "y"'), axes('"x", "y"'))
    assert truncate_without_overlap(axes('"x", "y"'), axes('"y"')) == axes('"x"')
    assert truncate_without_overlap(axes('"y", "x"'), axes('"y"')) == ()


# upstream's processDot example: the result conflicts with the operands only on the
# non-contracting dim of the rhs, sharded by the contraction axes
DOT = MESH + """func.func @main(%arg0: tensor<4x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
    %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<4x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}"""


def test_minimal_version_computes_the_dot_in_the_operands_sharding_and_reshards_it():
    out = run_pipeline(DOT, MINIMAL)
    assert 'sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>' in out
    assert 'sdy.reshard %0 <@mesh, [{}, {"x"}]>' in out


def test_full_version_all_reduces_a_sharded_contraction():
    out = run_pipeline(DOT, FULL)
    assert "sdy.all_reduce" in out


def test_minimal_version_all_reduces_unreduced_axes_a_user_needs_reduced():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}], unreduced={"y"}>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, MINIMAL)
    assert 'sdy.all_reduce {"y"} %arg0 out_sharding=<@mesh, [{"x"}]>' in out


def test_full_version_reshards_a_mismatched_elementwise_operand():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
    %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  %0 = stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, FULL)
    assert 'sdy.reshard %arg1 <@mesh, [{"x"}]>' in out
    assert run_pipeline(text, MINIMAL).count("sdy.reshard") == 0


def test_single_device_function_arguments_are_rejected():
    text = """sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}"""
    with pytest.raises(ShardyRefError, match="function argument 0 cannot have a single-device"):
        run_pipeline(text, MINIMAL)


def test_verify_unreduced_axes_rejects_a_dropped_unreduced_axis():
    text = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}], unreduced={"y"}>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    with pytest.raises(ShardyRefError, match="dropped unreduced axis 'y'"):
        run_pipeline(text, "func.func(sdy-verify-unreduced-axes)")


PROPAGATED = "sdy-add-data-flow-edges,sdy-user-priority-propagate,func.func(sdy-sink-data-flow-edges)"


@pytest.mark.parametrize("pipeline", [MINIMAL, FULL])
@pytest.mark.parametrize("seed", range(10))
def test_outputs_verify_on_propagated_random_programs(pipeline, seed):
    text = run_pipeline(random_program(seed), PROPAGATED)
    try:
        run_pipeline(text, pipeline)
    except ShardyRefError as e:  # upstream's own output is invalid there too (see below)
        message = e.message
    else:
        return
    assert "duplicate axis ref" in message or "both sub-axis and full-axis" in message


@pytest.mark.oracle
@pytest.mark.parametrize("pipeline", [MINIMAL, FULL])
def test_propagated_random_programs_like_real_shardy(pipeline):
    """Identical output, or the same error: where a tensor keeps replicated axes the full
    version's reshard can name them twice, and upstream's verifier rejects its own output
    just as ours does."""
    import corpus

    texts = [run_pipeline(random_program(seed), PROPAGATED) for seed in range(200)]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline=f"builtin.module({pipeline})")
    differ = []
    for seed, (text, ref) in enumerate(zip(texts, refs, strict=True)):
        try:
            ours = run_pipeline(text, pipeline)
        except ShardyRefError as e:
            agree = not ref["ok"] and e.message in ref["err"]
        else:
            agree = ref["ok"] and ours == ref["out"]
        if not agree:
            differ.append(seed)
    assert not differ, f"seeds differing from real Shardy: {differ}"
