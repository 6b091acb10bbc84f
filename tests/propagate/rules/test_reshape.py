"""``reshape``: the gcd walk (shared gcd factors, diverging and re-converging factor
products, size-1 dimensions, size-0 tensors)."""
from __future__ import annotations

import pytest

from .rule_helpers import case, check_case


def _reshape(name: str, in_shape: str, out_shape: str, expected: str | None):
    t_in, t_out = (f"tensor<{s}xf32>" if s else "tensor<f32>" for s in (in_shape, out_shape))
    return case(name, f"%0 = stablehlo.reshape %arg0 : ({t_in}) -> {t_out}", [t_in], [t_out],
                expected)


CASES = [
    _reshape("coprime_swap", "3x4", "4x3", "([i, k])->([j, l]) {i=3, j=4, k=4, l=3}"),
    _reshape("gcd_chain", "6x10", "4x15", "([ij, mn])->([ik, ln]) {i=2, j=3, k=2, l=3, m=2, n=5}"),
    _reshape("three_way_merge", "2x3x5", "30", "([i, j, k])->([ijk]) {i=2, j=3, k=5}"),
    _reshape("split_with_ones", "1x12x1", "3x1x4",
             "([i, jl, m])->([j, k, l]) {i=1, j=3, k=1, l=4, m=1}"),
    _reshape("to_scalar", "1x1", "", "([i, j])->([]) {i=1, j=1}"),
    _reshape("size_zero", "0x4", "4x0", None),
    _reshape("diverged_products_reconverge", "12x6", "8x9",
             "([ij, mn])->([ik, ln]) {i=4, j=3, k=2, l=3, m=2, n=3}"),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)
