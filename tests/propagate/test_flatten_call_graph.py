"""``sdy-flatten-call-graph``: one function per call site, clones named as MLIR uniques
symbols. Upstream's pass is idempotent (a flat graph has nothing to clone)."""
from __future__ import annotations

import random

import corpus
import pytest
from hypothesis import given, settings

from shardy_ref.ir.call_graph import CALL_OP, callee_name
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.symbols import symbol_name
from shardy_ref.parser import parse_module
from shardy_ref.propagate.import_.flatten_call_graph import flatten_call_graph

from .pass_helpers import assert_idempotent, run_pipeline
from .strategies_call_graph import call_graph_module, call_graph_modules

T = "tensor<4xf32>"


def func(name: str, calls: list[str] = (), private: bool = True, attrs: str = "") -> str:
    body = "".join(f"  %{i} = call @{c}(%arg0) : ({T}) -> {T}\n" for i, c in enumerate(calls))
    vis = "private " if private else ""
    return f"func.func {vis}@{name}(%arg0: {T}) -> {T}{attrs} {{\n{body}  return %arg0 : {T}\n}}\n"


def flatten(text: str) -> str:
    return run_pipeline(text, "sdy-flatten-call-graph")


def callees(text: str) -> dict[str, list[str]]:
    module = parse_module(text, "t.mlir")
    return {symbol_name(f): [callee_name(o) for o in f.walk() if o.name == CALL_OP]
            for f in module.regions[0].blocks[0]}


def test_single_call_site_is_kept():
    text = func("main", ["a"], private=False) + func("a", ["b"]) + func("b")
    assert callees(flatten(text)) == {"main": ["a"], "a": ["b"], "b": []}


def test_second_call_gets_a_clone_with_original_name():
    out = flatten(func("main", ["a", "a", "a"], private=False) + func("a"))
    assert callees(out)["main"] == ["a", "a_0", "a_1"]
    assert 'func.func private @a_1(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes ' \
           '{sdy.original_func_name = "a"}' in out


def test_one_uniquing_counter_for_all_names():
    out = flatten(func("main", ["x", "x", "y", "y"], private=False) + func("x") + func("y"))
    assert callees(out)["main"] == ["x", "x_0", "y", "y_1"]


def test_clone_of_clone_keeps_first_original_name():
    text = func("main", ["a", "a"], private=False) + func("a", ["b", "b"]) + func("b")
    out = flatten(text)
    graph = callees(out)
    assert graph["a"] == ["b", "b_0"]
    assert graph["main"] == ["a", "a_3"]
    assert graph["a_3"] == ["b_1", "b_0_2"]
    assert '@b_0_2(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes ' \
           '{sdy.original_func_name = "b"}' in out


def test_clone_skips_taken_names():
    text = func("main", ["a", "a"], private=False) + func("a") + func("a_0")
    assert callees(flatten(text))["main"] == ["a", "a_1"]


def test_declarations_are_cloned_too():
    text = func("main", ["d", "d"], private=False) + f"func.func private @d({T}) -> {T}\n"
    out = flatten(text)
    assert callees(out)["main"] == ["d", "d_0"]
    assert f'func.func private @d_0({T}) -> {T} attributes {{sdy.original_func_name = "d"}}' \
        in out


def test_calls_in_nested_regions_are_flattened():
    text = f"""sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: {T}) -> {T} {{
  %0 = call @f(%arg0) : ({T}) -> {T}
  %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{{"a"}}]>]
      out_shardings=[<@mesh, [{{"a"}}]>] manual_axes={{"a"}} (%arg1: tensor<2xf32>) {{
    %2 = stablehlo.concatenate %arg1, %arg1, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> {T}
    %3 = func.call @f(%2) : ({T}) -> {T}
    sdy.return %arg1 : tensor<2xf32>
  }} : ({T}) -> {T}
  return %1 : {T}
}}
""" + func("f")
    assert callees(flatten(text))["main"] == ["f", "f_0"]


def test_recursion_is_an_error():
    # upstream recurses until it crashes; we report the cycle
    text = func("main", ["r"], private=False) + func("r", ["r"])
    with pytest.raises(PassError, match="recursive call graph: @r -> @r"):
        flatten(text)


def test_predicate_flattens_only_below_accepted_calls():
    text = (func("main", ["a", "b"], private=False) + func("a", ["c"]) + func("b", ["c"])
            + func("c"))
    module = parse_module(text, "t.mlir")
    flatten_call_graph(module, under=lambda call: callee_name(call) == "a")
    graph = {symbol_name(f): [callee_name(o) for o in f.walk() if o.name == CALL_OP]
             for f in module.regions[0].blocks[0]}
    assert graph["main"] == ["a", "b"]
    assert graph["a"] == ["c_0"]  # first call of @a clones the graph below it
    assert graph["b"] == ["c"]


def _every_function_called_at_most_once(text: str) -> None:
    sites = [c for calls in callees(text).values() for c in calls]
    assert len(sites) == len(set(sites))


@settings(max_examples=40, deadline=None)
@given(call_graph_modules())
def test_flat_idempotent_and_verifies(text):
    out = assert_idempotent(text, "sdy-flatten-call-graph")  # verifies after every pass
    _every_function_called_at_most_once(out)


@pytest.mark.oracle
def test_random_call_graphs_flatten_like_real_shardy():
    texts = [call_graph_module(random.Random(seed)) for seed in range(40)]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline="builtin.module(sdy-flatten-call-graph)")
    for text, ref in zip(texts, refs):
        assert ref["ok"], ref["err"]
        assert flatten(text) == ref["out"], text
