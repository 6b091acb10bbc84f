"""Helpers for the kernel-family tests of contractions, reductions, windows and sorting:
MLIR literals from NumPy arrays, running a module on uniform or varying arguments, and
checking a batch of random programs against the oracle."""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import Interpreter, run
from shardy_ref.execute.context import Context
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, parse_type


def random_window_padding(rng: np.random.Generator, sizes, windows, strides, base_dilations,
                          window_dilations, negative: bool = True) -> tuple[list, list]:
    """Random ``(low, high)`` padding per dimension (negative too, if ``negative``) that
    leaves room for at least one window, and the number of windows per dimension: the
    spatial geometry of ``convolution`` and of ``reduce_window``."""
    padding, out = [], []
    for s, w, st_, b, d in zip(sizes, windows, strides, base_dilations, window_dilations,
                               strict=True):
        extent, dilated = (w - 1) * d + 1, (s - 1) * b + 1
        least = -1 if negative else 0
        lo = int(rng.integers(least, 3))
        hi = max(int(rng.integers(least, 3)), extent - dilated - lo)
        padding.append((lo, hi))
        out.append((lo + dilated + hi - extent) // st_ + 1)
    return padding, out


def dtype_of(element_type: str) -> np.dtype:
    """The storage dtype of an element type written in MLIR (``"bf16"``, ``"ui8"``)."""
    return storage_dtype(parse_type(f"tensor<{element_type}>").element_type)


def tensor_type(shape, element_type: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element_type + ">"


def literal(array: np.ndarray, element_type: str) -> str:
    """``dense<...> : tensor<...>`` holding ``array`` exactly (floats must be finite)."""
    array = np.asarray(array)
    if element_type == "i1":
        items = ["true" if v else "false" for v in array.reshape(-1)]
    elif element_type.startswith(("f", "bf")):
        items = [repr(float(v)) for v in array.astype(np.float64).reshape(-1)]
    else:
        items = [str(int(v)) for v in array.astype(np.int64).reshape(-1)]

    def nest(flat, shape):
        if not shape:
            return flat[0]
        step = len(flat) // shape[0] if shape[0] else 0
        return "[" + ", ".join(nest(flat[i * step:(i + 1) * step], shape[1:])
                               for i in range(shape[0])) + "]"

    return f"dense<{nest(items, array.shape)}> : {tensor_type(array.shape, element_type)}"


def random_values(rng: np.random.Generator, shape, element_type: str, small: bool = True):
    """Random elements of ``element_type``: small integers (exact in every float type) or,
    with ``small=False``, floats with many significant bits."""
    dtype = dtype_of(element_type)
    if element_type == "i1":
        return rng.random(shape) < 0.5
    if element_type.startswith("ui"):
        return rng.integers(0, 6, shape).astype(dtype)
    if element_type.startswith("i") or element_type.startswith("si"):
        return rng.integers(-5, 6, shape).astype(dtype)
    if small:
        return (rng.integers(-8, 9, shape) / 2).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def module(body: str, results: list[str]) -> str:
    """``@main`` with no arguments returning ``results`` (types) from ``body``'s ``%out*``."""
    names = ", ".join(f"%out{i}" for i in range(len(results)))
    return (f"func.func @main() -> ({', '.join(results)}) {{\n{body}\n"
            f"  func.return {names} : {', '.join(results)}\n}}")


def run_varying(text: str, arrays: list, varying: list[bool], procs: int) -> list[list]:
    """Run ``@main`` once with a batch of ``procs`` processes (``varying[i]``: argument ``i``
    has one value per process, stacked in front) and return per process its results."""
    op = parse_module(text)
    verify_module(op)
    interp = Interpreter(op)
    func = interp.entry_function("main")
    types = [a.type for a in func.regions[0].blocks[0].args]
    args = [Tensor(t, np.asarray(a, storage_dtype(t.element_type)), 1 if v else 0)
            for t, a, v in zip(types, arrays, varying, strict=True)]
    outs = interp.call_function(Context(interp, (procs,)), func, args)
    return [[o.data[p] if o.batch else o.data for o in outs] for p in range(procs)]


def assert_varying_matches(text: str, arrays: list, varying: list[bool], procs: int = 3):
    """A vectorized run over ``procs`` processes equals running each process alone."""
    batched = run_varying(text, arrays, varying, procs)
    for p in range(procs):
        alone = run(text, *[a[p] if v else a for a, v in zip(arrays, varying, strict=True)])
        for got, want in zip(batched[p], alone, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            same = got.astype(np.float64) == want.astype(np.float64) if got.dtype.kind not in \
                "biu" else got == want
            if got.dtype.kind not in "biu":
                same |= np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
            assert same.all(), f"process {p}: {got} vs {want}"


def check_against_oracle(cases: list[tuple[str, float]]) -> None:
    """Run every ``(text, rtol)`` through the oracle in one process and through ours;
    results must agree exactly (rtol 0) or within ``rtol`` (plus a tiny atol for sums that
    cancel to about zero)."""
    from tests.execute.oracle import assert_same, oracle_results, ours

    theirs = oracle_results([t for t, _ in cases])
    for (text, rtol), want in zip(cases, theirs, strict=True):
        assert_same(ours(text), want, rtol=rtol, atol=rtol * 10, context=text)
