"""CHLO kernels against independent formulas written here: mulhi on Python integers,
next_after by enumerating a format's values, top_k by sorting rows in Python, the
broadcasting ops against NumPy, ragged_dot mode by mode with per-group loops, scan against
running sums; edge cases (NaN, infinities, signed zeros, ties); and varying operands (one
vectorized run over 3 processes equals each process alone)."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from tests.execute.chlo_programs import literal, random_array, ttype
from tests.execute.kernel_harness import assert_varying_matches


def one_op(op_text: str, args: list[str], results: list[str]) -> str:
    """``@main(%a0, %a1...)`` returning the results of ``op_text`` (which defines ``%r``)."""
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(args))
    names = ", ".join(f"%r#{i}" for i in range(len(results))) if len(results) > 1 else "%r"
    return (f"func.func @main({params}) -> ({', '.join(results)}) {{\n  {op_text}\n"
            f"  return {names} : {', '.join(results)}\n}}\n")


# -- mulhi ---------------------------------------------------------------------------------

_INTS = ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64", "i4", "ui4"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_INTS), st.integers(0, 2**32 - 1))
def test_mulhi_is_the_high_half_of_the_exact_product(et, seed):
    rng = np.random.default_rng(seed)
    width, unsigned = int(et.lstrip("ui")), et.startswith("u")
    lo, hi = (0, 1 << width) if unsigned else (-(1 << (width - 1)), 1 << (width - 1))
    a = [int(v) for v in rng.integers(lo, hi, 6, dtype=np.uint64 if unsigned else np.int64)]
    b = [int(v) for v in rng.integers(lo, hi, 6, dtype=np.uint64 if unsigned else np.int64)]
    a[:2], b[:2] = [lo, hi - 1], [hi - 1, lo]
    t = ttype((6,), et)
    text = one_op(f"%r = chlo.mulhi %a0, %a1 : {t}, {t} -> {t}", [t, t], [t])
    dtype = {"i4": ml_dtypes.int4, "ui4": ml_dtypes.uint4}.get(et, np.dtype(et.replace(
        "ui", "uint").replace("i", "int") if not et.startswith("ui") else "uint" + et[2:]))
    (out,) = run(text, np.array(a, dtype=object).astype(dtype),
                 np.array(b, dtype=object).astype(dtype))
    for x, y, got in zip(a, b, out.astype(object), strict=True):
        high = (x * y) >> width
        high %= 1 << width
        if not unsigned and high >= 1 << (width - 1):
            high -= 1 << width
        assert int(got) == high, (x, y)


# -- next_after ----------------------------------------------------------------------------


def _neighbours(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every finite and infinite value of a 16-bit format in increasing order (one zero)."""
    with np.errstate(invalid="ignore"):
        bits = np.arange(1 << 16, dtype=np.uint16).view(dtype).astype(np.float64)
    values = np.unique(bits[~np.isnan(bits)])
    return values, bits


@pytest.mark.parametrize("et", ["bf16", "f16"])
def test_next_after_steps_to_the_adjacent_value(et):
    dtype = ml_dtypes.bfloat16 if et == "bf16" else np.float16
    values, _ = _neighbours(dtype)
    rng = np.random.default_rng(1)
    x = values[rng.integers(1, len(values) - 1, 200)]
    y = np.where(rng.random(200) < 0.5, np.inf, -np.inf)
    t = ttype((200,), et)
    text = one_op(f"%r = chlo.next_after %a0, %a1 : {t}, {t} -> {t}", [t, t], [t])
    (out,) = run(text, x.astype(dtype), y.astype(dtype))
    index = np.searchsorted(values, x)
    want = np.where(y > 0, values[index + 1], values[index - 1])
    want = np.where(x == 0, np.where(y > 0, values[index + 1], values[index - 1]), want)
    assert np.array_equal(out.astype(np.float64), want)


def test_next_after_edge_cases_match_c():
    x = np.array([0.0, -0.0, 0.0, 1.0, np.nan, 1.0, 2.0, -0.0, np.inf], np.float32)
    y = np.array([-0.0, 0.0, 1.0, 1.0, 1.0, np.nan, 1.0, -1.0, 0.0], np.float32)
    t = ttype((9,), "f32")
    text = one_op(f"%r = chlo.next_after %a0, %a1 : {t}, {t} -> {t}", [t, t], [t])
    (out,) = run(text, x, y)
    want = np.nextafter(x, y)
    assert np.array_equal(out.view(np.uint32)[~np.isnan(want)],
                          want.view(np.uint32)[~np.isnan(want)])
    assert np.array_equal(np.isnan(out), np.isnan(want))


# -- top_k ---------------------------------------------------------------------------------


def _python_top_k(row, k):
    """Indices of the k largest (floats in total order: NaN largest, -0 < +0), ties by
    index."""
    def key(i):
        v = float(row[i])
        if math.isnan(v):
            return (2, 0.0)
        return (1, v, math.copysign(1.0, v))
    return sorted(range(len(row)), key=lambda i: (tuple(-x for x in key(i)), i))[:k]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["f32", "bf16", "i32", "ui8"]), st.integers(1, 6), st.integers(1, 3),
       st.integers(0, 2**32 - 1))
def test_top_k_matches_a_stable_python_sort(et, n, rows, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, n + 1))
    data = random_array(rng, (rows, n), et, -2, 2)
    if et in ("f32", "bf16"):
        data = np.round(data * 2) / 2  # ties
        data.flat[0] = np.nan if seed % 3 == 0 else -0.0
    t = ttype((rows, n), et)
    text = one_op(f"%r:2 = chlo.top_k(%a0, k = {k}) : {t} -> ({ttype((rows, k), et)}, "
                  f"{ttype((rows, k), 'i32')})", [t], [ttype((rows, k), et),
                                                         ttype((rows, k), "i32")])
    from tests.execute.kernel_harness import dtype_of
    arr = np.asarray(data).astype(dtype_of(et))
    values, indices = run(text, arr)
    for r in range(rows):
        want = _python_top_k(arr[r], k)
        assert list(indices[r]) == want
        assert np.array_equal(values[r].astype(np.float64), arr[r][want].astype(np.float64),
                              equal_nan=True)


# -- broadcasting ops ----------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_broadcast_binary_ops_follow_numpy(seed):
    rng = np.random.default_rng(seed)
    out_shape = tuple(int(d) for d in rng.integers(1, 4, rng.integers(1, 4)))
    rank_b = int(rng.integers(0, len(out_shape) + 1))
    b_shape = tuple(d if rng.random() < 0.7 else 1 for d in out_shape[len(out_shape) - rank_b:])
    a_shape = tuple(d if rng.random() < 0.7 else 1 for d in out_shape)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    a, b = rng.integers(-9, 10, a_shape), rng.integers(1, 10, b_shape)
    ta, tb, to = ttype(a_shape, "i32"), ttype(b_shape, "i32"), ttype(out_shape, "i32")
    for name, fn in (("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                     ("maximum", np.maximum), ("xor", np.bitwise_xor)):
        text = one_op(f"%r = chlo.broadcast_{name} %a0, %a1 : ({ta}, {tb}) -> {to}",
                      [ta, tb], [to])
        (out,) = run(text, a.astype(np.int32), b.astype(np.int32))
        assert np.array_equal(out, fn(a, b).astype(np.int32)), name


def test_broadcast_dimensions_map_the_smaller_operand():
    a = np.arange(3, dtype=np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2) * 10
    text = one_op("%r = chlo.broadcast_add %a0, %a1 {broadcast_dimensions = array<i64: 0>} "
                  ": (tensor<3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>",
                  ["tensor<3xf32>", "tensor<3x2xf32>"], ["tensor<3x2xf32>"])
    (out,) = run(text, a, b)
    assert np.array_equal(out, a[:, None] + b)
    # a transposing map of equal ranks: lhs dimension i goes to rhs dimension dims[i]
    c = np.arange(6, dtype=np.float32).reshape(2, 3)
    text = one_op("%r = chlo.broadcast_subtract %a0, %a1 {broadcast_dimensions = "
                  "array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>",
                  ["tensor<2x3xf32>", "tensor<3x2xf32>"], ["tensor<3x2xf32>"])
    (out,) = run(text, c, b)
    assert np.array_equal(out, c.T - b)


def test_broadcast_compare_select_and_complex():
    a = np.array([[1.0, np.nan], [3.0, -0.0]], np.float32)
    b = np.array([2.0, 0.0], np.float32)
    ta, tb = "tensor<2x2xf32>", "tensor<2xf32>"
    text = one_op("%r = chlo.broadcast_compare %a0, %a1 {comparison_direction = "
                  "#chlo<comparison_direction LT>, compare_type = #chlo<comparison_type "
                  "TOTALORDER>} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xi1>",
                  [ta, tb], ["tensor<2x2xi1>"])
    (out,) = run(text, a, b)
    assert out.tolist() == [[True, False], [False, True]]  # -0 < +0, NaN largest
    pred = np.array([True, False])
    text = one_op("%r = chlo.broadcast_select %a0, %a1, %a2 : (tensor<2xi1>, tensor<2x2xf32>,"
                  " tensor<f32>) -> tensor<2x2xf32>", ["tensor<2xi1>", ta, "tensor<f32>"],
                  [ta])
    (out,) = run(text, pred, a, np.float32(7))
    assert np.array_equal(out, np.where(pred, a, 7), equal_nan=True)
    text = one_op("%r = chlo.broadcast_complex %a0, %a1 : (tensor<2x2xf32>, tensor<2xf32>) -> "
                  "tensor<2x2xcomplex<f32>>", [ta, tb], ["tensor<2x2xcomplex<f32>>"])
    (out,) = run(text, a, b)
    assert np.array_equal(out.real, a, equal_nan=True)
    assert np.array_equal(out.imag, np.broadcast_to(b, a.shape))


# -- unary ops -----------------------------------------------------------------------------


def test_square_conj_and_inf_tests():
    z = np.array([1 + 2j, 3 - 3j, -2 + 2j, complex(np.inf, np.inf), 0.5 - 0.25j], np.complex64)
    t = "tensor<5xcomplex<f32>>"
    (sq,) = run(one_op(f"%r = chlo.square %a0 : {t} -> {t}", [t], [t]), z)
    re, im = z.real, z.imag
    with np.errstate(invalid="ignore"):
        want_re = np.where(np.isfinite(re) & (np.abs(re) == np.abs(im)), 0,
                           (re - im) * (re + im))
    assert np.array_equal(sq.real, want_re.astype(np.float32), equal_nan=True)
    assert np.array_equal(sq.imag, (2 * (re * im)).astype(np.float32))
    assert math.copysign(1, sq.real[2]) == 1  # +0, not -0, where |re| == |im|
    (cj,) = run(one_op(f"%r = chlo.conj %a0 : {t} -> {t}", [t], [t]), z)
    assert np.array_equal(cj, np.conj(z))
    x = np.array([np.inf, -np.inf, np.nan, 0.0, 1e38], np.float32)
    for name, want in (("is_inf", np.isinf(x)), ("is_pos_inf", x == np.inf),
                       ("is_neg_inf", x == -np.inf)):
        (out,) = run(one_op(f"%r = chlo.{name} %a0 : tensor<5xf32> -> tensor<5xi1>",
                            ["tensor<5xf32>"], ["tensor<5xi1>"]), x)
        assert out.tolist() == want.tolist(), name


@pytest.mark.parametrize(("name", "fn"), [("acos", math.acos), ("asin", math.asin),
                                     ("atan", math.atan), ("atanh", math.atanh),
                                     ("asinh", math.asinh), ("cosh", math.cosh),
                                     ("sinh", math.sinh), ("tan", math.tan)])
def test_real_transcendentals_are_correctly_rounded_from_double(name, fn):
    x = np.linspace(-0.99, 0.99, 41, dtype=np.float32)
    (out,) = run(one_op(f"%r = chlo.{name} %a0 : tensor<41xf32> -> tensor<41xf32>",
                        ["tensor<41xf32>"], ["tensor<41xf32>"]), x)
    want = np.array([fn(float(v)) for v in x]).astype(np.float32)
    assert np.array_equal(out, want)


def test_asin_acos_kernel_reconstructs_asin_and_acos():
    z = np.array([0.3 + 0.2j, -2 + 1j, 0.5 - 3j, 5 + 0j], np.complex128)
    t = "tensor<4xcomplex<f64>>"
    (w,) = run(one_op(f"%r = chlo._asin_acos_kernel %a0 : {t} -> {t}", [t], [t]), z)
    asin = np.arctan2(z.real, w.real) + 1j * np.sign(z.imag) * w.imag
    acos = np.arctan2(w.real, z.real) - 1j * np.sign(z.imag) * w.imag
    assert np.allclose(asin[:3], np.arcsin(z[:3]), rtol=1e-12)
    assert np.allclose(acos[:3], np.arccos(z[:3]), rtol=1e-12)


def test_constants():
    text = ("func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xi32>) {\n"
            '  %0 = "chlo.constant_like"(%a) <{value = 2.5 : f32}> : (tensor<2x3xf32>) -> '
            "tensor<2x3xf32>\n  %1 = chlo.constant dense<[1, 2]> : tensor<2xi32>\n"
            "  return %0, %1 : tensor<2x3xf32>, tensor<2xi32>\n}")
    like, const = run(text, np.zeros((2, 3), np.float32))
    assert np.array_equal(like, np.full((2, 3), 2.5, np.float32))
    assert const.tolist() == [1, 2]


# -- ragged_dot ----------------------------------------------------------------------------

_RAGGED = ('%r = "chlo.ragged_dot"(%a0, %a1, %a2) {{ragged_dot_dimension_numbers = '
           "#chlo.ragged_dot<{dims}>}} : ({lt}, {rt}, {gt}) -> {ot}")


def _ragged(lhs, rhs, sizes, dims: str, out_shape):
    lt, rt = ttype(lhs.shape, "f32"), ttype(rhs.shape, "f32")
    gt, ot = ttype(sizes.shape, "i64"), ttype(out_shape, "f32")
    text = one_op(_RAGGED.format(dims=dims, lt=lt, rt=rt, gt=gt, ot=ot), [lt, rt, gt], [ot])
    return run(text, lhs.astype(np.float32), rhs.astype(np.float32), sizes)[0]


def test_ragged_dot_mode_1_uses_each_groups_rhs():
    rng = np.random.default_rng(0)
    lhs, rhs = rng.integers(-3, 4, (2, 7, 3)), rng.integers(-3, 4, (3, 2, 3, 4))
    sizes = np.array([[2, 3, 1], [0, 4, 3]], np.int64)  # row 6 of batch 0 in no group
    out = _ragged(lhs, rhs, sizes, "lhs_batching_dimensions = [0], rhs_batching_dimensions = "
                  "[1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], "
                  "lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]", (2, 7, 4))
    want = np.zeros((2, 7, 4))
    for b in range(2):
        start = 0
        for g, size in enumerate(sizes[b]):
            for m in range(start, min(start + size, 7)):
                want[b, m] = lhs[b, m] @ rhs[g, b]
            start += size
    assert np.array_equal(out, want)


def test_ragged_dot_mode_2_gives_one_result_per_group():
    rng = np.random.default_rng(1)
    lhs, rhs = rng.integers(-3, 4, (3, 6)), rng.integers(-3, 4, (6, 2))
    sizes = np.array([1, 4, 1], np.int64)
    out = _ragged(lhs, rhs, sizes, "lhs_contracting_dimensions = [1], "
                  "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1]", (3, 3, 2))
    bounds = np.cumsum([0, *sizes])
    for g in range(3):
        k = slice(bounds[g], bounds[g + 1])
        assert np.array_equal(out[g], lhs[:, k] @ rhs[k])


def test_ragged_dot_mode_3_is_a_batched_dot():
    rng = np.random.default_rng(2)
    lhs, rhs = rng.integers(-3, 4, (4, 2, 3)), rng.integers(-3, 4, (4, 3, 5))
    out = _ragged(lhs, rhs, np.array([1, 3], np.int64), "lhs_batching_dimensions = [0], "
                  "rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
                  "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0]", (4, 2, 5))
    assert np.array_equal(out, np.einsum("bmk,bkn->bmn", lhs, rhs))


# -- scan ----------------------------------------------------------------------------------

_SCAN = """func.func @main(%x: tensor<3x4xi32>, %init: tensor<3xi32>) -> (tensor<3x4xi32>,
    tensor<3x4xi32>, tensor<3xi32>) {
  %0:3 = chlo.scan(%x) inits(%init) dimension=1 {reverse} {
  ^bb0(%in: tensor<3xi32>, %acc: tensor<3xi32>):
    %s = stablehlo.add %in, %acc : tensor<3xi32>
    %m = stablehlo.multiply %in, %in : tensor<3xi32>
    stablehlo.return %s, %m, %s : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
  } : (tensor<3x4xi32>, tensor<3xi32>) -> (tensor<3x4xi32>, tensor<3x4xi32>, tensor<3xi32>)
  return %0#0, %0#1, %0#2 : tensor<3x4xi32>, tensor<3x4xi32>, tensor<3xi32>
}"""


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_is_a_running_sum(reverse):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    init = np.array([100, 0, -5], np.int32)
    text = _SCAN.replace("{reverse}", "attributes {is_reverse = true}" if reverse else "")
    sums, squares, carry = run(text, x, init)
    order = x[:, ::-1] if reverse else x
    want = init[:, None] + np.cumsum(order, axis=1)
    assert np.array_equal(sums, want[:, ::-1] if reverse else want)
    assert np.array_equal(squares, x * x)
    assert np.array_equal(carry, init + x.sum(axis=1))


def test_scan_varying_matches_each_process():
    rng = np.random.default_rng(3)
    x = rng.integers(-5, 5, (3, 3, 4)).astype(np.int32)
    init = rng.integers(-5, 5, (3, 3)).astype(np.int32)
    text = _SCAN.replace("{reverse}", "")
    assert_varying_matches(text, [x, init[0]], [True, False])
    assert_varying_matches(text, [x[0], init], [False, True])


# -- varying operands of the other families -----------------------------------------------


def test_varying_operands_match_each_process():
    rng = np.random.default_rng(4)
    f = rng.uniform(-2, 2, (3, 2, 5)).astype(np.float32)
    g = rng.uniform(0.5, 2, (3, 5)).astype(np.float32)
    t, tv = "tensor<2x5xf32>", "tensor<5xf32>"
    for op_text, args, res in (
            (f"%r = chlo.broadcast_add %a0, %a1 : ({t}, {tv}) -> {t}", [t, tv], [t]),
            (f"%r = chlo.erf %a0 : {t} -> {t}", [t], [t]),
            (f"%r = chlo.lgamma %a0 : {t} -> {t}", [t], [t]),
            (f"%r = chlo.zeta %a0, %a0 : {t}, {t} -> {t}", [t], [t]),
            (f"%r = chlo.next_after %a0, %a0 : {t}, {t} -> {t}", [t], [t]),
            (f"%r:2 = chlo.top_k(%a0, k = 3) : {t} -> (tensor<2x3xf32>, tensor<2x3xi32>)", [t],
             ["tensor<2x3xf32>", "tensor<2x3xi32>"])):
        text = one_op(op_text, args, res)
        arrays = [f, g][:len(args)]
        assert_varying_matches(text, arrays, [True] * len(args))
        if len(args) == 2:
            assert_varying_matches(text, [f, g[0]], [True, False])
    gt = "tensor<2xi64>"
    ragged = _RAGGED.format(dims="lhs_contracting_dimensions = [1], rhs_contracting_dimensions "
                                 "= [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []",
                            lt=t, rt="tensor<5x3xf32>", gt=gt, ot="tensor<2x2x3xf32>")
    sizes = np.array([[2, 3], [0, 5], [4, 1]], np.int64)
    text = one_op(ragged, [t, "tensor<5x3xf32>", gt], ["tensor<2x2x3xf32>"])
    rhs = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    assert_varying_matches(text, [f, rhs, sizes], [True, False, True])


def test_literal_helper_round_trips_special_values():
    assert literal(np.array([np.inf, -np.inf, 1.5]), "bf16") == \
        "dense<[0x7F80, 0xFF80, 1.5]> : tensor<3xbf16>"
