"""``sdy-propagate-sharding-from-func-to-call``: calls without ``sdy.sharding`` take
their callee's result shardings. Upstream's pass is idempotent (a call it sets is skipped
the next time)."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from .pass_helpers import assert_idempotent, assert_like_oracle, run_pipeline
from .strategies_call_graph import call_graph_module, call_graph_modules

MESHES = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\nsdy.mesh @max = <[], device_ids=[3]>\n'
T, V = "tensor<8x2xf32>", "tensor<8xf32>"


def module(results: str, call_attrs: str = "", decl: bool = False) -> str:
    """@main calls @f(%arg0, %arg1) -> (T, V); ``results`` is @f's result list."""
    args = f"{T}, {V}" if decl else f"%arg0: {T}, %arg1: {V}"
    body = "" if decl else f" {{\n  return %arg0, %arg1 : {T}, {V}\n}}"
    return MESHES + f"""func.func @main(%arg0: {T}, %arg1: {V}) -> ({T}, {V}) {{
  %0:2 = call @f(%arg0, %arg1){call_attrs} : ({T}, {V}) -> ({T}, {V})
  return %0#0, %0#1 : {T}, {V}
}}
func.func private @f({args}) -> ({results}){body}
"""


def call_line(text: str) -> str:
    out = run_pipeline(text, "sdy-propagate-sharding-from-func-to-call")
    return next(line.strip() for line in out.splitlines() if "call @f" in line)


def sharded(t: str, sharding: str) -> str:
    return f"{t} {{sdy.sharding = #sdy.sharding{sharding}}}"


def test_result_shardings_copied_and_empty_ones_open():
    text = module(f"{T}, " + sharded(V, '<@mesh, [{"y"}]>'))
    assert '{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>, <@mesh, [{"y"}]>]>}' \
        in call_line(text)


def test_existing_call_sharding_kept_even_if_empty():
    attrs = " {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>, <@mesh, [{}]>]>}"
    text = module(sharded(T, '<@mesh, [{"x"}, {}]>') + f", {V}", attrs)
    assert attrs.strip() in call_line(text)


def test_no_func_shardings_nothing_set():
    assert "sdy.sharding" not in call_line(module(f"{T}, {V}"))


def test_maximal_only_nothing_set():
    assert "sdy.sharding" not in call_line(module(sharded(T, "<@max, []>") + f", {V}"))


def test_first_non_maximal_mesh_fills_the_gaps():
    text = module(sharded(T, "<@max, []>") + ", " + sharded(V, '<mesh<["z"=4]>, [{"z"}]>'))
    assert ('#sdy.sharding_per_value<[<@max, []>, <mesh<["z"=4]>, [{"z"}]>]>' in
            call_line(text))
    text = module(f"{T}, " + sharded(V, '<mesh<["z"=4]>, [{"z"}]>'))
    assert '<mesh<["z"=4]>, [{?}, {?}]>' in call_line(text)


def test_declaration_callee():
    text = module(sharded(T, '<@mesh, [{"x"}, {}]>') + f", {V}", decl=True)
    assert '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{?}]>]>' in call_line(text)


@settings(max_examples=40, deadline=None)
@given(call_graph_modules(shardings=True))
def test_idempotent_and_verifies(text):
    assert_idempotent(text, "sdy-propagate-sharding-from-func-to-call")


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = [call_graph_module(random.Random(seed), shardings=True) for seed in range(40)]
    assert_like_oracle(texts, "sdy-propagate-sharding-from-func-to-call")
