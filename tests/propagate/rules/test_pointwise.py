"""Pointwise rules (``buildPointwise``), ``clamp`` and ``select``."""
from __future__ import annotations

import pytest

from .rule_helpers import case, check_case

CASES = [
    *(case(f"binary_{op}", f'%0 = "stablehlo.{op}"(%arg0, %arg1) : ({t}, {t}) -> {t}',
           [t, t], [t], "([i, j, k], [i, j, k])->([i, j, k]) {i=4, j=1, k=6}")
      for op, t in (("subtract", "tensor<4x1x6xi32>"), ("atan2", "tensor<4x1x6xf32>"),
                    ("power", "tensor<4x1x6xf32>"), ("shift_right_logical", "tensor<4x1x6xi32>"))),
    case("compare_result_type_differs",
         "%0 = stablehlo.compare LT, %arg0, %arg1 : "
         "(tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xi1>",
         ["tensor<3x5xf32>", "tensor<3x5xf32>"], ["tensor<3x5xi1>"],
         "([i, j], [i, j])->([i, j]) {i=3, j=5}"),
    case("convert", "%0 = stablehlo.convert %arg0 : (tensor<2x0xf32>) -> tensor<2x0xbf16>",
         ["tensor<2x0xf32>"], ["tensor<2x0xbf16>"], "([i, j])->([i, j]) {i=2, j=0}"),
    case("scalar", "%0 = stablehlo.negate %arg0 : tensor<i8>", ["tensor<i8>"], ["tensor<i8>"],
         "([])->([])"),
    case("clamp_scalar_bounds",
         "%0 = stablehlo.clamp %arg1, %arg0, %arg1 : "
         "(tensor<f32>, tensor<2x7xf32>, tensor<f32>) -> tensor<2x7xf32>",
         ["tensor<2x7xf32>", "tensor<f32>"], ["tensor<2x7xf32>"],
         "([], [i, j], [])->([i, j]) {i=2, j=7}"),
    case("select_scalar_pred",
         "%0 = stablehlo.select %arg0, %arg1, %arg1 : "
         "(tensor<i1>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>",
         ["tensor<i1>", "tensor<5x3xf32>"], ["tensor<5x3xf32>"],
         "([], [i, j], [i, j])->([i, j]) {i=5, j=3}"),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)


def test_sharding_constraint_is_pointwise():
    from .rule_helpers import rule_of, single_op

    text = ('sdy.mesh @m = <["a"=2]>\n' + single_op(
        '%0 = sdy.sharding_constraint %arg0 <@m, [{"a"}, {}]> : tensor<8x2xf32>',
        ["tensor<8x2xf32>"], ["tensor<8x2xf32>"]))
    assert rule_of(text) == "([i, j])->([i, j]) {i=8, j=2}"
