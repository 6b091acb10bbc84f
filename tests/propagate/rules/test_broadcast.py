"""``broadcast_in_dim``, ``concatenate`` (incl. its slice patterns) and ``transpose``."""
from __future__ import annotations

import pytest

from .rule_helpers import RuleCase, case, check_case

F = "f32"


def _concat(name: str, body: str, args: list[str], expected: str,
            conservative: bool = False) -> RuleCase:
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    text = (f"func.func @f({params}) -> tensor<12x4xf32> {{\n{body}\n"
            "  return %r : tensor<12x4xf32>\n}\n")
    return RuleCase(name, text, expected, conservative)


SLICE_A = "  %a = stablehlo.slice %arg0 [0:5, 0:4] : (tensor<12x4xf32>) -> tensor<5x4xf32>\n"
SLICE_B = "  %b = stablehlo.slice %arg0 [5:12, 0:4] : (tensor<12x4xf32>) -> tensor<7x4xf32>\n"
CONCAT = ("  %r = stablehlo.concatenate {}, dim = 0 : "
          "(tensor<{}x4xf32>, tensor<{}x4xf32>) -> tensor<12x4xf32>")
CASES = [
    case("broadcast_rank_expanding",
         "%0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3x4xf32>",
         ["tensor<3xf32>"], ["tensor<2x3x4xf32>"], "([j])->([i, j, k]) {i=2, j=3, k=4}"),
    case("broadcast_permuting_and_expanding_size_one",
         "%0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 0] : "
         "(tensor<1x5xf32>) -> tensor<5x6x7xf32>",
         ["tensor<1x5xf32>"], ["tensor<5x6x7xf32>"],
         "([k, i])->([i, j, l]) {i=5, j=6, k=1, l=7}"),
    case("broadcast_size_one_kept",
         "%0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : "
         "(tensor<1x5xf32>) -> tensor<1x5xf32>",
         ["tensor<1x5xf32>"], ["tensor<1x5xf32>"], "([i, j])->([i, j]) {i=1, j=5}"),
    case("transpose_3d",
         "%0 = stablehlo.transpose %arg0, dims = [2, 0, 1] : "
         "(tensor<2x3x4xf32>) -> tensor<4x2x3xf32>",
         ["tensor<2x3x4xf32>"], ["tensor<4x2x3xf32>"], "([j, k, i])->([i, j, k]) {i=4, j=2, k=3}"),
    _concat("concat_plain", CONCAT.format("%arg0, %arg1", 5, 7),
            ["tensor<5x4xf32>", "tensor<7x4xf32>"],
            "([i, j], [i, j])->([i, j]) {i=12, j=4} need_replication={i}"),
    _concat("concat_plain_conservative", CONCAT.format("%arg0, %arg1", 5, 7),
            ["tensor<5x4xf32>", "tensor<7x4xf32>"],
            "([j, i], [k, i])->([l, i]) {i=4, j=1, k=1, l=1}", conservative=True),
    _concat("concat_two_slices_of_one_tensor",
            SLICE_A + SLICE_B + CONCAT.format("%b, %a", 7, 5), ["tensor<12x4xf32>"],
            "([i, j], [i, j])->([i, j]) {i=12, j=4} permutation={i}"),
    _concat("concat_slice_and_its_source",
            "  %a = stablehlo.slice %arg0 [0:0, 0:4] : (tensor<12x4xf32>) -> tensor<0x4xf32>\n"
            + CONCAT.format("%arg0, %a", 12, 0), ["tensor<12x4xf32>"],
            "([i, j], [i, j])->([i, j]) {i=12, j=4} permutation={i}"),
    _concat("concat_same_tensor_twice_without_slice",
            "  %r = stablehlo.concatenate %arg0, %arg0, dim = 0 : "
            "(tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>", ["tensor<6x4xf32>"],
            "([i, j], [i, j])->([i, j]) {i=12, j=4} need_replication={i}"),
    _concat("concat_slices_of_different_tensors_plus_plain",
            "  %a = stablehlo.slice %arg0 [0:5, 0:4] : (tensor<12x4xf32>) -> tensor<5x4xf32>\n"
            + CONCAT.format("%a, %arg1", 5, 7), ["tensor<12x4xf32>", "tensor<7x4xf32>"],
            "([i, j], [i, j])->([i, j]) {i=12, j=4} need_replication={i}"),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)
