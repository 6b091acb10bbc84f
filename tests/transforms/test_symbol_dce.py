"""``symbol-dce``: private symbols nothing live refers to are erased, transitively;
public symbols (functions without visibility, ``sdy.mesh``) always stay."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from tests.propagate.pass_helpers import assert_idempotent, assert_like_oracle, run_pipeline
from tests.propagate.strategies_call_graph import call_graph_module, call_graph_modules

T = "tensor<8xf32>"


def func(name: str, callee: str | None = None, private: bool = True) -> str:
    vis = "private " if private else ""
    if callee is None:
        return f"func.func {vis}@{name}(%arg0: {T}) -> {T} {{\n  return %arg0 : {T}\n}}\n"
    return (f"func.func {vis}@{name}(%arg0: {T}) -> {T} {{\n"
            f"  %0 = call @{callee}(%arg0) : ({T}) -> {T}\n  return %0 : {T}\n}}\n")


def names(text: str) -> list[str]:
    return [line.split("@")[1].split("(")[0].split(" ")[0] for line in text.splitlines()
            if line.lstrip().startswith(("func.func", "sdy.mesh"))]


def test_dead_private_chains_go_and_live_ones_stay():
    text = ('sdy.mesh @unused_mesh = <["x"=2]>\n' + func("dead", "dead_callee")
            + func("dead_callee") + func("live_callee", "live_leaf") + func("live_leaf")
            + func("main", "live_callee", private=False))
    assert names(run_pipeline(text, "symbol-dce")) == \
        ["unused_mesh", "live_callee", "live_leaf", "main"]


def test_a_private_function_used_only_by_itself_is_dead():
    text = func("loop", "loop") + func("main", private=False)
    assert names(run_pipeline(text, "symbol-dce")) == ["main"]


def test_a_mesh_referenced_only_by_dead_code_stays_public():
    text = ('sdy.mesh @m = <["x"=2]>\n'
            f'func.func private @f(%arg0: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x"}}]>}})'
            f' -> {T} {{\n  return %arg0 : {T}\n}}\n' + func("main", private=False))
    assert names(run_pipeline(text, "symbol-dce")) == ["m", "main"]


@settings(max_examples=40, deadline=None)
@given(call_graph_modules(shardings=True))
def test_idempotent_and_verifies(text):
    assert_idempotent(text, "symbol-dce")


@pytest.mark.oracle
def test_random_call_graphs_like_real_shardy():
    texts = [call_graph_module(random.Random(seed), shardings=True) for seed in range(30)]
    assert_like_oracle(texts, "symbol-dce")
