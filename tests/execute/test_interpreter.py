"""The interpreter core: calls, control flow (uniform and varying predicates), tuples,
run() argument checking, located errors, the memory budget, result printing."""
from __future__ import annotations

import io

import numpy as np
import pytest

from shardy_ref.execute import Interpreter, InterpreterError, run
from shardy_ref.execute.printing import format_tensor
from shardy_ref.execute.values import Tensor, from_dense
from shardy_ref.ir.types import FloatType, IntegerType, RankedTensorType
from shardy_ref.parser import parse_attribute, parse_module


def interp(text: str, **kw) -> Interpreter:
    return Interpreter(parse_module(text), **kw)


def test_call_and_multiple_results():
    text = """
    func.func private @twice(%x: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
      %0 = stablehlo.add %x, %x : tensor<2xi32>
      func.return %0, %x : tensor<2xi32>, tensor<2xi32>
    }
    func.func @main(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
      %0:2 = func.call @twice(%a) : (tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
      func.return %0#1, %0#0 : tensor<2xi32>, tensor<2xi32>
    }"""
    a, b = run(text, np.array([1, -7], dtype=np.int32))
    assert a.tolist() == [1, -7] and b.tolist() == [2, -14]


WHILE = """
func.func @main(%n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %c0 = stablehlo.constant dense<0> : tensor<i64>
  %c1 = stablehlo.constant dense<1> : tensor<i64>
  %r:2 = stablehlo.while(%i = %c0, %s = %c0) : tensor<i64>, tensor<i64>
  cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %i1 = stablehlo.add %i, %c1 : tensor<i64>
    %s1 = stablehlo.add %s, %i : tensor<i64>
    stablehlo.return %i1, %s1 : tensor<i64>, tensor<i64>
  }
  func.return %r#0, %r#1 : tensor<i64>, tensor<i64>
}"""


def test_while_runs_until_the_condition_fails():
    i, s = run(WHILE, np.array(5, dtype=np.int64))
    assert int(i) == 5 and int(s) == 10


def _parallel(body: str, n: int, ret: str, inputs: str = "") -> str:
    """A module whose @main runs @f on n processes and returns each process's result."""
    results = ", ".join([ret] * n)
    return f"""
    {body}
    func.func @main() -> ({results}) {{
      {inputs}
      %r:{n} = "interpreter.run_parallel"() {{programs = [[{", ".join(["@f"] * n)}]]}}
          : () -> ({results})
      func.return {", ".join(f"%r#{i}" for i in range(n))} : {results}
    }}"""


def _both_ways(text: str) -> list:
    """Results of the vectorized run and of the one-thread-per-process run (must agree)."""
    vec = interp(text).run("main")
    threads = interp(text, vectorize=False).run("main")
    for a, b in zip(vec, threads, strict=True):
        assert a.type == b.type and np.array_equal(a.data, b.data)
    return [v.data for v in vec]


def test_while_with_a_different_trip_count_per_process():
    body = WHILE.replace("func.func @main(%n: tensor<i64>)", "func.func @f()").replace(
        "%c0 = stablehlo.constant dense<0> : tensor<i64>",
        "%c0 = stablehlo.constant dense<0> : tensor<i64>\n"
        "  %p = stablehlo.partition_id : tensor<ui32>\n"
        "  %n = stablehlo.convert %p : (tensor<ui32>) -> tensor<i64>").replace(
        "-> (tensor<i64>, tensor<i64>)", "-> tensor<i64>").replace(
        "func.return %r#0, %r#1 : tensor<i64>, tensor<i64>", "func.return %r#1 : tensor<i64>")
    out = _both_ways(_parallel(body, 4, "tensor<i64>"))
    assert [int(x) for x in out] == [0, 0, 1, 3]


IF_BODY = """
func.func @f() -> tensor<2xi32> {
  %p = stablehlo.partition_id : tensor<ui32>
  %one = stablehlo.constant dense<1> : tensor<ui32>
  %odd = stablehlo.and %p, %one : tensor<ui32>
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  %pred = stablehlo.compare NE, %odd, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %r = "stablehlo.if"(%pred) ({
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    stablehlo.return %a : tensor<2xi32>
  }, {
    %b = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    stablehlo.return %b : tensor<2xi32>
  }) : (tensor<i1>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}"""


def test_if_with_a_varying_predicate_merges_per_process():
    out = _both_ways(_parallel(IF_BODY, 3, "tensor<2xi32>"))
    assert [o.tolist() for o in out] == [[3, 4], [1, 2], [3, 4]]


CASE_BODY = """
func.func @f() -> tensor<i32> {
  %p = stablehlo.partition_id : tensor<ui32>
  %i = stablehlo.convert %p : (tensor<ui32>) -> tensor<i32>
  %r = "stablehlo.case"(%i) ({
    %a = stablehlo.constant dense<10> : tensor<i32>
    stablehlo.return %a : tensor<i32>
  }, {
    %b = stablehlo.constant dense<20> : tensor<i32>
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}"""


def test_case_with_a_varying_index_takes_the_last_branch_out_of_range():
    out = _both_ways(_parallel(CASE_BODY, 4, "tensor<i32>"))
    assert [int(o) for o in out] == [10, 20, 20, 20]


def test_check_inside_a_branch_only_checks_the_processes_taking_it():
    body = IF_BODY.replace(
        "%a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>",
        "%a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "    %q = stablehlo.partition_id : tensor<ui32>\n"
        "    %qo = stablehlo.and %q, %one : tensor<ui32>\n"
        "    check.expect_eq_const %qo, dense<1> : tensor<ui32>")
    _both_ways(_parallel(body, 4, "tensor<2xi32>"))


def test_tuples():
    text = """
    func.func @main(%a: tensor<2xf32>, %b: tensor<i1>) -> (tensor<i1>, tensor<2xf32>) {
      %t = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<i1>>
      %x = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<i1>>) -> tensor<i1>
      %y = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tensor<i1>>) -> tensor<2xf32>
      func.return %x, %y : tensor<i1>, tensor<2xf32>
    }"""
    x, y = run(text, np.array([0.5, 1.5], dtype=np.float32), np.array(True))
    assert bool(x) and y.tolist() == [0.5, 1.5]


IDENTITY = """
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  func.return %a : tensor<2x3xf32>
}"""


@pytest.mark.parametrize(("args", "message"), [
    ((), "takes 1 arguments, got 0"),
    ((np.zeros((2, 3), np.float64),), "expected f32 elements (NumPy float32), got float64"),
    ((np.zeros((3, 2), np.float32),), "expected shape tensor<2x3xf32>, got an array of shape"),
])
def test_run_rejects_bad_arguments_naming_them(args, message):
    with pytest.raises(InterpreterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(IDENTITY, *args)


def test_run_accepts_python_lists_for_arguments():
    (out,) = run(IDENTITY, [[1, 2, 3], [4, 5, 6]])
    assert out.dtype == np.float32 and out.sum() == 21


def test_an_unsupported_op_is_a_located_error():
    text = "func.func @main() -> tensor<2xf32> {\n" \
           "  %0 = \"stablehlo.not_an_op\"() : () -> tensor<2xf32>\n" \
           "  func.return %0 : tensor<2xf32>\n}"
    module = parse_module(text, "prog.mlir")
    with pytest.raises(InterpreterError) as e:
        Interpreter(module).run()
    assert str(e.value).startswith("prog.mlir:2:8: error: Unsupported op: 'stablehlo.not_an_op'")


def test_the_memory_budget_refuses_before_allocating():
    text = """
    func.func @f() -> tensor<1024x1024xf32> {
      %0 = stablehlo.constant dense<1.0> : tensor<1024x1024xf32>
      %1 = stablehlo.add %0, %0 : tensor<1024x1024xf32>
      func.return %1 : tensor<1024x1024xf32>
    }
    func.func @main() {
      %r:8 = "interpreter.run_parallel"() {programs = [[@f, @f, @f, @f, @f, @f, @f, @f]]}
        : () -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>,
                 tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>,
                 tensor<1024x1024xf32>, tensor<1024x1024xf32>)
      func.return
    }"""
    with pytest.raises(InterpreterError, match=r"would need 0.03 GiB .* over the memory budget"):
        interp(text, memory_budget=16 << 20).run()


def test_entry_function_rules():
    two = "func.func @a() { func.return }\nfunc.func @b() { func.return }"
    with pytest.raises(InterpreterError, match="module must have entry func with name main"):
        interp(two).run()
    assert interp(two).run("b") == []
    one = "func.func @only() -> tensor<i32> {\n" \
          "  %0 = stablehlo.constant dense<3> : tensor<i32>\n" \
          "  func.return %0 : tensor<i32>\n}"
    (v,) = interp(one).run()
    assert int(v.data) == 3


def _t(text: str) -> Tensor:
    return from_dense(parse_attribute(text))


@pytest.mark.parametrize(("attr", "expected"), [
    ("dense<[1, 2, -3, -4]> : tensor<4xi8>", "tensor<4xi8> {\n  [1, 2, -3, -4]\n}"),
    ("dense<1> : tensor<ui8>", "tensor<ui8> {1}"),
    ("dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>",
     "tensor<2x2xi8> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}"),
    ("dense<> : tensor<2x0xi8>", "tensor<2x0xi8> {\n  [\n    [],\n    []\n  ]\n}"),
    ("dense<[true, false]> : tensor<2xi1>", "tensor<2xi1> {\n  [true, false]\n}"),
    ("dense<(3.14, 1.0)> : tensor<1xcomplex<f32>>",
     "tensor<1xcomplex<f32>> {\n  [[3.140000e+00, 1.000000e+00]]\n}"),
])
def test_tensors_print_as_the_reference_prints_them(attr, expected):
    assert format_tensor(_t(attr)) == expected


def test_print_op_writes_the_operand_name_and_value():
    text = """
    func.func @main() {
      %0 = stablehlo.constant dense<[0, 1]> : tensor<2xi32>
      interpreter.print %0 : tensor<2xi32>
      func.return
    }"""
    out = io.StringIO()
    interp(text, stdout=out).run()
    assert out.getvalue() == "%c = tensor<2xi32> {\n  [0, 1]\n}\n"


def test_sub_byte_and_narrow_float_constants_round_trip():
    t = _t("dense<[1, -2]> : tensor<2xi2>")
    assert t.data.dtype.name == "int2" and t.data.astype(int).tolist() == [1, -2]
    f = _t("dense<[1.0, -3.0]> : tensor<2xf6E2M3FN>")
    assert f.type == RankedTensorType((2,), FloatType("f6E2M3FN"))
    assert f.data.astype(float).tolist() == [1.0, -3.0]
    u = _t("dense<[255, 0]> : tensor<2xui8>")
    assert u.type.element_type == IntegerType(8, "unsigned") and u.data.tolist() == [255, 0]
