"""stablehlo.fft: the spec's example and definitions (FFT/IFFT/RFFT/IRFFT over the trailing
dimensions), shape checks, empty transforms, batches (leading dimensions, varying values) as
one call, a naive-DFT property test, and the real interpreter (oracle) on random programs."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter, InterpreterError
from shardy_ref.execute.context import Context
from shardy_ref.execute.kernels.fft import fft
from shardy_ref.execute.values import Tensor
from shardy_ref.parser import parse_module
from tests.execute.oracle import assert_same, oracle_results, ours

C = {"f32": "complex<f32>", "f64": "complex<f64>"}


def _shape(dims, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in dims) + et + ">"


def _types(kind: str, shape: tuple, lengths: tuple, ft: str) -> tuple[str, str]:
    """Operand and result types of an fft of ``kind`` whose complex side has ``shape``."""
    if kind in ("FFT", "IFFT"):
        return _shape(shape, C[ft]), _shape(shape, C[ft])
    real = shape[:len(shape) - len(lengths)] + tuple(lengths)
    half = (*real[:-1], lengths[-1] // 2 + 1)
    if kind == "RFFT":
        return _shape(real, ft), _shape(half, C[ft])
    return _shape(half, C[ft]), _shape(real, ft)


def dense_literal(x: np.ndarray) -> str:
    """``dense<...>`` text of an array of floats or complex numbers: shortest round-trip
    decimals, so the constant holds exactly ``x``; non-finite values as MLIR's hexadecimal
    bit patterns of the element width."""
    x = np.asarray(x)
    part = np.dtype(x.real.dtype)

    def number(v: float) -> str:
        if np.isfinite(v):
            text = repr(float(v))  # MLIR wants a point in the mantissa: 1.0e-300, not 1e-300
            return text.replace("e", ".0e") if "e" in text and "." not in text else text
        bits = np.array(v, part).view(np.dtype(f"uint{part.itemsize * 8}"))
        return hex(int(bits))

    def fmt(v):
        if isinstance(v, list):
            return "[" + ", ".join(fmt(e) for e in v) + "]"
        if isinstance(v, complex):
            return f"({number(v.real)}, {number(v.imag)})"
        return number(v)
    if x.size == 0:  # a splat of no elements
        return "dense<(0.0, 0.0)>" if x.dtype.kind == "c" else "dense<0.0>"
    return f"dense<{fmt(x.tolist())}>"


def _program(kind: str, x: np.ndarray, lengths: tuple, ft: str) -> str:
    in_t = _shape(x.shape, (C[ft] if x.dtype.kind == "c" else ft))
    real_shape = x.shape[:x.ndim - len(lengths)] + tuple(lengths)
    if kind in ("FFT", "IFFT"):
        out_t = in_t
    elif kind == "RFFT":
        out_t = _shape((*real_shape[:-1], lengths[-1] // 2 + 1), C[ft])
    else:
        out_t = _shape(real_shape, ft)
    return f"""func.func @main() -> {out_t} {{
  %x = stablehlo.constant {dense_literal(x)} : {in_t}
  %r = stablehlo.fft %x, type = {kind}, length = {list(lengths)} : ({in_t}) -> {out_t}
  func.return %r : {out_t}
}}"""


def _run(kind, x, lengths, ft="f64"):
    return ours(_program(kind, np.asarray(x), tuple(lengths), ft))[0].data


def test_spec_example_delta_transforms_to_ones():
    x = np.array([1, 0, 0, 0], np.complex64)
    out = _run("FFT", x, [4], "f32")
    assert out.dtype == np.complex64 and out.tolist() == [1, 1, 1, 1]


def _naive_dft(x: np.ndarray, axes, sign: int = -1) -> np.ndarray:
    """The DFT by its definition, one axis at a time: sum_n x[n] exp(sign 2 pi i n k / N)."""
    for axis in axes:
        n = x.shape[axis]
        w = np.exp(sign * 2j * np.pi * np.outer(np.arange(n), np.arange(n)) / n)
        x = np.moveaxis(np.tensordot(np.moveaxis(x, axis, -1), w, axes=([-1], [0])), -1, axis)
    return x


@settings(max_examples=25, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2),
       lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       kind=st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]),
       ft=st.sampled_from(["f32", "f64"]), seed=st.integers(0, 2**31))
def test_matches_the_definition(batch, lengths, kind, ft, seed):
    rs = np.random.default_rng(seed)
    k = len(lengths)
    axes = list(range(len(batch), len(batch) + k))
    full = tuple(batch) + tuple(lengths)
    z = rs.normal(size=full) + 1j * rs.normal(size=full)
    if kind == "FFT":
        x, want = z, _naive_dft(z, axes)
    elif kind == "IFFT":
        x, want = z, _naive_dft(z, axes, +1) / np.prod(lengths)
    elif kind == "RFFT":
        x = z.real
        want = _naive_dft(x, axes)[..., :lengths[-1] // 2 + 1]
    else:  # IRFFT inverts RFFT: feed the half spectrum of a real signal
        signal = z.real
        x, want = _naive_dft(signal, axes)[..., :lengths[-1] // 2 + 1], signal
    dtype = {"f32": np.float32, "f64": np.float64}[ft]
    x = x.astype(dtype if x.dtype.kind == "f" else np.result_type(dtype, np.complex64))
    got = _run(kind, x, lengths, ft)
    tol = 1e-4 if ft == "f32" else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.prod(lengths))
    assert got.dtype == (np.result_type(dtype, np.complex64) if kind != "IRFFT" else dtype)


def test_ifft_inverts_fft_and_irfft_inverts_rfft_for_odd_lengths():
    rs = np.random.default_rng(0)
    x = rs.normal(size=(2, 5, 3))
    spectrum = _run("RFFT", x, [5, 3])
    assert spectrum.shape == (2, 5, 2)
    np.testing.assert_allclose(_run("IRFFT", spectrum, [5, 3]), x, atol=1e-12)
    z = x + 1j
    np.testing.assert_allclose(_run("IFFT", _run("FFT", z, [3]), [3]), z, atol=1e-12)


def test_irfft_ignores_imaginary_parts_of_self_conjugate_frequencies():
    half = np.array([4 + 7j, 1 - 1j, 2 + 9j])  # frequencies 0 and 2 of a length-4 signal
    clean = half.copy()
    clean[[0, 2]] = clean[[0, 2]].real
    np.testing.assert_allclose(_run("IRFFT", half, [4]), _run("IRFFT", clean, [4]))


def test_mismatched_lengths_are_errors():
    with pytest.raises(InterpreterError, match="trailing operand dimensions"):
        ours(_program("FFT", np.zeros((2, 4), np.complex128), (2, 2), "f64")
             .replace("length = [2, 2]", "length = [2, 3]"))


def test_zero_length_transforms_are_empty():
    out = _run("FFT", np.zeros((3, 0), np.complex128), [0])
    assert out.shape == (3, 0) and out.dtype == np.complex128
    assert _run("RFFT", np.zeros((0, 4)), [4]).shape == (0, 3)


def test_varying_operand_equals_per_process():
    text = """func.func @main(%x: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
      %r = stablehlo.fft %x, type = FFT, length = [2, 4]
          : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>>
      func.return %r : tensor<2x4xcomplex<f32>>
    }"""
    module = parse_module(text)
    interp = Interpreter(module)
    op = next(o for o in module.walk() if o.name == "stablehlo.fft")
    rs = np.random.default_rng(3)
    data = (rs.normal(size=(3, 2, 4)) + 1j * rs.normal(size=(3, 2, 4))).astype(np.complex64)
    t = op.operands[0].type
    both = fft(Context(interp, (3,)), op, Tensor(t, data, 1))
    assert both.batch == 1
    for p in range(3):
        np.testing.assert_array_equal(both.data[p], fft(Context(interp), op,
                                                        Tensor(t, data[p], 0)).data)


def _random_programs(count: int, seed: int) -> list[str]:
    """f64/complex<f64> only: the reference aborts on complex<f32> FFTs; IRFFT lengths even:
    for odd ones the reference leaves the last frequency out (see kernels/fft.py)."""
    rs = random.Random(seed)
    nrs = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        kind = rs.choice(["FFT", "IFFT", "RFFT", "IRFFT"])
        lengths = tuple(rs.randint(1, 6) for _ in range(rs.randint(1, 3)))
        if kind == "IRFFT":
            lengths = (*lengths[:-1], 2 * rs.randint(1, 3))
        batch = tuple(rs.randint(1, 3) for _ in range(rs.randint(0, 1)))
        real = batch + lengths
        if kind in ("FFT", "IFFT"):
            x = nrs.normal(size=real) + 1j * nrs.normal(size=real)
        elif kind == "RFFT":
            x = nrs.normal(size=real)
        else:
            half = (*real[:-1], lengths[-1] // 2 + 1)
            x = nrs.normal(size=half) + 1j * nrs.normal(size=half)
        out.append(_program(kind, np.round(x, 3), lengths, "f64"))
    return out


@pytest.mark.oracle
def test_matches_the_reference_interpreter():
    programs = _random_programs(240, seed=7)
    theirs = oracle_results(programs)
    for text, oracle in zip(programs, theirs, strict=True):
        # the reference sums N terms naively in f64; values here are O(10): 1e-11 absolute
        assert_same(ours(text), oracle, rtol=1e-12, atol=1e-11, context=text)
