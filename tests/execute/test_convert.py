"""``convert``, ``bitcast_convert``, ``reduce_precision`` and the rounding to narrow floats
(``kernels/convert.py``, ``elementwise_bits.py``, ``elementwise_base.round_to``): the rules
the reference follows (APFloat), and hypothesis properties against exact rational rounding
(Python ``Fraction``) and Python integers."""
from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute.kernels.convert import convert_array
from shardy_ref.execute.kernels.elementwise_base import float_format, round_to
from shardy_ref.execute.kernels.elementwise_bits import (
    bitcast,
    from_bits,
    reduce_precision_bits,
    to_bits,
)
from shardy_ref.ir.floatfmt import round_to_semantics
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType
from tests.execute.test_elementwise import apply, sample

F32, F64 = np.float32, np.float64
NARROW = ["f16", "bf16", "f8E5M2", "f8E4M3FN", "f8E4M3", "f8E3M4", "f8E4M3FNUZ", "f8E5M2FNUZ",
          "f8E4M3B11FNUZ", "f8E8M0FNU", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN"]
EMIN = {"f16": -14, "bf16": -126, "f8E5M2": -14, "f8E4M3": -6, "f8E4M3FN": -6,
        "f8E5M2FNUZ": -15, "f8E4M3FNUZ": -7, "f8E4M3B11FNUZ": -10, "f8E3M4": -2,
        "f8E8M0FNU": -127, "f4E2M1FN": 0, "f6E2M3FN": 0, "f6E3M2FN": -2}


def conv(values, src: str, dst: str) -> np.ndarray:
    return apply("convert", src, values, result=dst)


def u8(x) -> list[int]:
    return np.asarray(x).view(np.uint8).tolist()


# -- floats to integers and booleans --------------------------------------------------------------
def test_float_to_int_truncates_and_saturates():
    x = np.array([np.nan, np.inf, -np.inf, 3.9, -3.9, 1e10, -1e10, -0.5], F32)
    assert conv(x, "f32", "i32").tolist() == [0, 2**31 - 1, -2**31, 3, -3, 2**31 - 1, -2**31, 0]
    assert conv(x, "f32", "ui8").tolist() == [0, 255, 0, 3, 0, 255, 0, 0]
    assert conv(x, "f32", "i4").astype(int).tolist() == [0, 7, -8, 3, -3, 7, -8, 0]
    big = np.array([2.0**63, -2.0**63, 2.0**64, 1.5e19], F64)
    assert conv(big, "f64", "i64").tolist() == [2**63 - 1, -2**63, 2**63 - 1, 2**63 - 1]
    assert conv(big, "f64", "ui64").tolist() == [2**63, 0, 2**64 - 1, 15000000000000000000]


def test_booleans():
    assert conv(np.array([np.nan, 0.0, -0.0, 2.0], F32), "f32", "i1").tolist() == \
        [True, False, False, True]
    assert conv(np.array([1j, 1 + 0j], np.complex64), "complex<f32>", "i1").tolist() == \
        [False, True]  # the real part decides
    assert conv([True, False], "i1", "f32").tolist() == [1.0, 0.0]
    assert conv([True, False], "i1", "i4").astype(int).tolist() == [1, 0]
    assert conv([-8, 0], "i4", "i1").tolist() == [True, False]


def test_integers_extend_by_signedness_then_wrap():
    assert conv([-1, 300], "i64", "i8").tolist() == [-1, 44]
    assert conv([2**64 - 1], "ui64", "i64").tolist() == [-1]
    assert conv([-1], "i4", "ui8").tolist() == [255]
    assert conv([15], "ui4", "i32").tolist() == [15]
    assert conv([15, 8], "ui4", "i4").astype(int).tolist() == [-1, -8]


def test_integers_to_floats_round_once():
    # 2^60 + 2^52 + 1 is just above a bf16 tie: through float64 it would round down
    v = np.array([2**60 + 2**52 + 1, -(2**60 + 2**52 + 1), 2**60 + 2**52], np.int64)
    assert conv(v, "i64", "bf16").astype(F64).tolist() == [2.0**60 + 2**53,
                                                         -(2.0**60 + 2**53), 2.0**60]
    assert conv([2**64 - 1], "ui64", "f8E5M2").astype(F64).tolist() == [np.inf]
    assert conv([2**64 - 1], "ui64", "f32").tolist() == [2.0**64]
    assert conv([1000], "i32", "f8E4M3FN").view(np.uint8).tolist() == [0x7F]  # NaN
    assert conv([100], "i32", "f4E2M1FN").astype(F32).tolist() == [6.0]  # saturates


def test_complex_conversions():
    z = np.array([1.5 - 2j, complex(np.inf, np.nan)], np.complex128)
    assert conv(z, "complex<f64>", "f32").tolist() == [1.5, np.inf]
    assert conv(z, "complex<f64>", "i32").tolist() == [1, 2**31 - 1]
    c = conv(np.array([2.5, -0.0], F32), "f32", "complex<f64>")
    assert c.tolist() == [2.5 + 0j, 0j] and np.signbit(c[1].real) and not np.signbit(c[1].imag)
    assert conv([-3], "i8", "complex<f32>").tolist() == [-3 + 0j]
    assert conv(np.array([1e300 + 1e-300j]), "complex<f64>", "complex<f32>").tolist() == \
        [complex(np.inf, 0)]


PAIRS = ["i1", "i4", "ui8", "i32", "ui64", "f16", "bf16", "f32", "f64", "f8E4M3FN",
         "f4E2M1FN", "complex<f32>"]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scalar", [False, True], ids=["vector", "scalar"])
@pytest.mark.parametrize("src", PAIRS)
def test_every_pair_converts(src, scalar):
    for dst in PAIRS:
        out = conv(sample(src, scalar), src, dst)
        assert out.shape == (() if scalar else (3,))


# -- floats to floats ------------------------------------------------------------------------------
SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-300, 1e300,
                     -1e300, 3.0, -3.0, 0.75, 1.5, 0.1], F64)
# What the reference gives (observed with the oracle); NaN stands for any NaN.
N, TINY = math.nan, 2.0**-127
SPECIAL_RESULTS = {
    "f4E2M1FN": [0, -0.0, 0, -0.0, 0, -0.0, 0, -0.0, 6, -6, 3, -3, 1, 1.5, 0],
    "f6E3M2FN": [0, -0.0, 0, -0.0, 0, -0.0, 0, -0.0, 28, -28, 3, -3, 0.75, 1.5, 0.125],
    "f8E4M3FNUZ": [N, N, N, N, 0, 0, 0, 0, N, N, 3, -3, 0.75, 1.5, 0.1015625],
    "f8E4M3FN": [N, N, N, N, 0, -0.0, 0, -0.0, N, N, 3, -3, 0.75, 1.5, 0.1015625],
    "f8E5M2": [N, N, np.inf, -np.inf, 0, -0.0, 0, -0.0, np.inf, -np.inf, 3, -3, 0.75, 1.5,
               0.09375],
    "f8E8M0FNU": [N, N, N, N, TINY, TINY, TINY, TINY, N, N, 4, 4, 1, 2, 0.125],
}


@pytest.mark.parametrize("dst", sorted(SPECIAL_RESULTS))
def test_special_values_follow_each_formats_rules(dst):
    got = conv(SPECIALS, "f64", dst).astype(F64)
    want = np.array(SPECIAL_RESULTS[dst], F64)
    assert (np.isnan(got) == np.isnan(want)).all()
    ok = ~np.isnan(want)
    assert got[ok].tolist() == want[ok].tolist()
    assert (np.signbit(got[ok]) == np.signbit(want[ok])).all()


def test_rounding_at_the_top_of_a_format():
    # f8E4M3FN: 464 is halfway between 448 and the NaN pattern: ties to even give 448
    x = np.array([448.0, 464.0, 470.0, -464.0], F32)
    assert conv(x, "f32", "f8E4M3FN").astype(F32)[[0, 1, 3]].tolist() == [448, 448, -448]
    assert np.isnan(conv(x, "f32", "f8E4M3FN").astype(F32)[2])
    # f8E5M2 has infinities: the tie above the largest value overflows
    assert conv(np.array([61440.0, 61439.0], F32), "f32", "f8E5M2").astype(F32).tolist() == \
        [np.inf, 57344.0]


def test_e8m0_nan_converts_as_infinity():
    x = np.array([0xFF, 0x7F, 0x00], np.uint8).view(ml_dtypes.float8_e8m0fnu)
    assert conv(x, "f8E8M0FNU", "f64").tolist() == [np.inf, 1.0, 2.0**-127]
    assert conv(x, "f8E8M0FNU", "i32").tolist() == [0, 1, 0]
    assert u8(conv(x, "f8E8M0FNU", "f8E4M3FN")) == [0x7F, 0x38, 0]


def _reference_round(value: float, name: str) -> float:
    """The correctly rounded value with each format's overflow rule (exact arithmetic)."""
    fmt = float_format(FloatType(name))
    exact = round_to_semantics(Fraction(value), fmt.precision, EMIN[name])
    if abs(exact) > fmt.max:
        return {"ieee": math.copysign(math.inf, value),
                "finite_only": math.copysign(fmt.max, value)}.get(fmt.behaviour, math.nan)
    r = math.copysign(float(exact), value)
    if name == "f8E8M0FNU" and r == 0:
        return 2.0**-127
    if fmt.behaviour != "ieee" and name.endswith("FNUZ") and r == 0:
        return 0.0
    return r


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(NARROW),
       st.lists(st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                          st.floats(-600.0, 600.0), st.floats(-1e-3, 1e-3)),
                min_size=1, max_size=10))
def test_rounding_matches_exact_rational_rounding(name, values):
    if name == "f8E8M0FNU":  # negative values: see test_special_values_follow_each_formats_rules
        values = [abs(v) for v in values]
    got = round_to(np.array(values, F64), FloatType(name)).astype(F64)
    want = np.array([_reference_round(v, name) for v in values])
    assert (np.isnan(got) == np.isnan(want)).all()
    ok = ~np.isnan(want)
    assert got[ok].tolist() == want[ok].tolist()
    assert (np.signbit(got[ok]) == np.signbit(want[ok])).all()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["f16", "bf16", "f8E5M2", "f8E4M3FN", "f4E2M1FN"]),
       st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=8))
def test_int64_to_narrow_floats_round_the_exact_integer(name, values):
    got = convert_array(np.array(values, np.int64), IntegerType(64), FloatType(name))
    want = np.array([_reference_round_int(v, name) for v in values])
    np.testing.assert_array_equal(got.astype(F64), want)


def _reference_round_int(v: int, name: str) -> float:
    fmt = float_format(FloatType(name))
    r = round_to_semantics(Fraction(v), fmt.precision, EMIN[name])
    if abs(r) > fmt.max:
        return {"ieee": math.copysign(math.inf, v), "finite_only": math.copysign(fmt.max, v)
                }.get(fmt.behaviour, math.nan)
    return float(r)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["i8", "ui8", "i16", "i32", "ui32", "i64", "ui64", "i4", "ui2"]),
       st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=8))
def test_float_to_int_matches_python(dst, values):
    width, unsigned = int(dst.lstrip("ui")), dst.startswith("ui")
    lo, hi = (0, 2**width - 1) if unsigned else (-(2**(width - 1)), 2**(width - 1) - 1)
    t = IntegerType(width, "unsigned" if unsigned else "signless")
    got = convert_array(np.array(values, F64), FloatType("f64"), t).astype(object).tolist()
    want = [0 if math.isnan(v) else hi if v > hi else lo if v < lo else math.trunc(v)
            for v in values]
    assert [int(g) for g in got] == want


# -- bitcast_convert -----------------------------------------------------------------------
def test_bitcast_is_little_endian():
    bits64 = [bool(0x0123456789ABCDEF >> i & 1) for i in range(64)]
    assert bitcast(np.array(bits64), IntegerType(1), IntegerType(64)).tolist() == \
        0x0123456789ABCDEF
    one = np.array(0x0123456789ABCDEF, np.int64)
    assert bitcast(one, IntegerType(64), IntegerType(1)).tolist() == bits64
    z = np.array([0x0123456789ABCDEF, 0x0000000011111111], np.uint64).view(np.complex128)[0]
    halves = bitcast(np.array(z), ComplexType(FloatType("f64")), ComplexType(FloatType("f32")))
    assert halves.view(np.uint32).tolist() == [0x89ABCDEF, 0x01234567, 0x11111111, 0]
    x = np.array([1.0], F32)
    assert bitcast(x, FloatType("f32"), IntegerType(8, "unsigned")).tolist() == \
        [[0, 0, 128, 63]]


def test_bitcast_of_sub_byte_types():
    i4 = IntegerType(4)
    pair = np.array([[-1, 1]], ml_dtypes.int4)  # low nibble first: 0x1F
    assert bitcast(pair, i4, IntegerType(8)).tolist() == [0x1F]
    assert bitcast(np.array([0x1F], np.int8), IntegerType(8), i4).astype(int).tolist() == \
        [[-1, 1]]
    f4 = np.array([6.0, -0.5], ml_dtypes.float4_e2m1fn)
    assert bitcast(f4, FloatType("f4E2M1FN"), IntegerType(4, "unsigned")).astype(int).tolist() \
        == [7, 9]


BITCAST_TYPES = [IntegerType(1), IntegerType(2), IntegerType(4, "unsigned"), IntegerType(8),
                 IntegerType(16, "unsigned"), IntegerType(32), IntegerType(64, "unsigned"),
                 FloatType("f16"), FloatType("bf16"), FloatType("f32"), FloatType("f64"),
                 FloatType("f8E5M2"), FloatType("f4E2M1FN"), ComplexType(FloatType("f32")),
                 ComplexType(FloatType("f64"))]


def _width(t) -> int:
    return 2 * _width(t.element_type) if isinstance(t, ComplexType) else t.width


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(BITCAST_TYPES), st.sampled_from(BITCAST_TYPES),
       st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=4))
def test_bitcast_round_trips_and_keeps_the_bits(src, dst, words):
    """Any bit pattern of ``src`` survives src -> dst -> src, and the concatenated bits (low
    first) are the same on both sides."""
    ws, wd = _width(src), _width(dst)
    if max(ws, wd) % min(ws, wd) or isinstance(src, ComplexType) != isinstance(dst, ComplexType):
        return
    n = len(words) * 128 // ws
    total = sum(w << (64 * i) for i, w in enumerate(words + words))
    data = _from_int(total, src, n)
    shaped = data.reshape(-1, wd // ws) if ws < wd else data
    there = bitcast(shaped, src, dst)
    back = bitcast(there, dst, src).reshape(data.shape)
    assert _to_int(back, src) == _to_int(data, src) == _to_int(there.reshape(-1), dst)


def _from_int(total: int, t, n: int) -> np.ndarray:
    w = _width(t)
    if isinstance(t, ComplexType):
        return _pair(_from_int(total, t.element_type, 2 * n), t)
    return from_bits(np.array([(total >> (w * i)) & ((1 << w) - 1) for i in range(n)],
                              np.uint64), t)


def _pair(parts: np.ndarray, t) -> np.ndarray:
    out = np.empty(len(parts) // 2, np.complex128 if _width(t) == 128 else np.complex64)
    out.real, out.imag = parts[0::2], parts[1::2]
    return out


def _to_int(data: np.ndarray, t) -> int:
    if isinstance(t, ComplexType):
        parts = np.empty(2 * data.size, data.real.dtype)
        parts[0::2], parts[1::2] = data.real.reshape(-1), data.imag.reshape(-1)
        return _to_int(parts, t.element_type)
    w = _width(t)
    return sum(int(b) << (w * i) for i, b in enumerate(to_bits(data.reshape(-1), t)))


# -- reduce_precision ----------------------------------------------------------------------
def test_reduce_precision_corpus_values():
    x = np.array([np.inf, np.nan, 5e-324, 0.0, 65505.0, 65520.0], F64)
    got = apply("reduce_precision", "f64", x, attrs=" {exponent_bits = 5 : i32, "
                "mantissa_bits = 10 : i32}")
    assert got[[0, 2, 3, 4, 5]].tolist() == [np.inf, 0.0, 0.0, 65504.0, np.inf]
    assert np.isnan(got[1])
    nan = apply("reduce_precision", "f64", np.array([np.nan]),
                attrs=" {exponent_bits = 5 : i32, mantissa_bits = 0 : i32}")
    assert nan.tolist() == [np.inf]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=8))
def test_reduce_precision_to_f16_and_bf16_matches_their_rounding(values):
    """e5m10 and e8m7 of f32 are rounding to f16 and bf16, except that below f16's normal
    range reduce_precision flushes to zero instead of keeping subnormals (e8m7 keeps f32's
    exponent, hence its subnormals, as bf16 does)."""
    x = np.array(values, F32)
    t = FloatType("f32")
    for e, m, dtype, tiny in ((5, 10, np.float16, 2.0**-14), (8, 7, ml_dtypes.bfloat16, 0.0)):
        got = reduce_precision_bits(to_bits(x, t), t, e, m).astype(np.uint32).view(F32)
        with np.errstate(over="ignore"):
            want = x.astype(dtype).astype(F32)
        normal = np.abs(want) >= tiny
        assert got[normal].tolist() == want[normal].tolist()
        assert (got[~normal] == 0).all()
