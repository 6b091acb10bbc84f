"""reduce_window and select_and_scatter: random windows (dilations, strides, paddings)
against direct formulas written here, the reference's fold order (bit-exact float sums),
variadic bodies, the reference's scatter of init values, varying operands, and random
programs against the reference interpreter."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from shardy_ref.ir.diagnostics import VerifyError
from tests.execute.kernel_harness import (
    assert_varying_matches,
    check_against_oracle,
    literal,
    module,
    random_values,
    random_window_padding,
    tensor_type,
)
from tests.execute.test_reduce import argmax_body, body


def _arr(name: str, values) -> str:
    return f"{name} = array<i64: {', '.join(map(str, values))}>"


def random_window(rng: np.random.Generator, negative_padding: bool = True) -> dict:
    rank = int(rng.integers(1, 4))
    shape = [int(s) for s in rng.integers(1, 5, rank)]
    dims = [int(s) for s in rng.integers(1, 4, rank)]
    strides = [int(s) for s in rng.integers(1, 3, rank)]
    base = [int(s) for s in rng.integers(1, 3, rank)]
    wdil = [int(s) for s in rng.integers(1, 3, rank)]
    padding, out = random_window_padding(rng, shape, dims, strides, base, wdil, negative_padding)
    return dict(shape=shape, dims=dims, strides=strides, base=base, wdil=wdil,
                padding=padding, out=out)


def window_attrs(w: dict) -> str:
    pad = literal(np.array(w["padding"], np.int64).reshape(-1, 2), "i64")
    return ", ".join([_arr("base_dilations", w["base"]), f"padding = {pad}",
                      _arr("window_dilations", w["wdil"]), _arr("window_dimensions", w["dims"]),
                      _arr("window_strides", w["strides"])])


def reduce_window_op(w: dict, ins: list[str], inits: list[str], ets: list[str],
                     region: str) -> str:
    in_t = [tensor_type(w["shape"], e) for e in ets]
    outs = ", ".join(f"%out{i}" for i in range(len(ins)))
    return (f'  {outs} = "stablehlo.reduce_window"({", ".join(ins + inits)}) ({{\n  {region}\n'
            f"  }}) {{{window_attrs(w)}}} : ({', '.join(in_t + [f'tensor<{e}>' for e in ets])})"
            f" -> ({', '.join(tensor_type(w['out'], e) for e in ets)})")


def naive_reduce_window(w: dict, xs: list, inits: list, fn) -> list[np.ndarray]:
    """The spec: pad with the init values, then fold each window from the init values."""
    padded = []
    for x, init in zip(xs, inits, strict=True):
        p = x
        for ax, ((lo, hi), b) in enumerate(zip(w["padding"], w["base"], strict=True)):
            n = p.shape[ax]
            dil = np.full((*p.shape[:ax], (n - 1) * b + 1, *p.shape[ax + 1:]), init, x.dtype)
            dil[(slice(None),) * ax + (slice(None, None, b),)] = p
            before = np.full((*dil.shape[:ax], max(lo, 0), *dil.shape[ax + 1:]), init, x.dtype)
            after = np.full((*dil.shape[:ax], max(hi, 0), *dil.shape[ax + 1:]), init, x.dtype)
            p = np.concatenate([before, dil, after], axis=ax)
            p = p[(slice(None),) * ax + (slice(max(-lo, 0), p.shape[ax] - max(-hi, 0)),)]
        padded.append(p)
    outs = [np.empty(w["out"], x.dtype) for x in xs]
    for o in itertools.product(*(range(s) for s in w["out"])):
        acc = list(inits)
        for k in itertools.product(*(range(d) for d in w["dims"])):
            pos = tuple(oi * s + ki * d for oi, s, ki, d in zip(o, w["strides"], k, w["wdil"],
                                                                 strict=True))
            acc = fn(*acc, *(p[pos] for p in padded))
        for out, a in zip(outs, acc, strict=True):
            out[o] = a
    return outs


def rw_module(w: dict, et: str, region: str) -> str:
    xt, ot = tensor_type(w["shape"], et), tensor_type(w["out"], et)
    return (f"func.func @main(%x: {xt}, %i: tensor<{et}>) -> {ot} {{\n"
            f"{reduce_window_op(w, ['%x'], ['%i'], [et], region)}\n"
            f"  func.return %out0 : {ot}\n}}")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["add", "maximum", "multiply"]))
def test_integer_reduce_window_matches_the_formula(seed, op):
    rng = np.random.default_rng(seed)
    w = random_window(rng)
    x = rng.integers(-4, 5, w["shape"]).astype(np.int32)
    init = np.int32(rng.integers(-2, 3))
    fn = {"add": lambda a, b: [a + b], "maximum": lambda a, b: [max(a, b)],
          "multiply": lambda a, b: [a * b]}[op]
    (got,) = run(rw_module(w, "i32", body(op, "i32")), x, init)
    (want,) = naive_reduce_window(w, [x.astype(np.int64)], [int(init)], fn)
    assert np.array_equal(got, want.astype(np.int32))


@pytest.mark.parametrize("et", ["f32", "bf16", "f16"])
def test_float_window_sums_fold_in_the_reference_order(et):
    dtype = np.dtype({"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[et])
    rng = np.random.default_rng(12)
    for _ in range(5):
        w = random_window(rng)
        x = (rng.standard_normal(w["shape"]) * 100).astype(dtype)
        init = dtype.type(0.25)

        def add(a, b):
            return [np.array(float(a) + float(b), np.float64).astype(np.float32).astype(dtype)
                    if dtype != np.float32 else np.float32(a) + np.float32(b)]

        (got,) = run(rw_module(w, et, body("add", et)), x, init)
        (want,) = naive_reduce_window(w, [x], [init], add)
        assert np.array_equal(got.astype(np.float64), want.astype(np.float64))


def test_max_pool_pads_with_the_init_value():
    x = np.array([[1, -2], [-3, -4]], np.float32)
    w = dict(shape=[2, 2], dims=[2, 2], strides=[1, 1], base=[1, 1], wdil=[1, 1],
             padding=[(1, 0), (1, 0)], out=[2, 2])
    (got,) = run(rw_module(w, "f32", body("maximum", "f32")), x, np.float32(-np.inf))
    assert got.tolist() == [[1, 1], [1, 1]]
    (got,) = run(rw_module(w, "f32", body("maximum", "f32")), x, np.float32(-10))
    assert got.tolist() == [[1, 1], [1, 1]]
    (got,) = run(rw_module(w, "f32", body("minimum", "f32")), x, np.float32(0))
    assert got.tolist() == [[0, -2], [-3, -4]]


def test_cumulative_sum_as_jax_writes_it():
    n = 50
    x = np.arange(n, dtype=np.int32)
    w = dict(shape=[n], dims=[n], strides=[1], base=[1], wdil=[1], padding=[(n - 1, 0)], out=[n])
    (got,) = run(rw_module(w, "i32", body("add", "i32")), x, np.int32(0))
    assert got.tolist() == np.cumsum(x).tolist()


def test_variadic_reduce_window_argmax():
    rng = np.random.default_rng(2)
    w = random_window(rng, negative_padding=False)
    x = rng.integers(-5, 5, w["shape"]).astype(np.float32)
    idx = np.arange(x.size, dtype=np.int32).reshape(x.shape)
    xt, it = tensor_type(w["shape"], "f32"), tensor_type(w["shape"], "i32")
    ot, jt = tensor_type(w["out"], "f32"), tensor_type(w["out"], "i32")
    text = (f"func.func @main(%x: {xt}, %j: {it}, %v: tensor<f32>, %k: tensor<i32>) -> "
            f"({ot}, {jt}) {{\n"
            + reduce_window_op(w, ["%x", "%j"], ["%v", "%k"], ["f32", "i32"],
                               argmax_body("f32", "i32"))
            + f"\n  func.return %out0, %out1 : {ot}, {jt}\n}}")

    def pick(av, ai, bv, bi):
        return [av, ai] if av > bv or (av == bv and ai < bi) else [bv, bi]

    got = run(text, x, idx, np.float32(-np.inf), np.int32(-1))
    want = naive_reduce_window(w, [x, idx], [np.float32(-np.inf), np.int32(-1)], pick)
    for g, e in zip(got, want, strict=True):
        assert np.array_equal(g, e)


def test_window_of_the_wrong_rank_is_an_error():
    w = dict(shape=[2, 2], dims=[2], strides=[1], base=[1], wdil=[1], padding=[(0, 0)],
             out=[1, 2])
    with pytest.raises(VerifyError, match="expects window-dimensions size == input rank"):
        run(rw_module(w, "i32", body("add", "i32")), np.zeros((2, 2), np.int32), np.int32(0))


@pytest.mark.parametrize(("op", "et"), [("add", "f32"), ("maximum", "i32"), ("add", "bf16")])
def test_varying_reduce_window_matches_each_process(op, et):
    rng = np.random.default_rng(21)
    w = random_window(rng)
    text = rw_module(w, et, body(op, et))
    x = random_values(rng, [3, *w["shape"]], et)
    init = random_values(rng, (3,), et)
    for varying in ([True, False], [False, True], [True, True]):
        assert_varying_matches(text, [x if varying[0] else x[0],
                                      init if varying[1] else init[0]], varying)


# -- select_and_scatter ---------------------------------------------------------------------
def select_body(direction: str, et: str) -> str:
    t = f"tensor<{et}>"
    return (f"^bb0(%p: {t}, %q: {t}):\n    %r = stablehlo.compare {direction}, %p, %q : "
            f"({t}, {t}) -> tensor<i1>\n    stablehlo.return %r : tensor<i1>")


def random_sas(rng: np.random.Generator) -> dict:
    rank = int(rng.integers(1, 3))
    shape = [int(s) for s in rng.integers(1, 6, rank)]
    dims = [int(s) for s in rng.integers(1, 4, rank)]
    strides = [int(s) for s in rng.integers(1, 3, rank)]
    padding, source = [], []
    for s, w, st_ in zip(shape, dims, strides, strict=True):
        lo = int(rng.integers(0, 2))
        hi = max(int(rng.integers(0, 2)), w - s - lo)
        padding.append((lo, hi))
        source.append((lo + s + hi - w) // st_ + 1)
    return dict(shape=shape, dims=dims, strides=strides, padding=padding, source=source)


def sas_op(s: dict, et: str, direction: str, scatter: str, args: str = "%x, %s, %i") -> str:
    pad = literal(np.array(s["padding"], np.int64).reshape(-1, 2), "i64")
    xt, st_ = tensor_type(s["shape"], et), tensor_type(s["source"], et)
    return (f'  %out0 = "stablehlo.select_and_scatter"({args}) ({{\n  '
            f"{select_body(direction, et)}\n  }}, {{\n  {body(scatter, et)}\n  }}) {{"
            f"padding = {pad}, {_arr('window_dimensions', s['dims'])}, "
            f"{_arr('window_strides', s['strides'])}}} : ({xt}, {st_}, tensor<{et}>) -> {xt}")


def naive_sas(s: dict, x, src, init, select, scatter) -> np.ndarray:
    """The reference: per source element, the first in-bounds window element replaced by
    each later one ``select`` rejects; then ``r = scatter(scatter(init, source), r)``."""
    result = np.full(x.shape, init, x.dtype)
    for si in itertools.product(*(range(n) for n in s["source"])):
        chosen = None
        for k in itertools.product(*(range(d) for d in s["dims"])):
            pos = tuple(a * st_ + b - p[0] for a, st_, b, p in zip(si, s["strides"], k,
                                                                   s["padding"], strict=True))
            if not all(0 <= q < n for q, n in zip(pos, x.shape, strict=True)):
                continue
            if chosen is None or not select(x[chosen], x[pos]):
                chosen = pos
        if chosen is not None:
            result[chosen] = scatter(scatter(init, src[si]), result[chosen])
    return result


SELECTS = {"GE": lambda a, b: a >= b, "GT": lambda a, b: a > b, "LE": lambda a, b: a <= b}
SCATTERS = {"add": lambda a, b: a + b, "maximum": max}


def sas_module(s: dict, et: str, direction: str, scatter: str) -> str:
    xt, st_ = tensor_type(s["shape"], et), tensor_type(s["source"], et)
    return (f"func.func @main(%x: {xt}, %s: {st_}, %i: tensor<{et}>) -> {xt} {{\n"
            f"{sas_op(s, et, direction, scatter)}\n  func.return %out0 : {xt}\n}}")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(sorted(SELECTS)),
       st.sampled_from(sorted(SCATTERS)))
def test_select_and_scatter_matches_the_reference_formula(seed, direction, scatter):
    rng = np.random.default_rng(seed)
    s = random_sas(rng)
    x = rng.integers(-3, 4, s["shape"]).astype(np.int32)
    src = rng.integers(1, 9, s["source"]).astype(np.int32)
    init = np.int32(rng.integers(0, 3))
    (got,) = run(sas_module(s, "i32", direction, scatter), x, src, init)
    want = naive_sas(s, x, src, init, SELECTS[direction], SCATTERS[scatter])
    assert np.array_equal(got, want)


def test_select_and_scatter_adds_init_once_per_source():
    """Overlapping windows selecting one element: the reference folds init into each."""
    s = dict(shape=[3], dims=[2], strides=[1], padding=[(0, 0)], source=[2])
    x = np.array([0, 5, 1], np.int32)
    (got,) = run(sas_module(s, "i32", "GE", "add"), x, np.array([10, 20], np.int32), np.int32(1))
    assert got.tolist() == [1, 1 + 10 + 1 + 20 + 1, 1]


@pytest.mark.parametrize("et", ["f32", "i32"])
def test_varying_select_and_scatter_matches_each_process(et):
    rng = np.random.default_rng(5)
    s = random_sas(rng)
    text = sas_module(s, et, "GE", "add")
    x = random_values(rng, [3, *s["shape"]], et)
    src = random_values(rng, [3, *s["source"]], et)
    init = random_values(rng, (3,), et)
    for varying in ([True, False, False], [False, True, False], [True, True, True]):
        args = [a if v else a[0] for a, v in zip([x, src, init], varying, strict=True)]
        assert_varying_matches(text, args, varying)


# Regions reading a value from outside (here %s, which may vary by process): the regions of
# every family must run with the processes in front, so that %s lines up.
OUTER_VALUES = """func.func @main(%x: tensor<2x3xi32>, %s: tensor<i32>, %i: tensor<i32>)
    -> (tensor<2xi32>, tensor<2x3xi32>, tensor<3x2xi32>, tensor<2x2xi32>, tensor<2x3xi32>) {
  %out0 = stablehlo.reduce(%x init: %i) across dimensions = [1]
    : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
   reducer(%a: tensor<i32>, %b: tensor<i32>) {
    %r = stablehlo.add %a, %b : tensor<i32>
    %t = stablehlo.add %r, %s : tensor<i32>
    stablehlo.return %t : tensor<i32>
  }
  %out1 = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %p = stablehlo.multiply %a, %s : tensor<i32>
    %q = stablehlo.multiply %b, %s : tensor<i32>
    %c = stablehlo.compare LT, %p, %q : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %y = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %src = "stablehlo.slice"(%y) {start_indices = array<i64: 0, 0>,
    limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>}
    : (tensor<3x2xi32>) -> tensor<2x2xi32>
  %out2 = "stablehlo.select_and_scatter"(%y, %src, %i) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %p = stablehlo.multiply %a, %s : tensor<i32>
    %q = stablehlo.multiply %b, %s : tensor<i32>
    %c = stablehlo.compare GE, %p, %q : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %r = stablehlo.add %a, %b : tensor<i32>
    %t = stablehlo.add %r, %s : tensor<i32>
    stablehlo.return %t : tensor<i32>
  }) {window_dimensions = array<i64: 2, 1>}
    : (tensor<3x2xi32>, tensor<2x2xi32>, tensor<i32>) -> tensor<3x2xi32>
  %out3 = "stablehlo.reduce_window"(%x, %i) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %r = stablehlo.maximum %a, %b : tensor<i32>
    %t = stablehlo.add %r, %s : tensor<i32>
    stablehlo.return %t : tensor<i32>
  }) {window_dimensions = array<i64: 1, 2>}
    : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x2xi32>
  %out4 = "stablehlo.map"(%x, %x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %r = stablehlo.multiply %a, %b : tensor<i32>
    %t = stablehlo.add %r, %s : tensor<i32>
    stablehlo.return %t : tensor<i32>
  }) {dimensions = array<i64: 0, 1>}
    : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %out0, %out1, %out2, %out3, %out4
    : tensor<2xi32>, tensor<2x3xi32>, tensor<3x2xi32>, tensor<2x2xi32>, tensor<2x3xi32>
}"""


def test_regions_reading_process_varying_outer_values():
    x = np.array([[3, 1, 2], [5, -4, 0]], np.int32)
    xs, s = np.stack([x, -x, x * 2]), np.array([1, -1, 2], np.int32)
    assert_varying_matches(OUTER_VALUES, [x, s, np.int32(0)], [False, True, False])
    assert_varying_matches(OUTER_VALUES, [xs, s, np.int32(0)], [True, True, False])
    assert_varying_matches(OUTER_VALUES, [xs, np.int32(2), s], [True, False, True])


# -- the oracle -------------------------------------------------------------------------------
# Everything exact: reduce_window and select_and_scatter fold in the reference's order, so
# f32 sums match it bit for bit too. Paddings are non-negative (the reference's padOp
# aborts on negative ones).
RW_CASES = [("add", "i32"), ("maximum", "f32"), ("add", "f32"), ("add", "bf16"),
            ("minimum", "f16"), ("multiply", "i32"), ("add", "f64"), ("and", "i1")]


def random_rw_program(rng: np.random.Generator) -> tuple[str, float]:
    op, et = RW_CASES[rng.integers(len(RW_CASES))]
    w = random_window(rng, negative_padding=False)
    x = random_values(rng, w["shape"], et, small=rng.random() < 0.5)
    init = random_values(rng, (), et)
    head = (f"  %x = stablehlo.constant {literal(x, et)}\n"
            f"  %i = stablehlo.constant {literal(init, et)}\n")
    return module(head + reduce_window_op(w, ["%x"], ["%i"], [et], body(op, et)),
                  [tensor_type(w["out"], et)]), 0.0


def random_sas_program(rng: np.random.Generator) -> tuple[str, float]:
    et = ["i32", "f32", "bf16"][rng.integers(3)]
    direction = sorted(SELECTS)[rng.integers(len(SELECTS))]
    scatter = sorted(SCATTERS)[rng.integers(len(SCATTERS))]
    s = random_sas(rng)
    x = random_values(rng, s["shape"], et)
    src = random_values(rng, s["source"], et, small=rng.random() < 0.5)
    init = random_values(rng, (), et)
    head = (f"  %x = stablehlo.constant {literal(x, et)}\n"
            f"  %s = stablehlo.constant {literal(src, et)}\n"
            f"  %i = stablehlo.constant {literal(init, et)}\n")
    return module(head + sas_op(s, et, direction, scatter),
                  [tensor_type(s["shape"], et)]), 0.0


@pytest.mark.oracle
def test_windows_against_the_oracle():
    rng = np.random.default_rng(77)
    cases = [random_rw_program(rng) for _ in range(200)]
    cases += [random_sas_program(rng) for _ in range(200)]
    check_against_oracle(cases)
