"""Ops with their own algorithm per slice: ``fft`` (complex and real), ``cholesky`` and
``triangular_solve`` (batched), the three batch norms, random numbers (``rng``,
``rng_bit_generator``) and uniform quantization."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

RANK3 = ((4, 8, 6),)
C64 = "complex<f32>"


@kind("fft", "stablehlo.fft", "stablehlo.complex", "stablehlo.real")
def fft(s, x, shape):
    """A complex FFT and its inverse along the last dimension, or a real FFT and its
    inverse (``jnp.fft.rfft``/``irfft``)."""
    n = shape[-1]
    if s.rng.random() < 0.5:
        z = s.op(f"stablehlo.complex {x}, {s.arg(shape)} : {tensor(shape, C64)}")
        f = s.op(f"stablehlo.fft {z}, type = FFT, length = [{n}] : ({tensor(shape, C64)}) "
                 f"-> {tensor(shape, C64)}")
        f = s.binary("multiply", f, f, shape, C64)
        back = s.op(f"stablehlo.fft {f}, type = IFFT, length = [{n}] : "
                    f"({tensor(shape, C64)}) -> {tensor(shape, C64)}")
        return s.op(f"stablehlo.real {back} : ({tensor(shape, C64)}) -> {tensor(shape)}"), \
            shape
    half = (*shape[:-1], n // 2 + 1)
    f = s.op(f"stablehlo.fft {x}, type = RFFT, length = [{n}] : ({tensor(shape)}) -> "
             f"{tensor(half, C64)}")
    return s.op(f"stablehlo.fft {f}, type = IRFFT, length = [{n}] : ({tensor(half, C64)}) "
                f"-> {tensor(shape)}"), shape


def _gram(s, x, shape):
    """``x^T x + n I`` per batch: symmetric positive definite ``(b, n, n)``."""
    b, _, n = shape
    g = s.op(f"stablehlo.dot_general {x}, {x}, batching_dims = [0] x [0], contracting_dims "
             f"= [1] x [1] : ({tensor(shape)}, {tensor(shape)}) -> {tensor((b, n, n))}")
    r = s.op(f"stablehlo.iota dim = 1 : {tensor((b, n, n), 'i32')}")
    c = s.op(f"stablehlo.iota dim = 2 : {tensor((b, n, n), 'i32')}")
    eye = s.convert(s.op(f"stablehlo.compare EQ, {r}, {c}, SIGNED : ({tensor((b, n, n), 'i32')}"
                         f", {tensor((b, n, n), 'i32')}) -> {tensor((b, n, n), 'i1')}"),
                    (b, n, n), "i1", FLOAT)
    return s.binary("add", g, s.binary("multiply", eye, s.const(float(n), (b, n, n)),
                                       (b, n, n)), (b, n, n)), (b, n, n)


@kind("cholesky", "stablehlo.cholesky", "stablehlo.dot_general", shapes=RANK3)
def cholesky(s, x, shape):
    if len(shape) != 3:
        return None
    a, ashape = _gram(s, x, shape)
    return s.op(f'"stablehlo.cholesky"({a}) {{lower = true}} : ({tensor(ashape)}) -> '
                f"{tensor(ashape)}"), ashape


@kind("triangular_solve", "stablehlo.triangular_solve", "stablehlo.cholesky",
      shapes=RANK3)
def triangular_solve(s, x, shape):
    """Solve ``L y = x^T`` with ``L`` the Cholesky factor of ``x``'s Gram matrix."""
    if len(shape) != 3:
        return None
    a, ashape = _gram(s, x, shape)
    lower = s.op(f'"stablehlo.cholesky"({a}) {{lower = true}} : ({tensor(ashape)}) -> '
                 f"{tensor(ashape)}")
    b, m, n = shape
    rhs = s.op(f"stablehlo.transpose {x}, dims = [0, 2, 1] : ({tensor(shape)}) -> "
               f"{tensor((b, n, m))}")
    return s.op(f'"stablehlo.triangular_solve"({lower}, {rhs}) {{left_side = true, lower = '
                f"true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = "
                f"false}} : ({tensor(ashape)}, {tensor((b, n, m))}) -> {tensor((b, n, m))}"), \
        (b, n, m)


def _positive(s, shape):
    v = s.arg(shape)
    return s.binary("add", s.op(f"stablehlo.abs {v} : {tensor(shape)}"),
                    s.const(0.5, shape), shape)


@kind("batch_norm_inference")
def batch_norm_inference(s, x, shape):
    f = s.rng.randrange(len(shape))
    v = (shape[f],)
    scale, offset, mean, var = s.arg(v), s.arg(v), s.arg(v), _positive(s, v)
    return s.op(f'"stablehlo.batch_norm_inference"({x}, {scale}, {offset}, {mean}, {var}) '
                f"{{epsilon = 1.0e-03 : f32, feature_index = {f} : i64}} : ({tensor(shape)}, "
                f"{', '.join([tensor(v)] * 4)}) -> {tensor(shape)}"), shape


@kind("batch_norm_training")
def batch_norm_training(s, x, shape):
    f = s.rng.randrange(len(shape))
    v = (shape[f],)
    out, mean, var = s.ops(f'"stablehlo.batch_norm_training"({x}, {s.arg(v)}, {s.arg(v)}) '
                           f"{{epsilon = 1.0e-03 : f32, feature_index = {f} : i64}} : "
                           f"({tensor(shape)}, {tensor(v)}, {tensor(v)}) -> ({tensor(shape)}, "
                           f"{tensor(v)}, {tensor(v)})", 3)
    both = s.binary("add", mean, var, v)
    return s.binary("add", out, s.broadcast(both, v, [f], shape), shape), shape


@kind("batch_norm_grad")
def batch_norm_grad(s, x, shape):
    f = s.rng.randrange(len(shape))
    v = (shape[f],)
    scale, mean, var = s.arg(v), s.arg(v), _positive(s, v)
    grad = s.arg(shape)
    gx, gs, go = s.ops(f'"stablehlo.batch_norm_grad"({x}, {scale}, {mean}, {var}, {grad}) '
                       f"{{epsilon = 1.0e-03 : f32, feature_index = {f} : i64}} : "
                       f"({tensor(shape)}, {tensor(v)}, {tensor(v)}, {tensor(v)}, "
                       f"{tensor(shape)}) -> ({tensor(shape)}, {tensor(v)}, {tensor(v)})", 3)
    both = s.binary("add", gs, go, v)
    return s.binary("add", gx, s.broadcast(both, v, [f], shape), shape), shape


@kind("rng")
def rng(s, x, shape):
    """``stablehlo.rng`` (uniform or normal) of the input's shape, added to it."""
    dist = s.rng.choice(("UNIFORM", "NORMAL"))
    a, b = (s.const(0.0), s.const(1.0))
    dims = s.const_array(shape, "i64")
    r = s.op(f"stablehlo.rng {a}, {b}, {dims}, distribution = {dist} : ({tensor(())}, "
             f"{tensor(())}, {tensor((len(shape),), 'i64')}) -> {tensor(shape)}")
    return s.binary("add", x, r, shape), shape


@kind("rng_bit_generator")
def rng_bit_generator(s, x, shape):
    """Random bits of the input's shape from a constant key (``jax.random`` with the
    ``rbg`` implementation), scaled to [0, 1) and added."""
    algorithm = s.rng.choice(("THREE_FRY", "PHILOX", "DEFAULT"))
    words = 2 if algorithm == "THREE_FRY" else 3
    state = s.const_array([7 + i for i in range(words)], "ui64")
    _, bits = s.ops(f"stablehlo.rng_bit_generator {state}, algorithm = {algorithm} : "
                    f"({tensor((words,), 'ui64')}) -> ({tensor((words,), 'ui64')}, "
                    f"{tensor(shape, 'ui32')})", 2)
    f = s.convert(bits, shape, "ui32", FLOAT)
    return s.binary("add", x, s.binary("multiply", f, s.const(2.0 ** -32, shape), shape),
                    shape), shape


@kind("uniform_quantize", "stablehlo.uniform_quantize", "stablehlo.uniform_dequantize")
def uniform_quantize(s, x, shape):
    """Quantize to i8 with one scale, or per axis along a dimension, and back."""
    if s.rng.random() < 0.5:
        q = "!quant.uniform<i8:f32, 0.0125:-3>"
    else:
        d = s.rng.randrange(len(shape))
        scales = ", ".join(f"{0.01 * (k + 1):g}:{k % 3}" for k in range(shape[d]))
        q = f"!quant.uniform<i8:f32:{d}, {{{scales}}}>"
    qt = "tensor<" + "".join(f"{n}x" for n in shape) + q + ">"
    v = s.op(f"stablehlo.uniform_quantize {x} : ({tensor(shape)}) -> {qt}")
    return s.op(f"stablehlo.uniform_dequantize {v} : ({qt}) -> {tensor(shape)}"), shape
