"""Ops that move data without computing on it: broadcasts, reshapes (merging and splitting
dimensions, then slicing, transposing or reshaping the pieces: the fused-projection
pattern), transposes, concatenations (``jnp.roll``'s concatenation of slices), slices,
pads, reverses, iotas, constants, tuples, dimension sizes, and the dynamic-shape ops with
static shapes."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

RANK3 = ((4, 8, 6),)


@kind("broadcast_in_dim")
def broadcast_in_dim(s, x, shape):
    """A new dimension in the middle (or front), and a size-1 dimension expanded."""
    new = s.rng.choice((3, 4))
    pos = s.rng.randrange(len(shape) + 1)
    out = (*shape[:pos], new, *shape[pos:])
    dims = [d if d < pos else d + 1 for d in range(len(shape))]
    b = s.broadcast(x, shape, dims, out)
    if s.rng.random() < 0.5:  # expand a size-1 dimension as well
        one = (*shape[:-1], 1)
        sliced = s.op(f"stablehlo.slice {x} [{', '.join(f'0:{n}' for n in one)}] : "
                      f"({tensor(shape)}) -> {tensor(one)}")
        b = s.binary("add", b, s.broadcast(sliced, one, dims, out), out)
    return b, out


@kind("broadcast")
def broadcast(s, x, shape):
    out = (3, *shape)
    return s.op(f"stablehlo.broadcast {x}, sizes = [3] : ({tensor(shape)}) -> "
                f"{tensor(out)}"), out


def _divisor(n: int, rng) -> int | None:
    options = [p for p in range(2, n) if n % p == 0]
    return rng.choice(options) if options else None


@kind("reshape_merge", "stablehlo.reshape")
def reshape_merge(s, x, shape):
    if len(shape) < 2:
        return None
    d = s.rng.randrange(len(shape) - 1)
    out = (*shape[:d], shape[d] * shape[d + 1], *shape[d + 2:])
    return s.reshape(x, shape, out), out


@kind("reshape_split", "stablehlo.reshape")
def reshape_split(s, x, shape):
    d = s.rng.randrange(len(shape))
    p = _divisor(shape[d], s.rng)
    if p is None:
        return None
    out = (*shape[:d], p, shape[d] // p, *shape[d + 1:])
    return s.reshape(x, shape, out), out


@kind("reshape_regroup", "stablehlo.reshape")
def reshape_regroup(s, x, shape):
    """Sizes that share no factor boundary: ``8x6 -> 4x12``, ``8x6 -> 6x8``, ``-> 48``."""
    total = 1
    for n in shape:
        total *= n
    options = [(a, total // a) for a in range(2, total) if total % a == 0
               and (a, total // a) != tuple(shape)]
    options.append((total,))
    out = s.rng.choice(options)
    return s.reshape(x, shape, out), out


@kind("reshape_split_slice", "stablehlo.reshape", "stablehlo.slice", "stablehlo.multiply")
def reshape_split_slice(s, x, shape):
    """The fused-projection pattern (SwiGLU, fused QKV): split the last dimension in two
    halves by a reshape, slice each half out and reshape it back, combine them."""
    n = shape[-1]
    if n % 2:
        return None
    split = (*shape[:-1], 2, n // 2)
    half = (*shape[:-1], 1, n // 2)
    out = (*shape[:-1], n // 2)
    r = s.reshape(x, shape, split)
    full = [f"0:{k}" for k in shape[:-1]]
    parts = []
    for i in range(2):
        ranges = ", ".join([*full, f"{i}:{i + 1}", f"0:{n // 2}"])
        sl = s.op(f"stablehlo.slice {r} [{ranges}] : ({tensor(split)}) -> {tensor(half)}")
        parts.append(s.reshape(sl, half, out))
    return s.binary("multiply", parts[0], parts[1], out), out


@kind("reshape_split_transpose", "stablehlo.reshape", "stablehlo.transpose")
def reshape_split_transpose(s, x, shape):
    """Split a dimension, move the new major part first, merge again (heads to batch)."""
    d = len(shape) - 1
    p = _divisor(shape[d], s.rng)
    if p is None:
        return None
    split = (*shape[:d], p, shape[d] // p)
    perm = [d, *range(d), d + 1]
    moved = tuple(split[i] for i in perm)
    t = s.op(f"stablehlo.transpose {s.reshape(x, shape, split)}, dims = {perm} : "
             f"({tensor(split)}) -> {tensor(moved)}")
    out = (moved[0] * moved[1], *moved[2:])
    return s.reshape(t, moved, out), out


@kind("reshape_chain", "stablehlo.reshape")
def reshape_chain(s, x, shape):
    """Flatten, then reshape to another factorisation, then add a unit dimension."""
    total = 1
    for n in shape:
        total *= n
    flat = s.reshape(x, shape, (total,))
    rev = tuple(reversed(shape))
    back = s.reshape(flat, (total,), rev)
    out = (rev[0], 1, *rev[1:])
    return s.reshape(back, rev, out), out


@kind("transpose")
def transpose(s, x, shape):
    perm = list(range(len(shape)))
    while len(perm) > 1 and perm == sorted(perm):
        s.rng.shuffle(perm)
    out = tuple(shape[i] for i in perm)
    return s.op(f"stablehlo.transpose {x}, dims = {perm} : ({tensor(shape)}) -> "
                f"{tensor(out)}"), out


@kind("concatenate")
def concatenate(s, x, shape):
    """With another argument, or with a slice of itself (different sizes)."""
    d = s.rng.randrange(len(shape))
    if s.rng.random() < 0.5:
        other, oshape = s.arg(shape), shape
    else:
        k = max(1, shape[d] // 2 - 1)
        oshape = tuple(k if i == d else n for i, n in enumerate(shape))
        ranges = ", ".join(f"0:{n}" for n in oshape)
        other = s.op(f"stablehlo.slice {x} [{ranges}] : ({tensor(shape)}) -> "
                     f"{tensor(oshape)}")
    out = tuple(n + oshape[i] if i == d else n for i, n in enumerate(shape))
    return s.op(f"stablehlo.concatenate {x}, {other}, dim = {d} : ({tensor(shape)}, "
                f"{tensor(oshape)}) -> {tensor(out)}"), out


@kind("roll", "stablehlo.slice", "stablehlo.concatenate")
def roll(s, x, shape):
    """``jnp.roll``: the concatenation of two slices of one value."""
    d = s.rng.randrange(len(shape))
    k = s.rng.randrange(1, shape[d]) if shape[d] > 1 else 0
    if not k:
        return None
    head = tuple(shape[d] - k if i == d else n for i, n in enumerate(shape))
    tail = tuple(k if i == d else n for i, n in enumerate(shape))
    r1 = ", ".join(f"{k}:{n}" if i == d else f"0:{n}" for i, n in enumerate(shape))
    r2 = ", ".join(f"0:{k}" if i == d else f"0:{n}" for i, n in enumerate(shape))
    a = s.op(f"stablehlo.slice {x} [{r1}] : ({tensor(shape)}) -> {tensor(head)}")
    b = s.op(f"stablehlo.slice {x} [{r2}] : ({tensor(shape)}) -> {tensor(tail)}")
    return s.op(f"stablehlo.concatenate {a}, {b}, dim = {d} : ({tensor(head)}, "
                f"{tensor(tail)}) -> {tensor(shape)}"), shape


def _slice(s, x, shape, ranges):
    out = tuple(-(-(hi - lo) // st) for lo, hi, st in ranges)
    text = ", ".join(f"{lo}:{hi}" + (f":{st}" if st != 1 else "") for lo, hi, st in ranges)
    return s.op(f"stablehlo.slice {x} [{text}] : ({tensor(shape)}) -> {tensor(out)}"), out


@kind("slice_prefix", "stablehlo.slice")
def slice_prefix(s, x, shape):
    return _slice(s, x, shape, [(0, max(1, n - s.rng.randrange(1, 4)), 1) for n in shape])


@kind("slice_middle", "stablehlo.slice")
def slice_middle(s, x, shape):
    """A window straddling shard boundaries."""
    return _slice(s, x, shape, [(min(1, n - 1), max(min(1, n - 1) + 1, n - 2), 1)
                                for n in shape])


@kind("slice_strided", "stablehlo.slice")
def slice_strided(s, x, shape):
    return _slice(s, x, shape, [(n % 2, n, 2) if n > 1 else (0, n, 1) for n in shape])


def _pad(s, x, shape, low, high, interior):
    out = tuple(lo + n + hi + (n - 1) * i for n, lo, hi, i in zip(shape, low, high, interior))
    return s.op(f"stablehlo.pad {x}, {s.const(0.5)}, low = {list(low)}, high = {list(high)}, "
                f"interior = {list(interior)} : ({tensor(shape)}, {tensor(())}) -> "
                f"{tensor(out)}"), out


@kind("pad_edges", "stablehlo.pad")
def pad_edges(s, x, shape):
    return _pad(s, x, shape, [s.rng.randrange(0, 4) for _ in shape],
                [s.rng.randrange(0, 3) for _ in shape], [0] * len(shape))


@kind("pad_negative", "stablehlo.pad")
def pad_negative(s, x, shape):
    """Negative padding crops (``lax.pad`` with negative widths)."""
    return _pad(s, x, shape, [-1 if n > 2 else 0 for n in shape],
                [s.rng.choice((-1, 2)) if n > 2 else 0 for n in shape], [0] * len(shape))


@kind("pad_interior", "stablehlo.pad")
def pad_interior(s, x, shape):
    return _pad(s, x, shape, [1] * len(shape), [0] * len(shape),
                [s.rng.randrange(1, 3) for _ in shape])


@kind("reverse")
def reverse(s, x, shape):
    dims = sorted(s.rng.sample(range(len(shape)), s.rng.randrange(1, len(shape) + 1)))
    return s.op(f"stablehlo.reverse {x}, dims = {dims} : {tensor(shape)}"), shape


@kind("iota")
def iota(s, x, shape):
    d = s.rng.randrange(len(shape))
    i = s.op(f"stablehlo.iota dim = {d} : {tensor(shape, 'i32')}")
    return s.binary("add", x, s.convert(i, shape, "i32", FLOAT), shape), shape


@kind("constant", "stablehlo.constant")
def constant(s, x, shape):
    """A constant that is not a splat, so that every shard of it differs."""
    total = 1
    for n in shape:
        total *= n
    flat = s.const_array([(v * 7) % 11 - 5 for v in range(total)], FLOAT)
    return s.binary("add", x, s.reshape(flat, (total,), shape), shape), shape


@kind("tuple", "stablehlo.tuple", "stablehlo.get_tuple_element", in_programs=False)
def tuple_(s, x, shape):
    """Sharded tuples: Shardy's propagation refuses them (upstream's error, which the
    sweep counts), so random programs do not draw them."""
    y = s.arg(shape)
    t = tensor(shape)
    tup = s.op(f"stablehlo.tuple {x}, {y} : tuple<{t}, {t}>")
    a = s.op(f"stablehlo.get_tuple_element {tup}[0] : (tuple<{t}, {t}>) -> {t}")
    b = s.op(f"stablehlo.get_tuple_element {tup}[1] : (tuple<{t}, {t}>) -> {t}")
    return s.binary("subtract", a, b, shape), shape


@kind("get_dimension_size")
def get_dimension_size(s, x, shape):
    """The size of a (possibly sharded) dimension: the global size, on every device."""
    d = s.rng.randrange(len(shape))
    n = s.op(f"stablehlo.get_dimension_size {x}, dim = {d} : ({tensor(shape)}) -> "
             f"{tensor((), 'i32')}")
    f = s.convert(n, (), "i32", FLOAT)
    return s.binary("multiply", x, s.broadcast(f, (), [], shape), shape), shape


@kind("dynamic_shape_ops", "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_iota",
      "stablehlo.dynamic_reshape", "stablehlo.dynamic_pad", "stablehlo.real_dynamic_slice")
def dynamic_shape_ops(s, x, shape):
    """The dynamic-shape ops with constant shape operands and static result types."""
    rank = len(shape)
    out = (3, *shape)
    bshape = s.const_array(out, "i64")
    b = s.op(f'"stablehlo.dynamic_broadcast_in_dim"({x}, {bshape}) {{broadcast_dimensions = '
             f'array<i64: {", ".join(str(d + 1) for d in range(rank))}>}} : '
             f'({tensor(shape)}, {tensor((rank + 1,), "i64")}) -> {tensor(out)}')
    ishape = s.const_array(shape, "i64")
    i = s.op(f'"stablehlo.dynamic_iota"({ishape}) {{iota_dimension = 0 : i64}} : '
             f'({tensor((rank,), "i64")}) -> {tensor(shape)}')
    total = 1
    for n in shape:
        total *= n
    flat = s.op(f'"stablehlo.dynamic_reshape"({x}, {s.const_array([total], "i64")}) : '
                f'({tensor(shape)}, {tensor((1,), "i64")}) -> {tensor((total,))}')
    back = s.op(f'"stablehlo.dynamic_reshape"({flat}, {ishape}) : ({tensor((total,))}, '
                f'{tensor((rank,), "i64")}) -> {tensor(shape)}')
    lo, hi, inner = (s.const_array(v, "i64") for v in ([1] * rank, [0] * rank, [0] * rank))
    padded = tuple(n + 1 for n in shape)
    p = s.op(f'"stablehlo.dynamic_pad"({back}, {s.const(0.0)}, {lo}, {hi}, {inner}) : '
             f'({tensor(shape)}, {tensor(())}, {tensor((rank,), "i64")}, '
             f'{tensor((rank,), "i64")}, {tensor((rank,), "i64")}) -> {tensor(padded)}')
    ones = s.const_array([1] * rank, "i64")
    starts = s.const_array([0] * rank, "i64")
    sl = s.op(f'"stablehlo.real_dynamic_slice"({p}, {starts}, {ishape}, {ones}) : '
              f'({tensor(padded)}, {tensor((rank,), "i64")}, {tensor((rank,), "i64")}, '
              f'{tensor((rank,), "i64")}) -> {tensor(shape)}')
    summed = s.binary("add", s.binary("add", sl, i, shape), x, shape)
    first = ", ".join(["0:1", *(f"0:{n}" for n in shape)])
    head = s.op(f"stablehlo.slice {b} [{first}] : ({tensor(out)}) -> "
                f"{tensor((1, *shape))}")
    return s.binary("add", summed, s.reshape(head, (1, *shape), shape), shape), shape
