"""sort: recognised comparators (argsort) and general ones (the batched merge sort) against
Python's stable ``sorted``, the spec's total order of floats, several operands, negative
dimensions, varying operands, and random programs against the reference interpreter."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from shardy_ref.execute.kernels.sort import simple_comparator
from shardy_ref.parser import parse_module
from tests.execute.kernel_harness import (
    assert_varying_matches,
    check_against_oracle,
    literal,
    module,
    random_values,
    tensor_type,
)


def simple_cmp(ets: list[str], direction: str, ctype: str = "", swap: bool = False) -> str:
    args = ", ".join(f"%a{i}: tensor<{e}>, %b{i}: tensor<{e}>" for i, e in enumerate(ets))
    t = f"tensor<{ets[0]}>"
    lhs, rhs = ("%b0", "%a0") if swap else ("%a0", "%b0")
    kind = f", {ctype}" if ctype else ""
    return (f"^bb0({args}):\n    %r = stablehlo.compare {direction}, {lhs}, {rhs}{kind} : "
            f"({t}, {t}) -> tensor<i1>\n    stablehlo.return %r : tensor<i1>")


def lexicographic_cmp(ets: list[str]) -> str:
    """JAX's comparator for ``num_keys=2``: operand 0, then operand 1, both ascending."""
    args = ", ".join(f"%a{i}: tensor<{e}>, %b{i}: tensor<{e}>" for i, e in enumerate(ets))
    t0, t1 = f"tensor<{ets[0]}>", f"tensor<{ets[1]}>"
    return (f"^bb0({args}):\n"
            f"    %lt0 = stablehlo.compare LT, %a0, %b0 : ({t0}, {t0}) -> tensor<i1>\n"
            f"    %eq0 = stablehlo.compare EQ, %a0, %b0 : ({t0}, {t0}) -> tensor<i1>\n"
            f"    %lt1 = stablehlo.compare LT, %a1, %b1 : ({t1}, {t1}) -> tensor<i1>\n"
            f"    %and = stablehlo.and %eq0, %lt1 : tensor<i1>\n"
            f"    %r = stablehlo.or %lt0, %and : tensor<i1>\n"
            f"    stablehlo.return %r : tensor<i1>")


def square_cmp(et: str, payload: tuple[str, ...] = ()) -> str:
    """Orders by ``x * x`` descending: a comparator no fast path recognises."""
    t = f"tensor<{et}>"
    args = "".join(f", %a{i}: tensor<{e}>, %b{i}: tensor<{e}>"
                   for i, e in enumerate(payload, start=1))
    return (f"^bb0(%a0: {t}, %b0: {t}{args}):\n    %x = stablehlo.multiply %a0, %a0 : {t}\n"
            f"    %y = stablehlo.multiply %b0, %b0 : {t}\n"
            f"    %r = stablehlo.compare GT, %x, %y : ({t}, {t}) -> tensor<i1>\n"
            f"    stablehlo.return %r : tensor<i1>")


def sort_op(ins: list[str], types: list[str], dim: int, region: str, stable: bool = True) -> str:
    outs = ", ".join(f"%out{i}" for i in range(len(ins)))
    return (f'  {outs} = "stablehlo.sort"({", ".join(ins)}) ({{\n  {region}\n  }}) '
            f"{{dimension = {dim} : i64, is_stable = {str(stable).lower()}}} : "
            f"({', '.join(types)}) -> ({', '.join(types)})")


def sort_module(shape, ets: list[str], dim: int, region: str, stable: bool = True) -> str:
    types = [tensor_type(shape, e) for e in ets]
    params = ", ".join(f"%x{i}: {t}" for i, t in enumerate(types))
    return (f"func.func @main({params}) -> ({', '.join(types)}) {{\n"
            f"{sort_op([f'%x{i}' for i in range(len(ets))], types, dim, region, stable)}\n"
            f"  func.return {', '.join(f'%out{i}' for i in range(len(ets)))} : "
            f"{', '.join(types)}\n}}")


def sorted_along(arrays: list[np.ndarray], dim: int, key) -> list[np.ndarray]:
    """Python's stable sort of every 1-D slice along ``dim`` by ``key(tuple of elements)``."""
    moved = [np.moveaxis(a, dim, -1) for a in arrays]
    outs = [np.empty_like(m) for m in moved]
    for idx in np.ndindex(*moved[0].shape[:-1]):
        rows = list(zip(*(m[idx].tolist() for m in moved), strict=True))
        for j, row in enumerate(sorted(rows, key=key)):
            for out, v in zip(outs, row, strict=True):
                out[(*idx, j)] = v
    return [np.moveaxis(o, -1, dim) for o in outs]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.integers(0, 2**32 - 1),
       st.sampled_from(["LT", "GT"]), st.booleans(), st.data())
def test_recognised_comparators_sort_stably(shape, seed, direction, swap, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(np.int32)
    y = np.arange(x.size, dtype=np.float32).reshape(shape)
    got = run(sort_module(shape, ["i32", "f32"], dim, simple_cmp(["i32", "f32"], direction,
                                                                 swap=swap)), x, y)
    ascending = (direction == "LT") != swap
    want = sorted_along([x, y], dim % len(shape),
                        lambda r: r[0] if ascending else -r[0])
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def _total_order(v: float) -> int:
    bits = struct.unpack("<i", struct.pack("<f", v))[0]
    return bits ^ 0x7FFFFFFF if bits < 0 else bits


def test_totalorder_sorts_nans_and_signed_zeros_as_the_spec():
    x = np.array([1.0, -0.0, np.nan, 0.0, -np.inf, -np.nan, -1.0, np.inf, 0.0, -0.0],
                 np.float32)
    x[5] = -np.abs(x[5])  # a NaN with the sign bit set
    (got,) = run(sort_module([10], ["f32"], 0, simple_cmp(["f32"], "LT", "TOTALORDER")), x)
    want = sorted(x.tolist(), key=_total_order)
    assert [_total_order(v) for v in got.tolist()] == [_total_order(v) for v in want]
    (got,) = run(sort_module([10], ["f32"], 0, simple_cmp(["f32"], "GT", "TOTALORDER")), x)
    assert [_total_order(v) for v in got.tolist()] == [_total_order(v) for v in want[::-1]]


def test_float_comparison_keeps_signed_zeros_in_input_order():
    x = np.array([0.0, -0.0, -1.0, 0.0, -0.0], np.float32)
    (got,) = run(sort_module([5], ["f32"], 0, simple_cmp(["f32"], "LT", "FLOAT")), x)
    assert np.signbit(got).tolist() == [True, False, True, False, True]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_general_comparators_merge_sort_stably(n, rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, (rows, n)).astype(np.int32)
    y = rng.integers(0, 3, (rows, n)).astype(np.int32)
    z = np.arange(rows * n, dtype=np.int32).reshape(rows, n)
    cmp = lexicographic_cmp(["i32", "i32", "i32"])
    got = run(sort_module([rows, n], ["i32"] * 3, 1, cmp), x, y, z)
    want = sorted_along([x, y, z], 1, lambda r: (r[0], r[1]))
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    got = run(sort_module([rows, n], ["i32", "i32"], 1, square_cmp("i32", ("i32",))), x, z)
    want = sorted_along([x, z], 1, lambda r: -r[0] * r[0])
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_comparator_recognition():
    def region(text):
        m = parse_module(sort_module([3], ["f32"], 0, text))
        return next(op for op in m.walk() if op.name == "stablehlo.sort").regions[0]
    assert simple_comparator(region(simple_cmp(["f32"], "LT"))) == ("LT", "NOTYPE")
    assert simple_comparator(region(simple_cmp(["f32"], "LT", "TOTALORDER", swap=True))) == \
        ("GT", "TOTALORDER")
    assert simple_comparator(region(simple_cmp(["f32"], "GE"))) is None
    assert simple_comparator(region(square_cmp("f32"))) is None


@pytest.mark.parametrize("general", [False, True])
def test_varying_operands_sort_per_process(general):
    rng = np.random.default_rng(9)
    x = rng.integers(-5, 5, (3, 4, 6)).astype(np.int32)
    y = rng.integers(-5, 5, (3, 4, 6)).astype(np.int32)
    cmp = lexicographic_cmp(["i32", "i32"]) if general else simple_cmp(["i32", "i32"], "GT")
    text = sort_module([4, 6], ["i32", "i32"], 1, cmp)
    assert_varying_matches(text, [x, y[0]], [True, False])
    assert_varying_matches(text, [x[0], y], [False, True])
    assert_varying_matches(text, [x, y], [True, True])


def test_unstable_sort_gives_the_stable_order():
    x = np.array([2, 1, 2, 1, 2], np.int32)
    y = np.arange(5, dtype=np.int32)
    text = sort_module([5], ["i32", "i32"], 0, simple_cmp(["i32", "i32"], "LT"), stable=False)
    assert [v.tolist() for v in run(text, x, y)] == [[1, 1, 2, 2, 2], [1, 3, 0, 2, 4]]


# -- the oracle -------------------------------------------------------------------------------
# All exact. The reference sorts with std::sort unless is_stable, which may reorder ties
# its own way: unstable programs here have one operand, or a comparator reading every
# operand, so ties are identical. No NaNs and no negative zeros: the reference compares
# TOTALORDER as FLOAT (its compare ignores compare_type), which the spec's order refines.
def random_sort_program(rng: np.random.Generator) -> tuple[str, float]:
    rank = int(rng.integers(1, 4))
    shape = [int(s) for s in rng.integers(1, 6, rank)]
    shape[int(rng.integers(rank))] = int(rng.integers(1, 25))
    dim = int(rng.integers(-rank, rank))
    kind = int(rng.integers(4))
    et = ["i32", "f32", "ui8", "bf16", "i1", "f64"][rng.integers(6)]
    if kind == 0:  # one operand, simple comparator
        ets = [et]
        cmp = simple_cmp(ets, ["LT", "GT"][rng.integers(2)],
                         "TOTALORDER" if et in ("f32", "bf16") and rng.random() < 0.5 else "",
                         swap=bool(rng.random() < 0.3))
    elif kind == 1:  # payload operands, simple comparator
        ets = [et, "i32", "f32"][:int(rng.integers(2, 4))]
        cmp = simple_cmp(ets, ["LT", "GT"][rng.integers(2)])
    elif kind == 2:  # lexicographic on two keys
        ets = [et, "i32"]
        cmp = lexicographic_cmp(ets)
    else:
        ets = ["i32" if et in ("i1", "ui8") else et]
        cmp = square_cmp(ets[0])
    stable = kind in (1, 3) or bool(rng.random() < 0.5)  # x*x ties differ in sign
    arrays = [random_values(rng, shape, e) for e in ets]
    types = [tensor_type(shape, e) for e in ets]
    head = "".join(f"  %x{i} = stablehlo.constant {literal(a, e)}\n"
                   for i, (a, e) in enumerate(zip(arrays, ets, strict=True)))
    return module(head + sort_op([f"%x{i}" for i in range(len(ets))], types, dim, cmp,
                                 stable), types), 0.0


@pytest.mark.oracle
def test_sort_against_the_oracle():
    rng = np.random.default_rng(5)
    check_against_oracle([random_sort_program(rng) for _ in range(220)])
