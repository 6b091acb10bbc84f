"""Linear algebra: ``stablehlo.triangular_solve`` and ``stablehlo.cholesky`` (StableHLO spec,
"triangular_solve", "cholesky"), on batches of matrices (the leading dimensions, and the
process dimensions of a varying value, in one pass).

triangular_solve is computed exactly as the reference interpreter does (``Ops.cpp``,
``triangularSolveOp``): substitution in the element type, each product and difference rounded,
the terms of row ``i`` subtracted in the reference's order (ascending ``j`` for forward,
descending for backward substitution), then one division by the diagonal. We run it column
by column (once ``x[j]`` is known, subtract its multiple from every later row), which performs
the same operations in the same order for every row, so real results are bit-identical with
the reference while a whole batch and all right-hand sides cost one NumPy operation per column.
Complex products are expanded into real operations the same way; complex quotients are
computed as the reference's ``std::complex<double>`` division (Smith's method) and rounded, so
complex results are bit-identical too.
(The reference reads the diagonal at index ``[i, i]`` without the batch index, so it aborts on
batched non-unit-diagonal systems; we solve those per the spec.)

cholesky is not run by the reference interpreter (``failOnDecomposableOp``); we follow XLA's CPU
backend, which compiles the same op: the triangle not computed is zero, and a matrix that is not
positive definite gives all NaN. We factor in float64/complex128 with LAPACK (``numpy.linalg``)
and round once to the element type.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import is_complex, storage_dtype
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel


def _flag(op, name: str, default: bool = False) -> bool:
    attr = op.attributes.get(name)
    return default if attr is None else bool(attr.value)


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


# -- triangular_solve ------------------------------------------------------------------------

def _check_solve_shapes(a: np.ndarray, b: np.ndarray, nb: int, left_side: bool) -> None:
    """Spec "triangular_solve" (C2)-(C3), on the arrays' own (non-batch) dimensions."""
    ra, rb = a.ndim - nb, b.ndim - nb
    if ra < 2 or ra != rb:
        raise InterpreterError(None, f"triangular_solve needs a and b of equal rank >= 2, got "
                               f"ranks {ra} and {rb}")
    n = a.shape[-1]
    solved = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[-2] != n or solved != n or a.shape[nb:-2] != b.shape[nb:-2]:
        raise InterpreterError(None, f"triangular_solve shapes don't match: a "
                               f"{list(a.shape[nb:])}, b {list(b.shape[nb:])} (left_side = "
                               f"{str(left_side).lower()})")


def _mul(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``t * x`` with the reference's rounding: complex products as
    ``(tr*xr - ti*xi, tr*xi + ti*xr)``, each real operation rounded (no fused multiply-add)."""
    if t.dtype.kind != "c":
        return t * x
    tr, ti, xr, xi = t.real, t.imag, x.real, x.imag
    out = np.empty(np.broadcast_shapes(t.shape, x.shape), t.dtype)
    out.real = tr * xr - ti * xi
    out.imag = tr * xi + ti * xr
    return out


def _div(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``x / d``: real quotients in the element type; complex ones as the reference computes
    them, in ``std::complex<double>`` (:func:`_smith_divide`), rounded to the element type."""
    if x.dtype.kind != "c":
        return x / d
    a, b = x.real.astype(np.float64), x.imag.astype(np.float64)
    c, e = d.real.astype(np.float64), d.imag.astype(np.float64)
    re, im = _smith_divide(a, b, c, e)
    out = np.empty(re.shape, np.complex128)
    out.real, out.imag = re, im
    return out.astype(x.dtype)


def _smith_divide(a, b, c, e):
    """``(a + bi) / (c + ei)`` by Smith's method with the C99 Annex G recovery of infinities
    and zeros, as libgcc's ``__divdc3`` (which ``std::complex<double>`` division calls)
    computes it: bit-identical with the reference where NumPy's own division (which
    multiplies by a reciprocal) is not."""
    small = np.abs(c) < np.abs(e)
    r = np.where(small, c / e, e / c)
    den = np.where(small, c * r + e, e * r + c)
    re = np.where(small, (a * r + b) / den, (b * r + a) / den)
    im = np.where(small, (b * r - a) / den, (b - a * r) / den)
    lost = np.isnan(re) & np.isnan(im)
    if not lost.any():
        return re, im
    inf = np.float64(np.inf)
    by_zero = lost & (c == 0) & (e == 0) & ~(np.isnan(a) & np.isnan(b))
    fa, fb = np.isfinite(a), np.isfinite(b)
    fc, fd = np.isfinite(c), np.isfinite(e)
    inf_num = lost & ~by_zero & (np.isinf(a) | np.isinf(b)) & fc & fd
    inf_den = lost & ~by_zero & ~inf_num & (np.isinf(c) | np.isinf(e)) & fa & fb
    a1, b1 = np.copysign(np.isinf(a), a), np.copysign(np.isinf(b), b)
    c1, e1 = np.copysign(np.isinf(c), c), np.copysign(np.isinf(e), e)
    re = np.select([by_zero, inf_num, inf_den], [np.copysign(inf, c) * a, inf * (a1 * c + b1 * e),
                                                 0.0 * (a * c1 + b * e1)], re)
    im = np.select([by_zero, inf_num, inf_den], [np.copysign(inf, c) * b, inf * (b1 * c - a1 * e),
                                                 0.0 * (b * c1 - a * e1)], im)
    return re, im


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """Solve ``t @ x = b`` for ``x`` (``t``: ``[..., N, N]`` triangular, ``b``: ``[..., N, K]``),
    reading only ``t``'s ``lower`` (else upper) triangle and, unless ``unit_diagonal``, its
    diagonal: forward substitution for lower, backward for upper."""
    x = np.array(b, copy=True)
    n = t.shape[-1]
    order = range(n) if lower else range(n - 1, -1, -1)
    with np.errstate(all="ignore"):
        for j in order:
            xj = x[..., j, :]
            if not unit_diagonal:
                xj = _div(xj, t[..., j, j, None])
                x[..., j, :] = xj
            rows = slice(j + 1, n) if lower else slice(0, j)
            x[..., rows, :] -= _mul(t[..., rows, j, None], xj[..., None, :])
    return x


@kernel("stablehlo.triangular_solve")
def triangular_solve(ctx, op, a, b):
    """Spec "triangular_solve": ``op(a) x = b`` (``left_side``) or ``x op(a) = b``, where
    ``op`` is the identity, transpose or conjugate transpose. Every case reduces to a left-side
    solve: transposing ``a`` swaps its triangle, and ``x a = b`` is ``a^T x^T = b^T``."""
    left_side = _flag(op, "left_side")
    lower = _flag(op, "lower")
    unit_diagonal = _flag(op, "unit_diagonal")
    transpose = op.attributes["transpose_a"].value if "transpose_a" in op.attributes \
        else "NO_TRANSPOSE"
    (ad, bd), nb = batching.unify(ctx, a, b)
    _check_solve_shapes(ad, bd, nb, left_side)
    dtype = storage_dtype(op.results[0].type.element_type)
    t, rhs = ad.astype(dtype, copy=False), bd.astype(dtype, copy=False)
    if transpose in ("TRANSPOSE", "ADJOINT"):
        t, lower = _swap(t), not lower
        if transpose == "ADJOINT":
            t = np.conj(t)
    if not left_side:
        t, rhs, lower = _swap(t), _swap(rhs), not lower
    x = _substitute(t, rhs, lower, unit_diagonal)
    return batching.make(op, x if left_side else _swap(x), nb)


# -- cholesky --------------------------------------------------------------------------------

def _hermitian(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrix whose ``lower`` (else upper) triangle is ``a``'s: only that
    triangle is read (the imaginary part of the diagonal is ignored, as LAPACK does)."""
    tri = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    h = tri + np.conj(_swap(strict))
    if h.dtype.kind == "c":
        diag = np.einsum("...ii->...i", h)
        h = h - 1j * np.imag(diag)[..., None] * np.eye(a.shape[-1])
    return h


def _factor(h: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of a batch of Hermitian matrices; all NaN for a matrix that is
    not positive definite (LAPACK fails the whole batch, so retry one matrix at a time)."""
    try:
        return np.linalg.cholesky(h)
    except np.linalg.LinAlgError:
        pass
    flat = h.reshape((-1, *h.shape[-2:]))
    out = np.empty_like(flat)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[i] = np.nan
    return out.reshape(h.shape)


@kernel("stablehlo.cholesky")
def cholesky(ctx, op, a):
    """Spec "cholesky": ``L`` with ``L L^H = a`` (``lower``) or ``U`` with ``U^H U = a``; the
    other triangle is zero, and a non-positive-definite matrix gives NaN (XLA's behaviour, the
    spec leaves both implementation-defined)."""
    lower = _flag(op, "lower")
    x = a.data
    if x.ndim - a.batch < 2 or x.shape[-1] != x.shape[-2]:
        raise InterpreterError(None, f"cholesky needs square matrices, got shape "
                               f"{list(x.shape[a.batch:])}")
    wide = np.complex128 if is_complex(op.results[0].type.element_type) else np.float64
    h = _hermitian(x.astype(wide), lower)
    if x.shape[-1] == 0 or x.size == 0:
        factor = h
    else:
        with np.errstate(all="ignore"):
            factor = _factor(h)
    out = factor if lower else np.conj(_swap(factor))
    return batching.make(op, out, a.batch)
