"""How far a partitioned program's results are from the single-device run's: the
tolerance ``shardy-ref check`` uses (a partitioned program sums in another order)."""
from __future__ import annotations

import numpy as np


def compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> tuple[str, bool]:
    """A line describing how far ``got`` is from ``want``, and whether they match: integers
    and booleans exactly, floats within ``atol + rtol * max|want|`` elementwise (relative to
    the output's largest magnitude: a partitioned program sums in another order)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}", False
    bad = mismatches(got, want, rtol, atol)
    if want.dtype.kind in "fc":
        g, w = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64), \
            want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
        finite = np.isfinite(w) & np.isfinite(g)
        err = np.abs(g[finite] - w[finite])
        abs_err = float(err.max()) if err.size else 0.0
        scale = float(np.abs(w[finite]).max()) if finite.any() else 0.0
        rel = abs_err / scale if scale else 0.0
        text = f"max abs error {abs_err:.3g}, max rel error {rel:.3g}"
    else:
        text = f"{int(bad.sum())} of {bad.size} elements differ"
    return f"{want.dtype}{list(want.shape)}: {text}", not bad.any()


def mismatches(got: np.ndarray, want: np.ndarray, rtol: float, atol: float,
               scale: float | None = None) -> np.ndarray:
    """The elements of ``got`` that do not match ``want`` (NaN matches NaN); ``rtol`` is
    relative to ``scale``, by default ``want``'s largest finite magnitude (give the whole
    output's when ``want`` is a part of it)."""
    if want.dtype.kind not in "fc":
        return got != want
    w = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    g = got.astype(w.dtype)
    finite = np.isfinite(w)
    if scale is None:
        scale = magnitude(want)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: decided by same_special
        close = np.abs(g - w) <= atol + rtol * scale
    same_special = (g == w) | (np.isnan(g) & np.isnan(w))
    return ~np.where(finite, close, same_special)




def magnitude(array: np.ndarray) -> float:
    """The largest finite magnitude of ``array`` (0.0 for none, or for integers)."""
    array = np.asarray(array)
    if array.dtype.kind not in "fc":
        return 0.0
    finite = np.isfinite(array)
    return float(np.abs(array[finite]).max()) if finite.any() else 0.0
