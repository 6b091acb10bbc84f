"""Elementwise math: ``exponential exponential_minus_one log log_plus_one logistic sine
cosine tan tanh sqrt rsqrt cbrt atan2``, the roundings ``ceil floor round_nearest_even
round_nearest_afz``, and ``is_finite real imag complex`` (StableHLO spec, "Operations";
per-element semantics of the reference's ``Element.cpp``).

Precision (the policy of :mod:`.elementwise_base`): the reference computes these functions
in ``double`` and rounds to the element type. We do the same for f16, bf16 and the f8/f6/f4
formats (bit-identical, up to NumPy's float64 function vs glibc's in the last bit of a
double), call NumPy's float32 functions on ``f32`` (within 1 ulp of the reference in the
differential tests; NumPy code computes ``exp`` of float32 in float32 too, and speed
matters here) and its float64 ones on ``f64`` (bit-identical in those tests). ``sqrt`` is
correctly rounded everywhere, hence bit-identical. Complex values are computed in
complex128 and rounded part by part, as the reference does; where the reference composes
element operations (``logistic``, ``atan2``, complex ``cbrt`` and ``rsqrt``,
``exponential_minus_one``, ``log_plus_one``) we compose the same ones (complex ``atan2``
takes the log of a quotient near 1, where NumPy's and glibc's complex logs differ by a few
eps of the result). ``result_accuracy`` attributes are ignored, as the reference ignores
them.

The roundings and ``is_finite``/``real``/``imag``/``complex`` are exact. (The reference
rounds to an integer by adding and subtracting 2^(p-1), which overflows in f6E2M3FN, f8E3M4
and f8E8M0FNU, so there it gives e.g. floor(1.25) = 0 or round(4) = NaN; we round those
formats correctly too. Functions of f8E8M0FNU are not meaningful either way: it has no
negative values and the reference reads its NaN as +infinity.)
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.kernels import elementwise_complex as cx
from shardy_ref.execute.kernels.elementwise_base import (
    NATIVE_FLOATS,
    basic_float,
    batch,
    kind,
    result,
    to_array,
    unsupported,
    via_double,
)
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


def _quiet(fn):
    def run(*arrays):
        with np.errstate(all="ignore"):
            return fn(*arrays)
    return run


# -- complex functions the reference composes (complex128 in and out) -------------------------
def _expm1_c(z):
    e = np.exp(z)
    return cx.make(e.real - 1.0, e.imag, np.complex128)  # exp(z) - (1, 0)


def _log1p_c(z):
    return np.log(cx.make(z.real + 1.0, z.imag + 0.0, np.complex128))  # log(z + (1, 0))


def _rsqrt_c(z):
    return cx.divide_double(np.ones((), np.complex128), np.sqrt(z))  # 1.0 / sqrt(z)


def _cbrt_c(z):
    """The reference's formula: |z|^(1/3) at a third of the argument."""
    theta = np.arctan2(z.imag, z.real) / 3.0
    r = np.power(z.real * z.real + z.imag * z.imag, 1.0 / 6.0)
    return cx.make(r * np.cos(theta), r * np.sin(theta), np.complex128)


# -- factories: element type -> fn(arrays) ----------------------------------------------------
def _math(fn, complex_fn=None):
    """A transcendental function: floats by :func:`via_double`, complex in complex128."""
    complex_fn = complex_fn or fn

    def make(t):
        if kind(t) == "complex":
            return _quiet(lambda z: cx.from_double(complex_fn(cx.to_double(z)), z.dtype))
        return lambda *arrays: via_double(fn, t, *arrays)
    return make


def _exact(fn, predicate: bool = False):
    """An exact float function (roundings; ``predicate``: is_finite): narrow types through
    float32, which holds all their values, and back."""
    def make(t):
        dtype = storage_dtype(t)
        if dtype in NATIVE_FLOATS:
            return fn
        if predicate:
            return lambda x: fn(x.astype(np.float32))
        return lambda x: to_array(fn(x.astype(np.float32))).astype(dtype)
    return make


def _round_afz(x):
    """Round half away from zero, exactly: ``trunc`` plus one step where the dropped
    fraction is at least one half (``x - trunc(x)`` is exact); the sign is the operand's
    (so -0.4 gives -0)."""
    t = np.trunc(x)
    with np.errstate(all="ignore"):
        step = np.where(np.abs(x - t) >= 0.5, np.ones((), x.dtype), np.zeros((), x.dtype))
        return np.copysign(np.abs(t) + step, x)


def _sqrt(t):
    if kind(t) == "complex":
        return _math(np.sqrt)(t)
    return lambda x: basic_float(np.sqrt, t, x)


def _rsqrt(t):
    """``1 / sqrt(x)``, in double for the narrow types, in the type for f32/f64."""
    if kind(t) == "complex":
        return _math(None, _rsqrt_c)(t)
    return lambda x: via_double(_rsqrt_real, t, x)


def _rsqrt_real(v):
    return np.divide(v.dtype.type(1), np.sqrt(v))


def _logistic(t):
    """The reference's ``1 / (1 + exponential(-x))``: exp rounded to the type, then an
    addition and a division in the type."""
    dtype = storage_dtype(t)
    one = np.ones((), dtype)
    if kind(t) == "complex":
        def complex_fn(z):
            with np.errstate(all="ignore"):
                e = cx.from_double(np.exp(cx.to_double(-z)), z.dtype)
                return cx.divide(one, cx.make(1 + e.real, 0 + e.imag, z.dtype))
        return complex_fn

    def fn(x):
        e = via_double(np.exp, t, basic_float(np.negative, t, x))
        return basic_float(np.divide, t, one, basic_float(np.add, t, one, e))
    return fn


def _atan2(t):
    if kind(t) != "complex":
        return lambda y, x: via_double(np.arctan2, t, y, x)

    def fn(y, x):
        """The reference's ``-i * log((x + i*y) / sqrt(x*x + y*y))``, op by op in the
        element type."""
        i = cx.make(0.0, 1.0, y.dtype)
        with np.errstate(all="ignore"):
            num = x + cx.multiply(i, y)
            root = _math(np.sqrt)(t)(cx.multiply(x, x) + cx.multiply(y, y))
            quotient = cx.divide(num, root)
            return cx.multiply(-i, _math(np.log)(t)(quotient))
    return fn


UNARY = {
    "stablehlo.exponential": _math(np.exp),
    "stablehlo.exponential_minus_one": _math(np.expm1, _expm1_c),
    "stablehlo.log": _math(np.log),
    "stablehlo.log_plus_one": _math(np.log1p, _log1p_c),
    "stablehlo.sine": _math(np.sin),
    "stablehlo.cosine": _math(np.cos),
    "stablehlo.tan": _math(np.tan),
    "stablehlo.tanh": _math(np.tanh),
    "stablehlo.cbrt": _math(np.cbrt, _cbrt_c),
    "stablehlo.sqrt": _sqrt,
    "stablehlo.rsqrt": _rsqrt,
    "stablehlo.logistic": _logistic,
    "stablehlo.ceil": _exact(np.ceil),
    "stablehlo.floor": _exact(np.floor),
    "stablehlo.round_nearest_even": _exact(np.rint),
    "stablehlo.round_nearest_afz": _exact(_round_afz),
    "stablehlo.is_finite": _exact(np.isfinite, predicate=True),
}
_FLOAT_KINDS = ("float", "float_narrow")
_REAL_ONLY = frozenset({"stablehlo.ceil", "stablehlo.floor", "stablehlo.is_finite",
                        "stablehlo.round_nearest_even", "stablehlo.round_nearest_afz"})


def _register(name: str, factory, arity: int):
    resolved: dict = {}

    def resolve(op, t):
        fn = resolved.get(t)
        if fn is None:
            k = kind(t)
            if k not in _FLOAT_KINDS and not (k == "complex" and name not in _REAL_ONLY):
                raise unsupported(op, t)
            fn = resolved[t] = factory(t)
        return fn

    if arity == 1:
        @kernel(name)
        def unary(ctx, op, x: Tensor) -> Tensor:
            return result(op, resolve(op, x.type.element_type)(x.data), x.batch)
        return unary

    @kernel(name)
    def binary(ctx, op, lhs: Tensor, rhs: Tensor) -> Tensor:
        data = resolve(op, lhs.type.element_type)(lhs.data, rhs.data)
        return result(op, data, lhs.batch or rhs.batch)
    return binary


for _name, _factory in UNARY.items():
    _register(_name, _factory, 1)
_register("stablehlo.atan2", _atan2, 2)


# -- parts of complex numbers -----------------------------------------------------------------
@kernel("stablehlo.real")
def real(ctx, op, x: Tensor) -> Tensor:
    """The real part of a complex number; a float is its own real part."""
    k = kind(x.type.element_type)
    if k == "complex":
        return result(op, x.data.real, x.batch)
    if k in _FLOAT_KINDS:
        return result(op, x.data, x.batch)
    raise unsupported(op, x.type.element_type)


@kernel("stablehlo.imag")
def imag(ctx, op, x: Tensor) -> Tensor:
    """The imaginary part of a complex number; that of a float is +0."""
    k = kind(x.type.element_type)
    if k == "complex":
        return result(op, x.data.imag, x.batch)
    if k in _FLOAT_KINDS:
        return result(op, np.zeros(x.data.shape, x.data.dtype), x.batch)
    raise unsupported(op, x.type.element_type)


@kernel("stablehlo.complex")
def complex_(ctx, op, lhs: Tensor, rhs: Tensor) -> Tensor:
    """A complex number from its real and imaginary parts (no arithmetic: infinities and
    NaNs stay where they are)."""
    dtype = storage_dtype(op.results[0].type.element_type)
    return result(op, cx.make(lhs.data, rhs.data, dtype), batch(lhs, rhs))
