"""dot_general and dot: dimension layouts against einsum, element-type conversion to the
result type, wrap-around, i1, narrow floats accumulating in their own type, varying
operands, and random programs against the reference interpreter."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from shardy_ref.execute.kernels.dot import convert_elements, round_float
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.types import FloatType, IntegerType
from tests.execute.kernel_harness import (
    assert_varying_matches,
    check_against_oracle,
    literal,
    module,
    random_values,
    tensor_type,
)


def dot_text(lhs_t: str, rhs_t: str, out_t: str, lb=(), rb=(), lc=(), rc=(),
             args: str = "%a, %b") -> str:
    batching = f"batching_dims = {list(lb)} x {list(rb)}, " if lb else ""
    return (f"  %out0 = stablehlo.dot_general {args}, {batching}contracting_dims = "
            f"{list(lc)} x {list(rc)} : ({lhs_t}, {rhs_t}) -> {out_t}")


def arg_module(lhs_t: str, rhs_t: str, out_t: str, **dims) -> str:
    return (f"func.func @main(%a: {lhs_t}, %b: {rhs_t}) -> {out_t} {{\n"
            f"{dot_text(lhs_t, rhs_t, out_t, **dims)}\n  func.return %out0 : {out_t}\n}}")


@st.composite
def layouts(draw):
    """A random dot_general: sizes of batch/contracting/free dims and where each sits."""
    nb, nc = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    nlf, nrf = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    sizes = draw(st.lists(st.integers(1, 3), min_size=nb + nc + nlf + nrf,
                          max_size=nb + nc + nlf + nrf))
    b, c = sizes[:nb], sizes[nb:nb + nc]
    lf, rf = sizes[nb + nc:nb + nc + nlf], sizes[nb + nc + nlf:]
    lperm = draw(st.permutations(range(nb + nc + nlf)))
    rperm = draw(st.permutations(range(nb + nc + nrf)))
    return b, c, lf, rf, list(lperm), list(rperm)


def _place(kinds: list, perm: list):
    """Dims listed as ``kinds`` (batch, contracting, free order) placed at ``perm``."""
    placed = [None] * len(kinds)
    for src, dst in enumerate(perm):
        placed[dst] = kinds[src]
    return placed


@settings(max_examples=40, deadline=None)
@given(layouts(), st.integers(0, 2**32 - 1))
def test_dot_general_matches_einsum(layout, seed):
    b, c, lf, rf, lperm, rperm = layout
    letters = iter("abcdefghijklmnop")
    bl, cl = [next(letters) for _ in b], [next(letters) for _ in c]
    lfl, rfl = [next(letters) for _ in lf], [next(letters) for _ in rf]
    lhs_dims = _place(list(zip(bl + cl + lfl, b + c + lf, strict=True)), lperm)
    rhs_dims = _place(list(zip(bl + cl + rfl, b + c + rf, strict=True)), rperm)
    rng = np.random.default_rng(seed)
    x = rng.integers(-9, 10, [s for _, s in lhs_dims]).astype(np.int32)
    y = rng.integers(-9, 10, [s for _, s in rhs_dims]).astype(np.int32)
    lpos = {name: i for i, (name, _) in enumerate(lhs_dims)}
    rpos = {name: i for i, (name, _) in enumerate(rhs_dims)}
    free = sorted(lfl, key=lpos.get) + sorted(rfl, key=rpos.get)  # in operand dim order
    want = np.einsum(f"{''.join(n for n, _ in lhs_dims)},{''.join(n for n, _ in rhs_dims)}"
                     f"->{''.join(bl + free)}", x.astype(np.int64), y.astype(np.int64))
    text = arg_module(tensor_type(x.shape, "i32"), tensor_type(y.shape, "i32"),
                      tensor_type(want.shape, "i32"), lb=[lpos[n] for n in bl],
                      rb=[rpos[n] for n in bl], lc=[lpos[n] for n in cl],
                      rc=[rpos[n] for n in cl])
    (got,) = run(text, x, y)
    assert np.array_equal(got, want.astype(np.int32))


def test_operands_convert_to_the_result_type_before_multiplying():
    x = np.array([100, 100], np.int8)
    text = arg_module("tensor<2xi8>", "tensor<2xi8>", "tensor<i32>", lc=[0], rc=[0])
    assert run(text, x, x)[0] == 20000  # no i8 overflow
    text = arg_module("tensor<2xi8>", "tensor<2xi8>", "tensor<i8>", lc=[0], rc=[0])
    assert run(text, x, x)[0] == 20000 % 256  # wraps: 32


def test_integer_dot_wraps_in_the_result_type():
    x = np.array([2**31 - 1, 2**31 - 1], np.int32)
    text = arg_module("tensor<2xi32>", "tensor<2xi32>", "tensor<i32>", lc=[0], rc=[0])
    want = np.int64(2**31 - 1) ** 2 * 2 % 2**32
    assert int(run(text, x, x)[0]) == (want - 2**32 if want >= 2**31 else want)
    u = np.array([200, 100], np.uint8)
    text = arg_module("tensor<2xui8>", "tensor<2xui8>", "tensor<ui8>", lc=[0], rc=[0])
    assert int(run(text, u, u)[0]) == (200 * 200 + 100 * 100) % 256


def test_i1_dot_is_or_of_and():
    a = np.array([[True, False], [False, False]])
    b = np.array([[True, True], [True, False]])
    text = arg_module("tensor<2x2xi1>", "tensor<2x2xi1>", "tensor<2x2xi1>", lc=[1], rc=[0])
    assert run(text, a, b)[0].tolist() == [[True, True], [False, False]]


def _sequential_dot(x, y, dtype):
    """Independent formula: every product and partial sum rounded to ``dtype``."""
    acc = dtype.type(0)
    for u, v in zip(x.tolist(), y.tolist(), strict=True):
        prod = np.array(float(u) * float(v), np.float64).astype(np.float32).astype(dtype)
        acc = np.array(float(acc) + float(prod), np.float64).astype(np.float32).astype(dtype)
    return acc


def test_small_f32_contractions_add_in_reference_order():
    """Bit-identical to the reference's one-by-one sums (what partitioned programs that
    all-reduce partial sums are compared with); big ones go to BLAS."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    y = rng.standard_normal((64, 2)).astype(np.float32)
    text = arg_module("tensor<3x64xf32>", "tensor<64x2xf32>", "tensor<3x2xf32>", lc=[1], rc=[0])
    got = run(text, x, y)[0]
    want = [[float(_sequential_dot(x[i], y[:, j], np.dtype(np.float32))) for j in range(2)]
            for i in range(3)]
    assert got.tolist() == want


@pytest.mark.parametrize("et", ["bf16", "f16", "f8E4M3FN", "f8E5M2"])
def test_narrow_floats_accumulate_in_the_element_type(et):
    rng = np.random.default_rng(7)
    dtype = {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f8E4M3FN": ml_dtypes.float8_e4m3fn,
             "f8E5M2": ml_dtypes.float8_e5m2}[et]
    dtype = np.dtype(dtype)
    x = rng.standard_normal(64).astype(dtype)
    y = rng.standard_normal(64).astype(dtype)
    text = arg_module(f"tensor<64x{et}>", f"tensor<64x{et}>", f"tensor<{et}>", lc=[0], rc=[0])
    got = run(text, x, y)[0]
    assert float(got) == float(_sequential_dot(x, y, dtype))


def test_f32_operands_with_f64_result_multiply_in_f64():
    x = np.array([1 + 2**-23, 1 - 2**-23], np.float32)
    text = arg_module("tensor<2xf32>", "tensor<2xf32>", "tensor<f64>", lc=[0], rc=[0])
    want = float(x[0]) ** 2 + float(x[1]) ** 2
    assert run(text, x, x)[0] == want


def test_element_conversion_rounds_once_and_saturates():
    """float64 -> bf16 through float32 would round twice; float -> int truncates and
    saturates, NaN -> 0 (the reference's APFloat conversions)."""
    x = np.array([1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40), 1 + 2**-8, 1e-50, np.nan])
    got = round_float(x, np.dtype(ml_dtypes.bfloat16)).astype(np.float64)
    assert got[:4].tolist() == [1 + 2**-7, -(1 + 2**-7), 1.0, 0.0] and np.isnan(got[4])
    ints = convert_elements(np.array([1e10, -1e10, np.nan, 2.7, -2.7]), FloatType("f64"),
                            IntegerType(8))
    assert ints.tolist() == [127, -128, 0, 2, -2]
    assert convert_elements(np.array([300, -1], np.int32), IntegerType(32),
                            IntegerType(8, "unsigned")).tolist() == [44, 255]


def test_legacy_dot_vector_and_matrix():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = np.array([1, 2, 3], np.float32)
    text = ("func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
            "  func.return %0 : tensor<2xf32>\n}")
    assert run(text, m, v)[0].tolist() == (m @ v).tolist()


def test_empty_contraction_gives_zeros():
    text = arg_module("tensor<2x0xf32>", "tensor<0x3xf32>", "tensor<2x3xf32>", lc=[1], rc=[0])
    out = run(text, np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32))[0]
    assert out.shape == (2, 3) and not out.any()


def test_mismatched_contracting_sizes_are_an_error():
    text = arg_module("tensor<2x3xf32>", "tensor<4x3xf32>", "tensor<2x3xf32>", lc=[1], rc=[0])
    with pytest.raises(VerifyError, match="contracting dimension sizes must match"):
        run(text, np.zeros((2, 3), np.float32), np.zeros((4, 3), np.float32))


@pytest.mark.parametrize("varying", [[True, False], [False, True], [True, True]])
@pytest.mark.parametrize("et", ["f32", "i32", "bf16"])
def test_varying_operands_match_each_process(varying, et):
    rng = np.random.default_rng(3)
    lt, rt = tensor_type((2, 3, 4), et), tensor_type((2, 4, 5), et)
    text = arg_module(lt, rt, tensor_type((2, 3, 5), et), lb=[0], rb=[0], lc=[2], rc=[1])
    a = random_values(rng, (3, 2, 3, 4) if varying[0] else (2, 3, 4), et)
    b = random_values(rng, (3, 2, 4, 5) if varying[1] else (2, 4, 5), et)
    assert_varying_matches(text, [a, b], varying)
    plain = arg_module(tensor_type((3, 4), et), tensor_type((4, 5), et), tensor_type((3, 5), et),
                       lc=[1], rc=[0])
    a = random_values(rng, (3, 3, 4) if varying[0] else (3, 4), et)
    b = random_values(rng, (3, 4, 5) if varying[1] else (4, 5), et)
    assert_varying_matches(plain, [a, b], varying)


# -- the oracle -------------------------------------------------------------------------------
# (lhs type, rhs type, result type, f32-style tolerance): integers and narrow floats are
# exact (same order and rounding as the reference); large f32/f64 contractions go through
# BLAS, whose order of additions differs from the reference's, hence a relative tolerance.
DOT_TYPES = [("i32", "i32", "i32", 0), ("i8", "i8", "i32", 0), ("ui8", "ui8", "ui8", 0),
             ("i16", "i16", "i16", 0), ("i1", "i1", "i1", 0), ("f32", "f32", "f32", 1e-5),
             ("f64", "f64", "f64", 1e-12), ("bf16", "bf16", "bf16", 0), ("f16", "f16", "f16", 0),
             ("f32", "f32", "f64", 1e-12), ("bf16", "bf16", "f32", 1e-5),
             ("f8E4M3FN", "f8E4M3FN", "f8E4M3FN", 0)]


def random_dot(rng: np.random.Generator) -> tuple[str, float]:
    lt, rt, ot, tol = DOT_TYPES[rng.integers(len(DOT_TYPES))]
    nb, nc, nlf, nrf = (int(rng.integers(0, 3)) for _ in range(4))
    sizes = [int(s) for s in rng.integers(1, 4, nb + nc + nlf + nrf)]
    kinds = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)]
    lhs = kinds + [("l", i) for i in range(nlf)]
    rhs = kinds + [("r", i) for i in range(nrf)]
    lhs = [lhs[i] for i in rng.permutation(len(lhs))]
    rhs = [rhs[i] for i in rng.permutation(len(rhs))]
    size = {("b", i): sizes[i] for i in range(nb)} | {("c", i): sizes[nb + i] for i in range(nc)}
    size |= {("l", i): sizes[nb + nc + i] for i in range(nlf)}
    size |= {("r", i): sizes[nb + nc + nlf + i] for i in range(nrf)}
    lshape, rshape = [size[k] for k in lhs], [size[k] for k in rhs]
    out = [size[("b", i)] for i in range(nb)] + [size[k] for k in lhs if k[0] == "l"] + \
        [size[k] for k in rhs if k[0] == "r"]
    small = tol == 0 or rng.random() < 0.5
    a, b = random_values(rng, lshape, lt, small), random_values(rng, rshape, rt, small)
    body = (f"  %a = stablehlo.constant {literal(a, lt)}\n"
            f"  %b = stablehlo.constant {literal(b, rt)}\n"
            + dot_text(tensor_type(lshape, lt), tensor_type(rshape, rt), tensor_type(out, ot),
                       lb=[lhs.index(("b", i)) for i in range(nb)],
                       rb=[rhs.index(("b", i)) for i in range(nb)],
                       lc=[lhs.index(("c", i)) for i in range(nc)],
                       rc=[rhs.index(("c", i)) for i in range(nc)]))
    return module(body, [tensor_type(out, ot)]), tol


@pytest.mark.oracle
def test_dot_general_against_the_oracle():
    rng = np.random.default_rng(2024)
    check_against_oracle([random_dot(rng) for _ in range(240)])
