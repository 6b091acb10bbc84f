"""Shape kernels (iota, broadcast_in_dim, broadcast, reshape, transpose, concatenate,
reverse, get_dimension_size and their dynamic forms): spec edge cases, hypothesis
properties against independent index-by-index formulas, and varying operands (a batch of
processes) against running each process alone.

The helpers at the top (element types, random arrays, one-op modules, the varying check)
are shared by ``test_slicing.py``, ``test_gather_scatter.py`` and the oracle test.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Context, Interpreter, InterpreterError, run
from shardy_ref.execute.registry import load_kernels
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.parser import parse_module

# -- shared helpers -------------------------------------------------------------------------
ETYPES = {
    "i1": np.dtype(np.bool_), "i4": np.dtype(ml_dtypes.int4),
    "ui4": np.dtype(ml_dtypes.uint4), "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8), "ui32": np.dtype(np.uint32), "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "complex<f32>": np.dtype(np.complex64), "complex<f64>": np.dtype(np.complex128),
}
MOVE_TYPES = ["i1", "i8", "i32", "i64", "ui8", "ui64", "f16", "bf16", "f32", "f64",
              "complex<f32>"]


def ttype(shape, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def random_array(rng: np.random.Generator, shape, et: str) -> np.ndarray:
    """Random values of element type ``et`` in its storage dtype (small, exactly
    representable for the float types)."""
    dtype = ETYPES[et]
    shape = tuple(shape)
    if et == "i1":
        return rng.integers(0, 2, shape).astype(bool)
    if et.startswith("complex"):
        parts = rng.integers(-64, 64, (2, *shape)).astype(np.float64) / 4
        return (parts[0] + 1j * parts[1]).astype(dtype)
    if et.startswith(("f", "bf")):
        return (rng.integers(-64, 64, shape).astype(np.float64) / 4).astype(dtype)
    info = np.iinfo(np.int8 if et == "i4" else dtype)
    lo, hi = (-8, 7) if et == "i4" else (max(int(info.min), -1000), min(int(info.max), 1000))
    return rng.integers(lo, hi + 1, shape).astype(dtype)


def generic(name: str, operand_types, result_type: str, attrs: str = "",
            region: str = "") -> str:
    """A module whose ``@main`` takes the operands as arguments and returns one op's
    result (results, when ``result_type`` is a parenthesised list)."""
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    uses = ", ".join(f"%a{i}" for i in range(len(operand_types)))
    results = result_type.strip("()").split(", ") if result_type.startswith("(") \
        else [result_type]
    n = len(results)
    lhs = "%r" if n == 1 else f"%r:{n}"
    rets = "%r" if n == 1 else ", ".join(f"%r#{i}" for i in range(n))
    attr = f" {{{attrs}}}" if attrs else ""
    reg = f" ({{\n{region}\n}})" if region else ""
    return (f"func.func @main({args}) -> ({', '.join(results)}) {{\n"
            f"  {lhs} = \"{name}\"({uses}){reg}{attr} : ({', '.join(operand_types)}) -> "
            f"{result_type}\n"
            f"  func.return {rets} : {', '.join(results)}\n}}")


def first_op(text: str, name: str):
    module = parse_module(text)
    interp = Interpreter(module)
    for op in module.walk():
        if op.name == name:
            return interp, op
    raise AssertionError(f"no {name} in module")


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes, dtypes and values (NaN equal to NaN, via the bits)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    return a.tobytes() == b.tobytes()


def check_varying(text: str, name: str, args: list[tuple[np.ndarray, bool]],
                  n: int = 3) -> list:
    """Run op ``name`` once on a batch of ``n`` processes (``True`` marks an operand whose
    array has the leading process dimension) and compare each process's slice with
    running the kernel on that process's operands alone. Returns the varying results."""
    interp, op = first_op(text, name)
    fn = load_kernels()[name]
    values = [Tensor(v.type, data, 1 if batched else 0)
              for v, (data, batched) in zip(op.operands, args, strict=True)]
    out = fn(Context(interp, (n,)), op, *values)
    outs = out if isinstance(out, list) else [out]
    for p in range(n):
        single = fn(Context(interp), op, *(v.at((p,)) for v in values))
        singles = single if isinstance(single, list) else [single]
        for o, s in zip(outs, singles, strict=True):
            assert o.type == s.type
            assert same(o.at((p,)).data, s.data), (p, o.at((p,)).data, s.data)
    return outs


def one(text: str, *arrays) -> np.ndarray:
    (out,) = run(text, *arrays)
    return out


# -- independent formulas -------------------------------------------------------------------
def naive_broadcast_in_dim(x: np.ndarray, dims, shape) -> np.ndarray:
    out = np.empty(shape, dtype=x.dtype)
    for idx in np.ndindex(*shape):
        out[idx] = x[tuple(0 if x.shape[i] == 1 else idx[d] for i, d in enumerate(dims))]
    return out


def naive_transpose(x: np.ndarray, perm) -> np.ndarray:
    shape = tuple(x.shape[p] for p in perm)
    out = np.empty(shape, dtype=x.dtype)
    for idx in np.ndindex(*shape):
        src = [0] * x.ndim
        for k, p in enumerate(perm):
            src[p] = idx[k]
        out[idx] = x[tuple(src)]
    return out


def naive_reverse(x: np.ndarray, dims) -> np.ndarray:
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape):
        out[idx] = x[tuple(x.shape[d] - 1 - i if d in dims else i for d, i in enumerate(idx))]
    return out


def naive_concatenate(xs, dim: int) -> np.ndarray:
    shape = list(xs[0].shape)
    shape[dim] = sum(x.shape[dim] for x in xs)
    out = np.empty(shape, dtype=xs[0].dtype)
    for idx in np.ndindex(*shape):
        i = idx[dim]
        for x in xs:
            if i < x.shape[dim]:
                out[idx] = x[(*idx[:dim], i, *idx[dim + 1:])]
                break
            i -= x.shape[dim]
    return out


# -- iota -----------------------------------------------------------------------------------
@pytest.mark.parametrize("et", ["i4", "i8", "ui8", "i64", "ui64", "f16", "bf16", "f32",
                                "f64", "complex<f32>", "complex<f64>"])
def test_iota_every_element_type(et):
    text = generic("stablehlo.iota", [], ttype((3, 4), et), "iota_dimension = 1 : i64")
    out = one(text)
    assert out.dtype == ETYPES[et]
    assert np.array_equal(out.astype(np.complex128), np.tile(np.arange(4), (3, 1)))


def test_iota_wraps_narrow_integers_and_rounds_floats():
    out = one(generic("stablehlo.iota", [], ttype((20,), "i4"), "iota_dimension = 0 : i64"))
    assert out.astype(int).tolist() == [((i + 8) % 16) - 8 for i in range(20)]
    out = one(generic("stablehlo.iota", [], ttype((600,), "f8E4M3FN"),
                      "iota_dimension = 0 : i64"))
    # f8E4M3FN: 17 rounds to even (16); 448 is the largest finite value, beyond is NaN.
    assert float(out[17]) == 16 and float(out[448]) == 448 and np.isnan(float(out[500]))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data(),
       et=st.sampled_from(["i8", "i32", "ui32", "f32", "bf16", "complex<f64>"]))
def test_iota_is_the_index_along_its_dimension(shape, data, et):
    dim = data.draw(st.integers(0, len(shape) - 1))
    out = one(generic("stablehlo.iota", [], ttype(shape, et), f"iota_dimension = {dim} : i64"))
    assert np.array_equal(out.astype(np.complex128), np.indices(shape)[dim])


# -- broadcasts -----------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(data=st.data(), et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_broadcast_in_dim_matches_the_spec(data, et, seed):
    shape = data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=4))
    rank = data.draw(st.integers(0, len(shape)))
    dims = sorted(data.draw(st.permutations(range(len(shape))))[:rank])
    dims = data.draw(st.permutations(dims))
    operand = [1 if data.draw(st.booleans()) else shape[d] for d in dims]
    x = random_array(np.random.default_rng(seed), operand, et)
    text = generic("stablehlo.broadcast_in_dim", [ttype(operand, et)], ttype(shape, et),
                   f"broadcast_dimensions = array<i64{': ' if dims else ''}"
                   f"{', '.join(map(str, dims))}>")
    assert same(one(text, x), naive_broadcast_in_dim(x, dims, shape))


def test_broadcast_in_dim_returns_a_view_and_rejects_bad_sizes():
    text = generic("stablehlo.broadcast_in_dim", [ttype((3, 1), "f32")],
                   ttype((2, 3, 4), "f32"), "broadcast_dimensions = array<i64: 1, 2>")
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    out = one(text, x)
    assert np.shares_memory(out, x) and out[1, 2, 3] == 2
    bad = generic("stablehlo.broadcast_in_dim", [ttype((3, 2), "f32")],
                  ttype((3, 4), "f32"), "broadcast_dimensions = array<i64: 0, 1>")
    with pytest.raises(VerifyError, match=r"size of operand dimension 1 \(2\) is not equal to "
                       r"1 or size of result dimension 1 \(4\)"):
        run(bad, np.zeros((3, 2), np.float32))


def test_deprecated_broadcast_prepends_dimensions():
    text = generic("stablehlo.broadcast", [ttype((3,), "i32")], ttype((2, 1, 3), "i32"),
                   "broadcast_sizes = array<i64: 2, 1>")
    x = np.array([1, 2, 3], np.int32)
    assert one(text, x).tolist() == [[[1, 2, 3]], [[1, 2, 3]]]


# -- reshape, transpose, reverse, concatenate -----------------------------------------------
@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), max_size=4), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_reshape_keeps_row_major_order(shape, data, et, seed):
    n = int(np.prod(shape))
    sizes = [d for d in range(1, n + 1) if n % d == 0]
    first = data.draw(st.sampled_from(sizes))
    new = [first, n // first] if data.draw(st.booleans()) else [n]
    x = random_array(np.random.default_rng(seed), shape, et)
    out = one(generic("stablehlo.reshape", [ttype(shape, et)], ttype(new, et)), x)
    assert same(out.reshape(-1), x.reshape(-1)) and list(out.shape) == new


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), max_size=4), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_transpose_and_reverse_match_the_spec(shape, data, et, seed):
    perm = data.draw(st.permutations(range(len(shape))))
    dims = sorted(set(data.draw(st.lists(st.integers(0, max(len(shape) - 1, 0)),
                                         max_size=len(shape)))))
    x = random_array(np.random.default_rng(seed), shape, et)
    out = one(generic("stablehlo.transpose", [ttype(shape, et)],
                      ttype([shape[p] for p in perm], et),
                      f"permutation = array<i64{': ' if perm else ''}"
                      f"{', '.join(map(str, perm))}>"), x)
    assert same(out, naive_transpose(x, perm))
    out = one(generic("stablehlo.reverse", [ttype(shape, et)], ttype(shape, et),
                      f"dimensions = array<i64{': ' if dims else ''}"
                      f"{', '.join(map(str, dims))}>"), x)
    assert same(out, naive_reverse(x, dims))


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data(),
       et=st.sampled_from(MOVE_TYPES), seed=st.integers(0, 2**16))
def test_concatenate_matches_the_spec(shape, data, et, seed):
    dim = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4))
    rng = np.random.default_rng(seed)
    shapes = [[*shape[:dim], s, *shape[dim + 1:]] for s in sizes]
    xs = [random_array(rng, s, et) for s in shapes]
    out_shape = [*shape[:dim], sum(sizes), *shape[dim + 1:]]
    text = generic("stablehlo.concatenate", [ttype(s, et) for s in shapes],
                   ttype(out_shape, et), f"dimension = {dim} : i64")
    assert same(one(text, *xs), naive_concatenate(xs, dim))


def test_transpose_and_reverse_are_views():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    t = one(generic("stablehlo.transpose", [ttype((2, 3), "i64")], ttype((3, 2), "i64"),
                    "permutation = array<i64: 1, 0>"), x)
    r = one(generic("stablehlo.reverse", [ttype((2, 3), "i64")], ttype((2, 3), "i64"),
                    "dimensions = array<i64: 0, 1>"), x)
    assert np.shares_memory(t, x) and np.shares_memory(r, x)
    assert r.tolist() == [[5, 4, 3], [2, 1, 0]]


def test_get_dimension_size():
    text = generic("stablehlo.get_dimension_size", [ttype((2, 7), "f32")], "tensor<i32>",
                   "dimension = 1 : i64")
    out = one(text, np.zeros((2, 7), np.float32))
    assert out.dtype == np.int32 and int(out) == 7


def test_dynamically_shaped_arguments_run_on_their_actual_shape():
    text = """
    func.func @main(%x: tensor<?x3xf32>) -> (tensor<3x?xf32>, tensor<i32>) {
      %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<?x3xf32>) -> tensor<3x?xf32>
      %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
      func.return %t, %n : tensor<3x?xf32>, tensor<i32>
    }"""
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    t, n = run(text, x)
    assert t.shape == (3, 5) and int(n) == 5


# -- dynamic shape ops ----------------------------------------------------------------------
def test_dynamic_iota_reshape_and_broadcast_take_their_shape_at_run_time():
    text = """
    func.func @main(%s: tensor<2xi32>, %x: tensor<6xf32>)
        -> (tensor<?x?xi64>, tensor<?x?xf32>, tensor<?x?x?xf32>) {
      %i = stablehlo.dynamic_iota %s, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi64>
      %r = stablehlo.dynamic_reshape %x, %s : (tensor<6xf32>, tensor<2xi32>) -> tensor<?x?xf32>
      %c = stablehlo.constant dense<[4, 2, 3]> : tensor<3xi64>
      %b = stablehlo.dynamic_broadcast_in_dim %r, %c, dims = [1, 2]
          : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
      func.return %i, %r, %b : tensor<?x?xi64>, tensor<?x?xf32>, tensor<?x?x?xf32>
    }"""
    x = np.arange(6, dtype=np.float32)
    i, r, b = run(text, np.array([2, 3], np.int32), x)
    assert i.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert r.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert b.shape == (4, 2, 3) and (b == r).all()
    with pytest.raises(InterpreterError, match="cannot reshape"):
        run(text, np.array([4, 2], np.int32), x)


def test_set_dimension_size_cuts_a_dynamic_dimension():
    text = """
    func.func @main(%x: tensor<5xi64>, %n: tensor<i32>) -> (tensor<?xi64>, tensor<5xi64>) {
      %a = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<5xi64>, tensor<i32>)
          -> tensor<?xi64>
      %b = stablehlo.set_dimension_size %x, %n, dim = 0 : (tensor<5xi64>, tensor<i32>)
          -> tensor<5xi64>
      func.return %a, %b : tensor<?xi64>, tensor<5xi64>
    }"""
    a, b = run(text, np.arange(5), np.array(3, np.int32))
    assert a.tolist() == [0, 1, 2] and b.tolist() == [0, 1, 2, 3, 4]


# -- varying operands -----------------------------------------------------------------------
@pytest.mark.parametrize(("name", "result", "attrs"), [
    ("stablehlo.transpose", (4, 3, 2), "permutation = array<i64: 2, 1, 0>"),
    ("stablehlo.reverse", (2, 3, 4), "dimensions = array<i64: 0, 2>"),
    ("stablehlo.reshape", (6, 4), ""),
    ("stablehlo.broadcast_in_dim", (4, 5, 3, 2), "broadcast_dimensions = array<i64: 3, 2, 0>"),
    ("stablehlo.broadcast", (2, 2, 3, 4), "broadcast_sizes = array<i64: 2>"),
])
def test_shape_ops_on_varying_operands(name, result, attrs):
    text = generic(name, [ttype((2, 3, 4), "f32")], ttype(result, "f32"), attrs)
    x = random_array(np.random.default_rng(0), (3, 2, 3, 4), "f32")
    (out,) = check_varying(text, name, [(x, True)])
    assert out.batch == 1 and out.data.shape == (3, *result)


def test_concatenate_mixes_uniform_and_varying_inputs():
    text = generic("stablehlo.concatenate", [ttype((2, 2), "i32")] * 3, ttype((2, 6), "i32"),
                   "dimension = 1 : i64")
    rng = np.random.default_rng(1)
    for pattern in itertools.product([False, True], repeat=3):
        args = [(random_array(rng, (3, 2, 2) if b else (2, 2), "i32"), b) for b in pattern]
        (out,) = check_varying(text, "stablehlo.concatenate", args)
        assert out.batch == (1 if any(pattern) else 0)


def test_dynamic_iota_refuses_a_shape_that_differs_between_processes():
    text = generic("stablehlo.dynamic_iota", [ttype((1,), "i64")], ttype((3,), "i32"),
                   "iota_dimension = 0 : i64")
    with pytest.raises(InterpreterError, match="differs between processes"):
        check_varying(text, "stablehlo.dynamic_iota", [(np.array([[3], [3], [4]]), True)])


def test_dynamic_reshape_with_a_varying_operand_and_agreeing_shape():
    text = generic("stablehlo.dynamic_reshape", [ttype((6,), "f32"), ttype((2,), "i64")],
                   ttype((2, 3), "f32"))
    x = random_array(np.random.default_rng(2), (3, 6), "f32")
    shape = np.broadcast_to(np.array([2, 3]), (3, 2))
    check_varying(text, "stablehlo.dynamic_reshape", [(x, True), (shape, True)])
