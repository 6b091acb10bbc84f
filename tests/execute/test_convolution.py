"""convolution and dynamic_conv: random layouts, strides, paddings (negative too),
dilations, reversal and group counts against a direct per-output-position formula of the
spec, conversion to the result type, varying operands, and random programs against the
reference interpreter."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from shardy_ref.ir.diagnostics import VerifyError
from tests.execute.kernel_harness import (
    assert_varying_matches,
    check_against_oracle,
    literal,
    module,
    random_values,
    random_window_padding,
    tensor_type,
)


def _layout(rng, d: int, letters: tuple[str, str]) -> tuple[list, str]:
    """A random placement of two letters and d spatial dims: (dims in canonical order
    [letter0, letter1, spatial..] -> position, printed layout)."""
    perm = [int(p) for p in rng.permutation(d + 2)]
    slots = [""] * (d + 2)
    for i, p in enumerate(perm):
        slots[p] = letters[i] if i < 2 else str(i - 2)
    return perm, "[" + ", ".join(slots) + "]"


def random_conv(rng: np.random.Generator, et: str = "i32", small: bool = True,
                negative_padding: bool = True, batch_before_feature: bool = False) -> dict:
    d = int(rng.integers(1, 3))
    fg, bg = (int(rng.integers(1, 3)), 1) if rng.random() < 0.5 else (1, int(rng.integers(1, 3)))
    nbatch, ifeat, ojf = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    n, c, o = nbatch * bg, ifeat * fg, ojf * fg * bg
    spatial = [int(rng.integers(1, 5)) for _ in range(d)]
    kernel = [int(rng.integers(1, 4)) for _ in range(d)]
    strides = [int(rng.integers(1, 3)) for _ in range(d)]
    lhs_dil = [int(rng.integers(1, 3)) for _ in range(d)]
    rhs_dil = [int(rng.integers(1, 3)) for _ in range(d)]
    reverse = [bool(rng.random() < 0.3) for _ in range(d)]
    padding, out_sp = random_window_padding(rng, spatial, kernel, strides, lhs_dil, rhs_dil,
                                            negative_padding)
    lperm, llay = _layout(rng, d, ("b", "f"))
    kperm, klay = _layout(rng, d, ("i", "o"))
    operm, olay = _layout(rng, d, ("b", "f"))
    while batch_before_feature and operm[0] > operm[1]:
        operm, olay = _layout(rng, d, ("b", "f"))
    canon_l, canon_k, canon_o = [n, c, *spatial], [ifeat, o, *kernel], [nbatch, o, *out_sp]
    shape = lambda perm, canon: [canon[perm.index(p)] for p in range(d + 2)]  # noqa: E731
    return dict(d=d, fg=fg, bg=bg, strides=strides, padding=padding, lhs_dil=lhs_dil,
                rhs_dil=rhs_dil, reverse=reverse, lperm=lperm, kperm=kperm, operm=operm,
                layout=f"{llay}x{klay}->{olay}", et=et,
                lhs=random_values(rng, shape(lperm, canon_l), et, small),
                rhs=random_values(rng, shape(kperm, canon_k), et, small),
                out_shape=shape(operm, canon_o))


def conv_op(p: dict, out_et: str | None = None, args: str = "%a, %b") -> str:
    def arr(name, values, ty="i64"):
        return f"{name} = array<{ty}: {', '.join(str(v).lower() for v in values)}>"
    d, et = p["d"], p["et"]
    pad = literal(np.array(p["padding"], np.int64).reshape(d, 2), "i64")
    attrs = ", ".join([f"batch_group_count = {p['bg']} : i64",
                       f"dimension_numbers = #stablehlo.conv<{p['layout']}>",
                       f"feature_group_count = {p['fg']} : i64", arr("lhs_dilation", p["lhs_dil"]),
                       f"padding = {pad}", arr("rhs_dilation", p["rhs_dil"]),
                       arr("window_reversal", p["reverse"], "i1"),
                       arr("window_strides", p["strides"])])
    types = (tensor_type(p["lhs"].shape, et), tensor_type(p["rhs"].shape, et),
             tensor_type(p["out_shape"], out_et or et))
    return (f'  %out0 = "stablehlo.convolution"({args}) {{{attrs}}} : '
            f"({types[0]}, {types[1]}) -> {types[2]}")


def naive_conv(p: dict) -> np.ndarray:
    """The spec's convolution, one output element at a time (int64 / float64)."""
    d = p["d"]
    x = np.moveaxis(p["lhs"], p["lperm"], range(d + 2)).astype(np.float64)  # N, C, S..
    w = np.moveaxis(p["rhs"], p["kperm"], range(d + 2)).astype(np.float64)  # I, O, K..
    n, spatial = x.shape[0], x.shape[2:]
    ifeat, o, kernel = w.shape[0], w.shape[1], w.shape[2:]
    nbatch, fg, bg = n // p["bg"], p["fg"], p["bg"]
    out = np.zeros([nbatch, o] + [p["out_shape"][p["operm"][2 + i]] for i in range(d)])
    for nb_, f, *pos in itertools.product(*(range(s) for s in out.shape)):
        g_feat, g_batch = f // (o // fg), f // (o // bg)
        total = 0.0
        for k in itertools.product(*(range(s) for s in kernel)):
            src = []
            for i in range(d):
                kk = kernel[i] - 1 - k[i] if p["reverse"][i] else k[i]
                q = pos[i] * p["strides"][i] + kk * p["rhs_dil"][i] - p["padding"][i][0]
                if q % p["lhs_dil"][i] or not 0 <= q // p["lhs_dil"][i] < spatial[i]:
                    break
                src.append(q // p["lhs_dil"][i])
            else:
                for i_ in range(ifeat):
                    total += x[(g_batch * nbatch + nb_, g_feat * ifeat + i_, *src)] * \
                        w[(i_, f, *k)]
        out[(nb_, f, *pos)] = total
    return np.moveaxis(out, range(d + 2), p["operm"])


def arg_module(p: dict, out_et: str | None = None) -> str:
    lt, kt = tensor_type(p["lhs"].shape, p["et"]), tensor_type(p["rhs"].shape, p["et"])
    ot = tensor_type(p["out_shape"], out_et or p["et"])
    return (f"func.func @main(%a: {lt}, %b: {kt}) -> {ot} {{\n{conv_op(p, out_et)}\n"
            f"  func.return %out0 : {ot}\n}}")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_convolution_matches_the_spec_formula(seed):
    p = random_conv(np.random.default_rng(seed), "i64")
    (got,) = run(arg_module(p), p["lhs"], p["rhs"])
    assert np.array_equal(got, naive_conv(p).astype(np.int64))


def test_f32_convolution_is_close_to_the_formula():
    rng = np.random.default_rng(5)
    for _ in range(10):
        p = random_conv(rng, "f32", small=False)
        (got,) = run(arg_module(p), p["lhs"], p["rhs"])
        np.testing.assert_allclose(got, naive_conv(p), rtol=1e-5, atol=1e-5)


def test_integer_convolution_accumulates_in_the_result_type():
    lhs = np.full((1, 4, 1), 100, np.int8)
    rhs = np.full((2, 1, 1), 100, np.int8)
    text = ("func.func @main(%a: tensor<1x4x1xi8>, %b: tensor<2x1x1xi8>) -> tensor<1x3x1xi32> {\n"
            '  %0 = "stablehlo.convolution"(%a, %b) {batch_group_count = 1 : i64, '
            "dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
            "feature_group_count = 1 : i64} : (tensor<1x4x1xi8>, tensor<2x1x1xi8>) -> "
            "tensor<1x3x1xi32>\n  func.return %0 : tensor<1x3x1xi32>\n}")
    assert run(text, lhs, rhs)[0].reshape(-1).tolist() == [20000] * 3


def test_dynamic_conv_takes_its_padding_from_an_operand():
    p = random_conv(np.random.default_rng(11), "i32")
    static = run(arg_module(p), p["lhs"], p["rhs"])[0]
    pad = np.array(p["padding"], np.int64)
    op = conv_op(p).replace('"stablehlo.convolution"(%a, %b)',
                            '"stablehlo.dynamic_conv"(%a, %b, %p)')
    op = op.replace(f"padding = {literal(pad, 'i64')}, ", "")
    lt, kt = tensor_type(p["lhs"].shape, "i32"), tensor_type(p["rhs"].shape, "i32")
    pt, ot = tensor_type(pad.shape, "i64"), tensor_type(p["out_shape"], "i32")
    op = op.replace(f"({lt}, {kt})", f"({lt}, {kt}, {pt})")
    text = (f"func.func @main(%a: {lt}, %b: {kt}, %p: {pt}) -> {ot} {{\n{op}\n"
            f"  func.return %out0 : {ot}\n}}")
    assert np.array_equal(run(text, p["lhs"], p["rhs"], pad)[0], static)
    assert_varying_matches(text, [p["lhs"], p["rhs"], np.stack([pad] * 3)],
                           [False, False, True])


def test_feature_counts_that_do_not_divide_are_an_error():
    p = random_conv(np.random.default_rng(1), "i32")
    p = dict(p, fg=p["fg"] + 5, bg=1)
    with pytest.raises(VerifyError, match="to be a multiple of feature_group_count"):
        run(arg_module(p), p["lhs"], p["rhs"])


@pytest.mark.parametrize("varying", [[True, False], [False, True], [True, True]])
@pytest.mark.parametrize("et", ["f32", "i32", "bf16"])
def test_varying_operands_match_each_process(varying, et):
    rng = np.random.default_rng(17)
    for _ in range(3):
        p = random_conv(rng, et)
        a = np.stack([random_values(rng, p["lhs"].shape, et) for _ in range(3)]) \
            if varying[0] else p["lhs"]
        b = np.stack([random_values(rng, p["rhs"].shape, et) for _ in range(3)]) \
            if varying[1] else p["rhs"]
        assert_varying_matches(arg_module(p), [a, b], varying)


# -- the oracle -------------------------------------------------------------------------------
# Integers and narrow floats exact (the reference's conversion, order and rounding); f32 via
# BLAS with a relative tolerance. No mixed operand/result types: the oracle (StableHLO 1.17)
# still accumulated integer convolutions in the operand type, the corpus (1.20) does not;
# no negative padding: the reference's padOp aborts on it ("Incompatible index and shape");
# output batch dimension before the output feature dimension: the reference pairs the two
# by position in the output layout and aborts (or swaps them) otherwise.
CONV_TYPES = [("i32", 0), ("i64", 0), ("f32", 1e-5), ("bf16", 0), ("f16", 0), ("f64", 1e-12)]


def random_conv_program(rng: np.random.Generator) -> tuple[str, float]:
    et, tol = CONV_TYPES[rng.integers(len(CONV_TYPES))]
    p = random_conv(rng, et, small=tol == 0 or rng.random() < 0.5, negative_padding=False,
                    batch_before_feature=True)
    body = (f"  %a = stablehlo.constant {literal(p['lhs'], et)}\n"
            f"  %b = stablehlo.constant {literal(p['rhs'], et)}\n{conv_op(p)}")
    return module(body, [tensor_type(p["out_shape"], et)]), tol


@pytest.mark.oracle
def test_convolution_against_the_oracle():
    rng = np.random.default_rng(99)
    check_against_oracle([random_conv_program(rng) for _ in range(220)])
