"""stablehlo.triangular_solve and stablehlo.cholesky: the spec's examples, every attribute
combination against NumPy's dense solvers, batches and varying operands (one call for all
processes equals per-process calls), singular and non-positive-definite inputs; the real
interpreter (triangular_solve, bit-exact for real types) and XLA's CPU backend (cholesky,
which the reference interpreter does not run) on random programs."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter, InterpreterError
from shardy_ref.execute.context import Context
from shardy_ref.execute.kernels.linalg import cholesky, triangular_solve
from shardy_ref.execute.values import Tensor
from shardy_ref.parser import parse_module
from tests.execute.oracle import assert_same, oracle_results, ours
from tests.execute.test_fft import dense_literal
from tests.execute.test_rng import xla_results

NP = {"f32": np.float32, "f64": np.float64, "complex<f32>": np.complex64,
      "complex<f64>": np.complex128, "f16": np.float16}


def _t(shape, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _solve_program(a, b, et: str, left: bool, lower: bool, unit: bool, transpose: str) -> str:
    ta, tb = _t(a.shape, et), _t(b.shape, et)
    return f"""func.func @main() -> {tb} {{
  %a = stablehlo.constant {dense_literal(a)} : {ta}
  %b = stablehlo.constant {dense_literal(b)} : {tb}
  %r = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left).lower()},
      lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()},
      transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}
  func.return %r : {tb}
}}"""


def _chol_program(a, et: str, lower: bool) -> str:
    ta = _t(a.shape, et)
    return f"""func.func @main() -> {ta} {{
  %a = stablehlo.constant {dense_literal(a)} : {ta}
  %r = "stablehlo.cholesky"(%a) {{lower = {str(lower).lower()}}} : ({ta}) -> {ta}
  func.return %r : {ta}
}}"""


def test_spec_examples():
    a = np.array([[1, 0, 0], [2, 4, 0], [3, 5, 6]], np.float32)
    b = np.array([[2, 0, 0], [4, 8, 0], [6, 10, 12]], np.float32)
    x = ours(_solve_program(a, b, "f32", True, True, False, "NO_TRANSPOSE"))[0].data
    assert x.tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    h = np.array([[1, 2, 3], [2, 20, 26], [3, 26, 70]], np.float32)
    lower = ours(_chol_program(h, "f32", True))[0].data
    assert lower.tolist() == [[1, 0, 0], [2, 4, 0], [3, 5, 6]]
    upper = ours(_chol_program(h, "f32", False))[0].data
    assert upper.tolist() == [[1, 2, 3], [0, 4, 5], [0, 0, 6]]


def _effective(a: np.ndarray, lower: bool, unit: bool, transpose: str) -> np.ndarray:
    """op(a) restricted to the triangle the op reads (spec "triangular_solve")."""
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        n = a.shape[-1]
        t = t * (1 - np.eye(n)) + np.eye(n)
    if transpose != "NO_TRANSPOSE":
        t = np.swapaxes(t, -1, -2)
    return np.conj(t) if transpose == "ADJOINT" else t


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), k=st.integers(1, 3), batch=st.lists(st.integers(1, 2), max_size=2),
       left=st.booleans(), lower=st.booleans(), unit=st.booleans(),
       transpose=st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]),
       et=st.sampled_from(["f32", "f64", "complex<f32>", "complex<f64>"]),
       seed=st.integers(0, 2**31))
def test_solves_the_system(n, k, batch, left, lower, unit, transpose, et, seed):
    rs = np.random.default_rng(seed)
    dtype = NP[et]
    a = rs.normal(size=(*batch, n, n)) + 3 * np.eye(n)  # well-conditioned diagonal
    b = rs.normal(size=(*batch, n, k) if left else (*batch, k, n))
    if np.dtype(dtype).kind == "c":
        a, b = a + 1j * rs.normal(size=a.shape), b + 0.5j
    a, b = a.astype(dtype), b.astype(dtype)
    x = ours(_solve_program(a, b, et, left, lower, unit, transpose))[0].data
    assert x.dtype == dtype
    m = _effective(a.astype(np.complex128), lower, unit, transpose)
    want = np.linalg.solve(m, b) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    tol = 1e-4 if et in ("f32", "complex<f32>") else 1e-10
    np.testing.assert_allclose(x, want, rtol=tol, atol=tol)


def _row_substitution(t: np.ndarray, b: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """Left-side solve one element at a time, row by row, in the element type: x[i] = (b[i] -
    sum_j t[i, j] x[j]) / t[i, i], the terms subtracted one at a time in the reference's order
    (ascending j for lower, descending for upper)."""
    n, k = b.shape
    x = np.zeros_like(b)
    rows = range(n) if lower else range(n - 1, -1, -1)
    for c in range(k):
        for i in rows:
            v = b[i, c]
            js = range(0, i) if lower else range(n - 1, i, -1)
            for j in js:
                v = v - t[i, j] * x[j, c]
            x[i, c] = v if unit else v / t[i, i]
    return x


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), k=st.integers(1, 3), left=st.booleans(), lower=st.booleans(),
       unit=st.booleans(), transpose=st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE"]),
       et=st.sampled_from(["f32", "f16"]), seed=st.integers(0, 2**31))
def test_real_solves_round_like_the_reference(n, k, left, lower, unit, transpose, et, seed):
    rs = np.random.default_rng(seed)
    dtype = NP[et]
    a = (rs.normal(size=(n, n)) + 2 * np.eye(n)).astype(dtype)
    b = rs.normal(size=(n, k) if left else (k, n)).astype(dtype)
    x = ours(_solve_program(a, b, et, left, lower, unit, transpose))[0].data
    t = a.T if transpose == "TRANSPOSE" else a
    low = lower != (transpose == "TRANSPOSE")
    if left:
        want = _row_substitution(t, b, low, unit)
    else:  # x t = b  <=>  t^T x^T = b^T
        want = _row_substitution(t.T, b.T, not low, unit).T
    np.testing.assert_array_equal(x, want)


def test_low_precision_types_solve_in_their_own_precision():
    a = np.array([[3, 0], [1, 7]], np.float16)
    b = np.array([[1], [2]], np.float16)
    x = ours(_solve_program(a, b, "f16", True, True, False, "NO_TRANSPOSE"))[0].data
    x0 = np.float16(1) / np.float16(3)
    assert x.dtype == np.float16
    assert x[0, 0] == x0 and x[1, 0] == (np.float16(2) - np.float16(1) * x0) / np.float16(7)


def test_singular_systems_give_ieee_results():
    a = np.array([[0, 0], [1, 1]], np.float32)
    b = np.array([[1], [1]], np.float32)
    x = ours(_solve_program(a, b, "f32", True, True, False, "NO_TRANSPOSE"))[0].data
    assert x[:, 0].tolist() == [np.inf, -np.inf]  # 1/0, then (1 - 1 * inf) / 1


def test_shape_mismatch_is_an_error():
    text = _solve_program(np.eye(3, dtype=np.float32), np.ones((2, 1), np.float32), "f32",
                          True, True, False, "NO_TRANSPOSE")
    module = parse_module(text)
    op = next(o for o in module.walk() if o.name == "stablehlo.triangular_solve")
    interp = Interpreter(module)
    a = Tensor(op.operands[0].type, np.eye(3, dtype=np.float32))
    b = Tensor(op.operands[1].type, np.ones((2, 1), np.float32))
    with pytest.raises(InterpreterError, match="shapes don't match"):
        triangular_solve(Context(interp), op, a, b)


def _kernel_op(text: str, name: str):
    module = parse_module(text)
    return Interpreter(module), next(o for o in module.walk() if o.name == name)


def test_varying_operands_equal_per_process():
    rs = np.random.default_rng(5)
    a = np.tril(rs.normal(size=(3, 3))).astype(np.float32) + 4 * np.eye(3, dtype=np.float32)
    b = rs.normal(size=(3, 2)).astype(np.float32)
    interp, op = _kernel_op(_solve_program(a, b, "f32", True, False, False, "TRANSPOSE"),
                            "stablehlo.triangular_solve")
    ta, tb = op.operands[0].type, op.operands[1].type
    many_b = rs.normal(size=(4, 3, 2)).astype(np.float32)
    both = triangular_solve(Context(interp, (4,)), op, Tensor(ta, a), Tensor(tb, many_b, 1))
    for p in range(4):
        one = triangular_solve(Context(interp), op, Tensor(ta, a), Tensor(tb, many_b[p]))
        np.testing.assert_array_equal(both.data[p], one.data)
    h = (a @ a.T).astype(np.float32)
    interp, op = _kernel_op(_chol_program(h, "f32", True), "stablehlo.cholesky")
    many_h = np.stack([h, 2 * h, -h, 3 * h])  # process 2's matrix is not positive definite
    both = cholesky(Context(interp, (4,)), op, Tensor(op.operands[0].type, many_h, 1))
    for p in range(4):
        one = cholesky(Context(interp), op, Tensor(op.operands[0].type, many_h[p]))
        np.testing.assert_array_equal(both.data[p], one.data)
    assert np.isnan(both.data[2]).all() and not np.isnan(both.data[[0, 1, 3]]).any()


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 5), batch=st.lists(st.integers(1, 2), max_size=2),
       lower=st.booleans(), et=st.sampled_from(["f32", "f64", "complex<f32>", "complex<f64>"]),
       seed=st.integers(0, 2**31))
def test_cholesky_factors_the_matrix(n, batch, lower, et, seed):
    rs = np.random.default_rng(seed)
    m = rs.normal(size=(*batch, n, n))
    if np.dtype(NP[et]).kind == "c":
        m = m + 1j * rs.normal(size=m.shape)
    h = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    junk = np.full(h.shape, 99.0)  # the other triangle is never read
    a = np.tril(h) + np.triu(junk, 1) if lower else np.triu(h) + np.tril(junk, -1)
    f = ours(_chol_program(a.astype(NP[et]), et, lower))[0].data
    assert f.dtype == NP[et]
    f = f.astype(np.complex128)
    other = np.triu(f, 1) if lower else np.tril(f, -1)
    assert (other == 0).all()
    product = f @ np.conj(np.swapaxes(f, -1, -2)) if lower else \
        np.conj(np.swapaxes(f, -1, -2)) @ f
    tol = 1e-4 if et in ("f32", "complex<f32>") else 1e-10
    np.testing.assert_allclose(product, h, rtol=tol, atol=tol * n * n)


def test_cholesky_of_low_precision_and_empty_matrices():
    h = np.array([[4, 2], [2, 5]], np.float16)
    assert ours(_chol_program(h, "f16", True))[0].data.tolist() == [[2, 0], [1, 2]]
    empty = ours(_chol_program(np.zeros((3, 0, 0), np.float32), "f32", True))[0].data
    assert empty.shape == (3, 0, 0)


# -- oracles ---------------------------------------------------------------------------------

def _solve_case(rs: random.Random, nrs) -> str:
    et = rs.choice(["f32", "f64", "f32", "f64", "complex<f32>", "complex<f64>"])
    n, k = rs.randint(1, 5), rs.randint(1, 3)
    left, lower = rs.random() < 0.5, rs.random() < 0.5
    unit = rs.random() < 0.4
    batch = (rs.randint(1, 3),) if unit and rs.random() < 0.5 else ()
    a = nrs.normal(size=(*batch, n, n)).round(2) + 2 * np.eye(n)
    b = nrs.normal(size=(*batch, n, k) if left else (*batch, k, n)).round(2)
    transpose = rs.choice(["NO_TRANSPOSE", "TRANSPOSE"])
    if "complex" in et:  # the reference crashes on ADJOINT of a real matrix
        a = a + 1j * nrs.normal(size=a.shape).round(2)
        b = b - 1j * nrs.normal(size=b.shape).round(2)
        transpose = rs.choice(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
    if rs.random() < 0.15:  # a zero, infinite or NaN diagonal element, or right-hand side
        i = rs.randrange(n)
        special = rs.choice([0.0, np.inf, -np.inf, np.nan, 1e-300, 1e300])
        a[..., i, i] = special * (1 + 1j if "complex" in et and rs.random() < 0.5 else 1)
        b.reshape(-1)[rs.randrange(b.size)] = rs.choice([np.inf, np.nan, 0.0])
    with np.errstate(over="ignore"):  # 1e300 becomes inf in f32
        a, b = a.astype(NP[et]), b.astype(NP[et])
    return _solve_program(a, b, et, left, lower, unit, transpose)


@pytest.mark.oracle
def test_triangular_solve_matches_the_reference_interpreter():
    """Bit-exact, complex types included (the reference's complex<double> quotients are
    Smith's method, which the kernel reproduces). Batched programs have a unit diagonal: the
    reference aborts on the others."""
    rs, nrs = random.Random(21), np.random.default_rng(21)
    programs = [_solve_case(rs, nrs) for _ in range(240)]
    theirs = oracle_results(programs)
    for text, oracle in zip(programs, theirs, strict=True):
        assert_same(ours(text), oracle, context=text)


@pytest.mark.oracle
def test_cholesky_matches_xla():
    """XLA factors in the element type (LAPACK potrf), we in f64 and round: f32 results agree
    to ~1e-5 relative on these well-conditioned matrices; NaN for non-positive-definite ones
    and zeros in the other triangle exactly. XLA compiles each cholesky op for ~0.3 s, so the
    220 random matrices are stacked into one batched program per (type, size, lower)."""
    rs, nrs = random.Random(33), np.random.default_rng(33)
    groups: dict = {}
    for _ in range(220):
        et = rs.choice(["f32", "f64", "complex<f32>", "complex<f64>"])
        n = rs.randint(1, 5)
        m = nrs.normal(size=(n, n)).round(2)
        if "complex" in et:
            m = m + 1j * nrs.normal(size=m.shape).round(2)
        h = m @ np.conj(m.T) + (n if rs.random() < 0.85 else -n) * np.eye(n)
        groups.setdefault((et, n, rs.random() < 0.5), []).append(h)
    programs = [_chol_program(np.stack(hs).astype(NP[et]), et, lower)
                for (et, _, lower), hs in groups.items()]
    theirs = xla_results(programs)
    for text, xla in zip(programs, theirs, strict=True):
        assert not isinstance(xla, str), f"XLA failed: {xla}\n{text}"
        tol = 1e-4 if "f32" in text.split("->")[-1] else 1e-10
        np.testing.assert_allclose(ours(text)[0].data, xla[0], rtol=tol, atol=tol, err_msg=text)
