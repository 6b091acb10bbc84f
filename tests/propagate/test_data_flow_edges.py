"""``sdy-add-data-flow-edges``: one ``sdy.data_flow_edge`` per static-shaped edge owner,
right after it, holding its sharding, and taking over all its other uses. Upstream's pass
is not idempotent: a second run stacks an edge on each edge, which the verifier rejects."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.utils import is_static_shaped, lookup_data_flow_edge
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    block_argument_edge_owners,
    get_sharding,
    op_result_edge_owners,
)
from shardy_ref.parser import parse_module
from shardy_ref.pass_manager import PassContext, make_pass

from .pass_helpers import assert_like_oracle, examples, run_pipeline
from .strategies_constraints import constraint_modules

PASS = "sdy-add-data-flow-edges"
NO_EDGES = ("constraint", "add", "manual", "barrier", "named", "loop")
MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
T = "tensor<8x8xf32>"


def body_lines(text: str) -> list[str]:
    return [line.strip() for line in run_pipeline(text, PASS).splitlines()]


def test_while_results_get_edges_in_order_holding_their_shardings():
    lines = body_lines(MESH + f"""func.func @f(%arg0: {T}, %arg1: tensor<i32>) -> {T} {{
  %0:2 = stablehlo.while(%it = %arg0, %i = %arg1) : {T}, tensor<i32>
    attributes {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{}}]>, <@mesh, []>]>}}
    cond {{
    %1 = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }} do {{
    stablehlo.return %it, %i : {T}, tensor<i32>
  }}
  %2 = stablehlo.add %0#0, %0#0 : {T}
  return %2 : {T}
}}
""")
    i = lines.index("}") + 1
    assert lines[i:i + 3] == [
        f'%1 = sdy.data_flow_edge %0#0 sharding=<@mesh, [{{"a"}}, {{}}]> : {T}',
        "%2 = sdy.data_flow_edge %0#1 sharding=<@mesh, []> : tensor<i32>",
        f"%3 = stablehlo.add %1, %1 : {T}"]


def test_named_computation_body_arguments_get_edges_at_block_start():
    lines = body_lines(f"""func.func @f(%arg0: {T}, %arg1: !stablehlo.token) -> {T} {{
  %0:2 = sdy.named_computation<"g">(%arg0, %arg1) (%a: {T}, %b: !stablehlo.token) {{
    %1 = stablehlo.negate %a : {T}
    sdy.return %1, %b : {T}, !stablehlo.token
  }} : ({T}, !stablehlo.token) -> ({T}, !stablehlo.token)
  return %0#0 : {T}
}}
""")
    start = next(i for i, line in enumerate(lines) if "named_computation" in line)
    assert lines[start + 1:start + 4] == [
        f"%2 = sdy.data_flow_edge %arg2 : {T}",
        f"%3 = stablehlo.negate %2 : {T}",
        f"sdy.return %3, %arg3 : {T}, !stablehlo.token"]
    assert lines[start + 5] == f"%1 = sdy.data_flow_edge %0#0 : {T}"
    assert lines[start + 6] == f"return %1 : {T}"


def test_manual_computation_body_edges_see_shardings_without_manual_axes():
    lines = body_lines(MESH + f"""func.func @f(%arg0: {T}) -> {T} {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"a", "b"}}, {{}}]>]
      out_shardings=[<@mesh, [{{"a"}}, {{}}]>] manual_axes={{"a"}} (%x: tensor<4x8xf32>) {{
    sdy.return %x : tensor<4x8xf32>
  }} : ({T}) -> {T}
  return %0 : {T}
}}
""")
    assert 'sdy.data_flow_edge %arg1 sharding=<@mesh, [{"b"}, {}]> : tensor<4x8xf32>' in \
        " ".join(lines)
    assert f'sdy.data_flow_edge %0 sharding=<@mesh, [{{"a"}}, {{}}]> : {T}' in " ".join(lines)


def test_dynamic_and_token_owners_are_skipped():
    text = """func.func @f(%arg0: tensor<?x8xf32>, %arg1: !stablehlo.token) -> tensor<?x8xf32> {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<?x8xf32>, !stablehlo.token
  return %0#0 : tensor<?x8xf32>
}
"""
    assert "data_flow_edge" not in run_pipeline(text, PASS)


def test_func_calls_get_no_edges():
    text = f"""func.func @f(%arg0: {T}) -> {T} {{
  %0 = call @g(%arg0) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @g(%arg0: {T}) -> {T} {{
  return %arg0 : {T}
}}
"""
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_lookup_finds_the_edge_of_a_while_block_argument():
    module = parse_module(f"""func.func @f(%arg0: {T}) -> {T} {{
  %0 = stablehlo.while(%it = %arg0) : {T}
    cond {{
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }} do {{
    stablehlo.return %it : {T}
  }}
  return %0 : {T}
}}
""", "t")
    make_pass(PASS).run(module, PassContext())
    loop = next(op for op in module.walk() if op.name == "stablehlo.while")
    edge = loop.results[0].uses[0].owner
    assert edge.name == "sdy.data_flow_edge"
    for region in loop.regions:
        assert lookup_data_flow_edge(region.blocks[0].args[0]) is edge
    assert lookup_data_flow_edge(edge.results[0]) is None


def test_second_run_is_rejected_by_the_verifier():
    text = f"""func.func @f(%arg0: {T}) -> {T} {{
  %0 = stablehlo.optimization_barrier %arg0 : {T}
  return %0 : {T}
}}
"""
    with pytest.raises(VerifyError, match="not be defined by an SdyDialect op"):
        run_pipeline(run_pipeline(text, PASS), PASS)


@settings(max_examples=40, deadline=None)
@given(constraint_modules(NO_EDGES))
def test_every_owner_feeds_exactly_one_edge_with_its_old_sharding(text):
    module = parse_module(text, "t")
    owners = [(owner, get_sharding(owner))
              for op in module.walk(post_order=True) if op.name in DATA_FLOW_OPS
              for owner in block_argument_edge_owners(op) + op_result_edge_owners(op)
              if is_static_shaped(owner)]
    make_pass(PASS).run(module, PassContext())
    for owner, sharding in owners:
        assert [u.owner.name for u in owner.uses] == ["sdy.data_flow_edge"]
        assert owner.uses[0].owner.attributes.get("sharding") == sharding
    run_pipeline(text, PASS)  # and the result verifies


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = examples(constraint_modules(NO_EDGES), 40)
    assert_like_oracle(texts, PASS)
