"""``sdy-add-func-data-flow-edges``: ``sdy.func_data_flow_edge`` on the arguments of every
non-main function and on every call result.

Upstream's pass is not idempotent: a second run puts an edge on each edge, which the
verifier rejects (the operand of an edge must be a function argument or a call result).
"""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import PassError, ShardyRefError

from .pass_helpers import assert_like_oracle, run_pipeline
from .strategies_call_graph import call_graph_module

PASS = "sdy-add-func-data-flow-edges"
V = "tensor<8xf32>"
MESH = 'sdy.mesh @mesh = <["a"=2]>\n'

SHARDING_A = '<@mesh, [{"a"}]>'
A_ = f"{{sdy.sharding = #sdy.sharding{SHARDING_A}}}"
RESULTS = f"{V}, !stablehlo.token, tensor<?xf32>"
CALL_SHARDINGS = '<@mesh, [{}]>, <@mesh, []>, <@mesh, [{?}]>'
CALLS = MESH + f"""func.func private @f(%arg0: {V} {A_}, %arg1: !stablehlo.token, %arg2: {V}) \
-> ({RESULTS}) {{
  %0 = stablehlo.add %arg0, %arg2 : {V}
  %1 = stablehlo.convert %0 : ({V}) -> tensor<?xf32>
  return %0, %arg1, %1 : {RESULTS}
}}
func.func @main(%arg0: {V}, %arg1: !stablehlo.token) -> {V} {{
  %0:3 = call @f(%arg0, %arg1, %arg0) \
{{sdy.sharding = #sdy.sharding_per_value<[{CALL_SHARDINGS}]>}} \
: ({V}, !stablehlo.token, {V}) -> ({RESULTS})
  %1 = stablehlo.abs %0#0 : {V}
  return %1 : {V}
}}
"""


def per_value(sharding: str) -> str:
    return f"{{sdy.sharding = #sdy.sharding_per_value<[{sharding}]>}}"


def body(out: str, func: str) -> list[str]:
    lines = [line.strip() for line in out.splitlines()]
    start = next(i for i, line in enumerate(lines) if f"@{func}(" in line and "func" in line)
    end = lines.index("}", start)
    return lines[start + 1:end]


def test_argument_edges_open_the_body_in_order_with_shardings():
    assert body(run_pipeline(CALLS, PASS), "f")[:3] == [
        f"%0 = sdy.func_data_flow_edge %arg0 {per_value(SHARDING_A)} : {V}",
        f"%1 = sdy.func_data_flow_edge %arg2 : {V}",
        f"%2 = stablehlo.add %0, %1 : {V}"]


def test_call_result_edges_follow_the_call_static_shapes_only():
    lines = body(run_pipeline(CALLS, PASS), "main")
    assert lines[1] == f"%1 = sdy.func_data_flow_edge %0#0 {per_value('<@mesh, [{}]>')} : {V}"
    assert lines[2] == f"%2 = stablehlo.abs %1 : {V}"


def test_main_arguments_get_no_edges():
    assert not any("%arg" in line and "edge" in line for line in
                   body(run_pipeline(CALLS, PASS), "main"))


def test_single_function_is_main_whatever_its_name():
    text = f"func.func @g(%arg0: {V}) -> {V} {{\n  return %arg0 : {V}\n}}\n"
    assert "func_data_flow_edge" not in run_pipeline(text, PASS)


def test_no_main_among_several_functions_fails():
    text = (f"func.func @g(%arg0: {V}) -> {V} {{\n  return %arg0 : {V}\n}}\n"
            f"func.func @h(%arg0: {V}) -> {V} {{\n  return %arg0 : {V}\n}}\n")
    with pytest.raises(PassError, match="Failed to lookup function: main"):
        run_pipeline(text, PASS)


def test_declarations_are_skipped_and_their_calls_get_edges():
    text = (f"func.func @main(%arg0: {V}) -> {V} {{\n  %0 = call @d(%arg0) : ({V}) -> {V}\n"
            f"  return %0 : {V}\n}}\nfunc.func private @d({V}) -> {V}\n")
    out = run_pipeline(text, PASS)
    assert out.count("sdy.func_data_flow_edge") == 1 and f"return %1 : {V}" in out


def as_main(text: str) -> str:
    """Random call graphs start at public ``@f0``; call it ``@main``."""
    return text.replace("@f0(", "@main(")


def expected_edges(text: str) -> int:
    """One per argument of each non-main function with a body, one per call result (all
    static tensors here)."""
    bodies = len(re.findall(r"^func\.func .*@f\d+\(%arg0", text, re.M))
    results = sum(int(n or 1) for n in re.findall(r"^  %\d+(?::(\d+))? = call", text, re.M))
    return bodies + results


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_verifies_with_an_edge_per_argument_and_result(rng):
    text = as_main(call_graph_module(rng, shardings=True))
    out = run_pipeline(text, PASS)
    assert out.count("sdy.func_data_flow_edge") == expected_edges(text)


@settings(max_examples=20, deadline=None)
@given(st.randoms(use_true_random=False))
def test_second_run_stacks_edges_and_fails(rng):
    text = as_main(call_graph_module(rng, shardings=True))
    once = run_pipeline(text, PASS)
    if expected_edges(text):
        with pytest.raises(ShardyRefError, match=r"sdy\.func_data_flow_edge"):
            run_pipeline(once, PASS)


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = [as_main(call_graph_module(random.Random(seed), shardings=True))
             for seed in range(40)]
    assert_like_oracle(texts, PASS)
