"""The ``check`` dialect of StableHLO's interpreter tests (``stablehlo/tests/CheckOps.td``,
``CheckOps.cpp``) and the ``custom_call @check.*`` shims of ``stablehlo-translate``.

- ``expect_eq[_const]``: exact, elementwise (floats compare as numbers: NaN differs from
  NaN, -0 equals +0).
- ``expect_almost_eq[_const]``: floats within ``tolerance`` (default 1e-4) as the
  reference's ``areApproximatelyEqual``: equal, or both NaN, or both finite and
  ``|a - b| <= tolerance``; complex numbers part by part.
- ``expect_close``: ULP distance within ``[min_ulp_difference, max_ulp_difference]``.
- ``expect_serialized_eq``: equal to the tensor an ``interpreter.probe`` wrote.
A varying operand is checked for every active process; a failure names the process.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import is_complex, is_float, storage_dtype
from shardy_ref.execute.errors import CheckFailure, InterpreterError
from shardy_ref.execute.printing import format_element
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor, from_dense

DEFAULT_TOLERANCE = 1e-4


def _pair(ctx, actual: Tensor, expected: Tensor, what: str):
    if tuple(actual.shape) != tuple(expected.shape) or \
            actual.element_type != expected.element_type:
        raise CheckFailure(None, f"{what}: types don't match: {actual.type} (actual) vs "
                           f"{expected.type} (expected)")
    nb = max(actual.batch, expected.batch)
    a, e = actual.data, expected.data
    if nb:
        a = np.broadcast_to(a, ctx.batch_shape + actual.data.shape[actual.batch:])
        e = np.broadcast_to(e, ctx.batch_shape + expected.data.shape[expected.batch:])
    return a, e, nb


def _report(ctx, ok: np.ndarray, nb: int, actual, expected, element_type, what: str,
            detail: str = "") -> None:
    """Raise a CheckFailure at the first mismatch among active processes."""
    if nb and ctx.active is not None:
        ok = ok | ~ctx.active.reshape(ctx.active.shape + (1,) * (ok.ndim - nb))
    if ok.all():
        return
    where = tuple(int(i) for i in np.argwhere(~ok)[0])
    process, index = where[:nb], where[nb:]
    got = format_element(actual[where], element_type)
    want = format_element(expected[where], element_type)
    on = f" on process {process[0] if len(process) == 1 else process}" if nb else ""
    raise CheckFailure(None, f"{what} failed{on}: Element values don't match{detail}: {got} "
                       f"(actual) vs {want} (expected) at index [{', '.join(map(str, index))}]")


def _exact(a: np.ndarray, e: np.ndarray, element_type) -> np.ndarray:
    if is_float(element_type):
        return a.astype(np.float64) == e.astype(np.float64)
    if a.dtype.kind not in "biufc":  # ml_dtypes narrow integers
        return a.astype(np.int64) == e.astype(np.int64)
    return a == e


def expect_eq(ctx, actual: Tensor, expected: Tensor, what: str = "check.expect_eq") -> None:
    a, e, nb = _pair(ctx, actual, expected, what)
    _report(ctx, _exact(a, e, actual.element_type), nb, a, e, actual.element_type, what)


def _almost(a: np.ndarray, e: np.ndarray, tolerance: float) -> np.ndarray:
    a, e = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isfinite(a) & np.isfinite(e) & (np.abs(a - e) <= tolerance)
    return (a == e) | (np.isnan(a) & np.isnan(e)) | close


def expect_almost_eq(ctx, actual: Tensor, expected: Tensor, tolerance: float,
                     what: str = "check.expect_almost_eq") -> None:
    a, e, nb = _pair(ctx, actual, expected, what)
    et = actual.element_type
    if is_complex(et):
        ok = _almost(a.real, e.real, tolerance) & _almost(a.imag, e.imag, tolerance)
    elif is_float(et):
        ok = _almost(a, e, tolerance)
    else:
        ok = _exact(a, e, et)
    _report(ctx, ok, nb, a, e, et, what, f" with tolerance {tolerance:f}")


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.int64)


def _sign_mask(dtype: np.dtype) -> int:
    one = np.array([1.0], dtype=np.float64).astype(dtype)
    minus = np.array([-1.0], dtype=np.float64).astype(dtype)
    if np.isnan(minus.astype(np.float64))[0]:  # no negative numbers (f8E8M0FNU)
        return 0
    return int(_bits(one)[0] ^ _bits(minus)[0])


def ulp_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ULP distance of two float arrays of one dtype (``ULPDifference`` of
    CheckOps.cpp): 0 for identical bits or two NaNs, the count of representable numbers
    between finite values, the maximum for any other pair with a non-finite value."""
    sign = _sign_mask(a.dtype)
    ba, bb = _bits(a), _bits(b)
    ma, mb = ba & ~sign, bb & ~sign
    ia = np.where(ba & sign, -ma, ma)
    ib = np.where(bb & sign, -mb, mb)
    fa, fb = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(ia - ib).astype(np.uint64)
    finite = np.isfinite(fa) & np.isfinite(fb)
    out = np.where(finite, diff, np.iinfo(np.uint64).max)
    out = np.where((ba == bb) | (np.isnan(fa) & np.isnan(fb)), 0, out)
    return out.astype(np.uint64)


def expect_close(ctx, actual: Tensor, expected: Tensor, max_ulp: int, min_ulp: int,
                 what: str = "check.expect_close") -> None:
    a, e, nb = _pair(ctx, actual, expected, what)
    et = actual.element_type
    if is_complex(et):
        part = storage_dtype(et.element_type)
        diff = np.maximum(ulp_difference(a.real.astype(part), e.real.astype(part)),
                          ulp_difference(a.imag.astype(part), e.imag.astype(part)))
    elif is_float(et):
        diff = ulp_difference(a, e)
    else:
        raise InterpreterError(None, f"{what}: unsupported element type {et}")
    ok = (diff <= np.uint64(max_ulp)) & (diff >= np.uint64(min_ulp))
    _report(ctx, ok, nb, a, e, et, what, f" within {min_ulp}..{max_ulp} ULP")


def _tolerance(op) -> float:
    attr = op.attributes.get("tolerance")
    return float(attr.value) if attr is not None else DEFAULT_TOLERANCE


@kernel("check.expect_eq")
def _expect_eq(ctx, op, lhs, rhs):
    expect_eq(ctx, lhs, rhs)


@kernel("check.expect_eq_const")
def _expect_eq_const(ctx, op, lhs):
    expect_eq(ctx, lhs, from_dense(op.attributes["value"]), "check.expect_eq_const")


@kernel("check.expect_almost_eq")
def _expect_almost_eq(ctx, op, lhs, rhs):
    expect_almost_eq(ctx, lhs, rhs, _tolerance(op))


@kernel("check.expect_almost_eq_const")
def _expect_almost_eq_const(ctx, op, lhs):
    expect_almost_eq(ctx, lhs, from_dense(op.attributes["value"]), _tolerance(op),
                     "check.expect_almost_eq_const")


@kernel("check.expect_close")
def _expect_close(ctx, op, actual, expected):
    max_ulp = op.attributes.get("max_ulp_difference")
    min_ulp = op.attributes.get("min_ulp_difference")
    expect_close(ctx, actual, expected, max_ulp.value if max_ulp is not None else 1,
                 min_ulp.value if min_ulp is not None else 0)


@kernel("check.expect_serialized_eq")
def _expect_serialized_eq(ctx, op, expected):
    from shardy_ref.execute.probes import read_probe

    iteration = op.attributes.get("iteration")
    stored = read_probe(ctx.interp.probe_dir, op.attributes["probe_id"].value,
                        iteration.value if iteration is not None else 0, expected.type)
    expect_eq(ctx, expected, stored, "check.expect_serialized_eq")


def custom_call_check(ctx, op, operands) -> list | None:
    """The ``stablehlo-translate`` shims: ``custom_call @check.eq`` (returns an i1 tensor),
    ``@check.expect_eq`` / ``expect_almost_eq`` (1e-3) / ``expect_close`` (0-3 ULP).
    None when ``op`` is not one of them."""
    target = op.attributes["call_target_name"].value
    if target == "check.eq" and len(operands) == 2:
        actual, expected = operands
        if is_float(expected.element_type) or is_complex(expected.element_type):
            expect_almost_eq(ctx, actual, expected, 1e-4, "custom_call @check.eq")
        else:
            expect_eq(ctx, actual, expected, "custom_call @check.eq")
        return [Tensor(op.results[0].type, np.ones((), dtype=np.bool_))] if op.results else []
    if len(operands) != 2:
        return None
    if target == "check.expect_close":
        expect_close(ctx, *operands, 3, 0)
    elif target == "check.expect_eq":
        expect_eq(ctx, *operands)
    elif target == "check.expect_almost_eq":
        expect_almost_eq(ctx, *operands, 1e-3)
    else:
        return None
    return []
