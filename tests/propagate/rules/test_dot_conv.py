"""``dot``, ``dot_general`` and ``convolution``."""
from __future__ import annotations

import pytest

from .rule_helpers import case, check_case


def _conv(name, dims, lhs, rhs, out, attrs, expected, conservative=False, window=""):
    return case(name, f"%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = {dims}, "
                f"window = {{{window}}} {{{attrs}}} : ({lhs}, {rhs}) -> {out}",
                [lhs, rhs], [out], expected, conservative)


GROUPS = "batch_group_count = {} : i64, feature_group_count = {} : i64"
CASES = [
    case("dot_vector_matrix_sizes",
         "%0 = stablehlo.dot %arg0, %arg1 : (tensor<6xf32>, tensor<6x9xf32>) -> tensor<9xf32>",
         ["tensor<6xf32>", "tensor<6x9xf32>"], ["tensor<9xf32>"],
         "([j], [j, i])->([i]) {i=9, j=6} reduction={j}"),
    case("dot_general_contracting_first_batch_last",
         "%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [2] x [0], "
         "contracting_dims = [0] x [2] : "
         "(tensor<3x5x2xf32>, tensor<2x7x3xf32>) -> tensor<2x5x7xf32>",
         ["tensor<3x5x2xf32>", "tensor<2x7x3xf32>"], ["tensor<2x5x7xf32>"],
         "([l, j, i], [i, k, l])->([i, j, k]) {i=2, j=5, k=7, l=3} reduction={l}"),
    case("dot_general_two_contracting",
         "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0, 1] x [1, 0] : "
         "(tensor<3x4x5xf32>, tensor<4x3xf32>) -> tensor<5xf32>",
         ["tensor<3x4x5xf32>", "tensor<4x3xf32>"], ["tensor<5xf32>"],
         "([j, k, i], [k, j])->([i]) {i=5, j=3, k=4} reduction={j, k}"),
    _conv("conv_1d_window_size_capped_to_one", "[b, 0, f]x[0, i, o]->[b, 0, f]",
          "tensor<2x10x3xf32>", "tensor<4x3x6xf32>", "tensor<2x7x6xf32>", GROUPS.format(1, 1),
          "([i, j, k], [m, k, l])->([i, j, l]) {i=2, j=7, k=3, l=6, m=1} "
          "reduction={k} permutation={j}"),
    _conv("conv_1d_conservative", "[b, 0, f]x[0, i, o]->[b, 0, f]",
          "tensor<2x10x3xf32>", "tensor<4x3x6xf32>", "tensor<2x7x6xf32>", GROUPS.format(1, 1),
          "([i, l, j], [m, j, k])->([i, n, k]) {i=2, j=3, k=6, l=1, m=1, n=1} reduction={j}",
          conservative=True),
    _conv("conv_window_size_capped_and_windows_one", "[b, f, 0]x[o, i, 0]->[b, f, 0]",
          "tensor<4x2x16xf32>", "tensor<8x2x12xf32>", "tensor<4x8x5xf32>", GROUPS.format(1, 1),
          "([i, k, j], [l, k, j])->([i, l, m]) {i=4, j=12, k=2, l=8, m=1} "
          "reduction={j, k}"),
    _conv("conv_feature_groups", "[b, 0, f]x[0, i, o]->[b, 0, f]",
          "tensor<2x8x6xf32>", "tensor<1x3x4xf32>", "tensor<2x8x4xf32>", GROUPS.format(1, 2),
          "([i, j, kl], [n, l, km])->([i, j, km]) {i=2, j=8, k=2, l=3, m=2, n=1} "
          "reduction={l} permutation={j}"),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)
