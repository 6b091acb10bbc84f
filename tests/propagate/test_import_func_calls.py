"""``sdy-import-func-calls``: calls become named computations holding the callee's body.

Upstream's pass is idempotent only with ``add-data-flow-edges-on-named-computations=false``
(nothing is left to import); with the default, a second run adds data-flow edges on top of
the existing ones, which the verifier rejects.
"""
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.import_ import import_func_calls

from .pass_helpers import assert_idempotent, assert_like_oracle, run_pipeline
from .strategies_call_graph import SHARDINGS, call_graph_module, has_declaration

PASS = "sdy-import-func-calls"
NO_EDGES = "sdy-import-func-calls{add-data-flow-edges-on-named-computations=false}"
MESHES = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\nsdy.mesh @max = <[], device_ids=[3]>\n'
T, V = "tensor<8x2xf32>", "tensor<8xf32>"


@pytest.fixture(autouse=True)
def fresh_warning_state(monkeypatch):
    """The multiple-calls warning is once per process; give every test its own."""
    monkeypatch.setattr(import_func_calls, "_WARNED_ONCE", set())


def module(callee_args: str, call_attrs: str = "", func_attrs: str = "", calls: int = 1) -> str:
    """@main calls @f(%arg0, %arg1) ``calls`` times; ``callee_args`` is @f's argument list."""
    body, value = [], "%arg0"
    for i in range(calls):
        body.append(f"  %{i} = call @f({value}, %arg1){call_attrs} : ({T}, {V}) -> {T}\n")
        value = f"%{i}"
    return MESHES + f"""func.func @main(%arg0: {T}, %arg1: {V}) -> {T} {{
{"".join(body)}  return {value} : {T}
}}
func.func private @f({callee_args}) -> {T}{func_attrs} {{
  %0 = stablehlo.negate %a : {T}
  return %0 : {T}
}}
"""


PLAIN = f"%a: {T}, %b: {V}"
X_ = '<@mesh, [{"x"}, {}]>'
Y = '<@mesh, [{"y"}]>'


def sharded(name: str, t: str, sharding: str) -> str:
    return f"{name}: {t} {{sdy.sharding = #sdy.sharding{sharding}}}"


def nc_lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if "sdy.named_computation" in line]


def test_call_becomes_named_computation_and_callee_is_erased():
    out = run_pipeline(module(PLAIN), NO_EDGES)
    assert nc_lines(out) == [
        f'%0 = sdy.named_computation<"f">(%arg0, %arg1) (%arg2: {T}, %arg3: {V}) {{']
    assert "func.func private @f" not in out and "call" not in out
    assert f"sdy.return %1 : {T}" in out


def test_edges_on_arguments_and_results_in_order():
    out = run_pipeline(module(PLAIN), PASS)
    lines = [line.strip() for line in out.splitlines()]
    start = lines.index(next(line for line in lines if "named_computation" in line))
    assert lines[start + 1:start + 3] == [f"%2 = sdy.data_flow_edge %arg2 : {T}",
                                          f"%3 = sdy.data_flow_edge %arg3 : {V}"]
    assert f"%1 = sdy.data_flow_edge %0 : {T}" in lines
    assert f"return %1 : {T}" in lines


def test_in_shardings_from_callee_args_filled_open_on_first_non_maximal_mesh():
    args = f"{sharded('%a', T, '<@max, []>')}, {sharded('%b', V, Y)}"
    [line] = nc_lines(run_pipeline(module(args), NO_EDGES))
    assert 'in_shardings=[<@max, []>, <@mesh, [{"y"}]>]' in line
    args = f"%a: {T}, {sharded('%b', V, Y)}"
    [line] = nc_lines(run_pipeline(module(args), NO_EDGES))
    assert 'in_shardings=[<@mesh, [{?}, {?}]>, <@mesh, [{"y"}]>]' in line


def test_maximal_only_arg_shardings_give_no_in_shardings():
    [line] = nc_lines(run_pipeline(module(f"{sharded('%a', T, '<@max, []>')}, %b: {V}"),
                                   NO_EDGES))
    assert "in_shardings" not in line


def test_out_shardings_from_call_not_from_callee():
    func_attrs = ""
    call = ' {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}'
    text = module(PLAIN, call, func_attrs).replace(
        f"-> {T}{func_attrs} {{\n  %0 = stablehlo.negate",
        f'-> ({T} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"y"}}]>}}) {{\n'
        "  %0 = stablehlo.negate")
    out = run_pipeline(text, PASS)
    [line] = nc_lines(out)
    assert 'out_shardings=[<@mesh, [{"x"}, {}]>]' in line
    assert f'sdy.data_flow_edge %0 sharding=<@mesh, [{{"x"}}, {{}}]> : {T}' in out


def test_discardable_attrs_and_execution_thread_carried_over():
    call = (' {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>, zeta = 1 : i64,'
            ' alpha = "a", arg_attrs = [{}, {}]}')
    out = run_pipeline(module(PLAIN, call, ' attributes {execution_thread = "host", x = 2}'),
                       NO_EDGES)
    assert ('} {alpha = "a", execution_thread = "host", zeta = 1 : i64} : '
            f"({T}, {V}) -> {T}") in out
    assert "arg_attrs" not in out and "x = 2" not in out


def test_original_func_name_names_the_computation():
    text = module(PLAIN, func_attrs=' attributes {sdy.original_func_name = "g"}')
    assert nc_lines(run_pipeline(text, NO_EDGES))[0].startswith(
        '%0 = sdy.named_computation<"g">')


def test_multiple_calls_clone_the_body_and_warn_once_per_process():
    text = module(f"{sharded('%a', T, X_)}, %b: {V}", calls=3)
    ctx = PassContext()
    out = run_pipeline(text, NO_EDGES, ctx)
    lines = nc_lines(out)
    assert len(lines) == 3
    assert all('in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{?}]>]' in line for line in lines)
    assert out.count("stablehlo.negate") == 3
    [warning] = ctx.diagnostics
    assert (warning.severity, warning.location.line) == ("warning", 5)
    assert warning.message == ("function @f has multiple call ops, we need to clone the "
                               "function body for each call")
    ctx = PassContext()
    run_pipeline(text, NO_EDGES, ctx)
    assert ctx.diagnostics == []


NESTED = f"""func.func @main(%arg0: {V}) -> {V} {{
  %0 = call @foo(%arg0) : ({V}) -> {V}
  %1 = call @bar(%0) : ({V}) -> {V}
  return %1 : {V}
}}
func.func private @foo(%arg0: {V}) -> {V} {{
  %0 = call @bar(%arg0) : ({V}) -> {V}
  return %0 : {V}
}}
func.func private @bar(%arg0: {V}) -> {V} {{
  %0 = stablehlo.abs %arg0 : {V}
  return %0 : {V}
}}
"""


def test_callees_first_body_moved_into_the_first_call_then_cloned():
    ctx = PassContext()
    out = run_pipeline(NESTED, NO_EDGES, ctx)
    assert nc_lines(out) == [
        f'%0 = sdy.named_computation<"foo">(%arg0) (%arg1: {V}) {{',
        f'%2 = sdy.named_computation<"bar">(%arg1) (%arg2: {V}) {{',
        f'%1 = sdy.named_computation<"bar">(%0) (%arg1: {V}) {{']
    # @bar's first call is the one inside @foo (callees are visited first)
    assert [d.location.line for d in ctx.diagnostics] == [3]
    assert "func.func private" not in out


def test_existing_named_computations_get_edges_and_unshaped_values_none():
    text = f"""func.func @main(%arg0: tensor<?xf32>, %arg1: !stablehlo.token) -> tensor<?xf32> {{
  %0:2 = sdy.named_computation<"n">(%arg0, %arg1) (%a: tensor<?xf32>, %b: !stablehlo.token) {{
    sdy.return %a, %b : tensor<?xf32>, !stablehlo.token
  }} : (tensor<?xf32>, !stablehlo.token) -> (tensor<?xf32>, !stablehlo.token)
  %1 = sdy.named_computation<"m">(%arg0) (%a: tensor<?xf32>) {{
    %2 = stablehlo.constant dense<1.0> : {V}
    sdy.return %2 : {V}
  }} : (tensor<?xf32>) -> {V}
  return %0#0 : tensor<?xf32>
}}
"""
    out = run_pipeline(text, PASS)
    assert out.count("sdy.data_flow_edge") == 1
    assert f"sdy.data_flow_edge %1 : {V}" in out


def test_call_to_declaration_fails_verification():
    text = f"""func.func @main(%arg0: {V}) -> {V} {{
  %0 = call @d(%arg0) : ({V}) -> {V}
  return %0 : {V}
}}
func.func private @d({V}) -> {V}
"""
    for pipeline in (PASS, NO_EDGES):
        with pytest.raises(ShardyRefError, match="region with 1 blocks"):
            run_pipeline(text, pipeline)


def sharded_call_graph_module(rng: random.Random) -> str:
    """A random call graph whose function arguments are sometimes sharded too."""
    text = call_graph_module(rng, shardings=True)

    def shard_arg(m: re.Match) -> str:
        if rng.random() < 0.5:
            return m.group(0)
        return f"{m.group(1)} {{sdy.sharding = #sdy.sharding{rng.choice(SHARDINGS)}}})"

    return re.sub(r"(@f[1-9]\(%arg0: tensor<8x2xi32>)\)", shard_arg, text)


def sharded_module_where(rng: random.Random, wanted) -> str:
    """Draws modules from ``rng`` until one is ``wanted``: most random call graphs have a
    declaration or no call, too many to filter with ``assume`` without failing hypothesis's
    health check (so the tests draw a seed, not a hypothesis-controlled ``Random``, which
    can repeat one value forever)."""
    for _ in range(200):
        text = sharded_call_graph_module(rng)
        if wanted(text):
            return text
    raise AssertionError("no wanted module in 200 draws")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_verifies_and_leaves_no_calls(seed):
    rng = random.Random(seed)
    text = sharded_module_where(rng, lambda t: not has_declaration(t))
    out = run_pipeline(text, PASS)
    assert " call @" not in out
    defined = set(re.findall(r"func\.func (?:private )?@(\w+)", text))
    called = set(re.findall(r"call @(\w+)", text))
    assert set(re.findall(r"func\.func (?:private )?@(\w+)", out)) == defined - called
    assert assert_idempotent(text, NO_EDGES).count("sdy.data_flow_edge") == 0


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_second_default_run_stacks_edges_and_fails(seed):
    rng = random.Random(seed)
    text = sharded_module_where(rng, lambda t: not has_declaration(t) and " call @" in t)
    once = run_pipeline(text, PASS)
    with pytest.raises(ShardyRefError, match=r"sdy\.data_flow_edge"):
        run_pipeline(once, PASS)


@pytest.mark.oracle
@pytest.mark.parametrize("pipeline", [PASS, NO_EDGES])
def test_random_modules_like_real_shardy(pipeline):
    # no declarations: a second call of one makes upstream clone a body it never moved,
    # and real Shardy hangs
    texts = [t for t in (sharded_call_graph_module(random.Random(seed)) for seed in range(50))
             if not has_declaration(t)]
    assert_like_oracle(texts, pipeline)
