"""An ``sdy.all_reduce`` or ``sdy.reduce_scatter`` written in the global program sums along
its axes once, whether its operand is partial there or a replicated copy
(shardy_ref/partition/export/explicit_reshards_util/unreduced_collectives.py, make_explicit_reduction_operand_partial).
The reduce-scatter was drawn by tests/test_fuzz_pipeline.py; before the fix every one of
the summing cases below computed the value times the axes' size (or summed twice)."""
from __future__ import annotations

import numpy as np
import pytest

from shardy_ref.execute import run, simulate
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
ARG = '%arg0: tensor<16x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{}, {"x"}]>}'


def _unary(op: str, out: str) -> str:
    return (MESH + f"func.func @main({ARG}) -> tensor<16x8xf32> {{\n"
            f"  %0 = {op} %arg0 out_sharding=<@mesh, {out}> : tensor<16x8xf32>\n"
            "  return %0 : tensor<16x8xf32>\n}\n")


# the fuzz mutant: the argument is replicated along "y"
REDUCE_SCATTER_REPLICATED = _unary('sdy.reduce_scatter [{"y"}, {}]', '[{"y"}, {"x"}]')
ALL_REDUCE_REPLICATED = _unary('sdy.all_reduce {"y"}', '[{}, {"x"}]')
# the max of copies is the value itself: nothing to make partial
ALL_REDUCE_MAX_REPLICATED = _unary('sdy.all_reduce max {"y"}', '[{}, {"x"}]')

# the dot's own all-reduce already sums the partial products; the written one then sees
# a replicated value
DOT_THEN_ALL_REDUCE = MESH + """func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding=#sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding=#sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding=#sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""

# the argument is unreduced along "y"; the reduce-scatter sums it (and must be the only sum)
UNREDUCED_THEN_REDUCE_SCATTER = _unary('sdy.reduce_scatter [{"y"}, {}]', '[{"y"}, {"x"}]').replace(
    '[{}, {"x"}]>}', '[{}, {"x"}], unreduced={"y"}>}')

# a constant unreduced along "y": each device holds the whole value, so its copies must not
# all count (found by tests/fuzz_pipeline.py, seed 54: the result was twice the constant)
UNREDUCED_CONSTANT = MESH + """func.func @main() -> tensor<8x8xf32> {
  %0 = "sdy.constant"() <{value = dense<1.000000e+00> : tensor<8x8xf32>}> {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"y"}>]>} : () -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""

CASES = {
    "reduce-scatter-of-replicated": REDUCE_SCATTER_REPLICATED,
    "all-reduce-of-replicated": ALL_REDUCE_REPLICATED,
    "max-all-reduce-of-replicated": ALL_REDUCE_MAX_REPLICATED,
    "dot-then-all-reduce": DOT_THEN_ALL_REDUCE,
    "unreduced-then-reduce-scatter": UNREDUCED_THEN_REDUCE_SCATTER,
    "unreduced-constant": UNREDUCED_CONSTANT,
    "unreduced-stablehlo-constant": UNREDUCED_CONSTANT.replace('"sdy.constant"',
                                                               '"stablehlo.constant"'),
}


def _arguments(text: str):
    rng = np.random.default_rng(0)
    main = next(op for op in parse_module(text).walk() if op.name == "func.func")
    return [rng.standard_normal(a.type.shape).astype(np.float32)
            for a in main.regions[0].blocks[0].args]


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_partitioned_explicit_reduction_equals_the_single_device_run(text):
    args = _arguments(text)
    for got, want in zip(simulate(text, *args), run(text, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _full_reshards(text: str) -> str:
    module = parse_module(text)
    PassManager(parse_pipeline("sdy-insert-explicit-reshards{enable-full-version=true}")).run(
        module, PassContext())
    return print_module(module)


def test_replicated_operand_is_made_partial_before_the_sum():
    out = _full_reshards(ALL_REDUCE_REPLICATED)
    assert ('sdy.replicated_to_unreduced {"y"} %arg0 out_sharding=<@mesh, [{}, {"x"}], '
            'unreduced={"y"}>') in out
    assert out.count("sdy.all_reduce") == 1


def test_partial_operand_is_left_alone():
    out = _full_reshards(UNREDUCED_THEN_REDUCE_SCATTER)
    assert "replicated_to_unreduced" not in out
    assert "sdy.all_reduce" not in out


def test_max_of_copies_needs_no_partial_operand():
    out = _full_reshards(ALL_REDUCE_MAX_REPLICATED)
    assert "replicated_to_unreduced" not in out
