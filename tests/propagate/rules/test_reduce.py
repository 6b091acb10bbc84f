"""Reduce, reduce_window, select_and_scatter and sort."""
from __future__ import annotations

import pytest

from shardy_ref.propagate.rules.reduce import is_window_passthrough_dim

from .rule_helpers import rule_of, single_op
from .strategies_indexing import region

F32 = "tensor<f32>"
MAX = region([("%a", F32), ("%b", F32)], ["%m = stablehlo.maximum %a, %b : tensor<f32>"],
             [("%m", F32)])
GREATER = region([("%a", F32), ("%b", F32)],
                 ["%p = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>"],
                 [("%p", "tensor<i1>")])
ADD = region([("%a", F32), ("%b", F32)], ["%s = stablehlo.add %a, %b : tensor<f32>"],
             [("%s", F32)])


@pytest.mark.parametrize(("dims", "out", "expected"), [
    ("0, 1", F32, "([i, j], [])->([]) {i=4, j=6} reduction={i, j}"),
    ("", "tensor<4x6xf32>", "([i, j], [])->([i, j]) {i=4, j=6}"),
    ("0", "tensor<6xf32>", "([i, j], [])->([j]) {i=4, j=6} reduction={i}"),
])
def test_reduce(dims, out, expected):
    text = single_op(f"%0 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.add across "
                     f"dimensions = [{dims}] : (tensor<4x6xf32>, {F32}) -> {out}",
                     ["tensor<4x6xf32>", F32], [out])
    assert rule_of(text) == expected


def test_window_passthrough_dim():
    assert is_window_passthrough_dim((), (1, 2), (), 0)
    assert not is_window_passthrough_dim((), (1, 2), (), 1)
    assert not is_window_passthrough_dim((), (1, 1), (1, 2), 1)
    assert not is_window_passthrough_dim((0, 0, 0, 1), (1, 1), (), 1)
    assert is_window_passthrough_dim((0, 0, 0, 1), (1, 1), (), 0)


def _reduce_window(attrs: str, out: str) -> str:
    return single_op(f'%0 = "stablehlo.reduce_window"(%arg0, %arg1) <{{{attrs}}}> {MAX} : '
                     f"(tensor<8x6xf32>, {F32}) -> {out}", ["tensor<8x6xf32>", F32], [out])


@pytest.mark.parametrize(("attrs", "out", "conservative", "expected"), [
    ("window_dimensions = array<i64: 2, 1>", "tensor<7x6xf32>", False,
     "([i, j], [])->([i, j]) {i=7, j=6} permutation={i}"),
    ("window_dimensions = array<i64: 1, 1>, window_strides = array<i64: 1, 2>",
     "tensor<8x3xf32>", True,
     "([i, j], [])->([i, j]) {i=8, j=3} permutation={j} blocked_propagation={j}"),
    ("window_dimensions = array<i64: 1, 1>, padding = dense<[[0, 0], [1, -1]]> : "
     "tensor<2x2xi64>", "tensor<8x6xf32>", False,
     "([i, j], [])->([i, j]) {i=8, j=6} permutation={j}"),
])
def test_reduce_window(attrs, out, conservative, expected):
    """Factors are sized from the result; a shifted window (padding) also permutes."""
    assert rule_of(_reduce_window(attrs, out), conservative) == expected


@pytest.mark.parametrize(("conservative", "expected"), [
    (False, "([j, k], [i, k], [])->([j, k]) {i=4, j=8, k=6} need_replication={i} "
            "permutation={j}"),
    (True, "([j, k], [i, k], [])->([j, k]) {i=4, j=8, k=6} need_replication={i} "
           "permutation={j} blocked_propagation={i, j}"),
])
def test_select_and_scatter(conservative, expected):
    """Only the windowed dimension gets the source (need replication) and operand/result
    (permutation) factors; the other one is pointwise across all three tensors."""
    types = ["tensor<8x6xf32>", "tensor<4x6xf32>", F32]
    text = single_op(
        '%0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %arg2) <{window_dimensions = '
        f"array<i64: 2, 1>, window_strides = array<i64: 2, 1>}}> {GREATER[:-1]}, {ADD[1:]} : "
        f"({', '.join(types)}) -> tensor<8x6xf32>", types, ["tensor<8x6xf32>"])
    assert rule_of(text, conservative) == expected


@pytest.mark.parametrize(("dimension", "shape", "expected"), [
    (None, "4x6", "([i, j])->([i, j]) {i=4, j=6}"),
    (-2, "4x6", "([i, j])->([i, j]) {i=4, j=6}"),
    (1, "4x6", "([i, j])->([i, j]) {i=4, j=6} need_replication={j}"),
    (0, "6", "([i])->([i]) {i=6} need_replication={i} blocked_propagation={i}"),
    (2, "1x1x5", "([i, j, k])->([i, j, k]) {i=1, j=1, k=5} need_replication={k} "
                 "blocked_propagation={k}"),
])
def test_sort(dimension, shape, expected):
    """Upstream compares ``dimension`` with the dim index unnormalized: the default -1 and
    any negative dimension mark no factor. The sort dim is blocked when no other dim could
    be sharded."""
    t = f"tensor<{shape}xf32>"
    attrs = "" if dimension is None else f"<{{dimension = {dimension} : i64}}> "
    text = single_op(f'%0 = "stablehlo.sort"(%arg0) {attrs}{GREATER} : ({t}) -> {t}', [t], [t])
    assert rule_of(text) == expected
