"""Random CHLO programs for the CHLO kernel tests, and the oracle path for them: the real
``stablehlo-opt --chlo-legalize-to-stablehlo`` (jaxlib's, ``../shared/oracle``) decomposes
them, then the real reference interpreter runs the decomposition (helpers, not tests)."""
from __future__ import annotations

import subprocess

import numpy as np

from tests.conftest import SHARED

ORACLE_OPT = SHARED / "oracle" / "stablehlo_opt"
FLOATS = ("f32", "f64", "f16", "bf16")


def ttype(shape, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def _item(v, et: str) -> str:
    if et == "i1":
        return "true" if v else "false"
    if et.startswith("complex"):
        return f"({_item(v.real, 'f64')}, {_item(v.imag, 'f64')})"
    if et.startswith(("f", "bf")):
        f = float(v)
        if np.isnan(f):
            return {"f32": "0x7FC00000", "f64": "0x7FF8000000000000", "f16": "0x7E00",
                    "bf16": "0x7FC0"}[et]
        if np.isinf(f):
            bits = {"f32": ("0x7F800000", "0xFF800000"), "f64": ("0x7FF0000000000000",
                                                               "0xFFF0000000000000"),
                    "f16": ("0x7C00", "0xFC00"), "bf16": ("0x7F80", "0xFF80")}[et]
            return bits[f < 0]
        return repr(f)
    return str(int(v))


def literal(array, et: str) -> str:
    """``dense<...> : tensor<...>`` holding ``array`` exactly (NaN and inf as bit patterns)."""
    array = np.asarray(array)
    flat = [_item(v, et) for v in array.reshape(-1)]

    def nest(items, shape):
        if not shape:
            return items[0]
        step = len(items) // shape[0] if shape[0] else 0
        return "[" + ", ".join(nest(items[i * step:(i + 1) * step], shape[1:])
                               for i in range(shape[0])) + "]"

    body = nest(flat, array.shape) if array.size else "[]" if array.ndim else flat[0]
    return f"dense<{body}> : {ttype(array.shape, et)}"


def program(consts: list[tuple[np.ndarray, str]], body: str, results: list[str]) -> str:
    """``@main`` with the constants ``%c0, %c1...``, then ``body`` defining ``%r0...``."""
    lines = [f"  %c{i} = stablehlo.constant {literal(a, et)}" for i, (a, et) in
             enumerate(consts)]
    names = ", ".join(f"%r{i}" for i in range(len(results)))
    return (f"func.func @main() -> ({', '.join(results)}) {{\n" + "\n".join(lines) + "\n"
            + body + f"\n  return {names} : {', '.join(results)}\n}}\n")


def legalize_with_oracle(texts: list[str]) -> list[str]:
    """Each text after upstream's ``--chlo-legalize-to-stablehlo`` (one process)."""
    joined = "\n// -----\n".join(texts)
    proc = subprocess.run([str(ORACLE_OPT), "--chlo-legalize-to-stablehlo",
                           "--split-input-file", "-"], input=joined, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[:2000]
    pieces = proc.stdout.split("// -----\n")
    assert len(pieces) == len(texts), (len(pieces), len(texts))
    return pieces


def legalize_with_ours(texts: list[str]) -> list[str]:
    """Each text after our ``chlo-legalize-to-stablehlo``."""
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.transforms.chlo_legalize import ChloLegalizeToStablehloPass

    out = []
    for text in texts:
        module = parse_module(text)
        ChloLegalizeToStablehloPass().run(module, None)
        out.append(print_module(module))
    return out


def compare_with_oracle(cases: list[tuple[str, float, float]],
                        legalize=legalize_with_oracle) -> None:
    """Run ``(text, rtol, atol)`` cases through ours and, legalized, through the oracle."""
    from tests.execute.oracle import assert_same, oracle_results, ours

    legal = legalize([t for t, _, _ in cases])
    theirs = oracle_results(legal)
    failures = []
    for (text, rtol, atol), want in zip(cases, theirs, strict=True):
        try:
            assert_same(ours(text), want, rtol=rtol, atol=atol, context=text)
        except AssertionError as e:
            failures.append(str(e)[:1500])
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n\n".join(failures[:3])


def random_array(rng: np.random.Generator, shape, et: str, low=-4.0, high=4.0):
    """Random values of element type ``et`` (floats uniform in [low, high))."""
    if et == "i1":
        return rng.random(shape) < 0.5
    if et.startswith("ui"):
        return rng.integers(0, 1 << min(int(et[2:]), 62), shape, dtype=np.uint64)
    if et.startswith("i"):
        width = int(et[1:])
        return rng.integers(-(1 << (width - 1)), 1 << (width - 1), shape, dtype=np.int64)
    values = rng.uniform(low, high, shape)
    from ml_dtypes import bfloat16

    dtype = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": bfloat16}[et]
    return values.astype(dtype).astype(np.float64)
