"""Collectives: pointwise ones, and the gather/split/concat/scatter dimensions that get a
need-replication factor on each side."""
from __future__ import annotations

import pytest

from .rule_helpers import case, check_case

GROUPS = "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>"
ADD_BODY = ("({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
            "    %s = stablehlo.add %a, %b : tensor<f32>\n"
            "    stablehlo.return %s : tensor<f32>\n  })")
CASES = [
    case("all_reduce", f'%0 = "stablehlo.all_reduce"(%arg0) {ADD_BODY} {{{GROUPS}}} : '
         "(tensor<4x6xf32>) -> tensor<4x6xf32>", ["tensor<4x6xf32>"], ["tensor<4x6xf32>"],
         "([i, j])->([i, j]) {i=4, j=6}"),
    case("collective_permute",
         '%0 = "stablehlo.collective_permute"(%arg0) {source_target_pairs = '
         "dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<3x5xf32>) -> tensor<3x5xf32>",
         ["tensor<3x5xf32>"], ["tensor<3x5xf32>"], "([i, j])->([i, j]) {i=3, j=5}"),
    case("all_gather_first_dim",
         f'%0 = "stablehlo.all_gather"(%arg0) {{all_gather_dim = 0 : i64, {GROUPS}}}'
         " : (tensor<3x5xf32>) -> tensor<6x5xf32>", ["tensor<3x5xf32>"], ["tensor<6x5xf32>"],
         "([j, i])->([k, i]) {i=5, j=3, k=6} need_replication={j, k}"),
    case("all_to_all_split_after_concat",
         '%0 = "stablehlo.all_to_all"(%arg0) {split_dimension = 2 : i64, '
         f"concat_dimension = 0 : i64, split_count = 2 : i64, {GROUPS}}}"
         " : (tensor<2x3x8xf32>) -> tensor<4x3x4xf32>",
         ["tensor<2x3x8xf32>"], ["tensor<4x3x4xf32>"],
         "([l, i, j])->([m, i, k]) {i=3, j=8, k=4, l=2, m=4} need_replication={j, k, l, m}"),
    case("reduce_scatter",
         f'%0 = "stablehlo.reduce_scatter"(%arg0) {ADD_BODY} {{scatter_dimension = 1 : i64, '
         f"{GROUPS}}} : (tensor<8x6xf32>) -> tensor<8x3xf32>",
         ["tensor<8x6xf32>"], ["tensor<8x3xf32>"],
         "([i, j])->([i, k]) {i=8, j=6, k=3} need_replication={j, k}"),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)
