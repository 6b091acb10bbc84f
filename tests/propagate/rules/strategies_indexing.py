"""Random valid StableHLO ops of the gather/scatter, slicing, reduce and linalg rule
families, each as a one-op function (``rule_helpers.single_op``), for the rule properties
and the oracle differential tests.

Every strategy draws shapes and attributes that StableHLO's verifier accepts (the oracle
test checks that real Shardy parses them) and writes the op in generic form.
"""
from __future__ import annotations

from hypothesis import strategies as st

from .rule_helpers import single_op

MAX_DIM = 6


def tensor(shape, element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def i64s(values) -> str:
    return "array<i64" + (": " + ", ".join(map(str, values)) if len(values) else "") + ">"


def region(params: list[tuple[str, str]], body: list[str], rets: list[tuple[str, str]]) -> str:
    """A one-block region ``({ ^bb0(params): body; stablehlo.return rets })``."""
    head = ", ".join(f"{name}: {type_}" for name, type_ in params)
    lines = [f"  ^bb0({head}):"] + [f"    {line}" for line in body]
    lines.append(f"    stablehlo.return {', '.join(n for n, _ in rets)} : "
                 f"{', '.join(t for _, t in rets)}")
    return "({\n" + "\n".join(lines) + "\n  })"


def _accumulate_region(elements: list[str], op: str = "stablehlo.maximum") -> str:
    """A ``2N``-argument region combining ``(%a_i, %b_i)`` with ``op`` for each i."""
    scalars = [tensor((), e) for e in elements]
    params = [(f"%a{i}", t) for i, t in enumerate(scalars)]
    params += [(f"%b{i}", t) for i, t in enumerate(scalars)]
    body = [f"%r{i} = {op} %a{i}, %b{i} : {t}" for i, t in enumerate(scalars)]
    return region(params, body, [(f"%r{i}", t) for i, t in enumerate(scalars)])


shapes = st.lists(st.integers(1, MAX_DIM), min_size=1, max_size=4).map(tuple)
shapes_with_zero = st.lists(st.integers(0, MAX_DIM), min_size=1, max_size=4).map(tuple)
elements = st.sampled_from(["f32", "i32"])


# -- slicing ------------------------------------------------------------------------------

@st.composite
def slice_ops(draw) -> str:
    shape = draw(shapes_with_zero)
    starts, limits, strides, out = [], [], [], []
    for d in shape:
        start = draw(st.integers(0, d))
        limit = draw(st.integers(start, d))
        stride = draw(st.integers(1, 3))
        starts.append(start)
        limits.append(limit)
        strides.append(stride)
        out.append(-(-(limit - start) // stride))
    op = (f'%0 = "stablehlo.slice"(%arg0) <{{start_indices = {i64s(starts)}, limit_indices = '
          f"{i64s(limits)}, strides = {i64s(strides)}}}> : ({tensor(shape)}) -> {tensor(out)}")
    return single_op(op, [tensor(shape)], [tensor(out)])


@st.composite
def dynamic_slice_ops(draw) -> str:
    shape = draw(shapes)
    sizes = [draw(st.integers(0, d)) for d in shape]
    idx = [tensor((), "i32")] * len(shape)
    operands = ", ".join(f"%arg{i}" for i in range(len(shape) + 1))
    op = (f'%0 = "stablehlo.dynamic_slice"({operands}) <{{slice_sizes = {i64s(sizes)}}}> : '
          f"({', '.join([tensor(shape), *idx])}) -> {tensor(sizes)}")
    return single_op(op, [tensor(shape), *idx], [tensor(sizes)])


@st.composite
def dynamic_update_slice_ops(draw) -> str:
    """Start indices are function arguments or (sdy/stablehlo) constants."""
    shape = draw(shapes)
    update = [draw(st.integers(0, d)) for d in shape]
    kinds = draw(st.lists(st.sampled_from(["arg", "sdy", "stablehlo"]),
                          min_size=len(shape), max_size=len(shape)))
    scalar = tensor((), "i32")
    consts, names, args = [], [], [tensor(shape), tensor(update)]
    for i, kind in enumerate(kinds):
        if kind == "arg":
            names.append(f"%arg{len(args)}")
            args.append(scalar)
        else:
            consts.append(f"%c{i} = {kind}.constant dense<0> : {scalar}\n  ")
            names.append(f"%c{i}")
    types = ", ".join([tensor(shape), tensor(update)] + [scalar] * len(shape))
    op = (f'{"".join(consts)}%0 = "stablehlo.dynamic_update_slice"(%arg0, %arg1, '
          f"{', '.join(names)}) : ({types}) -> {tensor(shape)}")
    return single_op(op, args, [tensor(shape)])


@st.composite
def pad_ops(draw) -> str:
    shape = draw(shapes_with_zero)
    low, high, interior, out = [], [], [], []
    for d in shape:
        lo, hi, inner = draw(st.integers(-2, 3)), draw(st.integers(-2, 3)), draw(st.integers(0, 2))
        size = lo + hi + d + max(d - 1, 0) * inner
        if size < 0:
            lo, hi, size = 0, 0, d + max(d - 1, 0) * inner
        low.append(lo)
        high.append(hi)
        interior.append(inner)
        out.append(size)
    op = (f'%0 = "stablehlo.pad"(%arg0, %arg1) <{{edge_padding_high = {i64s(high)}, '
          f"edge_padding_low = {i64s(low)}, interior_padding = {i64s(interior)}}}> : "
          f"({tensor(shape)}, {tensor(())}) -> {tensor(out)}")
    return single_op(op, [tensor(shape), tensor(())], [tensor(out)])


@st.composite
def reverse_ops(draw) -> str:
    shape = draw(shapes_with_zero)
    dims = draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    op = (f'%0 = "stablehlo.reverse"(%arg0) <{{dimensions = {i64s(dims)}}}> : '
          f"({tensor(shape)}) -> {tensor(shape)}")
    return single_op(op, [tensor(shape)], [tensor(shape)])


# -- reduce family ------------------------------------------------------------------------

@st.composite
def reduce_ops(draw) -> str:
    shape = draw(shapes_with_zero)
    elts = draw(st.lists(elements, min_size=1, max_size=2))
    dims = draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
    out = [d for i, d in enumerate(shape) if i not in dims]
    ins = [tensor(shape, e) for e in elts]
    inits = [tensor((), e) for e in elts]
    outs = [tensor(out, e) for e in elts]
    n = len(elts)
    operands = ", ".join(f"%arg{i}" for i in range(2 * n))
    res = f"%0:{n}" if n > 1 else "%0"
    op = (f'{res} = "stablehlo.reduce"({operands}) <{{dimensions = {i64s(dims)}}}> '
          f"{_accumulate_region(elts, 'stablehlo.add')} : ({', '.join(ins + inits)}) -> "
          f"({', '.join(outs)})")
    return single_op(op, ins + inits, outs)


@st.composite
def _windows(draw, shape):
    """``(window_dimensions, strides or None, flat padding or None, result shape)``."""
    windows, strides, padding, out = [], [], [], []
    for d in shape:
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        if d + lo + hi < 1:
            lo = hi = 0
        padded = d + lo + hi
        window = draw(st.integers(1, min(padded, 3)))
        stride = draw(st.integers(1, 3))
        windows.append(window)
        strides.append(stride)
        padding += [lo, hi]
        out.append((padded - window) // stride + 1)
    if draw(st.booleans()) and all(s == 1 for s in strides):
        strides = None
    if draw(st.booleans()) and not any(padding):
        padding = None
    return windows, strides, padding, out


def _window_attrs(windows, strides, padding, rank) -> str:
    attrs = [f"window_dimensions = {i64s(windows)}"]
    if strides is not None:
        attrs.append(f"window_strides = {i64s(strides)}")
    if padding is not None:
        rows = ", ".join(f"[{padding[2 * i]}, {padding[2 * i + 1]}]" for i in range(rank))
        attrs.append(f"padding = dense<[{rows}]> : tensor<{rank}x2xi64>")
    return ", ".join(attrs)


@st.composite
def reduce_window_ops(draw) -> str:
    shape = draw(shapes)
    elts = draw(st.lists(elements, min_size=1, max_size=2))
    windows, strides, padding, out = draw(_windows(shape))
    n = len(elts)
    ins = [tensor(shape, e) for e in elts]
    inits = [tensor((), e) for e in elts]
    outs = [tensor(out, e) for e in elts]
    operands = ", ".join(f"%arg{i}" for i in range(2 * n))
    res = f"%0:{n}" if n > 1 else "%0"
    op = (f'{res} = "stablehlo.reduce_window"({operands}) '
          f"<{{{_window_attrs(windows, strides, padding, len(shape))}}}> "
          f"{_accumulate_region(elts)} : ({', '.join(ins + inits)}) -> ({', '.join(outs)})")
    return single_op(op, ins + inits, outs)


@st.composite
def select_and_scatter_ops(draw) -> str:
    shape = draw(shapes)
    windows, strides, padding, source = draw(_windows(shape))
    f32 = tensor(())
    select = region([("%a", f32), ("%b", f32)],
                     [f"%p = stablehlo.compare GE, %a, %b : ({f32}, {f32}) -> tensor<i1>"],
                     [("%p", "tensor<i1>")])
    scatter = _accumulate_region(["f32"], "stablehlo.add")
    types = [tensor(shape), tensor(source), f32]
    op = (f'%0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %arg2) '
          f"<{{{_window_attrs(windows, strides, padding, len(shape))}}}> "
          f"{select[:-1]}, {scatter[1:]} : ({', '.join(types)}) -> {tensor(shape)}")
    return single_op(op, types, [tensor(shape)])


@st.composite
def sort_ops(draw) -> str:
    shape = draw(shapes)
    elts = draw(st.lists(elements, min_size=1, max_size=2))
    dim = draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    n = len(elts)
    ins = [tensor(shape, e) for e in elts]
    scalar = tensor((), elts[0])
    params = [(f"%a{2 * i + j}", tensor((), e)) for i, e in enumerate(elts) for j in range(2)]
    comparator = region(params, [f"%p = stablehlo.compare GT, %a0, %a1 : ({scalar}, "
                                 f"{scalar}) -> tensor<i1>"], [("%p", "tensor<i1>")])
    attrs = "is_stable = true" + ("" if dim is None else f", dimension = {dim} : i64")
    operands = ", ".join(f"%arg{i}" for i in range(n))
    res = f"%0:{n}" if n > 1 else "%0"
    op = (f'{res} = "stablehlo.sort"({operands}) <{{{attrs}}}> {comparator} : '
          f"({', '.join(ins)}) -> ({', '.join(ins)})")
    return single_op(op, ins, ins)


# -- linalg family ------------------------------------------------------------------------

batch_shapes = st.lists(st.integers(1, MAX_DIM), max_size=2).map(tuple)


@st.composite
def cholesky_ops(draw) -> str:
    t = tensor(draw(batch_shapes) + (draw(st.integers(1, MAX_DIM)),) * 2)
    lower = str(draw(st.booleans())).lower()
    op = f'%0 = "stablehlo.cholesky"(%arg0) <{{lower = {lower}}}> : ({t}) -> {t}'
    return single_op(op, [t], [t])


@st.composite
def triangular_solve_ops(draw) -> str:
    batch = draw(batch_shapes)
    m, k = draw(st.integers(1, MAX_DIM)), draw(st.integers(1, MAX_DIM))
    left = draw(st.booleans())
    a, b = tensor((*batch, m, m)), tensor(batch + ((m, k) if left else (k, m)))
    transpose = draw(st.sampled_from(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]))
    op = (f'%0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{{left_side = '
          f"{str(left).lower()}, lower = true, transpose_a = #stablehlo<transpose {transpose}>,"
          f" unit_diagonal = false}}> : ({a}, {b}) -> {b}")
    return single_op(op, [a, b], [b])


@st.composite
def fft_ops(draw) -> str:
    shape = draw(shapes)
    num_fft = draw(st.integers(1, min(3, len(shape))))
    lengths = shape[len(shape) - num_fft:]
    kind = draw(st.sampled_from(["FFT", "IFFT", "RFFT", "IRFFT"]))
    complex_shape = (*shape[:-1], shape[-1] // 2 + 1)
    c = "complex<f32>"
    in_t, out_t = {"FFT": (tensor(shape, c), tensor(shape, c)),
                   "IFFT": (tensor(shape, c), tensor(shape, c)),
                   "RFFT": (tensor(shape), tensor(complex_shape, c)),
                   "IRFFT": (tensor(complex_shape, c), tensor(shape))}[kind]
    op = (f'%0 = "stablehlo.fft"(%arg0) <{{fft_length = {i64s(lengths)}, fft_type = '
          f"#stablehlo<fft_type {kind}>}}> : ({in_t}) -> {out_t}")
    return single_op(op, [in_t], [out_t])


@st.composite
def batch_norm_inference_ops(draw) -> str:
    shape = draw(shapes)
    feature = draw(st.integers(0, len(shape) - 1))
    t, v = tensor(shape), tensor((shape[feature],))
    op = (f'%0 = "stablehlo.batch_norm_inference"(%arg0, %arg1, %arg2, %arg3, %arg4) '
          f"<{{epsilon = 1.0e-03 : f32, feature_index = {feature} : i64}}> : "
          f"({t}, {v}, {v}, {v}, {v}) -> {t}")
    return single_op(op, [t, v, v, v, v], [t])


@st.composite
def rng_bit_generator_ops(draw) -> str:
    state = tensor((2,), "ui64")
    out = tensor(draw(st.lists(st.integers(0, MAX_DIM), max_size=3)), "ui32")
    op = (f'%0:2 = "stablehlo.rng_bit_generator"(%arg0) <{{rng_algorithm = '
          f"#stablehlo<rng_algorithm DEFAULT>}}> : ({state}) -> ({state}, {out})")
    return single_op(op, [state], [state, out])


@st.composite
def bitcast_convert_ops(draw) -> str:
    shape = draw(st.lists(st.integers(0, MAX_DIM), max_size=3).map(tuple))
    narrow, wide, ratio = draw(st.sampled_from([("ui32", "ui64", 2), ("ui16", "ui64", 4),
                                                ("i8", "f32", 4), ("f32", "i32", 1)]))
    narrow_t = tensor(shape + ((ratio,) if ratio > 1 else ()), narrow)
    in_t, out_t = (narrow_t, tensor(shape, wide))
    if draw(st.booleans()):
        in_t, out_t = out_t, in_t
    op = f'%0 = "stablehlo.bitcast_convert"(%arg0) : ({in_t}) -> {out_t}'
    return single_op(op, [in_t], [out_t])


# -- gather / scatter ---------------------------------------------------------------------

@st.composite
def _gather_scatter_dims(draw):
    """Shapes and dimension numbers shared by gather and scatter: ``(input shape, indices
    shape, slices shape, index_vector_dim, offset dims, collapsed dims, input batching
    dims, indices batching dims, index map)``."""
    in_shape = draw(st.lists(st.integers(1, MAX_DIM), min_size=1, max_size=4).map(tuple))
    rank = len(in_shape)
    dims = list(range(rank))
    batching = sorted(draw(st.lists(st.sampled_from(dims), unique=True, max_size=2)))
    rest = [d for d in dims if d not in batching]
    collapsed = sorted(draw(st.lists(st.sampled_from(rest), unique=True)) if rest else [])
    index_map = draw(st.permutations(rest).flatmap(
        lambda p: st.integers(1, len(p)).map(lambda k: list(p[:k])))) if rest else []
    num_implicit = draw(st.integers(0, 2))
    num_batch = len(batching) + num_implicit
    implicit_vector = len(index_map) == 1 and draw(st.booleans())
    indices_rank = num_batch + (0 if implicit_vector else 1)
    index_vector_dim = indices_rank if implicit_vector else draw(st.integers(0, num_batch))
    batch_positions = [d for d in range(indices_rank) if d != index_vector_dim]
    indices_batching = draw(st.permutations(batch_positions))[:len(batching)]
    indices_shape = [0] * indices_rank
    for pos in batch_positions:
        indices_shape[pos] = draw(st.integers(1, MAX_DIM))
    for in_dim, pos in zip(batching, indices_batching):
        indices_shape[pos] = in_shape[in_dim]
    if not implicit_vector:
        indices_shape[index_vector_dim] = len(index_map)
    window = [d for d in dims if d not in batching and d not in collapsed]
    window_sizes = [draw(st.integers(1, in_shape[d])) for d in window]
    slices_rank = num_batch + len(window)
    offset_dims = sorted(draw(st.permutations(range(slices_rank)))[:len(window)])
    slices_shape, batch_iter, window_iter = [], iter(batch_positions), iter(window_sizes)
    for d in range(slices_rank):
        slices_shape.append(next(window_iter) if d in offset_dims
                            else indices_shape[next(batch_iter)])
    # gather: collapsed dims need slice size 1; scatter: update window must fit
    return (in_shape, tuple(indices_shape), tuple(slices_shape), index_vector_dim,
            offset_dims, collapsed, batching, indices_batching, index_map, window, window_sizes)


def _dims_attr(mnemonic: str, fields: list[tuple[str, list[int]]], ivd: int) -> str:
    parts = [f"{name} = [{', '.join(map(str, v))}]" for name, v in fields if v]
    return f"#stablehlo.{mnemonic}<{', '.join(parts)}, index_vector_dim = {ivd}>"


@st.composite
def gather_ops(draw) -> str:
    (in_shape, idx_shape, out_shape, ivd, offset, collapsed, batching, idx_batching,
     index_map, window, window_sizes) = draw(_gather_scatter_dims())
    slice_sizes = [1] * len(in_shape)
    for d, size in zip(window, window_sizes):
        slice_sizes[d] = size
    dims = _dims_attr("gather", [("offset_dims", offset), ("collapsed_slice_dims", collapsed),
                                 ("operand_batching_dims", batching),
                                 ("start_indices_batching_dims", idx_batching),
                                 ("start_index_map", index_map)], ivd)
    types = [tensor(in_shape), tensor(idx_shape, "i32")]
    op = (f'%0 = "stablehlo.gather"(%arg0, %arg1) <{{dimension_numbers = {dims}, '
          f"indices_are_sorted = false, slice_sizes = {i64s(slice_sizes)}}}> : "
          f"({', '.join(types)}) -> {tensor(out_shape)}")
    return single_op(op, types, [tensor(out_shape)])


UPDATE_BODIES = ("add", "multiply", "maximum", "minimum", "swapped_add", "mixed", "replace",
                 "and_i1")


@st.composite
def scatter_ops(draw) -> str:
    """Update computations: supported reductions (also with swapped operands, and ``and``
    on i1), a mix of two kinds, or a plain replacement (no reduction)."""
    (in_shape, idx_shape, upd_shape, ivd, window_dims, inserted, batching, idx_batching,
     index_map, _window, _sizes) = draw(_gather_scatter_dims())
    body = draw(st.sampled_from(UPDATE_BODIES))
    n = 1 if body == "and_i1" else draw(st.integers(1, 2))
    elt = "i1" if body == "and_i1" else "f32"
    scalar = tensor((), elt)
    params = [(f"%a{i}", scalar) for i in range(n)] + [(f"%b{i}", scalar) for i in range(n)]
    lines, rets = [], []
    for i in range(n):
        kind = {"swapped_add": "add", "mixed": ("add", "multiply")[i % 2],
                "and_i1": "and"}.get(body, body)
        lhs, rhs = (f"%b{i}", f"%a{i}") if body == "swapped_add" else (f"%a{i}", f"%b{i}")
        if kind == "replace":
            rets.append((f"%b{i}", scalar))
            continue
        lines.append(f"%r{i} = stablehlo.{kind} {lhs}, {rhs} : {scalar}")
        rets.append((f"%r{i}", scalar))
    dims = _dims_attr("scatter", [("update_window_dims", window_dims),
                                  ("inserted_window_dims", inserted),
                                  ("input_batching_dims", batching),
                                  ("scatter_indices_batching_dims", idx_batching),
                                  ("scatter_dims_to_operand_dims", index_map)], ivd)
    ins = [tensor(in_shape, elt)] * n
    types = [*ins, tensor(idx_shape, "i32"), *[tensor(upd_shape, elt)] * n]
    operands = ", ".join(f"%arg{i}" for i in range(len(types)))
    res = f"%0:{n}" if n > 1 else "%0"
    op = (f'{res} = "stablehlo.scatter"({operands}) <{{indices_are_sorted = false, '
          f"scatter_dimension_numbers = {dims}, unique_indices = false}}> "
          f"{region(params, lines, rets)} : ({', '.join(types)}) -> ({', '.join(ins)})")
    return single_op(op, types, ins)


FAMILY_OPS = {
    "gather": gather_ops(), "scatter": scatter_ops(), "slice": slice_ops(),
    "dynamic_slice": dynamic_slice_ops(), "dynamic_update_slice": dynamic_update_slice_ops(),
    "pad": pad_ops(), "reverse": reverse_ops(), "reduce": reduce_ops(),
    "reduce_window": reduce_window_ops(), "select_and_scatter": select_and_scatter_ops(),
    "sort": sort_ops(), "cholesky": cholesky_ops(),
    "triangular_solve": triangular_solve_ops(), "fft": fft_ops(),
    "batch_norm_inference": batch_norm_inference_ops(),
    "rng_bit_generator": rng_bit_generator_ops(), "bitcast_convert": bitcast_convert_ops(),
}
"""One strategy per op of these families, keyed by the op name without ``stablehlo.``."""
