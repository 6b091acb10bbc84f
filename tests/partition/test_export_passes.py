"""The export passes (``algorithms.md`` §5.2): unit tests of their rules, and the export
chain on propagated random programs against real Shardy."""
from __future__ import annotations

import pytest

from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import closed_like, is_equivalent
from shardy_ref.parser import parse_attribute, parse_module
from shardy_ref.partition.export.remove_sub_axes_in_input_output_shardings import (
    without_sub_axes,
)
from shardy_ref.partition.export.update_non_divisible_input_output_shardings import (
    evenly_sharded,
)
from shardy_ref.testing.programs import random_program
from tests.propagate.pass_helpers import run_pipeline

MESH_XY = 'sdy.mesh @mesh = <["x"=4, "y"=2]>'


def sharding(text: str):
    return parse_attribute(f"#sdy.sharding<{text}>")


@pytest.mark.parametrize(("before", "shape", "after"), [
    ('@mesh, [{"x"}]', (8,), '@mesh, [{"x"}]'),
    ('@mesh, [{"x", ?}]', (4,), '@mesh, [{"x", ?}]'),
    ('@mesh, [{"x"}, {"y"}]', (2, 2), '@mesh, [{"x":(1)2}, {"y"}]'),
    ('@mesh, [{"x"}]', (3,), '@mesh, [{}]'),
    ('@mesh, [{"x", "y"}]', (4,), '@mesh, [{"x"}]'),
    ('@mesh, [{"y", "x"}]', (4,), '@mesh, [{"y", "x":(1)2}]'),
    ('@mesh, [{"x"}p1, {"y"}]', (6, 4), '@mesh, [{"y"}, {"y"}]'.replace('{"y"}, ', '{"x":(1)2}, ')),
])
def test_evenly_sharded_keeps_the_longest_dividing_prefix(before, shape, after):
    table = SymbolTable(parse_module(MESH_XY))
    assert evenly_sharded(sharding(before), shape, table) == sharding(after)


def test_closing_keeps_axes_and_priorities_and_drops_replicated_axes():
    assert closed_like(sharding('@mesh, [{"x", ?}p1, {?}], replicated={"y"}')) == \
        sharding('@mesh, [{"x"}p1, {}]')


def test_sub_axes_are_removed_from_open_dimensions_only():
    assert without_sub_axes(sharding('@mesh, [{"x":(1)2, "y", ?}, {"x":(2)2}]')) == \
        sharding('@mesh, [{?}, {"x":(2)2}]')


def test_equivalence_ignores_open_closed_but_not_axes_or_unreduced():
    assert is_equivalent(sharding('@mesh, [{"x", ?}]'), sharding('@mesh, [{"x"}]'))
    assert is_equivalent(None, sharding('@mesh, [{?}]'))
    assert not is_equivalent(sharding('@mesh, [{"x"}]'), sharding('@mesh, [{"y"}]'))
    assert not is_equivalent(sharding('@mesh, [{}], unreduced={"x"}'), None)


def test_constants_merge_only_within_a_region_and_with_equal_attributes():
    text = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  %1 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
  %2 = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
  %3 = stablehlo.add %0, %1 : tensor<4xf32>
  %4 = stablehlo.add %3, %2 : tensor<4xf32>
  return %4 : tensor<4xf32>
}"""
    out = run_pipeline(text, "func.func(sdy-constant-or-scalar-merger)")
    assert out.count("stablehlo.constant") == 2
    assert "stablehlo.add %cst, %cst" in out


def test_sharding_constraints_become_reshards_keeping_discardable_attributes():
    text = MESH_XY + """
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]> {foo = 1 : i32} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, "func.func(sdy-sharding-constraint-to-reshard)")
    assert 'sdy.reshard %arg0 <@mesh, [{"x"}]> {foo = 1 : i32}' in out


EXPORT_CHAIN = ("sdy-add-data-flow-edges,sdy-user-priority-propagate,"
                "func.func(sdy-constant-or-scalar-merger,sdy-sink-data-flow-edges),"
                "sdy-remove-sharding-groups,func.func(sdy-sharding-constraint-to-reshard),"
                "sdy-update-non-divisible-input-output-shardings,"
                "sdy-remove-sub-axes-in-input-output-shardings,sdy-close-shardings,"
                "func.func(sdy-drop-sharding-rules)")
# jaxlib 0.10.2 predates sdy-verify-unreduced-axes: only our chain runs it
VERIFIED_CHAIN = EXPORT_CHAIN + ",func.func(sdy-verify-unreduced-axes)"


@pytest.mark.parametrize("seed", range(15))
def test_export_chain_output_verifies_and_closes_everything(seed):
    out = run_pipeline(random_program(seed), VERIFIED_CHAIN)
    assert "?" not in out and "replicated=" not in out and "sdy.sharding_constraint" not in out


@pytest.mark.oracle
def test_export_chain_like_real_shardy():
    import corpus

    seeds = range(150)
    texts = [random_program(seed) for seed in seeds]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline=f"builtin.module({EXPORT_CHAIN})")
    differ = [seed for seed, text, ref in zip(seeds, texts, refs, strict=True)
              if not ref["ok"] or run_pipeline(text, EXPORT_CHAIN) != ref["out"]]
    assert not differ, f"seeds differing from real Shardy: {differ}"


def test_maximal_mesh_shardings_are_left_alone_by_update_non_divisible():
    text = """sdy.mesh @maximal = <[], device_ids=[0]>
func.func @main(%arg0: tensor<3x5xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}) -> tensor<3x5xf32> {
  return %arg0 : tensor<3x5xf32>
}"""
    out = run_pipeline(text, "sdy-update-non-divisible-input-output-shardings")
    assert "#sdy.sharding<@maximal, []>" in out


def test_debug_info_and_shardings_can_be_dropped():
    text = MESH_XY + """
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""
    out = run_pipeline(text, "sdy-drop-sharding-and-mesh")
    assert "sdy." not in out
    assert run_pipeline(text, "sdy-remove-propagation-debug-info") == run_pipeline(text, "")


def test_cmv1_removes_the_all_gather_feeding_a_dot():
    text = MESH_XY + """
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %1 = stablehlo.dot %0, %arg1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}"""
    out = run_pipeline(text, "func.func(sdy-remove-all-gather-reduce-scatter-for-cmv1)")
    assert "sdy.all_gather" not in out and "stablehlo.dot %arg0, %arg1" in out
