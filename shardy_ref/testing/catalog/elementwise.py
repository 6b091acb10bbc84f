"""Elementwise StableHLO ops: float and integer unary ops, binary ops (with a second
argument of the same shape), compare/select/clamp, complex numbers, converts and bitcasts.
Integer and boolean ops work on a convert of the f32 input and convert back."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

FLOAT_UNARY = ("abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one",
               "floor", "log", "log_plus_one", "logistic", "negate", "round_nearest_afz",
               "round_nearest_even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh")
FLOAT_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                "remainder", "atan2")
INT_UNARY = ("not", "popcnt", "count_leading_zeros")
INT_BINARY = ("and", "or", "xor", "shift_left", "shift_right_arithmetic",
              "shift_right_logical")


def _unary(name: str):
    def build(s, x, shape):
        if name == "tan":  # away from its poles (see chlo._INTO_DOMAIN)
            x = s.op(f"stablehlo.tanh {x} : {tensor(shape)}")
        return s.op(f"stablehlo.{name} {x} : {tensor(shape)}"), shape
    return build


def _binary(name: str):
    def build(s, x, shape):
        y = s.arg(shape)
        return s.binary(name, x, y, shape), shape
    return build


def _int_unary(name: str):
    def build(s, x, shape):
        i = s.convert(s.binary("multiply", x, s.const(9.0, shape), shape), shape, FLOAT,
                      "i32")
        out = s.op(f"stablehlo.{name} {i} : {tensor(shape, 'i32')}")
        return s.convert(out, shape, "i32", FLOAT), shape
    return build


def _int_binary(name: str):
    def build(s, x, shape):
        a = s.convert(x, shape, FLOAT, "i32")
        b = s.convert(s.arg(shape), shape, FLOAT, "i32")
        if name.startswith("shift"):
            b = s.op(f"stablehlo.and {b}, {s.const(7, shape, 'i32')} : "
                     f"{tensor(shape, 'i32')}")
        out = s.binary(name, a, b, shape, "i32")
        return s.convert(out, shape, "i32", FLOAT), shape
    return build


for _name in FLOAT_UNARY:
    kind(_name)(_unary(_name))
for _name in FLOAT_BINARY:
    kind(_name)(_binary(_name))
for _name in INT_UNARY:
    kind(_name)(_int_unary(_name))
for _name in INT_BINARY:
    kind(_name)(_int_binary(_name))


@kind("integer_divide", "stablehlo.divide", "stablehlo.remainder")
def integer_divide(s, x, shape):
    """Integer division and remainder, the divisor kept away from zero (division by zero
    is implementation-defined)."""
    a = s.convert(s.binary("multiply", x, s.const(9.0, shape), shape), shape, FLOAT, "i32")
    b = s.convert(s.arg(shape), shape, FLOAT, "i32")
    b = s.binary("add", s.op(f"stablehlo.abs {b} : {tensor(shape, 'i32')}"),
                 s.const(1, shape, "i32"), shape, "i32")
    q = s.binary("divide", a, b, shape, "i32")
    r = s.binary("remainder", a, b, shape, "i32")
    return s.convert(s.binary("add", q, r, shape, "i32"), shape, "i32", FLOAT), shape


@kind("compare_select", "stablehlo.compare", "stablehlo.select")
def compare_select(s, x, shape):
    y = s.arg(shape)
    direction = s.rng.choice(("LT", "GE", "EQ", "NE"))
    p = s.op(f"stablehlo.compare {direction}, {x}, {y}, FLOAT : ({tensor(shape)}, "
             f"{tensor(shape)}) -> {tensor(shape, 'i1')}")
    return s.op(f"stablehlo.select {p}, {x}, {y} : {tensor(shape, 'i1')}, "
                f"{tensor(shape)}"), shape


@kind("select_scalar_predicate", "stablehlo.select", "stablehlo.compare")
def select_scalar_predicate(s, x, shape):
    """``select`` with one scalar predicate for the whole tensor."""
    p = s.op(f"stablehlo.compare GT, {s.index(4)}, {s.const(0, (), 'i32')}, SIGNED : "
             f"({tensor((), 'i32')}, {tensor((), 'i32')}) -> {tensor((), 'i1')}")
    y = s.arg(shape)
    return s.op(f"stablehlo.select {p}, {x}, {y} : ({tensor((), 'i1')}, {tensor(shape)}, "
                f"{tensor(shape)}) -> {tensor(shape)}"), shape


@kind("clamp")
def clamp(s, x, shape):
    """``clamp`` by scalar bounds or by tensors of the operand's shape."""
    if s.rng.random() < 0.5:
        lo, hi, t = s.const(-0.5), s.const(0.5), tensor(())
    else:
        lo, hi, t = s.arg(shape), s.const(0.75, shape), tensor(shape)
    return s.op(f"stablehlo.clamp {lo}, {x}, {hi} : ({t}, {tensor(shape)}, {t}) -> "
                f"{tensor(shape)}"), shape


@kind("complex", "stablehlo.complex", "stablehlo.real", "stablehlo.imag")
def complex_parts(s, x, shape):
    y = s.arg(shape)
    c = s.op(f"stablehlo.complex {x}, {y} : {tensor(shape, 'complex<f32>')}")
    c = s.binary("multiply", c, c, shape, "complex<f32>")
    re = s.op(f"stablehlo.real {c} : ({tensor(shape, 'complex<f32>')}) -> {tensor(shape)}")
    im = s.op(f"stablehlo.imag {c} : ({tensor(shape, 'complex<f32>')}) -> {tensor(shape)}")
    return s.binary("add", re, im, shape), shape


@kind("is_finite")
def is_finite(s, x, shape):
    p = s.op(f"stablehlo.is_finite {s.op(f'stablehlo.log {x} : {tensor(shape)}')} : "
             f"({tensor(shape)}) -> {tensor(shape, 'i1')}")
    return s.convert(p, shape, "i1", FLOAT), shape


@kind("convert")
def convert(s, x, shape):
    """Round trips through f16, i8 and bf16."""
    dtype = s.rng.choice(("f16", "bf16", "i8", "f64"))
    scaled = s.binary("multiply", x, s.const(7.0, shape), shape)
    return s.convert(s.convert(scaled, shape, FLOAT, dtype), shape, dtype, FLOAT), shape


@kind("reduce_precision")
def reduce_precision(s, x, shape):
    return s.op(f"stablehlo.reduce_precision {x}, format = e5m10 : {tensor(shape)}"), shape


@kind("bitcast_convert")
def bitcast_convert(s, x, shape):
    """To integers of the same width, or to pairs of 16-bit halves (a new minor
    dimension, which must not be sharded), and back."""
    if s.rng.random() < 0.5:
        bits = s.op(f"stablehlo.bitcast_convert {x} : ({tensor(shape)}) -> "
                    f"{tensor(shape, 'i32')}")
        return s.op(f"stablehlo.bitcast_convert {bits} : ({tensor(shape, 'i32')}) -> "
                    f"{tensor(shape)}"), shape
    halves = (*shape, 2)
    bits = s.op(f"stablehlo.bitcast_convert {x} : ({tensor(shape)}) -> "
                f"{tensor(halves, 'i16')}")
    bits = s.op(f"stablehlo.xor {bits}, {s.const(3, halves, 'i16')} : "
                f"{tensor(halves, 'i16')}")
    return s.op(f"stablehlo.bitcast_convert {bits} : ({tensor(halves, 'i16')}) -> "
                f"{tensor(shape)}"), shape
