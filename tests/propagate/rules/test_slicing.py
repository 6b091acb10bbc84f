"""Slice, dynamic_slice, dynamic_update_slice, pad and reverse: pointwise rules whose
sliced, padded or reversed dimensions get permutation / need-replication factors."""
from __future__ import annotations

import pytest

from .rule_helpers import rule_of, single_op

F32 = "tensor<f32>"
I32 = "tensor<i32>"


@pytest.mark.parametrize(("conservative", "expected"), [
    (False, "([i, j])->([i, j]) {i=8, j=5} permutation={i}"),
    (True, "([i, j])->([i, j]) {i=8, j=5} permutation={i} blocked_propagation={i}"),
])
def test_slice_with_stride_only(conservative, expected):
    text = single_op("%0 = stablehlo.slice %arg0 [0:8:2, 0:5] : (tensor<8x5xf32>) -> "
                     "tensor<4x5xf32>", ["tensor<8x5xf32>"], ["tensor<4x5xf32>"])
    assert rule_of(text, conservative) == expected


def test_dynamic_slice_of_everything_is_pointwise():
    text = single_op("%0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [8, 5] : "
                     "(tensor<8x5xf32>, tensor<i32>, tensor<i32>) -> tensor<8x5xf32>",
                     ["tensor<8x5xf32>", I32, I32], ["tensor<8x5xf32>"])
    assert rule_of(text) == "([i, j], [], [])->([i, j]) {i=8, j=5}"


def test_dynamic_slice_blocks_sliced_dims_even_when_not_conservative():
    text = single_op("%0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [3, 5] : "
                     "(tensor<8x5xf32>, tensor<i32>, tensor<i32>) -> tensor<3x5xf32>",
                     ["tensor<8x5xf32>", I32, I32], ["tensor<3x5xf32>"])
    assert rule_of(text) == ("([i, j], [], [])->([i, j]) {i=8, j=5} need_replication={i} "
                             "blocked_propagation={i}")


def _dus(update: str, indices: list[str], consts: str = "") -> str:
    args = ["tensor<8x6xf32>", update] + [I32] * sum(i.startswith("%arg") for i in indices)
    return single_op(
        f"{consts}%0 = stablehlo.dynamic_update_slice %arg0, %arg1, {', '.join(indices)} : "
        f"(tensor<8x6xf32>, {update}, {I32}, {I32}) -> tensor<8x6xf32>",
        args, ["tensor<8x6xf32>"])


def test_dynamic_update_slice_with_dynamic_indices():
    # dim 0 (8 vs 2) and dim 1 (6 vs 3) are sliced: the operand/result keep a pass-through
    # factor, the update gets its own need-replication factor
    text = _dus("tensor<2x3xf32>", ["%arg2", "%arg3"])
    assert rule_of(text) == ("([i, k], [j, l], [], [])->([i, k]) {i=8, j=2, k=6, l=3} "
                             "need_replication={j, l}")


@pytest.mark.parametrize("constant", ["stablehlo.constant", "sdy.constant", "arith.constant"])
def test_dynamic_update_slice_with_constant_indices(constant):
    consts = f"%c = {constant} dense<1> : {I32}\n  "
    text = _dus("tensor<2x6xf32>", ["%c", "%c"], consts)
    assert rule_of(text) == "([i, k], [j, k], [], [])->([i, k]) {i=8, j=2, k=6}"


def test_dynamic_update_slice_with_some_constant_indices():
    consts = f"%c = stablehlo.constant dense<1> : {I32}\n  "
    text = _dus("tensor<2x3xf32>", ["%c", "%arg2"], consts)
    assert rule_of(text) == ("([i, k], [j, l], [], [])->([i, k]) {i=8, j=2, k=6, l=3} "
                             "need_replication={j, l}")


@pytest.mark.parametrize(("padding", "out", "conservative", "expected"), [
    ("low = [0, 0], high = [0, 0], interior = [1, 0]", "7x5", False,
     "([i, j], [])->([i, j]) {i=4, j=5} permutation={i}"),
    ("low = [0, 1], high = [0, 0], interior = [0, 0]", "4x6", True,
     "([i, j], [])->([i, j]) {i=4, j=5} permutation={j} blocked_propagation={j}"),
    ("low = [1, 0], high = [-1, 0], interior = [0, 0]", "4x5", True,
     "([i, j], [])->([i, j]) {i=4, j=5}"),
])
def test_pad(padding, out, conservative, expected):
    """A dimension whose size does not change is pass-through, even if padded."""
    text = single_op(f"%0 = stablehlo.pad %arg0, %arg1, {padding} : (tensor<4x5xf32>, {F32}) "
                     f"-> tensor<{out}xf32>", ["tensor<4x5xf32>", F32], [f"tensor<{out}xf32>"])
    assert rule_of(text, conservative) == expected


@pytest.mark.parametrize(("dims", "expected"), [
    ("", "([i, j, k])->([i, j, k]) {i=4, j=5, k=2}"),
    ("0, 2", "([i, j, k])->([i, j, k]) {i=4, j=5, k=2} permutation={i, k}"),
])
def test_reverse(dims, expected):
    t = "tensor<4x5x2xf32>"
    text = single_op(f"%0 = stablehlo.reverse %arg0, dims = [{dims}] : {t}", [t], [t])
    assert rule_of(text) == expected
