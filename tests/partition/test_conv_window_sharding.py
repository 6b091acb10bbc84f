"""Convolutions whose window-size factor or size-1 spatial dims are sharded compute what the
unpartitioned program does (shardy_ref/partition/export/resolve_permutation_factors/convolution.py;
both programs were found by tests/partition/test_per_device_property.py, and gave zeros and
an internal error before)."""
from __future__ import annotations

import numpy as np
import pytest

from shardy_ref.execute import run, simulate
from shardy_ref.parser import parse_module

CONV = ('"stablehlo.convolution"({lhs}, {rhs}) {{batch_group_count = 1 : i64, dimension_numbers = '
        '#stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, '
        'padding = dense<[[{lo}, {hi}]]> : tensor<1x2xi64>, window_strides = array<i64: {stride}>}}')

STRIDED_PADDED = f"""sdy.mesh @mesh = <["x"=8, "y"=2]>
func.func @main(%arg0: tensor<2x2x2xi32>, %arg1: tensor<2x2x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{}}, {{"y"}}]>}}) -> (tensor<2x2x1xi32>) {{
  %0 = {CONV.format(lhs="%arg0", rhs="%arg1", lo=1, hi=0, stride=2)} : (tensor<2x2x2xi32>, tensor<2x2x2xi32>) -> tensor<2x2x1xi32>
  return %0 : tensor<2x2x1xi32>
}}
"""

# a size-1 spatial dim sharded along "y" by propagation through the transpose
SIZE_ONE_SPATIAL = """sdy.mesh @mesh = <["x"=8, "y"=2], device_ids=[0, 5, 15, 11, 9, 3, 4, 6, 13, 8, 12, 10, 7, 2, 1, 14]>
func.func @main(%arg0: tensor<2x2x12xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}, %arg1: tensor<8x2x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}, %arg2: tensor<12x10x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) -> (tensor<1x12x2xi32>, tensor<1x1x10xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}) {
  %0 = "stablehlo.convolution"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, padding = dense<[[0, 0]]> : tensor<1x2xi64>, window_strides = array<i64: 1>} : (tensor<2x2x12xi32>, tensor<8x2x2xi32>) -> tensor<2x8x11xi32>
  %1 = "stablehlo.slice"(%0) {start_indices = array<i64: 1, 7, 0>, limit_indices = array<i64: 2, 8, 10>, strides = array<i64: 1, 1, 1>} : (tensor<2x8x11xi32>) -> tensor<1x1x10xi32>
  %2 = "stablehlo.transpose"(%1) {permutation = array<i64: 1, 2, 0>} : (tensor<1x1x10xi32>) -> tensor<1x10x1xi32>
  %3 = "stablehlo.convolution"(%2, %arg2) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, padding = dense<[[1, 1]]> : tensor<1x2xi64>, window_strides = array<i64: 1>} : (tensor<1x10x1xi32>, tensor<12x10x2xi32>) -> tensor<1x12x2xi32>
  "func.return"(%3, %1) : (tensor<1x12x2xi32>, tensor<1x1x10xi32>) -> ()
}
"""

WINDOW_MAJOR = f"""sdy.mesh @mesh = <["y"=2]>
func.func @main(%arg0: tensor<2x2x8xi32>, %arg1: tensor<2x2x4xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{}}, {{"y"}}]>}}) -> (tensor<2x2x2xi32>) {{
  %0 = {CONV.format(lhs="%arg0", rhs="%arg1", lo=0, hi=0, stride=4)} : (tensor<2x2x8xi32>, tensor<2x2x4xi32>) -> tensor<2x2x2xi32>
  return %0 : tensor<2x2x2xi32>
}}
"""


# tiled windows (stride = window size) with the window-size factor minor to the windows' index
WINDOW_MINOR = WINDOW_MAJOR.replace("8xi32>, %arg1: tensor<2x2x4", "8xi32>, %arg1: tensor<2x2x2").replace(
    "stride=4", "stride=2").replace("array<i64: 4>", "array<i64: 2>").replace(
    "tensor<2x2x8xi32>, tensor<2x2x4xi32>) -> tensor<2x2x2xi32>", "tensor<2x2x8xi32>, tensor<2x2x2xi32>) -> tensor<2x2x4xi32>").replace(
    "-> (tensor<2x2x2xi32>)", "-> (tensor<2x2x4xi32>)").replace("return %0 : tensor<2x2x2xi32>", "return %0 : tensor<2x2x4xi32>")


@pytest.mark.parametrize("text", [STRIDED_PADDED, SIZE_ONE_SPATIAL, WINDOW_MAJOR, WINDOW_MINOR],
                         ids=["strided-padded", "size-one-spatial", "window-major", "window-minor"])
def test_partitioned_convolution_equals_the_single_device_run(text):
    rng = np.random.default_rng(0)
    module = parse_module(text)
    main = next(op for op in module.walk() if op.name == "func.func")
    shapes = [a.type.shape for a in main.regions[0].blocks[0].args]
    args = [rng.integers(-5, 6, s).astype(np.int32) for s in shapes]
    for got, want in zip(simulate(text, *args), run(text, *args), strict=True):
        np.testing.assert_array_equal(got, want)
