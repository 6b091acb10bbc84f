"""Complex arithmetic exactly as the reference interpreter does it (``Element.cpp``).

- ``multiply`` works on the parts in the element type, without fusing or infinity recovery:
  ``(ar*br - ai*bi, ar*bi + ai*br)``, each operation rounded (APFloat).
- ``divide`` converts both operands to ``std::complex<double>``, divides there and rounds
  the parts back. That division is libgcc's ``__divdc3`` as the oracle's build links it
  (it agrees bit for bit): Smith's method (divide by the larger part of the divisor
  first), then C99 Annex G's recovery of infinities and zeros where it gives NaN (the
  scaled variant of newer libgcc and compiler-rt's ``logb`` scaling differ in the last
  bit). :func:`divide_double` is a vectorized NumPy version; NumPy's own complex division
  orders the operations differently and differs in the last bit now and then.
- ``abs`` is ``std::abs`` in double (``hypot``), rounded to the part type.

Arrays here are ``complex64`` or ``complex128``; the ``*_double`` helpers take and return
``complex128``.
"""
from __future__ import annotations

import numpy as np


def make(real: np.ndarray, imag: np.ndarray, dtype) -> np.ndarray:
    """A complex array from its parts (no ``real + 1j*imag``: that turns inf into NaN)."""
    out = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), dtype)
    out.real = real
    out.imag = imag
    return out


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The reference's complex product, part by part in the element type."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    with np.errstate(all="ignore"):
        return make(ar * br - ai * bi, ar * bi + ai * br, np.result_type(a, b))


def divide_double(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` for complex128 arrays as libgcc's ``__divdc3`` computes it (see the module
    docstring): Smith's method on the larger part of the divisor, then Annex G's recovery
    of infinities and zeros."""
    a, b = np.broadcast_arrays(a, b)
    ar, ai, c, d = a.real, a.imag, b.real, b.imag
    with np.errstate(all="ignore"):
        swap = np.abs(c) < np.abs(d)
        # (p, q): the divisor's larger and smaller part; (u, v): the numerator's parts in
        # the matching order.
        p, q = np.where(swap, d, c), np.where(swap, c, d)
        u, v = np.where(swap, ai, ar), np.where(swap, ar, ai)
        re, im = _smith(u, v, p, q, swap)
        both_nan = np.isnan(re) & np.isnan(im)
        if both_nan.any():
            re, im = _recover(ar, ai, c, d, re, im, both_nan)
    return make(re, im, np.complex128)


def _smith(u, v, p, q, swap):
    """Smith's method for ``|p| >= |q|``: the real part ``(u + v*r) / (p + q*r)`` with
    ``r = q/p``, the imaginary part ``(v - u*r)`` over the same (``(u*r - v)`` where the
    parts were swapped, so that an exact zero keeps libgcc's sign)."""
    ratio = q / p
    denom = q * ratio + p
    x = (u + v * ratio) / denom
    t = u * ratio
    y = np.where(swap, t - v, v - t) / denom
    return x, y


def _recover(ar, ai, c, d, x, y, both_nan):
    """Annex G: a NaN quotient that should be an infinity or a zero."""
    inf = np.inf
    # (nonzero) / 0 -> infinity
    case1 = both_nan & (c == 0) & (d == 0) & (~np.isnan(ar) | ~np.isnan(ai))
    x = np.where(case1, np.copysign(inf, c) * ar, x)
    y = np.where(case1, np.copysign(inf, c) * ai, y)
    # infinity / finite -> infinity
    case2 = both_nan & ~case1 & (np.isinf(ar) | np.isinf(ai)) & np.isfinite(c) & \
        np.isfinite(d)
    a2 = np.copysign(np.where(np.isinf(ar), 1.0, 0.0), ar)
    b2 = np.copysign(np.where(np.isinf(ai), 1.0, 0.0), ai)
    x = np.where(case2, inf * (a2 * c + b2 * d), x)
    y = np.where(case2, inf * (b2 * c - a2 * d), y)
    # finite / infinity -> zero
    case3 = both_nan & ~case1 & ~case2 & (np.isinf(c) | np.isinf(d)) & np.isfinite(ar) & \
        np.isfinite(ai)
    c3 = np.copysign(np.where(np.isinf(c), 1.0, 0.0), c)
    d3 = np.copysign(np.where(np.isinf(d), 1.0, 0.0), d)
    x = np.where(case3, 0.0 * (ar * c3 + ai * d3), x)
    y = np.where(case3, 0.0 * (ai * c3 - ar * d3), y)
    return x, y


def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The reference's complex quotient: in complex128, rounded to the operands' type."""
    dtype = np.result_type(a, b)
    q = divide_double(a.astype(np.complex128), b.astype(np.complex128))
    return from_double(q, dtype)


def abs_(a: np.ndarray) -> np.ndarray:
    """``std::abs`` of complex values in double, rounded to the part type."""
    part = np.float64 if a.dtype == np.complex128 else np.float32
    with np.errstate(all="ignore"):
        return np.abs(a.astype(np.complex128)).astype(part)


def to_double(a: np.ndarray) -> np.ndarray:
    return a.astype(np.complex128)


def from_double(z: np.ndarray, dtype) -> np.ndarray:
    """Complex values rounded part by part to ``dtype`` (overflow gives infinity)."""
    if z.dtype == dtype:
        return z
    with np.errstate(all="ignore"):
        return z.astype(dtype)
