"""``stablehlo.fft``: forward and inverse, complex and real discrete Fourier transforms over
the trailing ``size(fft_length)`` dimensions (StableHLO spec, "fft").

Precision. The reference interpreter (``Ops.cpp``, ``fftOp`` / ``__fft_1d``) computes a naive
O(N^2) DFT per dimension, summing in the element type; it only runs ``complex<f64>``/``f64``
(for ``complex<f32>`` it builds an f64 phase for an f32 element and aborts with "Semantics
mismatch"). We compute every transform with ``numpy.fft`` (pocketfft, O(N log N)) in
complex128/float64 and round once to the result type: for f64 the result agrees with the
reference to a few ulps of the largest magnitude (its naive sums have O(N) rounding error, ours
O(log N)), for f32 it is the correctly rounded transform up to that error. The corpus checks
``fft`` with ``expect_almost_eq``; tests compare with the oracle within a stated tolerance.

Semantics. ``IRFFT`` of length ``L`` reads ``L // 2 + 1`` values of the last dimension and treats
them as the first half of a Hermitian spectrum (the imaginary parts of the zero and, for even
``L``, Nyquist frequencies do not contribute), as the spec defines it (``irfft`` inverts
``rfft``). For odd ``L`` the reference's own replica slicing drops one conjugate term and leaves
the last frequency zero; we follow the spec there.

Batch dimensions (leading operand dimensions, and the process dimensions of a varying value)
are one ``numpy.fft`` call: the transforms name only the trailing axes.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel


def _lengths(op, operand) -> tuple[str, tuple[int, ...]]:
    """The FFT type and ``fft_length``, checked against the operand and result shapes
    (spec "fft" (C1), (C3)-(C5)): ``numpy.fft`` would silently pad or crop otherwise."""
    kind = op.attributes["fft_type"].value
    lengths = tuple(int(n) for n in op.attributes["fft_length"].value)
    rank = len(operand.shape)
    if not 1 <= len(lengths) <= min(3, rank):
        raise InterpreterError(None, f"fft_length {list(lengths)} must have 1 to "
                               f"min(3, rank(operand) = {rank}) elements")
    trailing = tuple(operand.shape[rank - len(lengths):])
    if kind == "IRFFT":
        last = lengths[-1] // 2 + 1 if lengths[-1] else 0
        expected = (*lengths[:-1], last)
    else:
        expected = lengths
    if trailing != expected:
        raise InterpreterError(None, f"{kind} with fft_length {list(lengths)} needs trailing "
                               f"operand dimensions {list(expected)}, got {list(trailing)}")
    return kind, lengths


def _transform(kind: str, x: np.ndarray, lengths: tuple[int, ...]) -> np.ndarray:
    axes = tuple(range(-len(lengths), 0))
    if kind == "FFT":
        return np.fft.fftn(x.astype(np.complex128), axes=axes)
    if kind == "IFFT":
        return np.fft.ifftn(x.astype(np.complex128), axes=axes)
    if kind == "RFFT":
        return np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
    if kind == "IRFFT":
        return np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    raise InterpreterError(None, f"unknown fft_type {kind}")


def _empty_shape(kind: str, shape: tuple[int, ...], lengths: tuple[int, ...]) -> tuple:
    """The result shape when some transform length is 0 (``numpy.fft`` rejects those)."""
    k = len(lengths)
    if kind == "RFFT":
        last = lengths[-1] // 2 + 1 if lengths[-1] else 0
        return shape[:-k] + lengths[:-1] + (last,)
    if kind == "IRFFT":
        return shape[:-k] + lengths
    return shape


@kernel("stablehlo.fft")
def fft(ctx, op, operand):
    """Spec "fft": ``FFT``/``IFFT`` complex-to-complex, ``RFFT`` real-to-complex (the first
    ``L/2 + 1`` frequencies), ``IRFFT`` complex-to-real, each over the trailing dimensions."""
    kind, lengths = _lengths(op, operand)
    x = operand.data
    if 0 in lengths or x.size == 0:
        out = np.zeros(_empty_shape(kind, x.shape, lengths),
                       np.float64 if kind == "IRFFT" else np.complex128)
    else:
        out = _transform(kind, x, lengths)
    return batching.make(op, out, operand.batch)
