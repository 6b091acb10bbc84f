"""``sdy-constant-or-scalar-splitter``: each constant sub-computation and scalar expansion
ends up with a single user. Upstream's pass is idempotent on modules without calls; a call
to a constant function is cloned with a fresh copy of its callee on every run, so with
calls a second run renames callees (and leaves the old ones for ``symbol-dce``)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import IntegerType, RankedTensorType
from shardy_ref.parser import parse_module
from shardy_ref.transforms.common.op_properties import is_elementwise, is_pure

from .pass_helpers import assert_like_oracle, run_pipeline
from .strategies_constants import constant_module, constant_modules

PASS = "sdy-constant-or-scalar-splitter"
T, S = "tensor<4x8xf32>", "tensor<f32>"


def body(text: str) -> list[str]:
    """The op lines of the output, stripped."""
    out = run_pipeline(text, PASS)
    return [line.strip() for line in out.splitlines()
            if line.strip() and not line.strip().startswith(("module", "func.func", "}"))]


def main(args: str, results: str, ops: str) -> str:
    return f"func.func @main({args}) -> ({results}) {{\n{ops}\n}}\n"


def test_stablehlo_constant_becomes_sdy_constant_keeping_its_attributes():
    text = main("", T, f"%0 = stablehlo.constant {{foo, bar = 1 : i32}} dense<1.0> : {T}\n"
                       f"return %0 : {T}")
    assert body(text) == [
        f"%0 = sdy.constant {{bar = 1 : i32, foo}} dense<1.000000e+00> : {T}",
        f"return %0 : {T}"]


def test_constant_sub_computation_cloned_per_user_next_to_the_original():
    text = main(f"%arg0: {T}", f"{T}, {T}", f"""
  %0 = stablehlo.iota dim = 0 : {T}
  %1 = stablehlo.add %0, %0 : {T}
  %2 = stablehlo.transpose %1, dims = [0, 1] : ({T}) -> {T}
  return %1, %2 : {T}, {T}""")
    assert body(text) == [
        f"%0 = stablehlo.iota dim = 0 : {T}",
        f"%1 = stablehlo.iota dim = 0 : {T}",
        f"%2 = stablehlo.add %0, %0 : {T}",
        f"%3 = stablehlo.add %1, %1 : {T}",
        f"%4 = stablehlo.transpose %2, dims = [0, 1] : ({T}) -> {T}",
        f"return %3, %4 : {T}, {T}"]


def test_scalars_are_shared_and_scalar_expansions_split():
    text = main(f"%arg0: {S}", f"{S}, {T}", f"""
  %0 = stablehlo.constant dense<1.0> : {S}
  %1 = stablehlo.add %0, %arg0 : {S}
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : ({S}) -> {T}
  %3 = stablehlo.negate %2 : {T}
  %4 = stablehlo.add %2, %3 : {T}
  return %0, %4 : {S}, {T}""")
    lines = body(text)
    assert sum("sdy.constant" in line for line in lines) == 1
    assert sum("broadcast_in_dim %1" in line for line in lines) == 2


def test_sharding_groups_of_a_converted_constant_cloned_in_source_order():
    # the conversion to sdy.constant reverses the constant's use list, as MLIR's RAUW does
    ops = f"""
  %0 = {{const}} dense<1.0> : {T}
  sdy.sharding_group %0 group_id=0 : {T}
  sdy.sharding_group %0 group_id=1 : {T}
  %1 = stablehlo.add %0, %arg0 : {T}
  return %0, %1 : {T}, {T}"""
    groups = [[line for line in body(main(f"%arg0: {T}", f"{T}, {T}", ops.format(const=c)))
               if "sharding_group" in line] for c in ("stablehlo.constant", "sdy.constant")]
    assert [g.split("group_id=")[1][0] for g in groups[0]] == ["0", "1", "0", "1"]
    assert [g.split("group_id=")[1][0] for g in groups[1]] == ["1", "0", "1", "0"]


CALLEE = f"""func.func private @c(%arg0: {T}) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  return %0 : {T}
}}
"""


def test_call_to_constant_function_is_cloned_with_its_callee():
    text = main("", f"{T}, {T}", f"""
  %0 = stablehlo.constant dense<1.0> : {T}
  %1 = call @c(%0) : ({T}) -> {T}
  %2 = stablehlo.transpose %1, dims = [0, 1] : ({T}) -> {T}
  return %1, %2 : {T}, {T}""") + CALLEE
    out = run_pipeline(text, PASS)
    assert "call @c_0(" in out and "call @c_1(" in out and "call @c(" not in out
    assert out.count('sdy.original_func_name = "c"') == 2


def test_named_computation_not_constant_anywhere_is_not_constant_everywhere():
    nc = f"""%0 = sdy.named_computation<"nc">({{arg}}) (%x: {T}) {{{{
    {{op}}
    sdy.return %1 : {T}
  }}}} : ({T}) -> {T}"""
    nonconst = nc.format(arg="%arg0", op=f"%1 = stablehlo.transpose %x, dims = [0, 1] : "
                                         f"({T}) -> {T}")
    const = nc.format(arg="%c", op=f"%1 = stablehlo.negate %x : {T}")
    user = f"""func.func @user() -> ({T}, {T}) {{
  %c = stablehlo.constant dense<1.0> : {T}
  {const}
  return %0, %0 : {T}, {T}
}}
"""
    alone = run_pipeline(user, PASS)
    assert alone.count("sdy.named_computation") == 2
    text = main(f"%arg0: {T}", T, f"  {nonconst}\n  return %0 : {T}") + user
    assert run_pipeline(text, PASS).count("sdy.named_computation") == 2  # 1 each


@pytest.mark.parametrize(("result", "split"), [("tensor<?xf32>", True), ("tensor<4xf32>", False)])
def test_ops_that_may_not_be_speculated_are_not_constant_preserving(result, split):
    d = "tensor<?xf32>"
    text = main("", f"{result}, {result}", f"""
  %0 = stablehlo.iota dim = 0 : tensor<4xf32>
  %1 = stablehlo.convert %0 : (tensor<4xf32>) -> {d}
  %2 = stablehlo.convert %1 : ({d}) -> {result}
  return %2, %2 : {result}, {result}""")
    assert (run_pipeline(text, PASS).count("stablehlo.iota") == 2) == split


def test_sharding_constraint_is_not_constant_preserving_but_reshard_is():
    mesh = 'sdy.mesh @mesh = <["a"=2]>\n'
    ops = f"""
  %0 = stablehlo.constant dense<1.0> : {T}
  %1 = sdy.{{op}} %0 <@mesh, [{{{{"a"}}}}, {{{{}}}}]> : {T}
  return %1, %1 : {T}, {T}"""
    counts = [run_pipeline(mesh + main("", f"{T}, {T}", ops.format(op=op)), PASS)
              .count("sdy.constant") for op in ("reshard", "sharding_constraint")]
    assert counts == [2, 1]


def _op(text: str) -> Operation:
    module = parse_module(f"func.func @f(%a: tensor<4xf32>) {{\n{text}\nreturn\n}}", "t")
    return next(op for op in module.walk() if op.name.startswith("stablehlo."))


def test_bitcast_convert_is_element_wise_only_between_equal_shapes():
    same = _op("%0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4xi32>")
    split = _op("%0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4x2xi16>")
    assert is_elementwise(same) and not is_elementwise(split)
    assert is_pure(same) and is_pure(split)
    assert same.results[0].type == RankedTensorType((4,), IntegerType(32))
    assert not is_elementwise(_op("%0 = stablehlo.transpose %a, dims = [0] : "
                                  "(tensor<4xf32>) -> tensor<4xf32>"))


def _group_order_free(text: str) -> str:
    """``text`` with each run of adjacent ``sdy.sharding_group`` lines sorted: a second run of
    the splitter may move a constant's groups past each other (real Shardy's does too)."""
    out, run = [], []
    for line in [*text.split("\n"), ""]:
        if line.lstrip().startswith("sdy.sharding_group"):
            run.append(line)
            continue
        out += [*sorted(run), line]
        run = []
    return "\n".join(out[:-1])


@settings(max_examples=40, deadline=None)
@given(constant_modules())
def test_idempotent_and_verifies_without_calls(text):
    """Idempotent up to the order of adjacent sharding groups: on a constant with two
    groups, a second run reorders them (so does real Shardy's, e.g. for
    ``sharding_group %c group_id=0`` ... ``group_id=1`` around a named computation)."""
    once = run_pipeline(text, PASS)
    twice = run_pipeline(once, PASS)
    assert _group_order_free(twice) == _group_order_free(once), \
        f"not idempotent:\n--- once\n{once}\n--- twice\n{twice}"


@settings(max_examples=30, deadline=None)
@given(constant_modules(calls=True))
def test_output_with_calls_verifies(text):
    run_pipeline(text, PASS)  # verifies after the pass


def test_not_idempotent_on_calls_to_constant_functions():
    text = main("", f"{T}, {T}", f"""
  %0 = stablehlo.constant dense<1.0> : {T}
  %1 = call @c(%0) : ({T}) -> {T}
  return %1, %1 : {T}, {T}""") + CALLEE
    once = run_pipeline(text, PASS)
    assert "call @c_0_0(" in run_pipeline(once, PASS)


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = [constant_module(random.Random(seed), calls=seed % 2 == 1) for seed in range(60)]
    assert_like_oracle(texts, PASS)


def test_constant_chain_longer_than_the_recursion_limit_is_cloned():
    depth = 1100  # Python's default recursion limit is 1000
    chain = "".join(f"  %n{i} = stablehlo.negate %n{i - 1} : {T}\n" for i in range(1, depth))
    text = main(f"%arg0: {T}", T, f"  %n0 = stablehlo.constant dense<1.0> : {T}\n{chain}"
                f"  %a = stablehlo.add %n{depth - 1}, %arg0 : {T}\n"
                f"  %b = stablehlo.add %n{depth - 1}, %a : {T}\n  return %b : {T}")
    ops = body(text)
    assert sum(op.startswith("%") and "stablehlo.negate" in op for op in ops) == 2 * (depth - 1)
    assert sum("sdy.constant" in op for op in ops) == 2
