"""The elementwise kernels (``kernels/elementwise*.py``, ``compare.py``): the edge cases the
StableHLO spec and the reference's ``Element.cpp`` name, hypothesis properties against
independent formulas (Python integers, IEEE definitions), result dtypes, and varying
(batched) operands equal to running each process alone."""
from __future__ import annotations

import functools
import math
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter, InterpreterError
from shardy_ref.execute.context import Context
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, parse_type

F32, F64 = np.float32, np.float64


def ttype(shape, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


@functools.cache
def _interp(text: str) -> Interpreter:
    op = parse_module(text)
    verify_module(op)
    return Interpreter(op)


def _text(op: str, types: tuple[str, ...], result: str, attrs: str) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    names = ", ".join(f"%a{i}" for i in range(len(types)))
    return (f"func.func @main({args}) -> {result} {{\n"
            f'  %r = "stablehlo.{op}"({names}){attrs} : ({", ".join(types)}) -> {result}\n'
            f"  func.return %r : {result}\n}}")


def apply(op: str, ets, *arrays, result: str | None = None, attrs: str = "") -> np.ndarray:
    """``stablehlo.<op>`` on ``arrays`` (element types ``ets``, one per operand or one for
    all); ``result`` is the result element type (default: the first operand's)."""
    ets = [ets] * len(arrays) if isinstance(ets, str) else list(ets)
    arrays = [np.asarray(a, storage_dtype(parse_type(f"tensor<{et}>").element_type))
              for a, et in zip(arrays, ets, strict=True)]
    types = tuple(ttype(a.shape, et) for a, et in zip(arrays, ets, strict=True))
    res = ttype(arrays[-1].shape if op != "select" else arrays[1].shape,
                result or ets[0 if op != "select" else 1])
    if op == "clamp":
        res = ttype(arrays[1].shape, result or ets[1])
    interp = _interp(_text(op, types, res, attrs))
    func = interp.entry_function("main")
    args = [Tensor(a.type, x) for a, x in zip(func.regions[0].blocks[0].args, arrays,
                                                strict=True)]
    (out,) = interp.run_args(func, args)
    assert out.data.dtype == storage_dtype(out.type.element_type)
    return out.data


def bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).view(f"u{np.asarray(x).dtype.itemsize}")


# -- integers ----------------------------------------------------------------------------------
def test_integers_wrap_at_every_width():
    assert apply("add", "i8", [127, -128], [1, -1]).tolist() == [-128, 127]
    assert apply("multiply", "i64", [2**62], [4]).tolist() == [0]
    assert apply("subtract", "ui8", [0], [1]).tolist() == [255]
    assert apply("add", "i4", [7, -8], [1, -1]).astype(int).tolist() == [-8, 7]
    assert apply("add", "ui4", [15], [1]).astype(int).tolist() == [0]
    assert apply("multiply", "i2", [1, -2], [-2, -1]).astype(int).tolist() == [-2, -2]
    assert apply("negate", "i32", [-2**31]).tolist() == [-2**31]
    assert apply("abs", "i8", [-128, -5]).tolist() == [-128, 5]


def test_booleans_are_logic():
    t, f = [True, True, False, False], [True, False, True, False]
    assert apply("add", "i1", t, f).tolist() == [True, True, True, False]
    assert apply("multiply", "i1", t, f).tolist() == [True, False, False, False]
    assert apply("maximum", "i1", t, f).tolist() == [True, True, True, False]
    assert apply("minimum", "i1", t, f).tolist() == [True, False, False, False]
    assert apply("xor", "i1", t, f).tolist() == [False, True, True, False]
    assert apply("not", "i1", t).tolist() == [False, False, True, True]


def test_integer_division_edge_cases():
    # truncation toward zero, remainder with the dividend's sign
    assert apply("divide", "i32", [17, -17, 17, -17], [3, 3, -3, -3]).tolist() == [5, -5, -5, 5]
    assert apply("remainder", "i32", [17, -17, 17, -17], [3, 3, -3, -3]).tolist() == \
        [2, -2, 2, -2]
    # INT_MIN / -1 wraps; x / 0 = -1 (all ones), x % 0 = x (XLA; the reference crashes)
    assert apply("divide", "i8", [-128, 5, -5], [-1, 0, 0]).tolist() == [-128, -1, -1]
    assert apply("remainder", "i8", [-128, 5, -5], [-1, 0, 0]).tolist() == [0, 5, -5]
    assert apply("divide", "ui16", [7, 65535], [0, 2]).tolist() == [65535, 32767]
    assert apply("divide", "i4", [-8, 3], [-1, 0]).astype(int).tolist() == [-8, -1]
    assert apply("remainder", "ui4", [13, 9], [0, 4]).astype(int).tolist() == [13, 1]
    assert apply("divide", "i64", [-2**63], [-1]).tolist() == [-2**63]


def test_shifts_by_large_and_negative_amounts():
    x = [1, -1, -8, 5]
    assert apply("shift_left", "i8", x, [7, 8, -1, 2]).tolist() == [-128, 0, 0, 20]
    assert apply("shift_right_arithmetic", "i8", x, [7, 8, -1, 1]).tolist() == [0, -1, -1, 2]
    assert apply("shift_right_logical", "i8", x, [7, 8, -1, 1]).tolist() == [0, 0, 0, 2]
    assert apply("shift_right_logical", "i8", [-1], [1]).tolist() == [127]
    assert apply("shift_right_arithmetic", "ui8", [255, 128], [1, 200]).tolist() == [255, 255]
    assert apply("shift_left", "i4", [1, 3], [3, 4]).astype(int).tolist() == [-8, 0]
    assert apply("shift_right_arithmetic", "i4", [-8, -8], [2, -1]).astype(int).tolist() == \
        [-2, -1]
    assert apply("shift_right_logical", "ui2", [3, 2], [1, 2]).astype(int).tolist() == [1, 0]


def test_popcnt_and_clz():
    assert apply("popcnt", "i8", [-1, 0, 6]).tolist() == [8, 0, 2]
    assert apply("popcnt", "ui64", [2**64 - 1]).tolist() == [64]
    assert apply("count_leading_zeros", "i32", [0, 1, -1, 2**30]).tolist() == [32, 31, 0, 1]
    assert apply("count_leading_zeros", "i4", [0, 1, -8]).astype(int).tolist() == [4, 3, 0]
    assert apply("count_leading_zeros", "ui64", [1]).tolist() == [63]


def test_integer_power():
    assert apply("power", "i64", [-1, -1, -3, 1, -3, 0, 2], [1, 0, -3, -3, 3, 2, 63]).tolist() \
        == [-1, 1, 0, 1, -27, 0, -2**63]
    assert apply("power", "ui8", [3, 0, 2], [5, 0, 9]).tolist() == [243, 1, 0]
    assert apply("power", "i8", [-1, 2], [-128, -1]).tolist() == [1, 0]


def test_sign_and_abs():
    assert apply("sign", "i32", [-5, 0, 7]).tolist() == [-1, 0, 1]
    s = apply("sign", "f32", [-0.0, 0.0, np.nan, -3.0, np.inf])
    assert bits(s[:2]).tolist() == [0x80000000, 0] and np.isnan(s[2])
    assert s[3:].tolist() == [-1.0, 1.0]
    z = apply("sign", "complex<f64>", [3 + 4j, 0j, complex(np.nan, 1)])
    assert z[0] == 0.6 + 0.8j and z[1] == 0 and np.isnan(z[2].real) and np.isnan(z[2].imag)
    assert apply("abs", "complex<f32>", [3 + 4j], result="f32").tolist() == [5.0]


# -- floats -------------------------------------------------------------------------------------
def test_maximum_minimum_nan_and_signed_zeros():
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0], F32)
    b = np.array([-0.0, 0.0, 1.0, np.nan, -0.0], F32)
    mx, mn = apply("maximum", "f32", a, b), apply("minimum", "f32", a, b)
    assert bits(mx[[0, 1, 4]]).tolist() == [0, 0, 0x80000000]
    assert bits(mn[[0, 1, 4]]).tolist() == [0x80000000] * 3
    assert np.isnan(mx[2:4]).all() and np.isnan(mn[2:4]).all()
    z = apply("maximum", "complex<f32>", [1 + 5j, 2 + 0j], [1 + 6j, 1 + 9j])
    assert z.tolist() == [1 + 6j, 2 + 0j]


def test_float_division_and_remainder():
    q = apply("divide", "f32", [1.0, -1.0, 0.0], [0.0, 0.0, 0.0])
    assert q[:2].tolist() == [np.inf, -np.inf] and np.isnan(q[2])
    r = apply("remainder", "f64", [17.1, -17.1, -4.0, 5.0], [3.0, 3.0, 2.0, np.inf])
    assert r[:2].tolist() == [17.1 % 3.0, -(17.1 % 3.0)]
    assert bits(r[2:3]).tolist() == [0x8000000000000000] and r[3] == 5.0


def test_roundings():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, -0.4, 0.49999997, 3.7], F32)
    assert apply("round_nearest_even", "f32", x).tolist() == [0, 2, 2, -0.0, -2, -0.0, 0, 4]
    afz = apply("round_nearest_afz", "f32", x)
    assert afz.tolist() == [1, 2, 3, -1, -3, -0.0, 0, 4]
    assert np.signbit(afz[5])
    assert apply("floor", "bf16", [-1.5, 2.5]).astype(F32).tolist() == [-2, 2]
    assert apply("ceil", "f16", [-1.5, 2.5]).tolist() == [-1, 3]


def test_narrow_float_arithmetic_is_correctly_rounded():
    # bf16: 1 + 2^-8 is a tie -> even (1); 1 + 2^-8 + 2^-14 rounds up
    one = np.ones(2, ml_dtypes.bfloat16)
    small = np.array([2.0**-8, 2.0**-8 + 2.0**-14], F32).astype(ml_dtypes.bfloat16)
    assert apply("add", "bf16", one, small).astype(F64).tolist() == [1.0, 1 + 2**-7]
    # f8E4M3FN: 448 is the largest value; overflow is NaN, no infinity
    big = np.array([448.0, 448.0], ml_dtypes.float8_e4m3fn)
    assert np.isnan(apply("add", "f8E4M3FN", big, big).astype(F32)).all()
    # f4E2M1FN saturates instead
    six = np.array([6.0], ml_dtypes.float4_e2m1fn)
    assert apply("multiply", "f4E2M1FN", six, six).astype(F32).tolist() == [6.0]


def test_transcendental_functions_follow_the_precision_policy():
    x = np.linspace(-3, 3, 61)
    np.testing.assert_array_equal(apply("exponential", "f64", x), np.exp(x))
    h = x.astype(np.float16)
    np.testing.assert_array_equal(apply("tanh", "f16", h), np.tanh(h.astype(F64)).astype(h.dtype))
    f = x.astype(F32)
    np.testing.assert_array_equal(apply("sine", "f32", f), np.sin(f))
    np.testing.assert_allclose(apply("logistic", "f32", f), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_array_equal(apply("rsqrt", "f64", [4.0, 0.0]), [0.5, np.inf])
    assert apply("cbrt", "f64", [27.0, -8.0]).tolist() == [3.0, -2.0]


def test_complex_arithmetic_is_the_references():
    # multiply: (ar*br - ai*bi, ar*bi + ai*br) without C's infinity recovery
    z = apply("multiply", "complex<f64>", [complex(np.inf, 0)], [complex(np.inf, 0)])
    assert z[0].real == np.inf and np.isnan(z[0].imag)
    assert apply("divide", "complex<f64>", [1 + 0j], [0j])[0].real == np.inf
    q = apply("divide", "complex<f64>", [1.5 + 2.5j], [2.5 + 1.5j])
    assert abs(q[0] - (0.88235294117647056 + 0.4705882352941177j)) < 1e-15
    c = apply("complex", "f32", [1.0, np.inf], [np.nan, -0.0], result="complex<f32>")
    assert c[1].real == np.inf and np.signbit(c[1].imag) and np.isnan(c[0].imag)
    assert apply("real", "complex<f32>", c, result="f32")[1] == np.inf
    assert apply("imag", "f64", [5.0], result="f64").tolist() == [0.0]


def test_is_finite():
    x = np.array([1.0, np.inf, -np.inf, np.nan], F64)
    assert apply("is_finite", "f64", x, result="i1").tolist() == [True, False, False, False]
    y = np.array([0x7F, 0x00], np.uint8).view(ml_dtypes.float8_e4m3fn)
    assert apply("is_finite", "f8E4M3FN", y, result="i1").tolist() == [False, True]


# -- compare -------------------------------------------------------------------------------------
def _cmp(direction, et, a, b, ctype=""):
    attrs = f" {{comparison_direction = #stablehlo<comparison_direction {direction}>" + (
        f", compare_type = #stablehlo<comparison_type {ctype}>}}" if ctype else "}")
    return apply("compare", et, a, b, result="i1", attrs=attrs).tolist()


def test_compare_directions_and_types():
    a, b = [-2, -1, 0, 2, 2], [-2, -2, 0, 1, 3]
    assert _cmp("LT", "i64", a, b, "SIGNED") == [False, False, False, False, True]
    assert _cmp("GE", "ui8", [0, 255], [1, 1], "UNSIGNED") == [False, True]
    assert _cmp("LT", "i1", [False, True], [True, True], "UNSIGNED") == [True, False]
    nan = np.nan
    assert _cmp("NE", "f32", [nan, 0.0], [nan, -0.0], "FLOAT") == [True, False]
    assert _cmp("EQ", "f32", [nan, 0.0], [nan, -0.0], "FLOAT") == [False, True]
    assert _cmp("NE", "complex<f64>", [complex(nan, 0), 1j], [complex(nan, 0), 1j]) == \
        [True, False]


def test_totalorder_orders_nan_and_signed_zeros():
    # -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN (spec "compare", IEEE totalOrder)
    order = [struct.unpack("<f", struct.pack("<I", 0xFFC00000))[0], -np.inf, -1.0, -0.0, 0.0,
             1.0, np.inf, np.nan]
    v = np.array(order, F32)
    for i in range(len(v)):
        lt = _cmp("LT", "f32", np.full(len(v), v[i]), v, "TOTALORDER")
        assert lt == [j > i for j in range(len(v))]
    assert _cmp("EQ", "f32", [0.0, np.nan], [-0.0, np.nan], "TOTALORDER") == [False, True]
    b = v.astype(ml_dtypes.bfloat16)
    assert _cmp("LT", "bf16", b[:-1], b[1:], "TOTALORDER") == [True] * (len(v) - 1)


# -- clamp, select ------------------------------------------------------------------------------
def test_clamp_and_select_with_scalar_operands():
    x = np.array([-5, 0, 5, 10], np.int32)
    assert apply("clamp", "i32", np.int32(0), x, np.int32(6)).tolist() == [0, 0, 5, 6]
    assert apply("clamp", "i32", [1, 1, 1, 1], x, [2, 2, 9, 9]).tolist() == [1, 1, 5, 9]
    f = apply("clamp", "f32", np.float32(0.0), np.array([np.nan, -0.0], F32), np.float32(1))
    assert np.isnan(f[0]) and not np.signbit(f[1])
    on_true, on_false = np.arange(3, dtype=np.int64), -np.arange(3, dtype=np.int64)
    assert apply("select", ("i1", "i64", "i64"), np.bool_(False), on_true, on_false).tolist() \
        == [0, -1, -2]
    assert apply("select", ("i1", "i64", "i64"), [True, False, True], on_true, on_false
                 ).tolist() == [0, -1, 2]


def test_unsupported_element_types_are_rejected():
    """Element types an op's ODS constraint excludes never reach its kernel (upstream's
    verifier rejects them with the constraint's summary); those it admits but the
    reference interpreter does not run are interpreter errors."""
    with pytest.raises(VerifyError, match=r"'stablehlo.and' op operand #0 must be ranked "
                       r"tensor of bool or 2/4/8/16/32/64-bit integer values, but got "
                       r"'tensor<1xf32>'"):
        apply("and", "f32", [1.0], [1.0])
    with pytest.raises(VerifyError, match=r"'stablehlo.subtract' op operand #0 must be .* "
                       r"but got 'tensor<1xi1>'"):
        apply("subtract", "i1", [True], [True])
    with pytest.raises(InterpreterError, match="does not support element type complex<f32>"):
        apply("remainder", "complex<f32>", [1j], [1j])


# -- dtypes of every result ---------------------------------------------------------------------
ELEMENTS = ["i1", "i2", "ui2", "i4", "ui4", "i8", "ui8", "i16", "ui16", "i32", "ui32", "i64",
            "ui64", "f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ",
            "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4", "f8E8M0FNU", "f4E2M1FN",
            "f6E2M3FN", "f6E3M2FN", "complex<f32>", "complex<f64>"]
BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
          "and", "or", "xor", "atan2", "shift_left", "shift_right_logical",
          "shift_right_arithmetic"]
UNARY = ["negate", "abs", "not", "sign", "exponential", "exponential_minus_one", "log",
         "log_plus_one", "logistic", "sine", "cosine", "tan", "tanh", "sqrt", "rsqrt", "cbrt",
         "ceil", "floor", "round_nearest_even", "round_nearest_afz", "popcnt",
         "count_leading_zeros"]


def sample(et: str, scalar: bool = False) -> np.ndarray:
    dtype = storage_dtype(parse_type(f"tensor<{et}>").element_type)
    if dtype == np.bool_:
        x = np.array([True, False, True])
    else:
        x = np.array([1, 2, 3]).astype(dtype) if dtype.kind != "c" else \
            np.array([1 + 1j, 2, 3j], dtype)
    return x[1] if scalar else x


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scalar", [False, True], ids=["vector", "scalar"])
@pytest.mark.parametrize("et", ELEMENTS)
def test_every_op_gives_the_storage_dtype_or_an_interpreter_error(et, scalar):
    """The interpreter checks result dtypes; a kernel must never raise a Python error (0-d
    operands included: NumPy turns them into scalars). Combinations the verifier rejects
    never reach a kernel."""
    x = sample(et, scalar)
    ran, internal = 0, []
    for op in BINARY + UNARY:
        arrays = [x, x] if op in BINARY else [x]
        result = et.split("<")[1][:-1] if op == "abs" and et.startswith("complex") else None
        try:
            apply(op, et, *arrays, result=result)
            ran += 1
        except VerifyError:  # the op does not take this element type
            pass
        except InterpreterError as e:
            if "internal error" in str(e):
                internal.append(f"{op}: {e}")
    assert not internal and ran >= 5


# -- hypothesis: integers against Python's arbitrary-precision arithmetic ------------------
INT_TYPES = ["i2", "ui2", "i4", "ui4", "i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"]


def _int_info(et: str) -> tuple[int, bool]:
    return int(et.lstrip("ui")), et.startswith("ui")


def _wrap(v: int, width: int, unsigned: bool) -> int:
    v &= (1 << width) - 1
    return v if unsigned or v < 1 << (width - 1) else v - (1 << width)


@st.composite
def int_operands(draw, n: int = 2):
    et = draw(st.sampled_from(INT_TYPES))
    width, unsigned = _int_info(et)
    lo, hi = (0, (1 << width) - 1) if unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)
    size = draw(st.integers(1, 6))
    values = [draw(st.lists(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1])),
                            min_size=size, max_size=size)) for _ in range(n)]
    return et, width, unsigned, values


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _expected_int(op: str, a: int, b: int, width: int, unsigned: bool) -> int:
    if op == "add":
        return a + b
    if op == "subtract":
        return a - b
    if op == "multiply":
        return a * b
    if op == "divide":
        return -1 if b == 0 else _trunc_div(a, b)
    if op == "remainder":
        return a if b == 0 else a - b * _trunc_div(a, b)
    amount = b & ((1 << width) - 1)  # the amount read as unsigned
    if op == "shift_left":
        return 0 if amount >= width else a << amount
    if op == "shift_right_logical":
        return 0 if amount >= width else (a & ((1 << width) - 1)) >> amount
    signed = _wrap(a, width, False)  # arithmetic shifts read the bits as signed
    return (-1 if signed < 0 else 0) if amount >= width else signed >> amount


@settings(max_examples=60, deadline=None)
@given(int_operands(), st.sampled_from(["add", "subtract", "multiply", "divide", "remainder",
                                        "shift_left", "shift_right_logical",
                                        "shift_right_arithmetic"]))
def test_integer_ops_match_python(operands, op):
    et, width, unsigned, (a, b) = operands
    got = apply(op, et, a, b).astype(object if width == 64 else np.int64).tolist()
    want = [_wrap(_expected_int(op, x, y, width, unsigned), width, unsigned)
            for x, y in zip(a, b, strict=True)]
    assert got == want


@settings(max_examples=40, deadline=None)
@given(int_operands())
def test_popcnt_clz_and_power_match_python(operands):
    et, width, unsigned, (a, e) = operands
    as_bits = [v & ((1 << width) - 1) for v in a]
    conv = object if width == 64 else np.int64
    # the counts are converted to the element type (and wrap: clz(0) of i2 is 2 -> -2)
    assert apply("popcnt", et, a).astype(conv).tolist() == \
        [_wrap(bin(v).count("1"), width, unsigned) for v in as_bits]
    assert apply("count_leading_zeros", et, a).astype(conv).tolist() == \
        [_wrap(width - v.bit_length(), width, unsigned) for v in as_bits]
    # a negative exponent gives 0 unless |base| == 1; then |e| counts, read unsigned
    want = [0 if y < 0 and abs(x) != 1 else _wrap(pow(x, -y % (1 << width) if y < 0 else y,
                                                      1 << 64), width, unsigned)
            for x, y in zip(a, e, strict=True)]
    assert apply("power", et, a, e).astype(conv).tolist() == want


# -- hypothesis: floats against IEEE definitions ------------------------------------------
def _ieee_max(x: float, y: float, greater: bool) -> float:
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y == 0:
        neg = math.copysign(1, x) < 0, math.copysign(1, y) < 0
        return -0.0 if (all(neg) if greater else any(neg)) else 0.0
    return max(x, y) if greater else min(x, y)


float32s = st.floats(width=32, allow_nan=True, allow_infinity=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(float32s, float32s), min_size=1, max_size=8))
def test_float_maximum_minimum_are_ieee(pairs):
    a, b = (np.array(v, F32) for v in zip(*pairs, strict=True))
    for op, greater in (("maximum", True), ("minimum", False)):
        got = apply(op, "f32", a, b)
        want = np.array([_ieee_max(float(x), float(y), greater) for x, y in pairs], F32)
        assert (np.isnan(got) == np.isnan(want)).all()
        ok = ~np.isnan(want)
        assert (bits(got[ok]) == bits(want[ok])).all()


def _total_key(x: float) -> int:
    (i,) = struct.unpack("<i", struct.pack("<f", x))
    return i ^ 0x7FFFFFFF if i < 0 else i


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(float32s, float32s), min_size=1, max_size=8),
       st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"]))
def test_totalorder_matches_the_key_formula(pairs, direction):
    a, b = (np.array(v, F32) for v in zip(*pairs, strict=True))
    ops = {"EQ": int.__eq__, "NE": int.__ne__, "LT": int.__lt__, "LE": int.__le__,
           "GT": int.__gt__, "GE": int.__ge__}
    want = [ops[direction](_total_key(float(x)), _total_key(float(y)))
            for x, y in zip(a, b, strict=True)]
    assert _cmp(direction, "f32", a, b, "TOTALORDER") == want


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=8))
def test_round_nearest_afz_matches_decimal_rounding(xs):
    x = np.array(xs, F32)
    want = [math.copysign(float(int(abs(v)) + (1 if abs(v) - int(abs(v)) >= 0.5 else 0)), v)
            for v in map(float, x)]
    assert (bits(apply("round_nearest_afz", "f32", x)) == bits(np.array(want, F32))).all()


# -- varying operands ------------------------------------------------------------------------------
def _bytes(x: np.ndarray) -> list:
    return np.ascontiguousarray(x).view(np.uint8).tolist()


def _run_batched(text: str, arrays: list, varying: list[bool], procs: int = 3) -> list:
    interp = _interp(text)
    func = interp.entry_function("main")
    args = [Tensor(a.type, np.asarray(x, storage_dtype(a.type.element_type)), 1 if v else 0)
            for a, x, v in zip(func.regions[0].blocks[0].args, arrays, varying, strict=True)]
    (out,) = interp.call_function(Context(interp, (procs,)), func, args)
    assert out.data.dtype == storage_dtype(out.type.element_type)
    return [out.data[p] if out.batch else out.data for p in range(procs)]


def _run_one(text: str, arrays: list) -> np.ndarray:
    interp = _interp(text)
    func = interp.entry_function("main")
    args = [Tensor(a.type, np.asarray(x, storage_dtype(a.type.element_type)))
            for a, x in zip(func.regions[0].blocks[0].args, arrays, strict=True)]
    return interp.run_args(func, args)[0].data


VARYING = [
    ("add", ("f32", "f32"), (4,), [(4,), (4,)], "f32"),
    ("maximum", ("bf16", "bf16"), (4,), [(4,), (4,)], "bf16"),
    ("divide", ("i8", "i8"), (4,), [(4,), (4,)], "i8"),
    ("shift_right_arithmetic", ("i4", "i4"), (4,), [(4,), (4,)], "i4"),
    ("atan2", ("complex<f64>", "complex<f64>"), (2,), [(2,), (2,)], "complex<f64>"),
    ("logistic", ("f16",), (4,), [(4,)], "f16"),
    ("clamp", ("f32", "f32", "f32"), (4,), [(), (4,), ()], "f32"),
    ("select", ("i1", "i32", "i32"), (4,), [(), (4,), (4,)], "i32"),
    ("select", ("i1", "i32", "i32"), (4,), [(4,), (4,), (4,)], "i32"),
    ("compare", ("f32", "f32"), (4,), [(4,), (4,)], "i1"),
    ("convert", ("f32",), (4,), [(4,)], "i8"),
    ("bitcast_convert", ("f64",), (2,), [(2,)], "i32"),
]


def _random(rng, shape, et: str) -> np.ndarray:
    dtype = storage_dtype(parse_type(f"tensor<{et}>").element_type)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if et.startswith("complex"):
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    if et.startswith(("i", "ui")):
        return rng.integers(-8 if et.startswith("i") else 0, 8, shape).astype(dtype)
    return (rng.normal(size=shape) * 4).astype(dtype)


@pytest.mark.parametrize(("op", "ets", "shape", "shapes", "out"), VARYING,
                         ids=[f"{v[0]}-{'x'.join(map(str, [len(s) for s in v[3]]))}"
                              for v in VARYING])
def test_varying_operands_equal_each_process_alone(op, ets, shape, shapes, out):
    rng = np.random.default_rng(7)
    result_shape = (*shape, 2) if op == "bitcast_convert" else shape
    attrs = " {comparison_direction = #stablehlo<comparison_direction LT>}" \
        if op == "compare" else ""
    types = tuple(ttype(s, et) for s, et in zip(shapes, ets, strict=True))
    text = _text(op, types, ttype(result_shape, out), attrs)
    procs = 3
    for mask in range(1, 1 << len(ets)):
        varying = [bool(mask >> i & 1) for i in range(len(ets))]
        arrays = [_random(rng, ((procs,) if v else ()) + s, et)
                  for v, s, et in zip(varying, shapes, ets, strict=True)]
        batched = _run_batched(text, arrays, varying, procs)
        for p in range(procs):
            alone = _run_one(text, [a[p] if v else a for a, v in zip(arrays, varying,
                                                                        strict=True)])
            assert _bytes(batched[p]) == _bytes(alone), (op, varying, p)
