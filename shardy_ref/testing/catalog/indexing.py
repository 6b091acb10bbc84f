"""Ops that index with values known only at run time: ``dynamic_slice``,
``dynamic_update_slice`` (JAX's ``lax.dynamic_update_slice``, ``x.at[i:j].set``), ``gather``
(``jnp.take``, ``take_along_axis``, point and window gathers, batching dimensions),
``scatter`` (``x.at[idx].add/set/max``, window updates, batching dimensions), and ``sort``
(``jnp.sort``, ``argsort``) along any dimension."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

RANK3 = ((4, 8, 6),)


def _sizes(s, shape):
    """A window size per dimension: the whole dimension or a part of it."""
    return [n if s.rng.random() < 0.4 else s.rng.randrange(1, n + 1) for n in shape]


@kind("dynamic_slice")
def dynamic_slice(s, x, shape):
    sizes = _sizes(s, shape)
    starts = ", ".join(s.index(n, k) for n, k in zip(shape, sizes, strict=True))
    return s.op(f"stablehlo.dynamic_slice {x}, {starts}, sizes = {sizes} : "
                f"({tensor(shape)}, {', '.join([tensor((), 'i32')] * len(shape))}) -> "
                f"{tensor(sizes)}"), tuple(sizes)


def _dynamic_update_slice(s, x, shape, sizes):
    update = s.arg(sizes)
    starts = [s.index(n, k) for n, k in zip(shape, sizes, strict=True)]
    types = ", ".join([tensor(shape), tensor(sizes), *[tensor((), "i32")] * len(shape)])
    return s.op(f"stablehlo.dynamic_update_slice {x}, {update}, {', '.join(starts)} : "
                f"({types}) -> {tensor(shape)}"), shape


@kind("dynamic_update_slice_rows", "stablehlo.dynamic_update_slice")
def dynamic_update_slice_rows(s, x, shape):
    """Whole rows at a run-time row (``x.at[i:i+3].set(u)``)."""
    return _dynamic_update_slice(s, x, shape, [min(3, shape[0]), *shape[1:]])


@kind("dynamic_update_slice_block", "stablehlo.dynamic_update_slice")
def dynamic_update_slice_block(s, x, shape):
    return _dynamic_update_slice(s, x, shape, [max(1, n - s.rng.randrange(1, 4))
                                               for n in shape])


@kind("dynamic_update_slice_constant_index", "stablehlo.dynamic_update_slice")
def dynamic_update_slice_constant_index(s, x, shape):
    """Start indices that are constants (the sharding rule then lets the update stay
    sharded)."""
    sizes = [max(1, n // 2) for n in shape]
    update = s.arg(sizes)
    starts = [s.const(s.rng.randrange(0, n - k + 2), (), "i32") for n, k in zip(shape, sizes)]
    types = ", ".join([tensor(shape), tensor(sizes), *[tensor((), "i32")] * len(shape)])
    return s.op(f"stablehlo.dynamic_update_slice {x}, {update}, {', '.join(starts)} : "
                f"({types}) -> {tensor(shape)}"), shape


def _gather(s, x, shape, indices, ishape, out, *, offset, collapsed, start_map, ivd,
            sizes, obatch=(), ibatch=()):
    dims = (f"offset_dims = {list(offset)}, collapsed_slice_dims = {list(collapsed)}, "
            + (f"operand_batching_dims = {list(obatch)}, start_indices_batching_dims = "
               f"{list(ibatch)}, " if obatch else "")
            + f"start_index_map = {list(start_map)}, index_vector_dim = {ivd}")
    return s.op(f'"stablehlo.gather"({x}, {indices}) {{dimension_numbers = '
                f"#stablehlo.gather<{dims}>, indices_are_sorted = false, slice_sizes = "
                f"array<i64: {', '.join(map(str, sizes))}>}} : ({tensor(shape)}, "
                f"{tensor(ishape, 'i32')}) -> {tensor(out)}"), tuple(out)


@kind("gather_take", "stablehlo.gather")
def gather_take(s, x, shape):
    """``jnp.take(x, idx, axis=d)``: whole slices along one dimension."""
    d = s.rng.randrange(len(shape))
    k = s.rng.choice((3, 5))
    idx = s.indices((k, 1), shape[d])
    rest = [n for i, n in enumerate(shape) if i != d]
    out = (*rest[:d], k, *rest[d:])
    offset = [i for i in range(len(shape)) if i != d]
    sizes = [1 if i == d else n for i, n in enumerate(shape)]
    return _gather(s, x, shape, idx, (k, 1), out, offset=offset, collapsed=[d],
                   start_map=[d], ivd=1, sizes=sizes)


@kind("dynamic_gather", "stablehlo.dynamic_gather")
def dynamic_gather(s, x, shape):
    """``gather_take`` with its slice sizes in an operand (constant here)."""
    d = s.rng.randrange(len(shape))
    k = 3
    idx = s.indices((k, 1), shape[d])
    rest = [n for i, n in enumerate(shape) if i != d]
    out = (*rest[:d], k, *rest[d:])
    offset = [i for i in range(len(shape)) if i != d]
    sizes = s.const_array([1 if i == d else n for i, n in enumerate(shape)], "i64")
    dims = (f"offset_dims = {offset}, collapsed_slice_dims = [{d}], start_index_map = [{d}], "
            "index_vector_dim = 1")
    return s.op(f'"stablehlo.dynamic_gather"({x}, {idx}, {sizes}) {{dimension_numbers = '
                f"#stablehlo.gather<{dims}>, indices_are_sorted = false}} : ({tensor(shape)}, "
                f"{tensor((k, 1), 'i32')}, {tensor((len(shape),), 'i64')}) -> "
                f"{tensor(out)}"), tuple(out)


@kind("gather_points", "stablehlo.gather")
def gather_points(s, x, shape):
    """``x[rows, cols]``: one element per index vector."""
    k = 4
    rank = len(shape)
    idx = s.indices((k, rank), min(shape))
    return _gather(s, x, shape, idx, (k, rank), (k,), offset=[], collapsed=range(rank),
                   start_map=range(rank), ivd=1, sizes=[1] * rank)


@kind("gather_windows", "stablehlo.gather")
def gather_windows(s, x, shape):
    """A window of 3 rows at each run-time start (a batched ``dynamic_slice``)."""
    k, w = 2, min(3, shape[0])
    idx = s.indices((k,), shape[0])
    out = (k, w, *shape[1:])
    return _gather(s, x, shape, idx, (k,), out, offset=range(1, len(shape) + 1),
                   collapsed=[], start_map=[0], ivd=1, sizes=[w, *shape[1:]])


@kind("gather_batching", "stablehlo.gather", shapes=RANK3)
def gather_batching(s, x, shape):
    """``jnp.take_along_axis(x, idx, axis=1)`` of a rank-3 value: dimension 0 is a batching
    dimension of operand and indices."""
    if len(shape) != 3:
        return None
    b, n, m = shape
    k = 3
    idx = s.indices((b, k, 1), n)
    return _gather(s, x, shape, idx, (b, k, 1), (b, k, m), offset=[2], collapsed=[1],
                   start_map=[1], ivd=2, sizes=[1, 1, m], obatch=[0], ibatch=[0])


def _scatter(s, x, shape, indices, ishape, updates, ushape, body, *, window, inserted,
             to_operand, ivd, obatch=(), ibatch=(), unique=False):
    dims = (f"update_window_dims = {list(window)}, inserted_window_dims = {list(inserted)}, "
            + (f"input_batching_dims = {list(obatch)}, scatter_indices_batching_dims = "
               f"{list(ibatch)}, " if obatch else "")
            + f"scatter_dims_to_operand_dims = {list(to_operand)}, index_vector_dim = {ivd}")
    return s.op(f'"stablehlo.scatter"({x}, {indices}, {updates}) {body} {{'
                f"scatter_dimension_numbers = #stablehlo.scatter<{dims}>, indices_are_sorted "
                f"= false, unique_indices = {str(unique).lower()}}} : ({tensor(shape)}, "
                f"{tensor(ishape, 'i32')}, {tensor(ushape)}) -> {tensor(shape)}"), shape


def _rows(s, shape, d, k):
    """Indices ``(k, 1)`` into dimension ``d`` and updates of the slices they select."""
    idx = s.indices((k, 1), shape[d])
    rest = [n for i, n in enumerate(shape) if i != d]
    ushape = (k, *rest)
    return idx, s.arg(ushape), ushape


@kind("scatter_add", "stablehlo.scatter")
def scatter_add(s, x, shape):
    """``x.at[idx].add(u)`` along a dimension (duplicates add up)."""
    d = s.rng.randrange(len(shape))
    idx, upd, ushape = _rows(s, shape, d, 4)
    return _scatter(s, x, shape, idx, (4, 1), upd, ushape, s.scalar_body("add"),
                    window=range(1, len(shape)), inserted=[d], to_operand=[d], ivd=1)


@kind("scatter_max", "stablehlo.scatter")
def scatter_max(s, x, shape):
    d = s.rng.randrange(len(shape))
    idx, upd, ushape = _rows(s, shape, d, 4)
    body = s.scalar_body(s.rng.choice(("maximum", "minimum", "multiply")))
    return _scatter(s, x, shape, idx, (4, 1), upd, ushape, body,
                    window=range(1, len(shape)), inserted=[d], to_operand=[d], ivd=1)


@kind("segment_max", "stablehlo.scatter")
def segment_max(s, x, shape):
    """``jax.ops.segment_max``: the rows of ``x`` maxed into segments that start at -inf,
    some segments receiving nothing (they stay -inf)."""
    segments = max(2, shape[0] // 2 + 1)
    out = (segments, *shape[1:])
    start = s.op(f"stablehlo.constant dense<0xFF800000> : {tensor(out)}")
    ids = s.indices((shape[0], 1), segments)
    op = s.rng.choice(("maximum", "minimum"))
    if op == "minimum":
        start = s.op(f"stablehlo.negate {start} : {tensor(out)}")
    return _scatter(s, start, out, ids, (shape[0], 1), x, shape, s.scalar_body(op),
                    window=range(1, len(shape)), inserted=[0], to_operand=[0], ivd=1)


@kind("scatter_set_permutation", "stablehlo.scatter", "stablehlo.sort", "stablehlo.iota")
def scatter_set_permutation(s, x, shape):
    """``x.at[perm[:k]].set(u)`` with distinct run-time indices (the first ``k`` of an
    argsort), so that the replacing update has one winner per element."""
    n = shape[0]
    k = max(1, n // 2)
    keys = s.arg((n,))
    iota = s.op(f"stablehlo.iota dim = 0 : {tensor((n,), 'i32')}")
    t, ti = tensor(()), tensor((), "i32")

    def less(inner, a, b, _c, _d):
        return [(inner.op(f"stablehlo.compare LT, {a}, {b}, FLOAT : ({t}, {t}) -> "
                          f"{tensor((), 'i1')}"), tensor((), "i1"))]
    body = s.region([t, t, ti, ti], less)
    _, perm = s.ops(f'"stablehlo.sort"({keys}, {iota}) {body} {{dimension = 0 : i64, '
                    f"is_stable = true}} : ({tensor((n,))}, {tensor((n,), 'i32')}) -> "
                    f"({tensor((n,))}, {tensor((n,), 'i32')})", 2)
    first = s.op(f"stablehlo.slice {perm} [0:{k}] : ({tensor((n,), 'i32')}) -> "
                 f"{tensor((k,), 'i32')}")
    idx = s.reshape(first, (k,), (k, 1), "i32")
    ushape = (k, *shape[1:])
    upd = s.arg(ushape)

    def replace(inner, _old, new):
        return [(new, t)]
    return _scatter(s, x, shape, idx, (k, 1), upd, ushape, s.region([t, t], replace),
                    window=range(1, len(shape)), inserted=[0], to_operand=[0], ivd=1,
                    unique=True)


@kind("scatter_windows", "stablehlo.scatter")
def scatter_windows(s, x, shape):
    """Windows of 2 rows added at run-time starts (a batched ``dynamic_update_slice``
    that adds)."""
    k, w = 3, min(2, shape[0])
    idx = s.indices((k,), shape[0])
    ushape = (k, w, *shape[1:])
    return _scatter(s, x, shape, idx, (k,), s.arg(ushape), ushape, s.scalar_body("add"),
                    window=range(1, len(shape) + 1), inserted=[], to_operand=[0], ivd=1)


@kind("scatter_whole_window", "stablehlo.scatter")
def scatter_whole_window(s, x, shape):
    """Rows added at run-time (row, column) starts, each window spanning the whole last
    dimension: a start column past 0 writes the part of the window that fits (StableHLO
    checks each element; XLA would skip the window)."""
    if len(shape) != 2:
        return None
    k = 3
    idx = s.indices((k, 2), shape[1])
    ushape = (k, shape[1])
    return _scatter(s, x, shape, idx, (k, 2), s.arg(ushape), ushape, s.scalar_body("add"),
                    window=[1], inserted=[0], to_operand=[0, 1], ivd=1)


@kind("scatter_batching", "stablehlo.scatter", shapes=RANK3)
def scatter_batching(s, x, shape):
    """``put_along_axis``-style adds into a rank-3 value with a batching dimension."""
    if len(shape) != 3:
        return None
    b, n, m = shape
    k = 2
    idx = s.indices((b, k, 1), n)
    ushape = (b, k, m)
    return _scatter(s, x, shape, idx, (b, k, 1), s.arg(ushape), ushape,
                    s.scalar_body("add"), window=[2], inserted=[1], to_operand=[1], ivd=2,
                    obatch=[0], ibatch=[0])


def _comparator(s, count: int, direction: str):
    t = tensor(())

    def body(inner, *args):
        return [(inner.op(f"stablehlo.compare {direction}, {args[0]}, {args[1]}, FLOAT : "
                          f"({t}, {t}) -> {tensor((), 'i1')}"), tensor((), "i1"))]
    types = [t, t] + [tensor((), "i32")] * (2 * (count - 1))
    return s.region(types, body)


@kind("sort")
def sort(s, x, shape):
    d = s.rng.randrange(len(shape))
    body = _comparator(s, 1, s.rng.choice(("LT", "GT")))
    return s.op(f'"stablehlo.sort"({x}) {body} {{dimension = {d} : i64, is_stable = '
                f"{s.rng.choice(('true', 'false'))}}} : ({tensor(shape)}) -> "
                f"{tensor(shape)}"), shape


@kind("argsort", "stablehlo.sort", "stablehlo.iota")
def argsort(s, x, shape):
    """Values and their indices sorted together (``jnp.argsort``)."""
    d = s.rng.randrange(len(shape))
    iota = s.op(f"stablehlo.iota dim = {d} : {tensor(shape, 'i32')}")
    body = _comparator(s, 2, "LT")
    values, order = s.ops(f'"stablehlo.sort"({x}, {iota}) {body} {{dimension = {d} : i64, '
                          f"is_stable = true}} : ({tensor(shape)}, {tensor(shape, 'i32')}) "
                          f"-> ({tensor(shape)}, {tensor(shape, 'i32')})", 2)
    return s.binary("add", values, s.convert(order, shape, "i32", FLOAT), shape), shape
