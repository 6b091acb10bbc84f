"""CHLO's special functions (:mod:`shardy_ref.execute.kernels.chlo_special`) against
values derived independently: Python's ``math`` module (erf, erfc, lgamma), identities
(erf(erf_inv(y)) = y, digamma's recurrence and reflection, zeta's shift, polygamma's
recurrence), closed forms (digamma(n) = H(n-1) - gamma, zeta(2) = pi^2/6, zeta(s, 1/2) =
(2^s - 1) zeta(s)), and I1's power series summed exactly in 50-digit decimals. Through the
kernels, f32 results must be within 1 ulp of the correctly rounded value; and CHLO's pole and
domain rules hold."""
from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from shardy_ref.execute.kernels import chlo_special as sf

EULER = 0.5772156649015329
ZETA3 = 1.2020569031595942


def _ulps_f32(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in f32 ulps between f32 results and float64 reference values."""
    want32 = want.astype(np.float32)
    spacing = np.spacing(np.abs(want32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def _kernel_f32(name: str, *args: np.ndarray) -> np.ndarray:
    n = args[0].shape[0]
    t = f"tensor<{n}xf32>"
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    params = ", ".join(f"%a{i}: {t}" for i in range(len(args)))
    types = ", ".join([t] * len(args))
    text = (f"func.func @main({params}) -> {t} {{\n  %r = chlo.{name} {operands} : {types} -> "
            f"{t}\n  return %r : {t}\n}}")
    return run(text, *[a.astype(np.float32) for a in args])[0]


@pytest.mark.parametrize(("name", "fn", "low", "high"), [("erf", math.erf, -5, 5),
                                              ("erfc", math.erfc, -3, 9),
                                              ("lgamma", math.lgamma, 0.01, 30)])
def test_f32_results_within_one_ulp_of_math(name, fn, low, high):
    x = np.random.default_rng(0).uniform(low, high, 400).astype(np.float32)
    got = _kernel_f32(name, x)
    want = np.array([fn(float(v)) for v in x])
    assert _ulps_f32(got, want).max() <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.floats(-0.999999, 0.999999))
def test_erf_inv_inverts_erf(y):
    x = float(sf.erf_inv(np.array([y]))[0])
    assert math.erf(x) == pytest.approx(y, rel=1e-14, abs=1e-300)


def test_erf_inv_domain():
    out = sf.erf_inv(np.array([1.0, -1.0, 1.5, np.nan, 0.0, -0.0, 1e-300]))
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2:4]).all()
    assert out[4] == 0 and math.copysign(1, out[5]) == -1
    assert out[6] == pytest.approx(math.sqrt(math.pi) / 2 * 1e-300)
    near_one = 1 - 2.0 ** -40
    assert math.erfc(float(sf.erf_inv(np.array([near_one]))[0])) == pytest.approx(2.0 ** -40,
                                                                                  rel=1e-12)


def test_digamma_closed_forms_recurrence_and_reflection():
    n = np.arange(1, 30)
    harmonic = np.array([sum(1 / k for k in range(1, m)) for m in n])
    assert np.allclose(sf.digamma(n.astype(float)), harmonic - EULER, rtol=1e-15, atol=1e-15)
    assert sf.digamma(np.array([0.5]))[0] == pytest.approx(-EULER - 2 * math.log(2), rel=1e-15)
    x = np.random.default_rng(1).uniform(-20, 20, 500)
    x = x[np.abs(x - np.round(x)) > 1e-3]
    assert np.allclose(sf.digamma(x + 1), sf.digamma(x) + 1 / x, rtol=1e-12, atol=1e-12)
    reflected = sf.digamma(1 - x) - math.pi / np.tan(math.pi * x)
    assert np.allclose(sf.digamma(x), reflected, rtol=1e-11, atol=1e-11)


def test_gamma_family_poles_and_infinities():
    x = np.array([0.0, -1.0, -2.0, np.inf, -np.inf, np.nan])
    assert sf.lgamma(x)[:5].tolist() == [np.inf] * 5 and np.isnan(sf.lgamma(x)[5])
    d = sf.digamma(x)
    assert np.isnan(d[[0, 1, 2, 4, 5]]).all() and d[3] == np.inf


def test_zeta_closed_forms_and_shift():
    assert sf.zeta(np.array([2.0]), np.array([1.0]))[0] == pytest.approx(math.pi ** 2 / 6,
                                                                        rel=1e-15)
    assert sf.zeta(np.array([4.0]), np.array([1.0]))[0] == pytest.approx(math.pi ** 4 / 90,
                                                                        rel=1e-15)
    s = np.array([2.0, 3.0, 4.0, 6.5])
    half = sf.zeta(s, np.full(4, 0.5))
    assert np.allclose(half, (2 ** s - 1) * sf.zeta(s, np.ones(4)), rtol=1e-14)
    rng = np.random.default_rng(2)
    s, q = 1 + rng.uniform(0.01, 10, 300), rng.uniform(0.01, 50, 300)
    assert np.allclose(sf.zeta(s, q) - sf.zeta(s, q + 1), q ** -s, rtol=1e-12)


def test_zeta_domain_rules():
    x = np.array([1.0, 0.5, 2.5, 2.0, 3.0, 2.0])
    q = np.array([1.0, 1.0, -1.5, -2.0, -2.0, -1.5])
    out = sf.zeta(x, q)
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2])
    assert out[3] == np.inf and np.isnan(out[4])  # poles: inf for even x, else NaN
    assert out[5] == pytest.approx(sum((-1.5 + k) ** -2 for k in range(200000)) +
                                   1 / (-1.5 + 200000), rel=1e-9)


def test_polygamma_values_and_recurrence():
    assert sf.polygamma(np.array([1.0]), np.array([1.0]))[0] == pytest.approx(math.pi ** 2 / 6)
    assert sf.polygamma(np.array([2.0]), np.array([1.0]))[0] == pytest.approx(-2 * ZETA3)
    rng = np.random.default_rng(3)
    n, x = rng.integers(0, 6, 200).astype(float), rng.uniform(0.1, 20, 200)
    step = (-1) ** n * np.array([math.factorial(int(k)) for k in n]) / x ** (n + 1)
    assert np.allclose(sf.polygamma(n, x + 1), sf.polygamma(n, x) + step, rtol=1e-11,
                       atol=1e-12)
    bad = sf.polygamma(np.array([-1.0, 1.5, np.nan]), np.ones(3))
    assert np.isnan(bad).all()


def _i1e_exact(x: float) -> float:
    """exp(-|x|) I1(x) from the power series in 50-digit decimal arithmetic."""
    getcontext().prec = 50
    half = Decimal(abs(x)) / 2
    term, total = half, half
    for k in range(1, 400):
        term = term * half * half / (k * (k + 1))
        total += term
        if term < total * Decimal(10) ** -45:
            break
    return math.copysign(float(total * (-Decimal(abs(x))).exp()), x)


def test_bessel_i1e_against_an_exact_series():
    xs = [0.0, 1e-8, 0.5, -1.0, 2.5, 7.9, 8.1, 15.0, -29.5, 30.5, 60.0, 200.0]
    got = sf.bessel_i1e(np.array(xs))
    for x, g in zip(xs, got, strict=True):
        assert g == pytest.approx(_i1e_exact(x), rel=4e-15, abs=1e-300)
    assert sf.bessel_i1e(np.array([np.inf, -np.inf])).tolist() == [0.0, -0.0]


def test_f32_kernels_of_the_other_special_functions():
    rng = np.random.default_rng(4)
    x = rng.uniform(0.1, 10, 200).astype(np.float32)
    x64 = x.astype(np.float64)
    for name, want in (("digamma", sf.digamma(x64)), ("bessel_i1e", np.array(
            [_i1e_exact(v) for v in x64]))):
        assert _ulps_f32(_kernel_f32(name, x), want).max() <= 1.0, name
    s = (1 + x).astype(np.float32)
    got = _kernel_f32("zeta", s, x)
    assert _ulps_f32(got, sf.zeta(s.astype(np.float64), x64)).max() <= 0.5
