"""Elementwise arithmetic, logic and selection: ``add subtract multiply divide remainder
maximum minimum power and or xor negate abs not sign clamp select`` (StableHLO spec,
"Operations"; per-element semantics of the reference's ``Element.cpp``).

Each op is a table from element kind (:mod:`.elementwise_base`) to a factory that, given
the element type, returns the function of NumPy arrays computing it; the function is
resolved once per element type. On ``f32``/``f64``/``i32``... a binary op is then one
NumPy ufunc call (under ``np.errstate``: the spec defines overflow, ``x/0`` and NaNs).

Semantics worth knowing:

- Integers wrap modulo 2^width at every width (narrow ones compute in 64 bits and wrap).
  ``i1`` is boolean: ``add`` is ``or``, ``multiply`` is ``and``, ``maximum``/``minimum``
  are ``or``/``and``.
- Integer ``divide`` truncates toward zero; ``INT_MIN / -1`` wraps to ``INT_MIN`` (its
  ``remainder`` is 0). Division by zero crashes the reference (APInt divides by zero);
  we give XLA's results: ``x / 0`` is -1 (all ones; the maximum when unsigned) and
  ``x % 0`` is ``x``. ``remainder`` takes the dividend's sign (``fmod`` for floats).
- Float ``maximum``/``minimum`` are IEEE 754-2019 ``maximum``/``minimum`` (LLVM's): NaN
  propagates and ``-0 < +0``. Complex ones order by real part, then imaginary part.
- Integer ``power`` is exponentiation by squaring in the wrapped type; a negative
  exponent gives 0 unless ``|base| == 1``. Float ``power`` is ``pow`` (see the precision
  policy in :mod:`.elementwise_base`), complex ``power`` in complex128.
- ``abs``/``sign`` of unsigned integers read the bits as signed, as the reference's APInt
  does (the spec allows signed operands only).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import is_unsigned, storage_dtype, wide, wrap
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels import elementwise_complex as cx
from shardy_ref.execute.kernels.elementwise_base import (
    NATIVE_FLOATS,
    aligned,
    basic_float,
    batch,
    float_format,
    kind,
    result,
    round_to,
    to_array,
    unsupported,
    via_double,
    wrap_int,
)
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


# -- building blocks: factories ``t -> fn(*arrays)`` ------------------------------------------
def _direct(ufunc):
    """The ufunc as is (booleans and NumPy integers: wrap-around, no warnings)."""
    return lambda t: ufunc


def _quiet(ufunc):
    """The ufunc as is (complex, and floats computed as is): its floating-point warnings
    are off because the interpreter runs every op under ``np.errstate(all="ignore")``
    (:meth:`~shardy_ref.execute.interpreter.Interpreter.run_args`), not per call."""
    return lambda t: ufunc


def _narrow_int(fn):
    """``fn`` on 64-bit integers, wrapped back to the 2/4-bit type."""
    return lambda t: lambda *arrays: wrap(fn(*(wide(a, t) for a in arrays)), t)


def _float(ufunc):
    """A correctly rounded float operation: native dtypes as is, narrow ones upcast and
    rounded once (see :mod:`.elementwise_base`)."""
    def make(t):
        fmt = float_format(t)
        if fmt.compute == fmt.dtype:
            return _quiet(ufunc)(t)
        return lambda *arrays: basic_float(ufunc, t, *arrays)
    return make


def _exact_float(fn):
    """An exact float function (max, min, abs, negate, sign): narrow types go through
    float32, which holds all their values, and back (by :func:`round_to`: a value may
    still need a format's special rules, e.g. -0 in the FNUZ formats)."""
    def make(t):
        dtype = storage_dtype(t)
        if dtype in NATIVE_FLOATS:
            return fn
        return lambda *arrays: round_to(fn(*(a.astype(np.float32) for a in arrays)), t)
    return make


def _register(name: str, table: dict, arity: int):
    """Register the kernel of ``name`` from its table kind -> factory."""
    resolved: dict = {}

    def resolve(op, t):
        fn = resolved.get(t)
        if fn is None:
            factory = table.get(kind(t))
            if factory is None:
                raise unsupported(op, t)
            fn = resolved[t] = factory(t)
        return fn

    if arity == 1:
        @kernel(name)
        def unary(ctx, op, x):
            return result(op, resolve(op, x.type.element_type)(x.data), x.batch)
        return unary

    @kernel(name)
    def binary(ctx, op, lhs, rhs):
        fn = resolve(op, lhs.type.element_type)
        return result(op, fn(lhs.data, rhs.data), lhs.batch or rhs.batch)
    return binary


# -- integer helpers --------------------------------------------------------------------------
def _int_divmod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truncated quotient and remainder of NumPy integers, with ``x/0 = -1`` (all ones),
    ``x%0 = x`` and ``INT_MIN/-1 = INT_MIN`` (see the module docstring)."""
    zero = b == 0
    bad = zero
    if a.dtype.kind == "i":
        bad = zero | ((a == np.iinfo(a.dtype).min) & (b == -1))
    safe = np.where(bad, b.dtype.type(1), b)
    r = np.fmod(a, safe)
    q = (a - r) // safe
    ones = a.dtype.type(-1) if a.dtype.kind == "i" else np.iinfo(a.dtype).max
    return np.where(zero, ones, q), np.where(zero, a, r)


def _int_divide(t):
    if kind(t) == "int":
        return lambda a, b: _int_divmod(a, b)[0]
    return lambda a, b: wrap(_int_divmod(wide(a, t), wide(b, t))[0], t)


def _int_remainder(t):
    if kind(t) == "int":
        return lambda a, b: _int_divmod(a, b)[1]
    return lambda a, b: wrap(_int_divmod(wide(a, t), wide(b, t))[1], t)


def _int_power(t):
    """Exponentiation by squaring in 64-bit wrap-around arithmetic, wrapped to ``t``."""
    signed = not is_unsigned(t)

    def fn(a, b):
        base, e = wide(a, t), wide(b, t)
        base, e = np.broadcast_arrays(base, e)
        out = np.ones(base.shape, base.dtype)
        zero_out = None
        if signed:
            negative = e < 0
            zero_out = negative & (np.abs(base) != 1)
            e = np.where(negative, -e, e).view(np.uint64)  # APInt: |INT_MIN| read unsigned
        else:
            e = e.astype(np.uint64, copy=True)
        base = base.copy()
        with np.errstate(over="ignore"):  # 0-d operands multiply as NumPy scalars
            while e.any():
                odd = (e & np.uint64(1)).astype(bool)
                out = np.where(odd, out * base, out)
                base = base * base
                e >>= np.uint64(1)
        if zero_out is not None:
            out = np.where(zero_out, 0, out)
        return wrap_int(out, t)
    return fn


def _signed_view(a: np.ndarray, t) -> np.ndarray:
    """Integer data read as two's-complement signed values (int64 for narrow types)."""
    if kind(t) == "int":
        return a if a.dtype.kind == "i" else a.view(a.dtype.str.replace("u", "i"))
    v = wide(a, t).astype(np.int64)
    width = t.width
    return np.where(v >= (1 << (width - 1)), v - (1 << width), v)


def _int_signed_fn(fn):
    """``fn`` (abs, sign) of integers read as signed, wrapped back to the type."""
    def make(t):
        if kind(t) == "int":
            if not is_unsigned(t):
                return fn
            return lambda a: fn(_signed_view(a, t)).view(a.dtype)
        return lambda a: wrap(fn(_signed_view(a, t)), t)
    return make


# -- float helpers ----------------------------------------------------------------------------
def _ieee_extremum(ufunc, combine):
    """IEEE ``maximum``/``minimum``: NumPy's ``maximum``/``minimum`` propagate NaN but return
    the second operand on ties; among equal values the bits are combined instead (``and``
    for maximum: +0 wins; ``or`` for minimum: -0 wins; equal nonzero values are equal
    bits)."""
    def fn(a, b):
        r = to_array(ufunc(a, b))
        if not r.flags.writeable:
            r = r.copy()
        uint = np.dtype(f"u{r.dtype.itemsize}")
        combine(a.view(uint), b.view(uint), out=r.view(uint), where=(a == b))
        return r
    return fn


_fmax = _ieee_extremum(np.maximum, np.bitwise_and)
_fmin = _ieee_extremum(np.minimum, np.bitwise_or)


def _complex_extremum(greater: bool):
    """The reference's complex max/min: by real part, ties broken by imaginary part."""
    def fn(a, b):
        ar, ai, br, bi = a.real, a.imag, b.real, b.imag
        take_a = np.where(ar == br, ai > bi, ar > br) if greater else \
            np.where(ar == br, ai < bi, ar < br)
        return np.where(take_a, a, b)
    return fn


def _float_sign(x):
    """NaN stays, signed zeros stay, else +-1 (np.sign turns -0 into +0)."""
    with np.errstate(all="ignore"):
        return np.copysign(np.sign(x), x)


def _complex_sign(t):
    """NaN -> (NaN, NaN), 0 -> (0, 0), else ``z / |z|`` (the reference's complex division
    by ``(|z|, 0)``)."""
    def fn(z):
        nan = np.isnan(z.real) | np.isnan(z.imag)
        zero = (z.real == 0) & (z.imag == 0)
        magnitude = cx.abs_(z).astype(z.dtype)  # (|z|, 0) in the element type
        with np.errstate(all="ignore"):
            q = cx.divide(z, magnitude)
        q = np.where(zero, z.dtype.type(0), q)
        return np.where(nan, z.dtype.type(complex(np.nan, np.nan)), q)
    return fn


def _complex_power(t):
    def fn(a, b):
        with np.errstate(all="ignore"):
            z = np.power(cx.to_double(a), cx.to_double(b))
        return cx.from_double(z, a.dtype)
    return fn


# -- the tables -------------------------------------------------------------------------------
BINARY = {
    "stablehlo.add": {"bool": _direct(np.logical_or), "int": _direct(np.add),
                      "int_narrow": _narrow_int(np.add), "float": _float(np.add),
                      "float_narrow": _float(np.add), "complex": _quiet(np.add)},
    "stablehlo.subtract": {"int": _direct(np.subtract), "int_narrow": _narrow_int(np.subtract),
                           "float": _float(np.subtract), "float_narrow": _float(np.subtract),
                           "complex": _quiet(np.subtract)},
    "stablehlo.multiply": {"bool": _direct(np.logical_and), "int": _direct(np.multiply),
                           "int_narrow": _narrow_int(np.multiply), "float": _float(np.multiply),
                           "float_narrow": _float(np.multiply),
                           "complex": lambda t: cx.multiply},
    "stablehlo.divide": {"int": _int_divide, "int_narrow": _int_divide,
                         "float": _float(np.divide), "float_narrow": _float(np.divide),
                         "complex": lambda t: cx.divide},
    "stablehlo.remainder": {"int": _int_remainder, "int_narrow": _int_remainder,
                            "float": _float(np.fmod), "float_narrow": _float(np.fmod)},
    "stablehlo.maximum": {"bool": _direct(np.logical_or), "int": _direct(np.maximum),
                          "int_narrow": _narrow_int(np.maximum), "float": _exact_float(_fmax),
                          "float_narrow": _exact_float(_fmax),
                          "complex": lambda t: _complex_extremum(True)},
    "stablehlo.minimum": {"bool": _direct(np.logical_and), "int": _direct(np.minimum),
                          "int_narrow": _narrow_int(np.minimum), "float": _exact_float(_fmin),
                          "float_narrow": _exact_float(_fmin),
                          "complex": lambda t: _complex_extremum(False)},
    "stablehlo.power": {"int": _int_power, "int_narrow": _int_power,
                        "float": lambda t: lambda a, b: via_double(np.power, t, a, b),
                        "float_narrow": lambda t: lambda a, b: via_double(np.power, t, a, b),
                        "complex": _complex_power},
}
for _name, _ufunc in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    BINARY[f"stablehlo.{_name}"] = {"bool": _direct(_ufunc), "int": _direct(_ufunc),
                                    "int_narrow": _narrow_int(_ufunc)}

UNARY = {
    "stablehlo.negate": {"int": _direct(np.negative), "int_narrow": _narrow_int(np.negative),
                         "float": _exact_float(np.negative),
                         "float_narrow": _exact_float(np.negative),
                         "complex": _direct(np.negative)},
    "stablehlo.abs": {"int": _int_signed_fn(np.abs), "int_narrow": _int_signed_fn(np.abs),
                      "float": _exact_float(np.abs), "float_narrow": _exact_float(np.abs),
                      "complex": lambda t: cx.abs_},
    "stablehlo.not": {"bool": _direct(np.logical_not), "int": _direct(np.invert),
                      "int_narrow": _narrow_int(np.invert)},
    "stablehlo.sign": {"int": _int_signed_fn(np.sign), "int_narrow": _int_signed_fn(np.sign),
                       "float": _exact_float(_float_sign),
                       "float_narrow": _exact_float(_float_sign), "complex": _complex_sign},
}

for _name, _table in BINARY.items():
    _register(_name, _table, 2)
for _name, _table in UNARY.items():
    _register(_name, _table, 1)


# -- clamp and select -------------------------------------------------------------------------
def _extremum_fn(name: str, t):
    table = BINARY[name]
    factory = table.get(kind(t))
    if factory is None:
        raise InterpreterError(None, f"'stablehlo.clamp' does not support element type {t}")
    return factory(t)


@kernel("stablehlo.clamp")
def clamp(ctx, op, lo: Tensor, x: Tensor, hi: Tensor) -> Tensor:
    """``min(max(operand, min), max)`` elementwise (spec "clamp"); ``min``/``max`` may be
    rank-0 (the same bound everywhere)."""
    t = x.type.element_type
    rank = len(x.type.shape)
    low, high = aligned(lo, rank), aligned(hi, rank)
    data = _extremum_fn("stablehlo.minimum", t)(
        to_array(_extremum_fn("stablehlo.maximum", t)(x.data, low)), high)
    return result(op, data, batch(lo, x, hi))


@kernel("stablehlo.select")
def select(ctx, op, pred: Tensor, on_true: Tensor, on_false: Tensor) -> Tensor:
    """``on_true`` where ``pred`` else ``on_false`` (spec "select"); a uniform rank-0
    predicate picks a whole operand without copying it."""
    if not pred.batch and not pred.type.shape:
        chosen = on_true if bool(pred.data) else on_false
        return result(op, chosen.data, chosen.batch)
    p = aligned(pred, len(on_true.type.shape))
    return result(op, np.where(p, on_true.data, on_false.data), batch(pred, on_true, on_false))
