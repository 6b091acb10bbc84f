"""Random numbers: ``stablehlo.rng_bit_generator`` and ``stablehlo.rng`` (StableHLO spec,
"rng_bit_generator", "rng").

The reference interpreter runs neither (``failOnDecomposableOp``), and the spec leaves the
algorithms implementation-defined, so we are bit-exact with XLA, the compiler that runs
these ops (jaxlib 0.10.2's CPU backend; ``xla/service/rng_bit_generator_expander.cc`` and
``xla/hlo/builder/lib/prng.cc``), reimplemented here on uint32/uint64 arrays:

- ``THREE_FRY``: state ``[key, counter]``. Threefry-2x32 (20 rounds) of the 64-bit counters
  ``counter + i``. 64-bit outputs take one block per element (state counter ``+= n``); 32-bit
  and narrower outputs take both words of a block for two neighbouring elements of one
  dimension (the first even one, else the largest), so ``ceil(n / 2)`` blocks (an odd split
  dimension drops the last word); narrower elements keep the low bits of a 32-bit word.
- ``PHILOX`` (and ``DEFAULT``, which XLA's CPU backend maps to it): state ``[key, lo, hi]``
  (a 128-bit counter) or ``[key, c]`` (counter ``lo = c``, ``hi = key``, and only ``lo`` is
  written back). Philox-4x32 (10 rounds) of the 128-bit counters ``counter + i``; each block
  gives four 32-bit words (or two 64-bit words) for consecutive elements.

Float outputs hold the random bits (a bitcast of the unsigned integer of their width), as
XLA's outputs do; ``f6`` types (which XLA does not support) keep the low 6 bits.

``stablehlo.rng`` (implementation-defined, may be stateful) uses XLA's distributions (uniform
floats from the top mantissa bits, uniform integers by remainder, normals by Box-Muller over
halves of the shape) on Philox bits from a per-interpreter counter: a run is deterministic,
and every process of a vectorized SPMD run draws the same numbers.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import bit_width, is_float, is_unsigned, storage_dtype, wrap
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor

U32 = np.uint32
U64 = np.uint64
_MASK32 = U64(0xFFFFFFFF)


def _lo_hi(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 32-bit words of uint64 values."""
    x = np.asarray(x, U64)
    return (x & _MASK32).astype(U32), (x >> U64(32)).astype(U32)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(U64) | (hi.astype(U64) << U64(32))


# -- Threefry-2x32 ---------------------------------------------------------------------------

_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(v: np.ndarray, r: int) -> np.ndarray:
    return (v << U32(r)) | (v >> U32(32 - r))


def threefry2x32(x0, x1, k0, k1) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) of counter words ``x0, x1`` under
    key words ``k0, k1`` (uint32 arrays, broadcast together)."""
    k0, k1 = np.asarray(k0, U32), np.asarray(k1, U32)
    ks = (k0, k1, k0 ^ k1 ^ U32(0x1BD11BDA))
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps by design
        x0 = np.asarray(x0, U32) + ks[0]
        x1 = np.asarray(x1, U32) + ks[1]
        for block in range(5):
            for r in _THREEFRY_ROTATIONS[block % 2]:
                x0 = x0 + x1
                x1 = _rotl(x1, r) ^ x0
            x0 = x0 + ks[(block + 1) % 3]
            x1 = x1 + ks[(block + 2) % 3] + U32(block + 1)
    return x0, x1


def _split_dim(shape: tuple[int, ...]) -> int:
    """The dimension XLA halves for 32-bit Threefry output: the first even one, else the
    first largest one."""
    for i, d in enumerate(shape):
        if d % 2 == 0:
            return i
    return max(range(len(shape)), key=lambda i: (shape[i], -i))


def _threefry_blocks(key, counter, n: int):
    """``n`` Threefry blocks (two uint32 words each) for counters ``counter + 0..n-1``, keyed
    by ``key`` (uint64 arrays of the batch shape): arrays of ``batch + (n,)``."""
    key_lo, key_hi = (w[..., None] for w in _lo_hi(key))
    lo, hi = _lo_hi(np.asarray(counter, U64)[..., None] + np.arange(n, dtype=U64))
    return threefry2x32(lo, hi, key_lo, key_hi)


def threefry_bits(key, counter, shape: tuple[int, ...], width: int):
    """Random bits of ``shape`` (uint64 for ``width == 64``, else uint32) from Threefry with
    ``key`` and ``counter`` (uint64 arrays of the batch shape), and the new counter."""
    counter = np.asarray(counter, U64)
    batch = counter.shape
    if width == 64:
        n = int(np.prod(shape))
        y0, y1 = _threefry_blocks(key, counter, n)
        return _join(y0, y1).reshape(batch + shape), counter + U64(n)
    if not shape:  # one block, its first word
        y0, _ = _threefry_blocks(key, counter, 1)
        return y0.reshape(batch), counter + U64(1)
    d = _split_dim(shape)
    half = (*shape[:d], (shape[d] + 1) // 2, *shape[d + 1:])
    n = int(np.prod(half))
    y0, y1 = (y.reshape(batch + half) for y in _threefry_blocks(key, counter, n))
    axis = len(batch) + d
    # element 2q + r of the split dimension is word r of block q
    merged = np.stack([y0, y1], axis=axis + 1).reshape(
        batch + shape[:d] + (2 * half[d],) + shape[d + 1:])
    return np.take(merged, np.arange(shape[d]), axis=axis), counter + U64(n)


# -- Philox-4x32 -----------------------------------------------------------------------------

_PHILOX_W = (U32(0x9E3779B9), U32(0xBB67AE85))
_PHILOX_M = (U64(0xD2511F53), U64(0xCD9E8D57))


def philox4x32(x: list, k0, k1) -> list:
    """Philox-4x32 with 10 rounds of counter words ``x`` (four uint32 arrays) under key
    words ``k0, k1``."""
    k0, k1 = np.asarray(k0, U32), np.asarray(k1, U32)
    x = [np.asarray(w, U32) for w in x]
    with np.errstate(over="ignore"):  # uint32 key increments wrap by design
        return _philox_rounds(x, k0, k1)


def _philox_rounds(x: list, k0, k1) -> list:
    for _ in range(10):
        p0 = x[0].astype(U64) * _PHILOX_M[0]
        p1 = x[2].astype(U64) * _PHILOX_M[1]
        lo0, hi0 = _lo_hi(p0)
        lo1, hi1 = _lo_hi(p1)
        x = [hi1 ^ x[1] ^ k0, lo1, hi0 ^ x[3] ^ k1, lo0]
        k0, k1 = k0 + _PHILOX_W[0], k1 + _PHILOX_W[1]
    return x


def _add_u128(lo, hi, n):
    """``(lo, hi) + n`` as 128-bit unsigned integers (``n`` a uint64 array)."""
    new_lo = lo + n
    return new_lo, hi + (new_lo < lo).astype(U64)


def philox_bits(key, lo, hi, shape: tuple[int, ...], width: int):
    """Random bits of ``shape`` (uint64 for ``width == 64``, else uint32) from Philox with
    ``key`` and the 128-bit counter ``(lo, hi)`` (uint64 arrays of the batch shape), and the
    new counter."""
    n = int(np.prod(shape))
    words = 2 * n if width == 64 else n
    blocks = -(-words // 4)
    key_lo, key_hi = (w[..., None] for w in _lo_hi(key))
    c_lo, c_hi = _add_u128(lo[..., None], hi[..., None], np.arange(blocks, dtype=U64))
    y = philox4x32([*_lo_hi(c_lo), *_lo_hi(c_hi)], key_lo, key_hi)
    if width == 64:
        stacked = np.stack([_join(y[0], y[1]), _join(y[2], y[3])], axis=-1)
    else:
        stacked = np.stack(y, axis=-1)
    batch = np.shape(lo)
    bits = stacked.reshape((*batch, -1))[..., :n].reshape(batch + shape)
    return bits, _add_u128(lo, hi, U64(blocks))


# -- rng_bit_generator -----------------------------------------------------------------------

def _output_bits(raw: np.ndarray, element_type) -> np.ndarray:
    """Random words (uint32/uint64) as elements of ``element_type``: the low ``width`` bits,
    reinterpreted (floats by bitcast, narrow integers by two's complement)."""
    width = bit_width(element_type)
    dtype = storage_dtype(element_type)
    if width in (8, 16, 32, 64) and dtype.itemsize * 8 == width:
        return raw.astype(np.dtype(f"uint{width}")).view(dtype)
    low = raw & raw.dtype.type((1 << width) - 1)
    if is_float(element_type):  # sub-byte floats: ml_dtypes keeps the bits in a byte
        return low.astype(np.uint8).view(dtype)
    if is_unsigned(element_type):
        return low.astype(dtype)
    return wrap(low.astype(np.int64), element_type)


def _state_words(state: Tensor, algorithm: str) -> np.ndarray:
    """The state's uint64 words (spec "rng_bit_generator" (C2): 2 for Threefry, 2 or 3 for
    Philox)."""
    size = state.shape[0] if len(state.shape) == 1 else -1
    allowed = (2,) if algorithm == "THREE_FRY" else (2, 3)
    if size not in allowed:
        raise InterpreterError(None, f"rng_bit_generator {algorithm} needs a state of "
                               f"{' or '.join(map(str, allowed))} ui64 values, got "
                               f"{state.type}")
    return np.asarray(state.data, U64)


@kernel("stablehlo.rng_bit_generator")
def rng_bit_generator(ctx, op, initial_state):
    """Spec "rng_bit_generator": ``(output_state, output)``; see the module docstring for the
    algorithms (XLA's)."""
    algorithm = op.attributes["rng_algorithm"].value
    if algorithm == "DEFAULT":
        algorithm = "PHILOX"
    s = _state_words(initial_state, algorithm)
    out_type = op.results[1].type
    if not out_type.has_static_shape:
        raise InterpreterError(None, f"rng_bit_generator needs a static output shape, got "
                               f"{out_type}")
    shape, et = tuple(out_type.shape), out_type.element_type
    width = 64 if bit_width(et) == 64 else 32
    if algorithm == "THREE_FRY":
        raw, counter = threefry_bits(s[..., 0], s[..., 1], shape, width)
        new_state = np.stack([s[..., 0], counter], axis=-1)
    elif algorithm == "PHILOX":
        three = s.shape[-1] == 3
        lo, hi = (s[..., 1], s[..., 2]) if three else (s[..., 1], s[..., 0])
        raw, (lo, hi) = philox_bits(s[..., 0], lo, hi, shape, width)
        new_state = np.stack([s[..., 0], lo, hi] if three else [s[..., 0], lo], axis=-1)
    else:
        raise InterpreterError(None, f"unknown rng_algorithm {algorithm}")
    nb = initial_state.batch
    return [Tensor(op.results[0].type, new_state.astype(U64), nb),
            Tensor(out_type, _output_bits(raw, et), nb)]


# -- rng -------------------------------------------------------------------------------------

_STATE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STATE_LOCK = threading.Lock()
_RNG_KEY = U64(0x5DEECE66D)


def _next_counter(interp, blocks: int) -> int:
    """Reserve ``blocks`` Philox blocks of the interpreter's ``rng`` stream."""
    with _STATE_LOCK:
        start = _STATE.get(interp, 0)
        _STATE[interp] = start + blocks
    return start


def _uniform_unit(bits: np.ndarray, dtype: np.dtype, width: int) -> np.ndarray:
    """XLA's ``ConvertRandomBitsToUniformFloatingPoint`` to ``[0, 1)``: the top mantissa bits
    of each word, as an integer, times ``2^-mantissa``."""
    mantissa = {2: 10, 4: 23, 8: 52}.get(dtype.itemsize, 23)
    top = bits >> bits.dtype.type(width - mantissa)
    return top.astype(dtype) * dtype.type(np.ldexp(1.0, -mantissa))


def _halves(shape: tuple[int, ...]):
    """XLA's ``SplitShapeIntoHalves`` for Box-Muller: the split dimension (None for a
    scalar) and the shape with it halved and a new dimension of 2 after it."""
    if not shape:
        return None, (1, 2)
    d = _split_dim(shape)
    return d, (*shape[:d], (shape[d] + 1) // 2, 2, *shape[d + 1:])


def _normal(bits_for, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normals by Box-Muller over pairs of uniforms (XLA's
    ``NormalFloatingPointDistribution``)."""
    d, pair_shape = _halves(shape)
    width = 64 if dtype.itemsize == 8 else 32
    u = _uniform_unit(bits_for(pair_shape, width), dtype, width)
    axis = (d + 1) if d is not None else 1
    u1 = np.maximum(np.take(u, 0, axis=axis), dtype.type(1.0e-7))
    v1 = dtype.type(2.0 * np.pi) * np.take(u, 1, axis=axis)
    radius = np.sqrt(dtype.type(-2.0) * np.log(u1))
    z = np.stack([np.sin(v1) * radius, np.cos(v1) * radius], axis=axis)
    if d is None:
        return z.reshape(-1)[0]
    merged = z.reshape((*shape[:d], 2 * pair_shape[d], *shape[d + 1:]))
    return np.take(merged, np.arange(shape[d]), axis=d)


def _uniform_int(bits: np.ndarray, a: np.ndarray, b: np.ndarray, et) -> np.ndarray:
    """XLA's ``ConvertRandomBitsToUniformInt``: ``a + (bits mod (b - a))``, added in two
    halves so that no intermediate overflows, wrapping in the element type."""
    width = bit_width(et)
    mask = (1 << width) - 1
    span = (b.astype(np.int64).astype(U64) - a.astype(np.int64).astype(U64)) & U64(mask)
    with np.errstate(divide="ignore"):
        dist = np.where(span == 0, U64(0), bits.astype(U64) % np.where(span == 0, 1, span))
    half = dist >> U64(1)
    return wrap(a.astype(np.int64).astype(U64) + half + (dist - half), et)


@kernel("stablehlo.rng")
def rng(ctx, op, a, b, shape_operand):
    """Spec "rng": ``UNIFORM`` over ``[a, b)`` or ``NORMAL(a, b)`` of shape ``shape``
    (implementation-defined; see the module docstring)."""
    if shape_operand.varying:
        raise InterpreterError(None, "rng with a shape that differs between processes")
    shape = tuple(int(d) for d in np.asarray(shape_operand.data).reshape(-1))
    if any(d < 0 for d in shape):
        raise InterpreterError(None, f"rng shape {list(shape)} has a negative dimension")
    et = op.results[0].type.element_type
    dtype = storage_dtype(et)
    distribution = op.attributes["rng_distribution"].value

    def bits_for(bits_shape, width):
        n = int(np.prod(bits_shape))
        words = 2 * n if width == 64 else n
        start = _next_counter(ctx.interp, -(-words // 4))
        raw, _ = philox_bits(U64(_RNG_KEY), U64(start), U64(0), tuple(bits_shape), width)
        return raw

    (ad, bd), nb = batching.unify(ctx, a, b)
    lead = (...,) + (None,) * len(shape)
    if distribution == "NORMAL":
        if not is_float(et):
            raise InterpreterError(None, f"rng NORMAL needs a float type, got {et}")
        z = _normal(bits_for, np.dtype(np.float32) if dtype.itemsize < 4 else dtype, shape)
        out = ad[lead] + bd[lead] * z
    elif is_float(et):
        wide = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
        width = 64 if wide.itemsize == 8 else 32
        unit = _uniform_unit(bits_for(shape, width), wide, width)
        out = unit * (bd[lead].astype(wide) - ad[lead].astype(wide)) + ad[lead].astype(wide)
    elif et.width == 1:  # [a, b) holds a alone when a < b
        out = np.broadcast_to(ad[lead], ad.shape + shape)
    else:
        width = 64 if bit_width(et) == 64 else 32
        out = _uniform_int(bits_for(shape, width), ad[lead], bd[lead], et)
    return batching.make(op, np.asarray(out), nb)
