"""gather, scatter and dynamic_gather: the spec's examples and edge cases (batching dims,
``index_vector_dim == rank``, clamped gather starts, skipped out-of-bounds scatter updates,
updates of one element applied in order, variadic scatter, inputs never modified),
hypothesis properties against loops that follow the spec's formulas index by index, and
varying operands/indices against running each process alone.

:func:`random_gather` and :func:`random_scatter` draw valid random configurations (also
used by the oracle test); :func:`gather_text`/:func:`scatter_text` print them as modules.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shardy_ref.execute import InterpreterError, run
from shardy_ref.execute.registry import load_kernels
from tests.execute.test_shape import ETYPES, check_varying, generic, random_array, same, ttype

INDEX_TYPES = ["i8", "i32", "i64", "ui8", "ui32"]


def dims(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


# -- random configurations ------------------------------------------------------------------
@dataclass
class Config:
    """One gather (``kind == "gather"``) or scatter configuration, with the fields of the
    spec's dimension numbers; for scatter, ``offset_dims``/``collapsed`` mean
    ``update_window_dims``/``inserted_window_dims`` and ``result`` is the updates' shape."""

    operand: list[int]
    indices: list[int]
    offset_dims: list[int]
    collapsed: list[int]
    operand_batching: list[int]
    indices_batching: list[int]
    index_map: list[int]
    index_vector_dim: int
    slice_sizes: list[int]
    result: list[int]


def _layout(rng: random.Random, operand: list[int], empty_index: bool) -> dict:
    rank = len(operand)
    axes = list(range(rank))
    rng.shuffle(axes)
    nbatch = rng.randint(0, min(1, rank - (0 if empty_index else 1)))
    batching = sorted(axes[:nbatch])
    rest = axes[nbatch:]
    collapsed = sorted(d for d in rest if rng.random() < 0.4)
    candidates = [d for d in range(rank) if d not in batching]
    rng.shuffle(candidates)
    index_map = candidates[:rng.randint(0 if empty_index else 1, len(candidates))]
    # start_indices' dims other than index_vector_dim: free batch dims + batching dims
    free = [rng.randint(0, 3) for _ in range(rng.randint(0, 2))]
    batch_dims = [("free", n) for n in free] + [("batch", d) for d in batching]
    rng.shuffle(batch_dims)
    k = len(index_map)
    ivd = len(batch_dims) if k == 1 and rng.random() < 0.3 else rng.randint(0, len(batch_dims))
    full = list(batch_dims)
    if ivd < len(batch_dims) or k != 1:
        full.insert(ivd, ("vector", k))
    shape = [operand[x] if kind == "batch" else x for kind, x in full]
    indices_batching = [full.index(("batch", d)) for d in batching]
    return {"batching": batching, "collapsed": collapsed, "index_map": index_map,
            "ivd": ivd, "indices": shape, "indices_batching": indices_batching,
            "batch_sizes": [operand[x] if kind == "batch" else x for kind, x in batch_dims]}


def random_gather(rng: random.Random, empty_index: bool = True) -> Config:
    """A valid gather; ``empty_index=False`` avoids index vectors of size 0 (an empty
    ``start_index_map``), on which the reference interpreter crashes."""
    operand = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    lay = _layout(rng, operand, empty_index)
    skipped = set(lay["collapsed"]) | set(lay["batching"])
    sizes = [1 if d in skipped else rng.randint(0, n) for d, n in enumerate(operand)]
    offset_sizes = [k for d, k in enumerate(sizes) if d not in skipped]
    rank = len(lay["batch_sizes"]) + len(offset_sizes)
    offset_dims = sorted(rng.sample(range(rank), len(offset_sizes)))
    result, b, o = [], iter(lay["batch_sizes"]), iter(offset_sizes)
    for a in range(rank):
        result.append(next(o) if a in offset_dims else next(b))
    return Config(operand, lay["indices"], offset_dims, lay["collapsed"], lay["batching"],
                  lay["indices_batching"], lay["index_map"], lay["ivd"], sizes, result)


def random_scatter(rng: random.Random, empty_index: bool = True) -> Config:
    operand = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    lay = _layout(rng, operand, empty_index)
    skipped = set(lay["collapsed"]) | set(lay["batching"])
    window = [rng.randint(0, n) for d, n in enumerate(operand) if d not in skipped]
    rank = len(lay["batch_sizes"]) + len(window)
    window_dims = sorted(rng.sample(range(rank), len(window)))
    updates, b, w = [], iter(lay["batch_sizes"]), iter(window)
    for a in range(rank):
        updates.append(next(w) if a in window_dims else next(b))
    return Config(operand, lay["indices"], window_dims, lay["collapsed"], lay["batching"],
                  lay["indices_batching"], lay["index_map"], lay["ivd"], [], updates)


def random_indices(rng: np.random.Generator, cfg: Config, it: str) -> np.ndarray:
    """Start indices mostly in range, some beyond either end (clamped or skipped)."""
    hi = max(cfg.operand) + 2
    lo = 0 if it.startswith("ui") else -2
    return rng.integers(lo, hi + 1, cfg.indices).astype(ETYPES[it])


def gather_text(cfg: Config, et: str, it: str, dynamic: bool = False) -> str:
    dn = (f"#stablehlo.gather<offset_dims = {dims(cfg.offset_dims)}, "
          f"collapsed_slice_dims = {dims(cfg.collapsed)}, "
          f"operand_batching_dims = {dims(cfg.operand_batching)}, "
          f"start_indices_batching_dims = {dims(cfg.indices_batching)}, "
          f"start_index_map = {dims(cfg.index_map)}, "
          f"index_vector_dim = {cfg.index_vector_dim}>")
    types = [ttype(cfg.operand, et), ttype(cfg.indices, it)]
    if dynamic:
        return generic("stablehlo.dynamic_gather", [*types, ttype((len(cfg.operand),), "i64")],
                       ttype(cfg.result, et), f"dimension_numbers = {dn}")
    sizes = ", ".join(map(str, cfg.slice_sizes))
    return generic("stablehlo.gather", types, ttype(cfg.result, et),
                   f"dimension_numbers = {dn}, slice_sizes = array<i64{': ' if sizes else ''}"
                   f"{sizes}>, indices_are_sorted = false")


REGIONS = {  # name -> (body lines for one input, Python update function)
    "add": ("%r = stablehlo.add %x0, %y0 : {t}", lambda a, b: a + b),
    "max": ("%r = stablehlo.maximum %x0, %y0 : {t}", max),
    "replace": ("", lambda a, b: b),
    "keep": ("", lambda a, b: a),
    "sub": ("%r = stablehlo.subtract %x0, %y0 : {t}", lambda a, b: a - b),
}


def region_available(name: str, et: str) -> bool:
    """Whether running the region needs no kernel outside this family that is missing
    (the ufunc fast path covers add/max on NumPy's own dtypes)."""
    op = {"add": "stablehlo.add", "max": "stablehlo.maximum",
          "sub": "stablehlo.subtract"}.get(name)
    native = ETYPES[et].str == np.dtype(ETYPES[et].str).str and et not in ("bf16", "i4")
    return op is None or op in load_kernels() or (native and name in ("add", "max"))


def scatter_text(cfg: Config, ets: list[str], it: str, region: str) -> str:
    n = len(ets)
    dn = (f"#stablehlo.scatter<update_window_dims = {dims(cfg.offset_dims)}, "
          f"inserted_window_dims = {dims(cfg.collapsed)}, "
          f"input_batching_dims = {dims(cfg.operand_batching)}, "
          f"scatter_indices_batching_dims = {dims(cfg.indices_batching)}, "
          f"scatter_dims_to_operand_dims = {dims(cfg.index_map)}, "
          f"index_vector_dim = {cfg.index_vector_dim}>")
    scalars = [ttype((), et) for et in ets]
    args = ", ".join([f"%x{i}: {t}" for i, t in enumerate(scalars)]
                     + [f"%y{i}: {t}" for i, t in enumerate(scalars)])
    body, _ = REGIONS[region]
    lines = [f"  ^bb0({args}):"]
    # The region's op combines the first input and update; the others are replaced.
    if region in ("replace", "keep"):
        first = "%y0" if region == "replace" else "%x0"
    else:
        lines.append("    " + body.format(t=scalars[0]))
        first = "%r"
    rets = [first] + [f"%y{i}" for i in range(1, n)]
    lines.append(f"    stablehlo.return {', '.join(rets)} : {', '.join(scalars)}")
    operands = [ttype(cfg.operand, et) for et in ets] + [ttype(cfg.indices, it)] + \
        [ttype(cfg.result, et) for et in ets]
    results = [ttype(cfg.operand, et) for et in ets]
    result = results[0] if n == 1 else "(" + ", ".join(results) + ")"
    return generic("stablehlo.scatter", operands, result,
                   f"scatter_dimension_numbers = {dn}, indices_are_sorted = false, "
                   "unique_indices = false", "\n".join(lines))


# -- the spec's formulas, index by index ----------------------------------------------------
def _start_vector(indices: np.ndarray, batch_index, ivd: int) -> list[int]:
    if ivd < indices.ndim:
        idx = list(batch_index)
        idx.insert(ivd, slice(None))
        return [int(v) for v in indices[tuple(idx)]]
    return [int(indices[tuple(batch_index)])]


def _batching_index(cfg: Config, batch_index, d: int) -> int:
    if d not in cfg.operand_batching:
        return 0
    d_start = cfg.indices_batching[cfg.operand_batching.index(d)]
    return batch_index[d_start - (0 if d_start < cfg.index_vector_dim else 1)]


def naive_gather(cfg: Config, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    out = np.empty(cfg.result, dtype=x.dtype)
    batch_dims = [d for d in range(len(cfg.result)) if d not in cfg.offset_dims]
    for ri in np.ndindex(*cfg.result):
        bi = [ri[d] for d in batch_dims]
        start = _start_vector(indices, bi, cfg.index_vector_dim)
        offset = iter(ri[d] for d in cfg.offset_dims)
        src = []
        for d, n in enumerate(x.shape):
            s = 0
            if d in cfg.index_map:
                s = min(max(start[cfg.index_map.index(d)], 0), n - cfg.slice_sizes[d])
            skipped = d in cfg.collapsed or d in cfg.operand_batching
            src.append(s + _batching_index(cfg, bi, d) + (0 if skipped else next(offset)))
        out[ri] = x[tuple(src)]
    return out


def naive_scatter(cfg: Config, xs: list, indices: np.ndarray, updates: list,
                  fns: list) -> list:
    """Sequential updates in row-major order of the update index, skipping any whose
    result index is out of bounds."""
    outs = [x.copy() for x in xs]
    scatter_dims = [d for d in range(len(cfg.result)) if d not in cfg.offset_dims]
    for ui in np.ndindex(*cfg.result):
        si = [ui[d] for d in scatter_dims]
        start = _start_vector(indices, si, cfg.index_vector_dim)
        window = iter(ui[d] for d in cfg.offset_dims)
        dst = []
        for d in range(len(cfg.operand)):
            s = start[cfg.index_map.index(d)] if d in cfg.index_map else 0
            skipped = d in cfg.collapsed or d in cfg.operand_batching
            dst.append(s + _batching_index(cfg, si, d) + (0 if skipped else next(window)))
        if not all(0 <= i < n for i, n in zip(dst, cfg.operand, strict=True)):
            continue
        cur = [o[tuple(dst)] for o in outs]
        new = [fn(c, u[ui]) for fn, c, u in zip(fns, cur, updates, strict=True)]
        for o, v in zip(outs, new, strict=True):
            o[tuple(dst)] = v
    return outs


# -- unit tests -----------------------------------------------------------------------------
def test_index_vector_dim_equal_to_rank_and_clamping():
    x = np.arange(12, dtype=np.int32).reshape(4, 3)
    text = generic("stablehlo.gather", [ttype((4, 3), "i32"), ttype((3,), "i64")],
                   ttype((3, 2, 3), "i32"),
                   "dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], "
                   "start_index_map = [0], index_vector_dim = 1>, "
                   "slice_sizes = array<i64: 2, 3>")
    (out,) = run(text, x, np.array([-5, 1, 9]))
    assert out.tolist() == [x[0:2].tolist(), x[1:3].tolist(), x[2:4].tolist()]


def test_scatter_applies_updates_of_one_element_in_order_and_skips_out_of_bounds():
    cfg = Config([4], [5, 1], [], [0], [], [], [0], 1, [], [5])
    text = scatter_text(cfg, ["i64"], "i32", "replace")
    idx = np.array([[1], [3], [1], [7], [-1]], np.int32)
    upd = np.array([10, 20, 30, 40, 50])
    x = np.zeros(4, np.int64)
    (out,) = run(text, x, idx, upd)
    assert out.tolist() == [0, 30, 0, 20] and x.tolist() == [0, 0, 0, 0]


def test_partly_out_of_bounds_windows_update_their_in_bounds_elements():
    cfg = Config([5], [2, 1], [1], [], [], [], [0], 1, [], [2, 3])
    text = scatter_text(cfg, ["i32"], "i64", "add")
    (out,) = run(text, np.zeros(5, np.int32), np.array([[3], [-1]]),
                 np.array([[1, 2, 3], [4, 5, 6]], np.int32))
    assert out.tolist() == [5, 6, 0, 1, 2]


def test_variadic_scatter_with_different_element_types():
    cfg = Config([3], [4, 1], [], [0], [], [], [0], 1, [], [4])
    text = scatter_text(cfg, ["f32", "i8"], "ui32", "replace")
    idx = np.array([[2], [0], [2], [5]], np.uint32)
    a, b = run(text, np.zeros(3, np.float32), np.zeros(3, np.int8), idx,
               np.array([1, 2, 3, 4], np.float32), np.array([5, 6, 7, 8], np.int8))
    assert a.tolist() == [2, 0, 3] and b.tolist() == [6, 0, 7]
    assert a.dtype == np.float32 and b.dtype == np.int8


def test_scatter_of_an_integer_sum_wraps_around():
    cfg = Config([2], [3, 1], [], [0], [], [], [0], 1, [], [3])
    (out,) = run(scatter_text(cfg, ["i8"], "i32", "add"), np.array([100, 0], np.int8),
                 np.array([[0], [0], [1]], np.int32), np.array([20, 10, 5], np.int8))
    assert out.tolist() == [-126, 5]


def test_mismatched_updates_are_an_error_not_a_crash():
    cfg = Config([3], [2, 1], [], [0], [], [], [0], 1, [], [2])
    text = scatter_text(cfg, ["i32"], "i32", "add").replace("tensor<2xi32>", "tensor<3xi32>")
    with pytest.raises(InterpreterError, match="do not match"):
        run(text, np.zeros(3, np.int32), np.zeros((2, 1), np.int32), np.zeros(3, np.int32))


def test_dynamic_gather_reads_its_slice_sizes():
    rng = random.Random(7)
    cfg = random_gather(rng)
    while not cfg.index_map:
        cfg = random_gather(rng)
    g = np.random.default_rng(7)
    x = random_array(g, cfg.operand, "f32")
    idx = random_indices(g, cfg, "i32")
    (out,) = run(gather_text(cfg, "f32", "i32", dynamic=True), x, idx,
                 np.array(cfg.slice_sizes, np.int64))
    assert same(out, naive_gather(cfg, x, idx))


# -- properties -----------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), et=st.sampled_from(["i1", "i32", "ui64", "bf16",
                                                            "f32", "complex<f32>"]),
       it=st.sampled_from(INDEX_TYPES))
def test_gather_matches_the_spec(seed, et, it):
    cfg = random_gather(random.Random(seed))
    rng = np.random.default_rng(seed)
    x = random_array(rng, cfg.operand, et)
    idx = random_indices(rng, cfg, it)
    (out,) = run(gather_text(cfg, et, it), x, idx)
    assert same(out, naive_gather(cfg, x, idx))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), et=st.sampled_from(["i32", "i8", "f32", "f64", "bf16"]),
       it=st.sampled_from(INDEX_TYPES), region=st.sampled_from(sorted(REGIONS)))
def test_scatter_matches_the_spec(seed, et, it, region):
    assume(region_available(region, et))  # else it needs a kernel not yet available
    cfg = random_scatter(random.Random(seed))
    rng = np.random.default_rng(seed)
    x = random_array(rng, cfg.operand, et)
    idx = random_indices(rng, cfg, it)
    u = random_array(rng, cfg.result, et)
    before = x.copy()
    (out,) = run(scatter_text(cfg, [et], it, region), x, idx, u)
    fn = REGIONS[region][1]
    with np.errstate(over="ignore"):
        (want,) = naive_scatter(cfg, [x], idx, [u], [lambda a, b: x.dtype.type(fn(a, b))])
    assert same(out, want) and same(x, before)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), region=st.sampled_from(["keep", "add"]))
def test_variadic_scatter_matches_the_spec(seed, region):
    assume(region_available(region, "bf16"))  # else it needs a kernel not yet available
    cfg = random_scatter(random.Random(seed))
    rng = np.random.default_rng(seed)
    xs = [random_array(rng, cfg.operand, et) for et in ("i64", "f32")]
    idx = random_indices(rng, cfg, "i32")
    us = [random_array(rng, cfg.result, et) for et in ("i64", "f32")]
    outs = run(scatter_text(cfg, ["i64", "f32"], "i32", region), *xs, idx, *us)
    want = naive_scatter(cfg, xs, idx, us, [REGIONS[region][1], lambda a, b: b])
    assert all(same(o, w) for o, w in zip(outs, want, strict=True))


# -- varying operands -----------------------------------------------------------------------
GATHER_EXAMPLE = Config([3, 4, 2], [2, 3, 2], [2, 3], [0], [], [], [1, 0], 2, [1, 2, 2],
                        [2, 3, 2, 2])


@pytest.mark.parametrize("pattern", list(itertools.product([False, True], repeat=2)))
def test_gather_with_varying_operand_or_indices(pattern):
    rng = np.random.default_rng(8)
    for seed in range(6):
        cfg = GATHER_EXAMPLE if seed == 0 else random_gather(random.Random(seed))
        x = random_array(rng, ([3] if pattern[0] else []) + cfg.operand, "f32")
        idx = rng.integers(-2, 6, ([3] if pattern[1] else []) + cfg.indices).astype(np.int32)
        check_varying(gather_text(cfg, "f32", "i32"), "stablehlo.gather",
                      [(x, pattern[0]), (idx, pattern[1])])


@pytest.mark.parametrize("pattern", list(itertools.product([False, True], repeat=3)))
def test_scatter_with_varying_inputs_indices_or_updates(pattern):
    rng = np.random.default_rng(9)
    for seed in range(6):
        cfg = random_scatter(random.Random(100 + seed))
        for region in ("add", "replace"):
            x = random_array(rng, ([3] if pattern[0] else []) + cfg.operand, "i32")
            idx = rng.integers(-1, 5, ([3] if pattern[1] else []) + cfg.indices)
            u = random_array(rng, ([3] if pattern[2] else []) + cfg.result, "i32")
            before = x.copy()
            check_varying(scatter_text(cfg, ["i32"], "i64", region), "stablehlo.scatter",
                          [(x, pattern[0]), (idx, pattern[1]), (u, pattern[2])])
            assert same(x, before)


def test_varying_gather_and_scatter_never_loop_over_processes(monkeypatch):
    from shardy_ref.execute.context import Context

    def no_loop(self, index):
        raise AssertionError("ran per process")
    monkeypatch.setattr(Context, "unbatched", no_loop)
    rng = np.random.default_rng(12)
    cfg = GATHER_EXAMPLE
    x = random_array(rng, [3, *cfg.operand], "f32")
    idx = rng.integers(-1, 5, [3, *cfg.indices]).astype(np.int32)
    check_varying(gather_text(cfg, "f32", "i32"), "stablehlo.gather", [(x, True), (idx, True)])
    cfg = Config([4, 3], [5, 1], [1], [0], [], [], [0], 1, [], [5, 3])
    for region in ("add", "sub"):
        check_varying(scatter_text(cfg, ["f32"], "i32", region), "stablehlo.scatter",
                      [(random_array(rng, [3, 4, 3], "f32"), True),
                       (rng.integers(0, 4, (3, 5, 1)).astype(np.int32), True),
                       (random_array(rng, [5, 3], "f32"), False)])


def test_gather_of_partition_shards_in_a_parallel_program():
    """Each partition gathers rows by its own indices (picked with partition_id): the
    vectorized run, the one-thread-per-process run and the spec's formula agree."""
    from shardy_ref.execute import Interpreter
    from shardy_ref.parser import parse_module

    body = """
    func.func @f() -> tensor<2x3xi32> {
      %x = stablehlo.iota dim = 0 : tensor<5x3xi32>
      %all = stablehlo.constant dense<[[4, 0], [1, 9], [-3, 2]]> : tensor<3x2xi32>
      %pid = stablehlo.partition_id : tensor<ui32>
      %z = stablehlo.constant dense<0> : tensor<ui32>
      %s = stablehlo.dynamic_slice %all, %pid, %z, sizes = [1, 2]
          : (tensor<3x2xi32>, tensor<ui32>, tensor<ui32>) -> tensor<1x2xi32>
      %i = stablehlo.reshape %s : (tensor<1x2xi32>) -> tensor<2xi32>
      %g = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<
          offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0],
          index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}
          : (tensor<5x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
      func.return %g : tensor<2x3xi32>
    }"""
    types = ", ".join(["tensor<2x3xi32>"] * 3)
    text = body + f"""
    func.func @main() -> ({types}) {{
      %r:3 = "interpreter.run_parallel"() {{programs = [[@f, @f, @f]]}} : () -> ({types})
      func.return %r#0, %r#1, %r#2 : {types}
    }}"""
    vec = Interpreter(parse_module(text)).run("main")
    threads = Interpreter(parse_module(text), vectorize=False).run("main")
    rows = [[4, 0], [1, 4], [0, 2]]  # starts clamped into [0, 4]
    for a, b, r in zip(vec, threads, rows, strict=True):
        assert same(a.data, b.data) and a.data.tolist() == [[r[0]] * 3, [r[1]] * 3]
