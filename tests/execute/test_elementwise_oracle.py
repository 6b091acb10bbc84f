"""Differential tests of the elementwise kernels against the real reference interpreter
(``tests/execute/oracle.py``): seeded random programs (about 1800), one op each on random
constants of random element types (every integer width, every float format, complex), all
run through one oracle process (:func:`oracle`, which reads the oracle's results keeping
the sign of float zeros), then compared family by family.

Integers and booleans must match exactly; floats bit for bit (signed zeros included, any
NaN matching any NaN) except where our precision policy computes differently from the
reference (``elementwise_base``): float32 transcendental functions run in float32 NumPy
(the reference rounds a double result), float64 ones use NumPy's implementations rather
than glibc's, complex ones NumPy's complex functions: those get a stated ulp budget.
Programs the reference cannot run (integer division by zero crashes it) are not generated;
``TOTALORDER`` compares are tested against the spec in ``test_elementwise.py`` because the
reference ignores ``compare_type``.
"""
from __future__ import annotations

import numpy as np
import pytest

from shardy_ref.execute.kernels.compare import total_order_keys
from shardy_ref.execute.kernels.elementwise_base import round_to
from shardy_ref.execute.values import from_dense
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType
from shardy_ref.parser import parse_attribute
from tests.execute.oracle import oracle_results, ours

pytestmark = pytest.mark.oracle

SIGNED = ["i2", "i4", "i8", "i16", "i32", "i64"]
UNSIGNED = ["ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
INTS = SIGNED + UNSIGNED
FLOATS = ["f16", "bf16", "f32", "f64", "f8E5M2", "f8E4M3FN", "f8E4M3", "f8E3M4", "f8E4M3FNUZ",
          "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E8M0FNU", "f4E2M1FN", "f6E2M3FN", "f6E3M2FN"]
COMPLEX = ["complex<f32>", "complex<f64>"]
# f4E2M1FN, f6E2M3FN, f6E3M2FN have no infinity or NaN: a result that would be one is
# undefined behaviour in the reference (APFloat reaches llvm_unreachable), so ops that can
# produce them are only tested on the other formats.
FINITE_ONLY = ["f4E2M1FN", "f6E2M3FN", "f6E3M2FN"]
NAN_FREE = [f for f in FLOATS if f not in FINITE_ONLY]
# APFloat's roundToIntegral adds and subtracts 2^(p-1), which overflows in f6E2M3FN
# (max 7.5 < 8), f8E3M4 (15.5 < 16) and f8E8M0FNU: the reference rounds those wrongly
# (floor(1.25) = 0, round(4) = NaN...); we round them exactly, so they are left out here.
ROUNDABLE = [f for f in FLOATS if f not in ("f6E2M3FN", "f8E3M4", "f8E8M0FNU")]
# f8E8M0FNU holds positive powers of two only; the reference reads its NaN as a number
# and its negative values are artifacts (see elementwise_base._e8m0), so its functions
# are left out.
MATH_FLOATS = [f for f in NAN_FREE if f != "f8E8M0FNU"]
WIDTHS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f4E2M1FN": 4, "f6E2M3FN": 6,
          "f6E3M2FN": 6}


def element_type(name: str):
    if name.startswith("complex<"):
        return ComplexType(element_type(name[8:-1]))
    if name.startswith("ui"):
        return IntegerType(int(name[2:]), "unsigned")
    if name.startswith("i"):
        return IntegerType(int(name[1:]))
    return FloatType(name)


def width(name: str) -> int:
    if name.startswith(("i", "ui")):
        return int(name.lstrip("ui"))
    return WIDTHS.get(name, 8)


# -- random literals --------------------------------------------------------------------------
def int_values(rng, name: str, n: int, nonzero: bool = False) -> list[int]:
    w = width(name)
    lo, hi = (0, (1 << w) - 1) if name.startswith("ui") else (-(1 << (w - 1)), (1 << (w - 1)) - 1)
    specials = [lo, hi, 0, 1, lo + 1, hi - 1] + ([-1] if lo < 0 else [])
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            v = int(rng.choice(specials))
        elif r < 0.7:
            v = int(rng.integers(-9, 10)) if lo < 0 else int(rng.integers(0, 10))
        else:
            v = int(rng.integers(lo, hi, endpoint=True, dtype=np.int64)) if w < 64 else \
                int(rng.integers(0, 1 << 64, dtype=np.uint64)) + lo
        out.append(min(max(v, lo), hi) if not (nonzero and v == 0) else 1)
    return out


NICE = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1.5, -2.5, 3.0, 0.25, 0.1, -0.1, 10.0, 100.0,
        np.inf, -np.inf, np.nan, 1e-3, 7.0, -7.5]


def float_bits(rng, name: str, n: int, mode: str = "mixed") -> list[int]:
    """Bit patterns of random floats: random bits, special and ordinary values."""
    t = element_type(name)
    w = width(name)
    out = []
    for _ in range(n):
        r = rng.random()
        if mode == "bits" or (mode in ("mixed", "finite") and r < 0.35):
            out.append(int(rng.integers(0, 1 << min(w, 63), dtype=np.int64)) |
                       (int(rng.integers(0, 2)) << 63 if w == 64 else 0))
            continue
        v = float(rng.choice(NICE)) if r < 0.65 else float(rng.normal(0, 4)) * \
            (10.0 ** int(rng.integers(-3, 4)) if mode == "mixed" else 1.0)
        x = round_to(np.array([v]), t)
        out.append(int(x.view(f"u{x.dtype.itemsize}")[0]) & ((1 << w) - 1))
    if mode == "finite":  # replace infinities and NaNs by zeros
        values = from_dense(parse_attribute(
            f"dense<[{', '.join(hex(b) for b in out)}]> : tensor<{n}x{name}>")).data
        keep = np.isfinite(values.astype(np.float64))
        out = [b if k else 0 for b, k in zip(out, keep, strict=True)]
    return out


def literal(rng, name: str, shape, **kw) -> str:
    """``dense<...>`` with random elements of type ``name`` (floats as exact hex)."""
    n = int(np.prod(shape)) if shape else 1
    if name == "i1":
        items = [str(bool(rng.integers(0, 2))).lower() for _ in range(n)]
    elif name.startswith("complex"):
        part = name[8:-1]
        re, im = float_bits(rng, part, n, **kw), float_bits(rng, part, n, **kw)
        items = [f"(0x{a:0{width(part) // 4}X}, 0x{b:0{width(part) // 4}X})"
                 for a, b in zip(re, im, strict=True)]
    elif name.startswith(("i", "ui")):
        items = [str(v) for v in int_values(rng, name, n, kw.get("nonzero", False))]
    else:
        digits = max(1, (width(name) + 3) // 4)
        items = [f"0x{b:0{digits}X}" for b in float_bits(rng, name, n, kw.get("mode", "mixed"))]
    return f"dense<{_nest(items, shape)}>"


def _nest(items: list[str], shape) -> str:
    if not shape:
        return items[0]
    if len(shape) == 1:
        return f"[{', '.join(items)}]"
    step = len(items) // shape[0]
    return "[" + ", ".join(_nest(items[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


def random_shape(rng) -> tuple[int, ...]:
    return [(), (3,), (2, 3), (5,), (1, 4)][int(rng.integers(0, 5))]


def tensor_type(shape, name: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + name + ">"


def program(operands: list[tuple[str, str]], op: str, result: str, attrs: str = "") -> str:
    """A module whose @main applies ``op`` (generic syntax) to constants ``operands``
    (literal, tensor type) and returns the result of type ``result``."""
    lines = [f"  %a{i} = stablehlo.constant {lit} : {ty}" for i, (lit, ty) in enumerate(operands)]
    args = ", ".join(f"%a{i}" for i in range(len(operands)))
    types = ", ".join(ty for _, ty in operands)
    lines.append(f'  %r = "{op}"({args}){attrs} : ({types}) -> {result}')
    lines.append(f"  func.return %r : {result}")
    return f"func.func @main() -> {result} {{\n" + "\n".join(lines) + "\n}\n"


def operand(rng, name: str, shape, **kw) -> tuple[str, str]:
    return literal(rng, name, shape, **kw), tensor_type(shape, name)


# -- comparing ----------------------------------------------------------------------------------
def ulp_distance(a: np.ndarray, b: np.ndarray, t) -> np.ndarray:
    """Distance in representable values (total order keys; NaN vs NaN counts 0)."""
    with np.errstate(invalid="ignore"):  # signaling NaNs
        both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    d = np.abs(total_order_keys(a, t).astype(np.float64) - total_order_keys(b, t))
    return np.where(both_nan, 0, d)


def check_same(mine, theirs, ulps: int = 0, context: str = "") -> None:
    assert not isinstance(theirs, str), f"oracle failed: {theirs}\n{context}"
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert a.type == b.type, f"{a.type} != {b.type}\n{context}"
        et = a.type.element_type
        if isinstance(et, ComplexType):
            if ulps:
                _check_complex_close(a.data, b.data, ulps, context)
                continue
            pairs = [(a.data.real, b.data.real), (a.data.imag, b.data.imag)]
            et = et.element_type
        else:
            pairs = [(a.data, b.data)]
        for x, y in pairs:
            if isinstance(et, FloatType):
                bad = ulp_distance(x, y, et) > ulps
            elif isinstance(et, IntegerType) and et.width < 64:
                bad = x.astype(np.int64) != y.astype(np.int64)
            else:
                bad = x != y
            assert not bad.any(), _describe(x, y, bad, context)


def _describe(x: np.ndarray, y: np.ndarray, bad: np.ndarray, context: str) -> str:
    where = np.argwhere(np.asarray(bad))[:4]
    pairs = ", ".join(f"{tuple(int(i) for i in w)}: {x[tuple(w)]!r} vs {y[tuple(w)]!r}"
                      for w in where)
    return f"ours vs oracle at {pairs} ({int(np.sum(bad))} differ)\n{context[-1500:]}"


def _check_complex_close(x: np.ndarray, y: np.ndarray, ulps: int, context: str) -> None:
    """Complex values within ``ulps`` machine epsilons of ``|y|`` (a part near zero can
    carry a large error relative to itself: complex functions are accurate in norm);
    non-finite parts must match exactly."""
    eps = np.finfo(np.float64 if x.dtype == np.complex128 else np.float32).eps
    x, y = x.astype(np.complex128), y.astype(np.complex128)
    finite = np.isfinite(y) & np.isfinite(x)
    with np.errstate(all="ignore"):
        close = np.abs(x - y) <= ulps * eps * np.abs(y)
    same = (np.isnan(x.real) == np.isnan(y.real)) & (np.isnan(x.imag) == np.isnan(y.imag)) & (
        (x.real == y.real) | np.isnan(x.real)) & ((x.imag == y.imag) | np.isnan(x.imag))
    ok = np.where(finite, close, same)
    assert ok.all(), _describe(x, y, ~ok, context)


def mismatches(cases: list[tuple[str, int]], theirs: list) -> list[str]:
    """The programs (with ulp budgets) whose results differ from the oracle's."""
    failures = []
    for (text, ulps), expected in zip(cases, theirs, strict=True):
        try:
            check_same(ours(text), expected, ulps, text)
        except AssertionError as e:
            failures.append(str(e))
    return failures


# -- the families ------------------------------------------------------------------------------
TRANSCENDENTAL = {"exponential", "exponential_minus_one", "log", "log_plus_one", "sine",
                  "cosine", "tan", "tanh", "logistic", "rsqrt", "cbrt", "atan2", "power"}
# ulps allowed where we compute differently from the reference (module docstring): f32
# functions in float32 NumPy (the reference rounds a double result), f64 ones and complex
# ones with NumPy's implementations instead of glibc's.
# Measured: f32 within 1 ulp, f64 and complex exact on thousands of programs, complex
# atan2 (the reference's log of a quotient near 1) within 10 eps of |result|.
ULPS = {"f32": 2, "f64": 1, "complex<f32>": 2, "complex<f64>": 2}
COMPLEX_ATAN2_EPS = 32

BINARY = {
    "add": ["i1", *INTS, *FLOATS, *COMPLEX], "subtract": [*INTS, *FLOATS, *COMPLEX],
    "multiply": ["i1", *INTS, *FLOATS, *COMPLEX], "divide": [*INTS, *NAN_FREE, *COMPLEX],
    "remainder": [*INTS, *NAN_FREE], "maximum": ["i1", *INTS, *FLOATS, *COMPLEX],
    "minimum": ["i1", *INTS, *FLOATS, *COMPLEX], "power": [*INTS, *MATH_FLOATS, *COMPLEX],
    "and": ["i1", *INTS], "or": ["i1", *INTS], "xor": ["i1", *INTS],
    "atan2": [*MATH_FLOATS, *COMPLEX], "shift_left": INTS, "shift_right_arithmetic": INTS,
    "shift_right_logical": INTS,
}
MATH = ["exponential", "exponential_minus_one", "log", "log_plus_one", "sine", "cosine", "tan",
        "tanh", "logistic", "sqrt", "rsqrt", "cbrt"]
UNARY = {
    "negate": [*INTS, *FLOATS, *COMPLEX], "abs": [*SIGNED, *FLOATS, *COMPLEX],
    "not": ["i1", *INTS], "sign": [*SIGNED, *FLOATS, *COMPLEX], "popcnt": INTS,
    "count_leading_zeros": INTS, "ceil": ROUNDABLE, "floor": ROUNDABLE,
    "round_nearest_even": ROUNDABLE, "round_nearest_afz": ROUNDABLE, "is_finite": FLOATS,
    "real": [*FLOATS, *COMPLEX], "imag": [*FLOATS, *COMPLEX],
    **{name: [*MATH_FLOATS, *COMPLEX] for name in MATH},
}


def part(name: str) -> str:
    return name[8:-1] if name.startswith("complex") else name


def _ulps(op: str, name: str) -> int:
    if op == "atan2" and name.startswith("complex"):
        return COMPLEX_ATAN2_EPS
    return ULPS.get(name, 0) if op in TRANSCENDENTAL or (
        name.startswith("complex") and op in ("sqrt", "sign", "divide", "abs")) else 0


def binary_case(rng, op: str) -> tuple[str, int]:
    name = BINARY[op][int(rng.integers(0, len(BINARY[op])))]
    shape = random_shape(rng)
    nonzero = op in ("divide", "remainder") and name.startswith(("i", "ui"))
    mode = "nice" if op in ("power", "atan2") and rng.random() < 0.5 else "mixed"
    kw = {"nonzero": nonzero} if name.startswith(("i", "ui")) else {"mode": mode}
    if op == "power" and name.startswith(("i", "ui")):
        kw = {}
    lhs, rhs = operand(rng, name, shape, **kw), operand(rng, name, shape, **kw)
    if op == "power" and name.startswith(("i", "ui")):
        rhs = _small_exponents(rng, name, shape)
    ty = tensor_type(shape, name)
    return program([lhs, rhs], f"stablehlo.{op}", ty), _ulps(op, name)


def _small_exponents(rng, name: str, shape) -> tuple[str, str]:
    n = int(np.prod(shape)) if shape else 1
    lo = 0 if name.startswith("ui") else max(-3, -(1 << (width(name) - 1)))
    hi = min(70, (1 << (width(name) - (0 if name.startswith("ui") else 1))) - 1)
    vals = [str(int(rng.integers(lo, hi + 1))) for _ in range(n)]
    return f"dense<{_nest(vals, shape)}>", tensor_type(shape, name)


def unary_case(rng, op: str) -> tuple[str, int]:
    name = UNARY[op][int(rng.integers(0, len(UNARY[op])))]
    shape = random_shape(rng)
    kw = {} if name.startswith(("i", "ui")) else \
        {"mode": "nice" if op in MATH and rng.random() < 0.5 else "mixed"}
    x = operand(rng, name, shape, **kw)
    out = name
    if op in ("abs", "real", "imag"):
        out = part(name)
    elif op == "is_finite":
        out = "i1"
    return program([x], f"stablehlo.{op}", tensor_type(shape, out)), _ulps(op, name)


def arithmetic_cases(seed: int, n: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    names = sorted(BINARY)
    return [binary_case(rng, names[i % len(names)]) for i in range(n)]


def unary_cases(seed: int, n: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    names = sorted(UNARY)
    return [unary_case(rng, names[i % len(names)]) for i in range(n)]


ALL = ["i1", *INTS, *FLOATS, *COMPLEX]


def pick(rng, names: list[str]) -> str:
    return names[int(rng.integers(0, len(names)))]


def compare_case(rng) -> tuple[str, int]:
    name = pick(rng, ALL)
    shape = random_shape(rng)
    directions = ["EQ", "NE"] if name.startswith("complex") else \
        ["EQ", "NE", "GE", "GT", "LE", "LT"]
    direction = pick(rng, directions)
    ctype = "FLOAT" if name.startswith(("f", "bf", "complex")) else \
        "UNSIGNED" if name.startswith("ui") or name == "i1" else "SIGNED"
    lhs = operand(rng, name, shape)
    rhs = lhs if rng.random() < 0.2 else operand(rng, name, shape)
    attrs = (f" {{comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {ctype}>}}")
    return program([lhs, rhs], "stablehlo.compare", tensor_type(shape, "i1"), attrs), 0


def selection_case(rng) -> tuple[str, int]:
    """``clamp`` and ``select`` with full-shape or rank-0 bounds and predicates."""
    shape = random_shape(rng) or (3,)
    if rng.random() < 0.5:
        name = pick(rng, ["i1", *INTS, *FLOATS])
        bound = () if rng.random() < 0.5 else shape
        lo, hi = operand(rng, name, bound), operand(rng, name, bound)
        return program([lo, operand(rng, name, shape), hi], "stablehlo.clamp",
                       tensor_type(shape, name)), 0
    name = pick(rng, ALL)
    pred = operand(rng, "i1", () if rng.random() < 0.3 else shape)
    return program([pred, operand(rng, name, shape), operand(rng, name, shape)],
                   "stablehlo.select", tensor_type(shape, name)), 0


def compare_cases(seed: int, n: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    return [compare_case(rng) if i % 3 else selection_case(rng) for i in range(n)]


# Conversions whose result the reference leaves undefined are not generated: non-finite
# values into the formats without infinity and NaN (APFloat reaches llvm_unreachable).
def convert_case(rng) -> tuple[str, int]:
    src, dst = pick(rng, ALL), pick(rng, ALL)
    shape = random_shape(rng)
    kw = {}
    if dst in FINITE_ONLY or (dst.startswith(("i", "ui")) and rng.random() < 0.5):
        kw = {"mode": "finite"}
    x = operand(rng, src, shape, **kw) if not src.startswith(("i", "ui")) else \
        operand(rng, src, shape)
    return program([x], "stablehlo.convert", tensor_type(shape, dst)), 0


def bitcast_case(rng) -> tuple[str, int]:
    """Bitcasts between types whose widths divide (the verifier rejects real <-> complex)."""
    widths = {n: width(part(n)) * (2 if n.startswith("complex") else 1) for n in ALL}
    widths["i1"] = 1
    src = pick(rng, ALL)
    dst = pick(rng, [n for n in ALL if max(widths[n], widths[src]) %
                     min(widths[n], widths[src]) == 0 and
                     n.startswith("complex") == src.startswith("complex")])
    ws, wd = widths[src], widths[dst]
    base = random_shape(rng)
    shape_in = (*base, wd // ws) if ws < wd else base
    shape_out = (*base, ws // wd) if ws > wd else base
    # no NaN payloads: our literal parser canonicalizes NaNs of the narrow formats
    x = operand(rng, src, shape_in, **({} if src.startswith(("i", "ui")) else
                                        {"mode": "finite"}))
    return program([x], "stablehlo.bitcast_convert", tensor_type(shape_out, dst)), 0


def reduce_precision_case(rng) -> tuple[str, int]:
    name = pick(rng, FLOATS)
    t = element_type(name)
    src_m = t.precision - 1
    src_e = t.width - src_m - 1
    e = int(rng.integers(1, src_e + 2))
    m = int(rng.integers(0, src_m + 2))
    shape = random_shape(rng)
    attrs = f" {{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}"
    return program([operand(rng, name, shape)], "stablehlo.reduce_precision",
                   tensor_type(shape, name), attrs), 0


def conversion_cases(seed: int, n: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    makers = [convert_case, convert_case, bitcast_case, reduce_precision_case]
    return [makers[i % len(makers)](rng) for i in range(n)]


def bulk_cases() -> list[tuple[str, int]]:
    """Long random-bit operands for the correctly rounded operations (the precision policy's
    claim: bit-identical on every format), and complex division (Annex G) on many values."""
    rng = np.random.default_rng(99)
    shape = (256,)
    cases = []
    for name in ["f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E3M4"]:
        for op in ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"]:
            a, b = operand(rng, name, shape, mode="bits"), operand(rng, name, shape, mode="bits")
            cases.append((program([a, b], f"stablehlo.{op}", tensor_type(shape, name)), 0))
        x = operand(rng, name, shape, mode="bits")
        cases.append((program([x], "stablehlo.sqrt", tensor_type(shape, name)), 0))
    for name in COMPLEX:
        for mode in ("mixed", "nice"):
            a, b = operand(rng, name, (512,), mode=mode), operand(rng, name, (512,), mode=mode)
            cases.append((program([a, b], "stablehlo.divide", tensor_type((512,), name)), 0))
    return cases


FAMILIES = {
    "arithmetic": lambda: arithmetic_cases(1, 450),
    "unary": lambda: unary_cases(2, 500),
    "compare_select": lambda: compare_cases(3, 300),
    "conversion": lambda: conversion_cases(4, 500),
    "bulk": bulk_cases,
}


def test_matches_the_reference():
    """Every family's programs through one oracle run (one test, not one per family: with
    pytest-xdist each worker running a family would start its own oracle run of all of
    them); each family's mismatches reported."""
    families = {name: make() for name, make in FAMILIES.items()}
    results = iter(oracle_results([text for cases in families.values() for text, _ in cases]))
    report = []
    for name, cases in families.items():
        theirs = [next(results) for _ in cases]
        failures = mismatches(cases, theirs)
        if failures:
            report.append(f"{name}: {len(failures)} of {len(cases)} differ; first:\n"
                          f"{failures[0]}")
    assert not report, "\n".join(report)
