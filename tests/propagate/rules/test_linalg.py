"""Cholesky, triangular_solve, fft, batch_norm_inference, rng_bit_generator and
bitcast_convert."""
from __future__ import annotations

import pytest

from .rule_helpers import rule_of, single_op


@pytest.mark.parametrize(("in_t", "out_t", "expected"), [
    ("tensor<f32>", "tensor<i32>", "([])->([])"),
    ("tensor<2xui32>", "tensor<ui64>", "([i])->([]) {i=2} need_replication={i}"),
    ("tensor<3xui64>", "tensor<3x4xui16>", "([i])->([i, j]) {i=3, j=4} need_replication={j}"),
    ("tensor<3x5xf32>", "tensor<3x5xi32>", "([i, j])->([i, j]) {i=3, j=5}"),
])
def test_bitcast_convert(in_t, out_t, expected):
    text = single_op(f"%0 = stablehlo.bitcast_convert %arg0 : ({in_t}) -> {out_t}",
                     [in_t], [out_t])
    assert rule_of(text) == expected


def test_batch_norm_inference_feature_dim_is_shared_with_the_vectors():
    v = "tensor<3xf32>"
    text = single_op(
        '%0 = "stablehlo.batch_norm_inference"(%arg0, %arg1, %arg2, %arg3, %arg4) '
        "<{epsilon = 1.0e-03 : f32, feature_index = 0 : i64}> : "
        f"(tensor<3x5xf32>, {v}, {v}, {v}, {v}) -> tensor<3x5xf32>",
        ["tensor<3x5xf32>", v, v, v, v], ["tensor<3x5xf32>"])
    assert rule_of(text) == "([i, j], [i], [i], [i], [i])->([i, j]) {i=3, j=5}"


def test_cholesky_without_batch_dims():
    t = "tensor<5x5xf32>"
    text = single_op(f"%0 = stablehlo.cholesky %arg0 : ({t}) -> {t}", [t], [t])
    assert rule_of(text) == "([i, j])->([i, j]) {i=5, j=5} need_replication={i, j}"


@pytest.mark.parametrize(("left", "transpose", "b", "expected"), [
    (True, "ADJOINT", "4x7", "([k, i], [i, j])->([k, j]) {i=4, j=7, k=4} "
                             "need_replication={i, j, k}"),
    (False, "NO_TRANSPOSE", "7x4", "([k, j], [i, j])->([i, k]) {i=7, j=4, k=4} "
                                   "need_replication={i, j, k}"),
])
def test_triangular_solve_without_batch_dims(left, transpose, b, expected):
    a, b = "tensor<4x4xf32>", f"tensor<{b}xf32>"
    text = single_op(
        f'%0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{{left_side = {str(left).lower()},'
        f" lower = false, transpose_a = #stablehlo<transpose {transpose}>, unit_diagonal = "
        f"true}}> : ({a}, {b}) -> {b}", [a, b], [b])
    assert rule_of(text) == expected


@pytest.mark.parametrize(("kind", "length", "in_t", "out_t", "expected"), [
    ("RFFT", "8", "tensor<8xf32>", "tensor<5xcomplex<f32>>",
     "([i])->([i]) {i=8} need_replication={i} blocked_propagation={i}"),
    ("RFFT", "2", "tensor<2xf32>", "tensor<2xcomplex<f32>>",
     "([i])->([i]) {i=2} need_replication={i}"),
    ("FFT", "4, 8", "tensor<3x4x8xcomplex<f32>>", "tensor<3x4x8xcomplex<f32>>",
     "([i, j, k])->([i, j, k]) {i=3, j=4, k=8} need_replication={j, k}"),
])
def test_fft(kind, length, in_t, out_t, expected):
    """Blocked only when the last dimension changes size (a 2-point RFFT keeps it)."""
    text = single_op(f"%0 = stablehlo.fft %arg0, type = {kind}, length = [{length}] : "
                     f"({in_t}) -> {out_t}", [in_t], [out_t])
    assert rule_of(text) == expected


def test_rng_bit_generator_with_scalar_output():
    state = "tensor<2xui64>"
    text = single_op(f"%0:2 = stablehlo.rng_bit_generator %arg0, algorithm = THREE_FRY : "
                     f"({state}) -> ({state}, tensor<ui32>)", [state], [state, "tensor<ui32>"])
    assert rule_of(text) == "([i])->([i], []) {i=2} need_replication={i} blocked_propagation={i}"
