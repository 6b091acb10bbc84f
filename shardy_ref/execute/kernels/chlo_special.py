"""Special functions of CHLO (``chlo.erf``, ``erfc``, ``erf_inv``, ``lgamma``, ``digamma``,
``polygamma``, ``zeta``, ``bessel_i1e``), computed on float64 arrays to about double
precision and rounded to the element type by the kernels (``chlo.py``).

NumPy has none of them and SciPy is not a dependency, so they are written here from
textbook formulas: Python's ``math.erf``/``erfc``/``lgamma`` element by element, Halley's
iteration for the inverse error function, recurrence plus the asymptotic (Bernoulli)
series for digamma, Euler-Maclaurin summation for Hurwitz's zeta (Johansson, "Rigorous
high-precision computation of the Hurwitz zeta function", formula (5)), and the power
series / Hankel asymptotic expansion for the scaled Bessel function I1.

The values at poles and outside the domain are those of CHLO's decompositions
(``stablehlo/transforms/ChloLegalizeToStablehlo.cpp``, which defines these ops):
``lgamma`` is +inf at poles and at +-inf; ``digamma`` is NaN at 0 and negative integers;
``zeta(x, q)`` is NaN for x < 1, inf at x == 1, NaN for q <= 0 with x not an integer, and
at the poles (integer q <= 0) inf for even integer x, else NaN; ``polygamma(n, x)`` is NaN
unless n is a natural number. The decompositions themselves approximate in f32 (f64 for
f64 operands), so they may differ from these values in the last bits.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

# -- helpers -------------------------------------------------------------------------------


def _elementwise(fn, x: np.ndarray) -> np.ndarray:
    """A float64 array of ``fn`` applied to each element (Python's math functions)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.zeros(x.shape)
    return np.asarray(np.frompyfunc(fn, 1, 1)(x), dtype=object).astype(np.float64)


@cache
def _bernoulli(n: int) -> tuple[Fraction, ...]:
    """B_0..B_n (B_1 = -1/2), from the recurrence sum_{k<=m} C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(b)


# -- error function ------------------------------------------------------------------------


def erf(x: np.ndarray) -> np.ndarray:
    """The error function (math.erf per element: correctly rounded to a few ulp)."""
    return _elementwise(math.erf, x)


def erfc(x: np.ndarray) -> np.ndarray:
    """The complementary error function 1 - erf(x), accurate in the tails."""
    return _elementwise(math.erfc, x)


def erf_inv(y: np.ndarray) -> np.ndarray:
    """The inverse error function: NaN outside [-1, 1], +-inf at +-1.

    Winitzki's closed form (relative error < 2e-3) starts two Halley steps on
    erf(x) - |y|; for |y| >= 1/2 the residual is taken as (1 - |y|) - erfc(x) so that
    arguments near +-1 keep their precision (1 - |y| is exact there)."""
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    with np.errstate(all="ignore"):
        inside = a < 1
        t = np.where(inside, a, 0.0)
        log1my2 = np.log1p(-t * t)
        c = 0.147
        u = 2 / (math.pi * c) + log1my2 / 2
        x = np.sqrt(np.sqrt(u * u - log1my2 / c) - u)
        one_minus = 1.0 - t
        tail = t >= 0.5
        for _ in range(2):  # Halley: 2e-3 -> ~1e-8 -> below double precision
            r = np.empty_like(x)  # erf(x) - t
            r[tail] = one_minus[tail] - erfc(x[tail])
            r[~tail] = erf(x[~tail]) - t[~tail]
            slope = 2 / math.sqrt(math.pi) * np.exp(-x * x)
            step = np.where(slope > 0, r / np.where(slope > 0, slope, 1.0), 0.0)
            x = x - step / (1 + x * step)
        out = np.where(inside, np.copysign(x, y), np.nan)
        out = np.where(a == 1, np.copysign(np.inf, y), out)
    return out


# -- gamma family --------------------------------------------------------------------------


def _lgamma1(v: float) -> float:
    if math.isnan(v):
        return math.nan
    if math.isinf(v) or (v <= 0 and v == math.floor(v)):
        return math.inf
    return math.lgamma(v)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: +inf at the poles (0, -1, -2, ...) and at +-inf."""
    return _elementwise(_lgamma1, x)


# digamma's asymptotic series: sum_k B_2k / (2k x^2k), k = 1..8, for x >= 10
_DIGAMMA_TERMS = tuple(float(_bernoulli(16)[2 * k] / (2 * k)) for k in range(1, 9))
_DIGAMMA_SHIFT = 10.0


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """digamma for x >= 1/2: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then
    ln x - 1/(2x) - sum B_2k / (2k x^2k)."""
    x = x.copy()
    acc = np.zeros_like(x)
    for _ in range(int(_DIGAMMA_SHIFT)):
        small = x < _DIGAMMA_SHIFT
        if not small.any():
            break
        acc -= np.where(small, 1.0 / x, 0.0)
        x = np.where(small, x + 1.0, x)
    inv2 = 1.0 / (x * x)
    series = np.zeros_like(x)
    for coeff in reversed(_DIGAMMA_TERMS):
        series = (series + coeff) * inv2
    return acc + np.log(x) - 0.5 / x - series


def _pi_cot_pi(x: np.ndarray) -> np.ndarray:
    """pi * cot(pi * x) with the argument reduced to [-1/2, 1/2] first (exact in double)."""
    r = x - np.round(x)
    return math.pi / np.tan(math.pi * r)


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function psi = Gamma'/Gamma; NaN at 0 and the negative integers, and
    at -inf; the reflection psi(x) = psi(1 - x) - pi cot(pi x) below 1/2."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        base = np.where(reflect, 1.0 - x, x)
        finite = np.isfinite(base)
        value = _digamma_positive(np.where(finite, base, 1.0))
        value = np.where(finite, value, base)  # +inf -> +inf, nan -> nan
        value = np.where(reflect, value - _pi_cot_pi(np.where(finite, x, 0.5)), value)
        pole = (x <= 0) & (x == np.floor(x))
        value = np.where(pole | (x == -np.inf), np.nan, value)
    return value


# -- Hurwitz zeta --------------------------------------------------------------------------

_ZETA_TERMS = 12  # Euler-Maclaurin correction terms
_ZETA_SHIFT = 10.0  # the direct sum runs until q + N >= this (and N >= 9)
# B_2k / (2k)!, k = 1..12
_ZETA_COEFFS = tuple(float(_bernoulli(2 * _ZETA_TERMS)[2 * k] / math.factorial(2 * k))
                     for k in range(1, _ZETA_TERMS + 1))


def _zeta_sum(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """sum_{k<N} (q+k)^-x + (q+N)^(1-x)/(x-1) + (q+N)^-x/2 + the Bernoulli terms
    sum_j B_2j/(2j)! x(x+1)..(x+2j-2) (q+N)^(-x-2j+1): Euler-Maclaurin with N >= 9 and
    q + N >= 10, accurate to double precision for x >= 1."""
    steps = np.maximum(9.0, np.ceil(_ZETA_SHIFT - q))
    steps = np.where(np.isfinite(steps), steps, 9.0)
    total = np.zeros_like(q)
    limit = int(min(steps.max(initial=9.0), 10_000))
    for k in range(limit):
        total = total + np.where(k < steps, np.power(q + k, -x), 0.0)
    a = q + steps
    a_pow = np.power(a, -x)
    total = total + a * a_pow / (x - 1) + 0.5 * a_pow
    rising = x.copy()  # x (x+1) ... (x + 2j - 2)
    power = a_pow / a  # a^(-x-1)
    for j, coeff in enumerate(_ZETA_COEFFS):
        total = total + coeff * rising * power
        rising = rising * (x + 2 * j + 1) * (x + 2 * j + 2)
        power = power / (a * a)
    return total


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hurwitz's zeta function sum_{k>=0} (q + k)^-x, with CHLO's domain rules."""
    x, q = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(all="ignore"):
        ok = (x > 1) & np.isfinite(q) & ~np.isnan(x)
        xs, qs = np.where(ok, x, 2.0), np.where(ok, q, 1.0)
        value = np.where(ok, _zeta_sum(xs, qs), np.nan)
        value = np.where(ok & (x == np.inf) & (q > 0), np.where(q < 1, np.inf,
                                                               np.where(q == 1, 1.0, 0.0)),
                         value)
        value = np.where((q == np.inf) & (x > 1), 0.0, value)
        x_int = x == np.floor(x)
        q_le_zero = q <= 0
        value = np.where(q_le_zero & ~x_int, np.nan, value)
        pole = q_le_zero & (q == np.floor(q))
        even = x_int & (np.fmod(x, 2.0) == 0)
        value = np.where(pole, np.where(even, np.inf, np.nan), value)
        value = np.where(x == 1, np.inf, value)
    return value


def polygamma(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma: digamma for n = 0, (-1)^(n+1) n! zeta(n+1, x) for
    natural n > 0, NaN unless n is a natural number."""
    n, x = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        natural = (n >= 0) & (n == np.floor(n)) & np.isfinite(n)
        nn = np.where(natural, n, 1.0)
        factorial = _elementwise(
            lambda v: float(math.factorial(int(v))) if v < 171 else math.inf, nn)
        sign = np.where(np.fmod(nn, 2.0) == 1, 1.0, -1.0)
        value = sign * factorial * zeta(nn + 1, x)
        value = np.where(n == 0, digamma(x), value)
        value = np.where(natural, value, np.nan)
    return value


# -- Bessel --------------------------------------------------------------------------------

_I1E_SERIES_LIMIT = 30.0  # power series below, asymptotic expansion above


def _i1e_series(x: np.ndarray) -> np.ndarray:
    """exp(-x) I1(x) for 0 <= x <= 30: I1(x) = sum_k (x/2)^(2k+1) / (k! (k+1)!), a sum of
    positive terms (no cancellation)."""
    half = x / 2
    term = half.copy()
    total = term.copy()
    sq = half * half
    for k in range(1, 90):
        term = term * sq / (k * (k + 1))
        total = total + term
    return total * np.exp(-x)


def _i1e_asymptotic(x: np.ndarray) -> np.ndarray:
    """exp(-x) I1(x) for x >= 30: the Hankel expansion 1/sqrt(2 pi x) sum_k (-1)^k
    (mu-1)(mu-9)...(mu-(2k-1)^2) / (k! (8x)^k), mu = 4."""
    mu = 4.0
    term = np.ones_like(x)
    total = term.copy()
    for k in range(1, 30):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8 * x)
        total = total + term
    return total / np.sqrt(2 * math.pi * x)


def bessel_i1e(x: np.ndarray) -> np.ndarray:
    """The exponentially scaled modified Bessel function of order one, exp(-|x|) I1(x)
    (odd in x; 0 at +-inf)."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    with np.errstate(all="ignore"):
        small = a <= _I1E_SERIES_LIMIT
        value = np.where(small, _i1e_series(np.where(small, a, 0.0)),
                         _i1e_asymptotic(np.where(small, _I1E_SERIES_LIMIT, a)))
        value = np.where(a == np.inf, 0.0, value)
        value = np.where(np.isnan(x), np.nan, np.copysign(value, x))
    return value
