"""Slicing kernels (slice, pad, dynamic_slice, dynamic_update_slice, dynamic_pad,
real_dynamic_slice): the spec's edge cases (strides, negative and interior padding, start
indices clamped into range for every integer index type), hypothesis properties against
index-by-index formulas, and varying operands and start indices (each process slicing at
its own offset) against running each process alone."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter, InterpreterError, run
from shardy_ref.parser import parse_module
from tests.execute.test_shape import (
    ETYPES,
    MOVE_TYPES,
    check_varying,
    generic,
    one,
    random_array,
    same,
    ttype,
)

INDEX_TYPES = ["i8", "i32", "i64", "ui8", "ui32", "ui64"]


def arr(values) -> str:
    return f"array<i64{': ' if len(values) else ''}{', '.join(map(str, values))}>"


# -- independent formulas -------------------------------------------------------------------
def naive_slice(x, start, limit, strides):
    shape = [max(0, -(-(e - s) // st)) for s, e, st in zip(start, limit, strides, strict=True)]
    out = np.empty(shape, dtype=x.dtype)
    for idx in np.ndindex(*shape):
        out[idx] = x[tuple(s + i * st for s, i, st in zip(start, idx, strides, strict=True))]
    return out


def pad_shape(shape, low, high, interior):
    return [lo + hi + n + max(n - 1, 0) * it
            for n, lo, hi, it in zip(shape, low, high, interior, strict=True)]


def naive_pad(x, value, low, high, interior):
    """The spec: operand index i lands at low + i * (interior + 1) when in bounds."""
    shape = pad_shape(x.shape, low, high, interior)
    out = np.full(shape, value, dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        dst = tuple(lo + i * (it + 1) for lo, i, it in zip(low, idx, interior, strict=True))
        if all(0 <= d < n for d, n in zip(dst, shape, strict=True)):
            out[dst] = x[idx]
    return out


def clamp_starts(starts, shape, sizes):
    return [min(max(int(s), 0), n - k) for s, n, k in zip(starts, shape, sizes, strict=True)]


def naive_dynamic_slice(x, starts, sizes):
    s = clamp_starts(starts, x.shape, sizes)
    out = np.empty(sizes, dtype=x.dtype)
    for idx in np.ndindex(*sizes):
        out[idx] = x[tuple(a + i for a, i in zip(s, idx, strict=True))]
    return out


def naive_dynamic_update_slice(x, update, starts):
    s = clamp_starts(starts, x.shape, update.shape)
    out = x.copy()
    for idx in np.ndindex(*update.shape):
        out[tuple(a + i for a, i in zip(s, idx, strict=True))] = update[idx]
    return out


def ds_text(shape, sizes, et, it):
    return generic("stablehlo.dynamic_slice", [ttype(shape, et)] + [ttype((), it)] * len(shape),
                   ttype(sizes, et), f"slice_sizes = {arr(sizes)}")


def dus_text(shape, usize, et, it):
    return generic("stablehlo.dynamic_update_slice",
                   [ttype(shape, et), ttype(usize, et)] + [ttype((), it)] * len(shape),
                   ttype(shape, et))


# -- slice ----------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_slice_with_strides_matches_the_spec(shape, data, et, seed):
    start, limit, strides = [], [], []
    for n in shape:
        s = data.draw(st.integers(0, n))
        start.append(s)
        limit.append(data.draw(st.integers(s, n)))
        strides.append(data.draw(st.integers(1, 3)))
    x = random_array(np.random.default_rng(seed), shape, et)
    want = naive_slice(x, start, limit, strides)
    text = generic("stablehlo.slice", [ttype(shape, et)], ttype(want.shape, et),
                   f"start_indices = {arr(start)}, limit_indices = {arr(limit)}, "
                   f"strides = {arr(strides)}")
    out = one(text, x)
    assert same(out, want) and np.shares_memory(out, x) == (out.size > 0 and x.size > 0)


# -- pad ------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_pad_with_negative_and_interior_padding_matches_the_spec(shape, data, et, seed):
    low, high, interior = [], [], []
    for n in shape:
        it = data.draw(st.integers(0, 2))
        full = n + max(n - 1, 0) * it
        lo = data.draw(st.integers(-full, 3))
        hi = data.draw(st.integers(-(full + lo) if full + lo > 0 else 0, 3))
        low.append(lo)
        high.append(hi)
        interior.append(it)
    rng = np.random.default_rng(seed)
    x = random_array(rng, shape, et)
    v = random_array(rng, (), et)
    want = naive_pad(x, v, low, high, interior)
    text = generic("stablehlo.pad", [ttype(shape, et), ttype((), et)], ttype(want.shape, et),
                   f"edge_padding_low = {arr(low)}, edge_padding_high = {arr(high)}, "
                   f"interior_padding = {arr(interior)}")
    assert same(one(text, x, v), want)


def test_pad_example_of_the_spec():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    text = generic("stablehlo.pad", [ttype((2, 3), "i32"), ttype((), "i32")],
                   ttype((5, 9), "i32"), "edge_padding_low = array<i64: 0, 1>, "
                   "edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 1, 2>")
    assert one(text, x, np.int32(0)).tolist() == [
        [0, 1, 0, 0, 2, 0, 0, 3, 0], [0] * 9, [0, 4, 0, 0, 5, 0, 0, 6, 0], [0] * 9, [0] * 9]


def test_pad_that_crops_everything():
    text = generic("stablehlo.pad", [ttype((3,), "i32"), ttype((), "i32")], ttype((1,), "i32"),
                   "edge_padding_low = array<i64: -3>, edge_padding_high = array<i64: -1>, "
                   "interior_padding = array<i64: 1>")
    assert one(text, np.array([1, 2, 3], np.int32), np.int32(9)).tolist() == [9]


def test_dynamic_pad_and_real_dynamic_slice():
    text = """
    func.func @main(%x: tensor<5xi64>, %lo: tensor<1xi32>, %st: tensor<1xi64>)
        -> (tensor<?xi64>, tensor<?xi64>) {
      %v = stablehlo.constant dense<-1> : tensor<i64>
      %z = stablehlo.constant dense<1> : tensor<1xi32>
      %p = stablehlo.dynamic_pad %x, %v, %lo, %lo, %z
          : (tensor<5xi64>, tensor<i64>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>)
          -> tensor<?xi64>
      %a = stablehlo.constant dense<1> : tensor<1xi64>
      %b = stablehlo.constant dense<5> : tensor<1xi64>
      %s = stablehlo.real_dynamic_slice %x, %a, %b, %st
          : (tensor<5xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
      func.return %p, %s : tensor<?xi64>, tensor<?xi64>
    }"""
    x = np.arange(5)
    p, s = run(text, x, np.array([-2], np.int32), np.array([3]))
    assert p.tolist() == [1, -1, 2, -1, 3] == naive_pad(x, -1, [-2], [-2], [1]).tolist()
    assert s.tolist() == [1, 4]
    with pytest.raises(InterpreterError, match="out of range"):
        run(text.replace("dense<5> : tensor<1xi64>", "dense<9> : tensor<1xi64>"),
            x, np.array([0], np.int32), np.array([1]))


# -- dynamic_slice / dynamic_update_slice ---------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), it=st.sampled_from(INDEX_TYPES),
       seed=st.integers(0, 2**16))
def test_dynamic_slice_and_update_clamp_their_starts(shape, data, et, it, seed):
    rng = np.random.default_rng(seed)
    sizes = [data.draw(st.integers(0, n)) for n in shape]
    lo = -10 if it.startswith("i") else 0
    hi = 127 if it in ("i8", "ui8") else 300
    starts = [data.draw(st.integers(lo, hi)) for _ in shape]
    idx = [np.array(s).astype(ETYPES[it]) for s in starts]
    x = random_array(rng, shape, et)
    assert same(one(ds_text(shape, sizes, et, it), x, *idx), naive_dynamic_slice(x, starts,
                                                                                  sizes))
    u = random_array(rng, sizes, et)
    before = x.copy()
    got = one(dus_text(shape, sizes, et, it), x, u, *idx)
    assert same(got, naive_dynamic_update_slice(x, u, starts)) and same(x, before)


def test_unsigned_start_indices_keep_their_unsigned_value():
    """ui8 200 clamps to the largest start (the spec); the reference interpreter reads it
    sign-extended as -56 and clamps to 0 (a known deviation, see the report)."""
    x = np.arange(5, dtype=np.int64)
    assert one(ds_text((5,), (2,), "i64", "ui8"), x, np.uint8(200)).tolist() == [3, 4]
    assert one(ds_text((5,), (2,), "i64", "ui64"), x,
               np.uint64(2**64 - 1)).tolist() == [3, 4]
    assert one(ds_text((5,), (2,), "i64", "i8"), x, np.int8(-100)).tolist() == [0, 1]


@pytest.mark.parametrize(("it", "start", "want"), [("i4", -8, 0), ("i4", 7, 3), ("ui4", 15, 3),
                                                  ("i16", 2, 2), ("ui32", 1, 1)])
def test_narrow_and_wide_index_types(it, start, want):
    x = np.arange(5, dtype=np.float32)
    out = one(ds_text((5,), (2,), "f32", it), x, np.array(start).astype(ETYPES[it]))
    assert out.tolist() == [want, want + 1]


@pytest.mark.parametrize("pattern", list(itertools.product([False, True], repeat=3)))
def test_dynamic_slice_with_per_process_offsets(pattern):
    """operand, first start, second start: each uniform or varying over 4 processes."""
    rng = np.random.default_rng(3)
    x = random_array(rng, (4, 5, 6) if pattern[0] else (5, 6), "f32")
    starts = [rng.integers(-2, 7, 4).astype(np.int32) if v else np.int32(rng.integers(0, 5))
              for v in pattern[1:]]
    text = ds_text((5, 6), (2, 3), "f32", "i32")
    (out,) = check_varying(text, "stablehlo.dynamic_slice",
                           [(x, pattern[0]), *zip(starts, pattern[1:], strict=True)],
                           n=4)
    assert out.batch == (1 if any(pattern) else 0)


@pytest.mark.parametrize("pattern", list(itertools.product([False, True], repeat=4)))
def test_dynamic_update_slice_with_per_process_offsets(pattern):
    rng = np.random.default_rng(4)
    x = random_array(rng, (3, 4, 5) if pattern[0] else (4, 5), "i64")
    u = random_array(rng, (3, 2, 3) if pattern[1] else (2, 3), "i64")
    starts = [rng.integers(-2, 7, 3).astype(np.int32) if v else np.int32(rng.integers(-2, 5))
              for v in pattern[2:]]
    before = x.copy()
    text = dus_text((4, 5), (2, 3), "i64", "i32")
    check_varying(text, "stablehlo.dynamic_update_slice",
                  [(x, pattern[0]), (u, pattern[1]), *zip(starts, pattern[2:], strict=True)])
    assert same(x, before)


def test_varying_offsets_never_loop_over_processes(monkeypatch):
    """Per-process starts are served by one indexing operation for all processes: the
    per-process fallback (Context.unbatched) is never entered."""
    from shardy_ref.execute.context import Context

    def no_loop(self, index):
        raise AssertionError("ran per process")
    monkeypatch.setattr(Context, "unbatched", no_loop)
    rng = np.random.default_rng(11)
    x = random_array(rng, (3, 6, 5), "f32")
    s = rng.integers(0, 5, 3).astype(np.int32)
    z = np.int32(1)
    check_varying(ds_text((6, 5), (2, 5), "f32", "i32"), "stablehlo.dynamic_slice",
                  [(x, True), (s, True), (z, False)])
    check_varying(dus_text((6, 5), (2, 3), "f32", "i32"), "stablehlo.dynamic_update_slice",
                  [(x, True), (random_array(rng, (2, 3), "f32"), False), (z, False),
                   (s, True)])


def test_varying_starts_that_agree_give_a_view():
    x = random_array(np.random.default_rng(5), (5, 6), "f32")
    s = np.full(3, 2, np.int32)
    (out,) = check_varying(ds_text((5, 6), (2, 2), "f32", "i32"), "stablehlo.dynamic_slice",
                           [(x, False), (s, True), (s, True)])
    assert out.batch == 0 and np.shares_memory(out.data, x)


def test_pad_and_slice_with_varying_values():
    text = generic("stablehlo.pad", [ttype((2, 3), "f32"), ttype((), "f32")],
                   ttype((4, 4), "f32"), "edge_padding_low = array<i64: 1, -1>, "
                   "edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 1>")
    rng = np.random.default_rng(6)
    for ox, ov in itertools.product([False, True], repeat=2):
        x = random_array(rng, (3, 2, 3) if ox else (2, 3), "f32")
        v = random_array(rng, (3,) if ov else (), "f32")
        check_varying(text, "stablehlo.pad", [(x, ox), (v, ov)])
    text = generic("stablehlo.slice", [ttype((4, 6), "f32")], ttype((2, 2), "f32"),
                   "start_indices = array<i64: 1, 1>, limit_indices = array<i64: 3, 6>, "
                   "strides = array<i64: 1, 3>")
    check_varying(text, "stablehlo.slice", [(random_array(rng, (3, 4, 6), "f32"), True)])


def test_real_dynamic_slice_with_per_process_starts_runs_per_process():
    text = generic("stablehlo.real_dynamic_slice",
                   [ttype((6,), "i64")] + [ttype((1,), "i64")] * 3, ttype((2,), "i64"))
    x = np.arange(6)
    starts = np.array([[0], [1], [2]])
    (out,) = check_varying(text, "stablehlo.real_dynamic_slice",
                           [(x, False), (starts, True), (starts + 2, True),
                            (np.array([1]), False)])
    assert out.data.tolist() == [[0, 1], [1, 2], [2, 3]]


def test_partition_id_offsets_in_a_parallel_program():
    """Each partition slices its shard of a replicated array and writes it back shifted:
    the vectorized run and the one-thread-per-process run agree."""
    body = """
    func.func @f() -> tensor<4x2xf32> {
      %x = stablehlo.iota dim = 0 : tensor<8x2xf32>
      %pid = stablehlo.partition_id : tensor<ui32>
      %s = stablehlo.dynamic_slice %x, %pid, %pid, sizes = [2, 2]
          : (tensor<8x2xf32>, tensor<ui32>, tensor<ui32>) -> tensor<2x2xf32>
      %z = stablehlo.constant dense<0.0> : tensor<4x2xf32>
      %u = stablehlo.dynamic_update_slice %z, %s, %pid, %pid
          : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<ui32>, tensor<ui32>) -> tensor<4x2xf32>
      func.return %u : tensor<4x2xf32>
    }"""
    n = 4
    types = ", ".join(["tensor<4x2xf32>"] * n)
    text = body + f"""
    func.func @main() -> ({types}) {{
      %r:{n} = "interpreter.run_parallel"() {{programs = [[{", ".join(["@f"] * n)}]]}}
          : () -> ({types})
      func.return {", ".join(f"%r#{i}" for i in range(n))} : {types}
    }}"""
    vec = Interpreter(parse_module(text)).run("main")
    threads = Interpreter(parse_module(text), vectorize=False).run("main")
    for p, (a, b) in enumerate(zip(vec, threads, strict=True)):
        assert same(a.data, b.data)
        want = np.zeros((4, 2), np.float32)
        at = min(p, 2)  # the update's start clamped into the 4-row result
        want[at:at + 2] = [[p, p], [p + 1, p + 1]]  # rows p, p+1 of the iota
        assert a.data.tolist() == want.tolist()
