"""reduce and map: recognised bodies against NumPy, the reference's fold order for other
bodies and narrow floats, signed zeros and NaN of maximum/minimum, variadic (argmax-style)
bodies, empty dimensions, varying operands, and random programs against the reference
interpreter."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run
from tests.execute.kernel_harness import (
    assert_varying_matches,
    check_against_oracle,
    literal,
    module,
    random_values,
    tensor_type,
)

BINARY = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
          "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}


def body(op: str, et: str) -> str:
    t = f"tensor<{et}>"
    return (f"^bb0(%p: {t}, %q: {t}):\n    %r = stablehlo.{op} %p, %q : {t}\n"
            f"    stablehlo.return %r : {t}")


def horner_body(et: str) -> str:
    """``acc * 2 + x``: its result shows the order elements are folded in."""
    t = f"tensor<{et}>"
    return (f"^bb0(%p: {t}, %q: {t}):\n    %d = stablehlo.add %p, %p : {t}\n"
            f"    %r = stablehlo.add %d, %q : {t}\n    stablehlo.return %r : {t}")


def argmax_body(vt: str, it: str) -> str:
    """JAX's argmax reduction: larger value wins, ties go to the smaller index."""
    v, i = f"tensor<{vt}>", f"tensor<{it}>"
    b = f"tensor<i1>"  # noqa: F541
    return (f"^bb0(%av: {v}, %ai: {i}, %bv: {v}, %bi: {i}):\n"
            f"    %gt = stablehlo.compare GT, %av, %bv : ({v}, {v}) -> {b}\n"
            f"    %eq = stablehlo.compare EQ, %av, %bv : ({v}, {v}) -> {b}\n"
            f"    %lt = stablehlo.compare LT, %ai, %bi : ({i}, {i}) -> {b}\n"
            f"    %el = stablehlo.and %eq, %lt : {b}\n"
            f"    %pick = stablehlo.or %gt, %el : {b}\n"
            f"    %rv = stablehlo.select %pick, %av, %bv : {b}, {v}\n"
            f"    %ri = stablehlo.select %pick, %ai, %bi : {b}, {i}\n"
            f"    stablehlo.return %rv, %ri : {v}, {i}")


def reduce_op(ins: list[str], inits: list[str], in_types: list[str], init_types: list[str],
              out_types: list[str], dims, region: str) -> str:
    outs = ", ".join(f"%out{i}" for i in range(len(out_types)))
    return (f'  {outs} = "stablehlo.reduce"({", ".join(ins + inits)}) ({{\n  {region}\n'
            f"  }}) {{dimensions = array<i64{': ' if dims else ''}{', '.join(map(str, dims))}>}} : "
            f"({', '.join(in_types + init_types)}) -> ({', '.join(out_types)})")


def reduce_module(shape, et: str, dims, region: str) -> str:
    out = [s for i, s in enumerate(shape) if i not in dims]
    xt, it, ot = tensor_type(shape, et), f"tensor<{et}>", tensor_type(out, et)
    return (f"func.func @main(%x: {xt}, %i: {it}) -> {ot} {{\n"
            f"{reduce_op(['%x'], ['%i'], [xt], [it], [ot], dims, region)}\n"
            f"  func.return %out0 : {ot}\n}}")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.sampled_from(sorted(BINARY)),
       st.integers(0, 2**32 - 1), st.data())
def test_recognised_integer_bodies_match_numpy(shape, op, seed, data):
    dims = sorted(data.draw(st.sets(st.sampled_from(range(len(shape)))) if shape
                            else st.just(set())))
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, shape).astype(np.int32)
    init = np.int32(rng.integers(-3, 4))
    (got,) = run(reduce_module(shape, "i32", dims, body(op, "i32")), x, init)
    want = BINARY[op].reduce(x.astype(np.int64), axis=tuple(dims), initial=int(init))
    assert np.array_equal(got, want.astype(np.int32))


def test_integer_sums_wrap():
    x = np.full(4, 100, np.int8)
    (got,) = run(reduce_module([4], "i8", [0], body("add", "i8")), x, np.int8(0))
    assert int(got) == 400 - 512


@pytest.mark.parametrize("et", ["i32", "f32", "bf16"])
def test_other_bodies_fold_in_index_order_from_the_init_value(et):
    x = (np.arange(24).reshape(2, 3, 4) % 5).astype(np.float64)
    x = np.asarray(x).astype({"i32": np.int32, "f32": np.float32, "bf16": ml_dtypes.bfloat16}[et])
    (got,) = run(reduce_module([2, 3, 4], et, [0, 2], horner_body(et)), x, x.dtype.type(1))
    def rounded(v: float) -> float:  # the element type's rounding, once
        return float(np.array(v, np.float32).astype(x.dtype))

    for j in range(3):
        acc = 1.0
        for i, k in itertools.product(range(2), range(4)):  # lexicographic over dims 0, 2
            acc = rounded(rounded(acc * 2) + float(x[i, j, k]))
        assert float(got[j]) == acc


@pytest.mark.parametrize("et", ["bf16", "f16"])
def test_narrow_float_sums_round_at_every_step(et):
    dtype = np.dtype(ml_dtypes.bfloat16 if et == "bf16" else np.float16)
    x = np.random.default_rng(4).standard_normal((3, 200)).astype(dtype) * dtype.type(30)
    (got,) = run(reduce_module([3, 200], et, [1], body("add", et)), x, dtype.type(0.5))
    for row in range(3):
        acc = dtype.type(0.5)
        for v in x[row]:
            acc = np.array(float(acc) + float(v)).astype(np.float32).astype(dtype)
        assert float(got[row]) == float(acc)


def test_f32_sums_are_close_to_the_exact_sum():
    x = np.random.default_rng(1).standard_normal((5, 1000)).astype(np.float32)
    (got,) = run(reduce_module([5, 1000], "f32", [1], body("add", "f32")), x, np.float32(1))
    np.testing.assert_allclose(got, x.astype(np.float64).sum(1) + 1, rtol=1e-5)


@pytest.mark.parametrize("et", ["f32", "bf16"])
def test_maximum_and_minimum_order_signed_zeros_and_propagate_nan(et):
    dtype = np.dtype(np.float32 if et == "f32" else ml_dtypes.bfloat16)
    x = np.array([[-0.0, 0.0, -0.0], [-0.0, -0.0, -0.0], [0.0, np.nan, 1.0]]).astype(dtype)
    (mx,) = run(reduce_module([3, 3], et, [1], body("maximum", et)), x, dtype.type(-np.inf))
    (mn,) = run(reduce_module([3, 3], et, [1], body("minimum", et)), x, dtype.type(np.inf))
    mx, mn = mx.astype(np.float64), mn.astype(np.float64)
    assert mx[0] == 0 and not np.signbit(mx[0]) and np.signbit(mx[1]) and np.isnan(mx[2])
    assert np.signbit(mn[0]) and np.signbit(mn[1]) and np.isnan(mn[2])


def test_variadic_argmax_keeps_the_first_maximum():
    x = np.array([[3, 7, 7, 1], [5, 5, 2, 5]], np.float32)
    idx = np.broadcast_to(np.arange(4, dtype=np.int32), (2, 4)).copy()
    xt, it = "tensor<2x4xf32>", "tensor<2x4xi32>"
    text = (f"func.func @main(%x: {xt}, %i: {it}, %v0: tensor<f32>, %i0: tensor<i32>) -> "
            f"(tensor<2xf32>, tensor<2xi32>) {{\n"
            + reduce_op(["%x", "%i"], ["%v0", "%i0"], [xt, it], ["tensor<f32>", "tensor<i32>"],
                        ["tensor<2xf32>", "tensor<2xi32>"], [1], argmax_body("f32", "i32"))
            + "\n  func.return %out0, %out1 : tensor<2xf32>, tensor<2xi32>\n}")
    v, i = run(text, x, idx, np.float32(-np.inf), np.int32(0))
    assert v.tolist() == [7, 5] and i.tolist() == [1, 0]


def test_empty_dimensions_and_empty_inputs():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    (got,) = run(reduce_module([2, 3], "i32", [], body("add", "i32")), x, np.int32(10))
    assert got.tolist() == (x + 10).tolist()
    (got,) = run(reduce_module([2, 0], "f32", [1], horner_body("f32")),
                 np.zeros((2, 0), np.float32), np.float32(3))
    assert got.tolist() == [3, 3]


@pytest.mark.parametrize(("op", "et"), [("add", "f32"), ("maximum", "i32"),
                                        ("add", "bf16"), ("horner", "i32")])
def test_varying_inputs_and_inits_match_each_process(op, et):
    rng = np.random.default_rng(8)
    region = horner_body(et) if op == "horner" else body(op, et)
    text = reduce_module([2, 3, 4], et, [0, 2], region)
    x = random_values(rng, (3, 2, 3, 4), et)
    init = random_values(rng, (3,), et)
    for varying in ([True, False], [False, True], [True, True]):
        args = [x if varying[0] else x[0], init if varying[1] else init[0]]
        assert_varying_matches(text, args, varying)


MAP = """func.func @main(%x: tensor<2x3xi32>, %y: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %out0 = "stablehlo.map"(%x, %y) ({
  ^bb0(%p: tensor<i32>, %q: tensor<i32>):
    %m = stablehlo.multiply %p, %q : tensor<i32>
    %r = stablehlo.add %m, %p : tensor<i32>
    stablehlo.return %r : tensor<i32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %out0 : tensor<2x3xi32>
}"""


def test_map_applies_its_computation_elementwise():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    y = x[::-1].copy()
    assert run(MAP, x, y)[0].tolist() == (x * y + x).tolist()
    xs = np.stack([x, x + 1, x - 2])
    assert_varying_matches(MAP, [xs, y], [True, False])
    assert_varying_matches(MAP, [x, np.stack([y] * 3)], [False, True])


# -- the oracle -------------------------------------------------------------------------------
# Integers, i1 and narrow floats (sequential, as the reference) are exact; f32 sums and
# products use NumPy's pairwise order, hence a tolerance; maxima and minima are exact.
REDUCE_CASES = [("add", "i32", 0), ("multiply", "i32", 0), ("maximum", "i32", 0),
                ("minimum", "ui8", 0), ("xor", "i32", 0), ("and", "i1", 0), ("or", "i1", 0),
                ("add", "f32", 1e-5), ("maximum", "f32", 0), ("minimum", "f64", 0),
                ("add", "bf16", 0), ("add", "f16", 0), ("multiply", "bf16", 0),
                ("maximum", "bf16", 0), ("horner", "i32", 0), ("horner", "f32", 0),
                ("argmax", "f32", 0), ("map", "i32", 0), ("map", "bf16", 0)]


def random_reduce(rng: np.random.Generator) -> tuple[str, float]:
    op, et, tol = REDUCE_CASES[rng.integers(len(REDUCE_CASES))]
    rank = int(rng.integers(1, 4))
    shape = [int(s) for s in rng.integers(1, 5, rank)]
    dims = sorted(int(d) for d in rng.choice(rank, int(rng.integers(0, rank + 1)), replace=False))
    out = [s for i, s in enumerate(shape) if i not in dims]
    x = random_values(rng, shape, et, small=(tol == 0 and op != "add") or rng.random() < 0.3)
    if op == "map":
        y = random_values(rng, shape, et)
        t = tensor_type(shape, et)
        text = MAP.replace("i32", et).replace("2x3", "x".join(map(str, shape)))
        text = text.replace("i64: 0, 1", "i64: " + ", ".join(map(str, range(rank))))
        args = (f"  %x = stablehlo.constant {literal(x, et)}\n"
                f"  %y = stablehlo.constant {literal(y, et)}\n")
        return module(args + text.split("{\n", 1)[1].rsplit("  func.return", 1)[0],
                      [t]), tol
    init = random_values(rng, (), et)
    head = (f"  %x = stablehlo.constant {literal(x, et)}\n"
            f"  %i = stablehlo.constant {literal(init, et)}\n")
    xt, it, ot = tensor_type(shape, et), f"tensor<{et}>", tensor_type(out, et)
    if op == "argmax":
        idx = rng.integers(0, 9, shape).astype(np.int32)
        head += (f"  %j = stablehlo.constant {literal(idx, 'i32')}\n"
                 f"  %j0 = stablehlo.constant dense<0> : tensor<i32>\n")
        jt, jo = tensor_type(shape, "i32"), tensor_type(out, "i32")
        head += reduce_op(["%x", "%j"], ["%i", "%j0"], [xt, jt], [it, "tensor<i32>"], [ot, jo],
                          dims, argmax_body(et, "i32"))
        return module(head, [ot, jo]), tol
    region = horner_body(et) if op == "horner" else body(op, et)
    return module(head + reduce_op(["%x"], ["%i"], [xt], [it], [ot], dims, region), [ot]), tol


@pytest.mark.oracle
def test_reduce_and_map_against_the_oracle():
    rng = np.random.default_rng(31)
    check_against_oracle([random_reduce(rng) for _ in range(240)])


# -- batch_norm_* (the reference refuses them; the spec's decompositions) ---------------------
BN_SPEC_EXAMPLES = """func.func @main() {
  %x = stablehlo.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]]>
    : tensor<2x2x2xf64>
  %one = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf64>
  %mean = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf64>
  %g = stablehlo.constant dense<0.1> : tensor<2x2x2xf64>
  %r = "stablehlo.batch_norm_inference"(%x, %one, %one, %mean, %one)
    {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf64>, tensor<2xf64>,
    tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<2x2x2xf64>
  check.expect_almost_eq_const %r, dense<[[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]>
    : tensor<2x2x2xf64>
  %o, %m, %v = "stablehlo.batch_norm_training"(%x, %one, %one)
    {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf64>, tensor<2xf64>,
    tensor<2xf64>) -> (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)
  check.expect_almost_eq_const %o, dense<[[[0.0, 0.0], [2.0, 2.0]], [[2.0, 2.0], [0.0, 0.0]]]>
    : tensor<2x2x2xf64>
  check.expect_almost_eq_const %m, dense<[2.0, 3.0]> : tensor<2xf64>
  check.expect_almost_eq_const %v, dense<[1.0, 1.0]> : tensor<2xf64>
  %go, %gs, %gf = "stablehlo.batch_norm_grad"(%x, %one, %mean, %one, %g)
    {epsilon = 0.0 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf64>, tensor<2xf64>,
    tensor<2xf64>, tensor<2xf64>, tensor<2x2x2xf64>)
    -> (tensor<2x2x2xf64>, tensor<2xf64>, tensor<2xf64>)
  check.expect_almost_eq_const %go, dense<0.0> : tensor<2x2x2xf64>
  check.expect_almost_eq_const %gs, dense<0.0> : tensor<2xf64>
  check.expect_almost_eq_const %gf, dense<0.4> : tensor<2xf64>
  func.return
}"""


def test_batch_norm_ops_reproduce_the_spec_examples():
    run(BN_SPEC_EXAMPLES)  # the check ops raise on a mismatch


def bn_module(shape, feature: int, et: str = "f64") -> str:
    xt, ft = tensor_type(shape, et), tensor_type([shape[feature]], et)
    return (f"func.func @main(%x: {xt}, %s: {ft}, %o: {ft}, %g: {xt}) -> ({xt}, {ft}, {ft}, "
            f"{xt}, {ft}, {ft}) {{\n"
            f'  %y, %m, %v = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 0.5 : f32, '
            f"feature_index = {feature} : i64}} : ({xt}, {ft}, {ft}) -> ({xt}, {ft}, {ft})\n"
            f'  %a, %b, %c = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {{epsilon = 0.5 : '
            f"f32, feature_index = {feature} : i64}} : ({xt}, {ft}, {ft}, {ft}, {xt}) -> "
            f"({xt}, {ft}, {ft})\n"
            f"  func.return %y, %m, %v, %a, %b, %c : {xt}, {ft}, {ft}, {xt}, {ft}, {ft}\n}}")


def test_batch_norm_training_and_grad_match_numpy():
    rng = np.random.default_rng(6)
    shape, feature = (3, 4, 5), 1
    x, g = rng.standard_normal(shape), rng.standard_normal(shape)
    s, o = rng.standard_normal(4), rng.standard_normal(4)
    y, m, v, gx, gs, go = run(bn_module(shape, feature), x, s, o, g)
    axes, b = (0, 2), (1, 4, 1)
    mean, var = x.mean(axes), x.var(axes)
    norm = (x - mean.reshape(b)) / np.sqrt(var.reshape(b) + 0.5)
    np.testing.assert_allclose(y, norm * s.reshape(b) + o.reshape(b), rtol=1e-12)
    np.testing.assert_allclose(m, mean, rtol=1e-12)
    np.testing.assert_allclose(v, var, rtol=1e-12)
    np.testing.assert_allclose(go, g.sum(axes), rtol=1e-12)
    np.testing.assert_allclose(gs, (g * norm).sum(axes), rtol=1e-12)
    n = x.size / 4  # d/dx of sum(g * y) with batch statistics (XLA's expander)
    want = s.reshape(b) / np.sqrt(var.reshape(b) + 0.5) / n * (
        g * n - g.sum(axes, keepdims=True)
        - norm * (g * norm).sum(axes, keepdims=True))
    np.testing.assert_allclose(gx, want, rtol=1e-9, atol=1e-12)


def test_batch_norm_in_bf16_and_on_varying_operands():
    rng = np.random.default_rng(2)
    text = bn_module((2, 3), 0, "bf16")
    args = [random_values(rng, s, "bf16") for s in [(3, 2, 3), (3, 2), (3, 2), (3, 2, 3)]]
    for varying in ([True, False, False, False], [False, True, True, True], [True] * 4):
        assert_varying_matches(text, [a if v else a[0] for a, v in zip(args, varying,
                                                                       strict=True)], varying)
    y = run(text, *[a[0] for a in args])[0]
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
