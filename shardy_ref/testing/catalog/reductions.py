"""Ops that combine many elements: ``reduce`` (sum, max, min, product, a logical and,
an argmax over two operands, every dimension, a non-zero init), ``reduce_window``
(pooling, ``jnp.cumsum``'s padded window, strides, dilations), ``select_and_scatter``
(max-pool's gradient), ``convolution`` (1-D and 2-D, feature groups), ``dot_general``,
``dot`` and ``map``."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

RANK3 = ((4, 8, 6),)


def _reduce(s, values, shapes, dtypes, inits, dims, body):
    """``stablehlo.reduce`` of ``values`` over ``dims``; the results."""
    out = tuple(n for i, n in enumerate(shapes[0]) if i not in dims)
    operands = ", ".join([*values, *inits])
    in_types = ", ".join([*(tensor(sh, dt) for sh, dt in zip(shapes, dtypes)),
                          *(tensor((), dt) for dt in dtypes)])
    out_types = ", ".join(tensor(out, dt) for dt in dtypes)
    text = (f'"stablehlo.reduce"({operands}) {body} {{dimensions = array<i64: '
            f"{', '.join(map(str, dims))}>}} : ({in_types}) -> ({out_types})")
    if len(values) == 1:
        return [s.op(text)], out
    return s.ops(text, len(values)), out


@kind("reduce_sum", "stablehlo.reduce")
def reduce_sum(s, x, shape):
    """A sum over one dimension, with 0 or with a non-zero init (added once)."""
    d = s.rng.randrange(len(shape))
    init = s.const(s.rng.choice((0.0, 1.5)))
    (r,), out = _reduce(s, [x], [shape], [FLOAT], [init], [d], s.scalar_body("add"))
    return r, out


@kind("reduce_max_min", "stablehlo.reduce")
def reduce_max_min(s, x, shape):
    d = s.rng.randrange(len(shape))
    op, init = s.rng.choice((("maximum", "0xFF800000"), ("minimum", "0x7F800000")))
    init = s.op(f"stablehlo.constant dense<{init}> : {tensor(())}")
    (r,), out = _reduce(s, [x], [shape], [FLOAT], [init], [d], s.scalar_body(op))
    return r, out


@kind("reduce_product", "stablehlo.reduce")
def reduce_product(s, x, shape):
    d = s.rng.randrange(len(shape))
    (r,), out = _reduce(s, [x], [shape], [FLOAT], [s.const(1.0)], [d],
                        s.scalar_body("multiply"))
    return r, out


@kind("reduce_all_dims", "stablehlo.reduce")
def reduce_all_dims(s, x, shape):
    """A sum over every dimension, broadcast back (``x - x.mean()``)."""
    (r,), _ = _reduce(s, [x], [shape], [FLOAT], [s.const(0.0)], list(range(len(shape))),
                      s.scalar_body("add"))
    return s.binary("subtract", x, s.broadcast(r, (), [], shape), shape), shape


@kind("reduce_and", "stablehlo.reduce", "stablehlo.and")
def reduce_and(s, x, shape):
    """``jnp.all(x > 0, axis=d)``."""
    d = s.rng.randrange(len(shape))
    p = s.op(f"stablehlo.compare GT, {x}, {s.const(-0.5, shape)}, FLOAT : ({tensor(shape)}, "
             f"{tensor(shape)}) -> {tensor(shape, 'i1')}")
    (r,), out = _reduce(s, [p], [shape], ["i1"], [s.const(True, (), "i1")], [d],
                        s.scalar_body("and", "i1"))
    return s.convert(r, out, "i1", FLOAT), out


@kind("reduce_argmax", "stablehlo.reduce", "stablehlo.iota")
def reduce_argmax(s, x, shape):
    """``jnp.argmax`` as JAX lowers it: a reduce of (value, index) pairs whose body keeps
    the larger value and, on ties, the smaller index."""
    d = s.rng.randrange(len(shape))
    iota = s.op(f"stablehlo.iota dim = {d} : {tensor(shape, 'i32')}")
    t, ti, tb = tensor(()), tensor((), "i32"), tensor((), "i1")

    def body(inner, a, ai, b, bi):
        gt = inner.op(f"stablehlo.compare GT, {a}, {b}, FLOAT : ({t}, {t}) -> {tb}")
        eq = inner.op(f"stablehlo.compare EQ, {a}, {b}, FLOAT : ({t}, {t}) -> {tb}")
        lt = inner.op(f"stablehlo.compare LT, {ai}, {bi}, SIGNED : ({ti}, {ti}) -> {tb}")
        pick = inner.op(f"stablehlo.or {gt}, {inner.op(f'stablehlo.and {eq}, {lt} : {tb}')}"
                        f" : {tb}")
        v = inner.op(f"stablehlo.select {pick}, {a}, {b} : {tb}, {t}")
        i = inner.op(f"stablehlo.select {pick}, {ai}, {bi} : {tb}, {ti}")
        return [(v, t), (i, ti)]
    ninf = s.op(f"stablehlo.constant dense<0xFF800000> : {t}")
    (v, i), out = _reduce(s, [x, iota], [shape, shape], [FLOAT, "i32"],
                          [ninf, s.const(0, (), "i32")], [d], s.region([t, ti, t, ti], body))
    return s.binary("add", v, s.convert(i, out, "i32", FLOAT), out), out


def _reduce_window(s, x, shape, window, strides, padding, op="add", init=0.0, dilation=None):
    out = []
    for n, w, st, (lo, hi), dl in zip(shape, window, strides, padding,
                                      dilation or [1] * len(shape), strict=True):
        span = (w - 1) * dl + 1
        out.append((n + lo + hi - span) // st + 1)
    attrs = [f"window_dimensions = array<i64: {', '.join(map(str, window))}>",
             f"window_strides = array<i64: {', '.join(map(str, strides))}>",
             f"padding = dense<{[list(p) for p in padding]}> : "
             f"tensor<{len(shape)}x2xi64>"]
    if dilation:
        attrs.append(f"window_dilations = array<i64: {', '.join(map(str, dilation))}>")
    return s.op(f'"stablehlo.reduce_window"({x}, {s.const(init)}) {s.scalar_body(op)} '
                f"{{{', '.join(attrs)}}} : ({tensor(shape)}, {tensor(())}) -> "
                f"{tensor(out)}"), tuple(out)


@kind("reduce_window_pool", "stablehlo.reduce_window")
def reduce_window_pool(s, x, shape):
    """Sum or max pooling: windows of 2 or 3, strides 1 or 2, some padding."""
    window = [s.rng.choice((1, 2, 3)) if n >= 3 else 1 for n in shape]
    strides = [s.rng.choice((1, 2)) for _ in shape]
    padding = [(s.rng.randrange(0, w), 0) for w in window]
    op, init = s.rng.choice((("add", 0.0), ("maximum", -1e9)))
    return _reduce_window(s, x, shape, window, strides, padding, op, init)


@kind("reduce_window_cumsum", "stablehlo.reduce_window")
def reduce_window_cumsum(s, x, shape):
    """``jnp.cumsum`` along a dimension as XLA's CPU lowering writes it: a window of the
    whole dimension, padded in front."""
    d = s.rng.randrange(len(shape))
    window = [n if i == d else 1 for i, n in enumerate(shape)]
    padding = [(n - 1, 0) if i == d else (0, 0) for i, n in enumerate(shape)]
    return _reduce_window(s, x, shape, window, [1] * len(shape), padding)


@kind("reduce_window_dilated", "stablehlo.reduce_window")
def reduce_window_dilated(s, x, shape):
    window = [2 if n >= 4 else 1 for n in shape]
    return _reduce_window(s, x, shape, window, [1] * len(shape),
                          [(0, 0)] * len(shape), dilation=[2] * len(shape))


@kind("select_and_scatter")
def select_and_scatter(s, x, shape):
    """Max-pool's gradient: windows of 2 with stride 2 (padded to even sizes)."""
    window = [2] * len(shape)
    padding = [(0, n % 2) for n in shape]
    out = tuple((n + n % 2) // 2 for n in shape)
    source = s.arg(out)
    t, tb = tensor(()), tensor((), "i1")

    def select(inner, a, b):
        return [(inner.op(f"stablehlo.compare GE, {a}, {b}, FLOAT : ({t}, {t}) -> {tb}"),
                 tb)]
    attrs = (f"window_dimensions = array<i64: {', '.join(map(str, window))}>, "
             f"window_strides = array<i64: {', '.join(map(str, window))}>, padding = "
             f"dense<{[list(p) for p in padding]}> : tensor<{len(shape)}x2xi64>")
    sel = s.block([t, t], select)
    add = s.block([t, t], lambda inner, a, b: [(inner.binary("add", a, b, ()), t)])
    init = s.const(0.0)
    return s.op(f'"stablehlo.select_and_scatter"({x}, {source}, {init}) ({sel}, {add}) '
                f"{{{attrs}}} : ({tensor(shape)}, {tensor(out)}, {t}) -> {tensor(shape)}"), \
        shape


@kind("convolution_1d", "stablehlo.convolution", shapes=RANK3)
def convolution_1d(s, x, shape):
    """``lax.conv_general_dilated`` in NWC layout: batch, width (windows of 3, padding
    1), input features -> output features."""
    if len(shape) != 3:
        return None
    b, w, c = shape
    o = 4
    kernel = s.arg((3, c, o))
    stride = s.rng.choice((1, 2))
    out_w = (w + 2 - 3) // stride + 1
    out = (b, out_w, o)
    return s.op(f"stablehlo.convolution({x}, {kernel}) dim_numbers = [b, 0, f]x[0, i, o]->"
                f"[b, 0, f], window = {{stride = [{stride}], pad = [[1, 1]]}} "
                f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : "
                f"({tensor(shape)}, {tensor((3, c, o))}) -> {tensor(out)}"), out


@kind("convolution_2d", "stablehlo.convolution", shapes=RANK3)
def convolution_2d(s, x, shape):
    """A 2-D convolution of a rank-3 value seen as one-feature images (NHWC), with
    feature groups when the features allow."""
    if len(shape) != 3:
        return None
    b, h, w = shape
    img = s.reshape(x, shape, (b, h, w, 1))
    kernel = s.arg((2, 2, 1, 3))
    out = (b, h - 1, w - 1, 3)
    return s.op(f"stablehlo.convolution({img}, {kernel}) dim_numbers = [b, 0, 1, f]x"
                f"[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [1, 1], pad = [[0, 0], "
                f"[0, 0]], rhs_dilate = [1, 1]}} {{batch_group_count = 1 : i64, "
                f"feature_group_count = 1 : i64}} : ({tensor((b, h, w, 1))}, "
                f"{tensor((2, 2, 1, 3))}) -> {tensor(out)}"), out


@kind("convolution_grouped", "stablehlo.convolution", shapes=RANK3)
def convolution_grouped(s, x, shape):
    """A depthwise 1-D convolution (feature groups = input features)."""
    if len(shape) != 3:
        return None
    b, w, c = shape
    kernel = s.arg((2, 1, c))
    out = (b, w - 1, c)
    return s.op(f"stablehlo.convolution({x}, {kernel}) dim_numbers = [b, 0, f]x[0, i, o]->"
                f"[b, 0, f], window = {{stride = [1], pad = [[0, 0]]}} "
                f"{{batch_group_count = 1 : i64, feature_group_count = {c} : i64}} : "
                f"({tensor(shape)}, {tensor((2, 1, c))}) -> {tensor(out)}"), out


@kind("dynamic_conv", "stablehlo.dynamic_conv", shapes=RANK3)
def dynamic_conv(s, x, shape):
    """``convolution_1d`` with its padding in an operand (constant here)."""
    if len(shape) != 3:
        return None
    b, w, c = shape
    kernel = s.arg((3, c, 4))
    padding = s.op(f"stablehlo.constant dense<[[1, 1]]> : {tensor((1, 2), 'i64')}")
    out = (b, w, 4)
    return s.op(f'"stablehlo.dynamic_conv"({x}, {kernel}, {padding}) {{batch_group_count = 1 '
                f": i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, "
                f"feature_group_count = 1 : i64}} : ({tensor(shape)}, {tensor((3, c, 4))}, "
                f"{tensor((1, 2), 'i64')}) -> {tensor(out)}"), out


@kind("dot_general_matmul", "stablehlo.dot_general")
def dot_general_matmul(s, x, shape):
    """``x @ w`` contracting the last dimension."""
    k = shape[-1]
    n = s.rng.choice((4, 6))
    w = s.arg((k, n))
    out = (*shape[:-1], n)
    return s.op(f"stablehlo.dot_general {x}, {w}, contracting_dims = [{len(shape) - 1}] x "
                f"[0] : ({tensor(shape)}, {tensor((k, n))}) -> {tensor(out)}"), out


@kind("dot_general_batch", "stablehlo.dot_general", shapes=RANK3)
def dot_general_batch(s, x, shape):
    """``einsum('bij,bjk->bik')`` with dimension 0 a batching dimension."""
    if len(shape) != 3:
        return None
    b, i, j = shape
    w = s.arg((b, j, 4))
    out = (b, i, 4)
    return s.op(f"stablehlo.dot_general {x}, {w}, batching_dims = [0] x [0], "
                f"contracting_dims = [2] x [1] : ({tensor(shape)}, {tensor((b, j, 4))}) -> "
                f"{tensor(out)}"), out


@kind("dot_general_transposed", "stablehlo.dot_general")
def dot_general_transposed(s, x, shape):
    """``x.T @ y``: contracting the leading dimension of both."""
    if len(shape) != 2:
        return None
    m, n = shape
    y = s.arg((m, 3))
    out = (n, 3)
    return s.op(f"stablehlo.dot_general {x}, {y}, contracting_dims = [0] x [0] : "
                f"({tensor(shape)}, {tensor((m, 3))}) -> {tensor(out)}"), out


@kind("dot", "stablehlo.dot")
def dot(s, x, shape):
    """The legacy matrix-vector and matrix-matrix ``dot``."""
    if len(shape) != 2:
        return None
    m, k = shape
    if s.rng.random() < 0.5:
        v = s.arg((k,))
        return s.op(f'"stablehlo.dot"({x}, {v}) : ({tensor(shape)}, {tensor((k,))}) -> '
                    f"{tensor((m,))}"), (m,)
    w = s.arg((k, 4))
    return s.op(f'"stablehlo.dot"({x}, {w}) : ({tensor(shape)}, {tensor((k, 4))}) -> '
                f"{tensor((m, 4))}"), (m, 4)


@kind("map")
def map_(s, x, shape):
    y = s.arg(shape)
    t = tensor(())

    def body(inner, a, b):
        return [(inner.binary("add", inner.binary("multiply", a, b, ()), a, ()), t)]
    return s.op(f'"stablehlo.map"({x}, {y}) {s.region([t, t], body)} {{dimensions = '
                f"array<i64: {', '.join(str(d) for d in range(len(shape)))}>}} : "
                f"({tensor(shape)}, {tensor(shape)}) -> {tensor(shape)}"), shape
