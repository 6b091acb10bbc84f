"""``sdy-import-pipeline``: the import passes in upstream's order (``algorithms.md`` §5.2),
checked end to end on modules that need several of them at once."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from .pass_helpers import assert_like_oracle, run_pipeline
from .strategies_call_graph import call_graph_module, call_graph_modules, has_declaration
from .strategies_constants import constant_module, constant_modules
from .strategies_constraints import KINDS, constraint_modules

T = "tensor<8x8xf32>"
MODULE = f"""sdy.mesh @mesh = <["x"=2, "one"=1]>
func.func private @unused(%arg0: {T}) -> {T} {{
  return %arg0 : {T}
}}
func.func @main(%arg0: {T} {{sdy.sharding = #sdy.sharding<mesh<["a"=4]>, [{{"a"}}, {{}}]>}},
                %arg1: {T} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x", "one"}}, {{}}]>}})
    -> ({T}, {T}) {{
  %c = stablehlo.constant dense<1.0> : {T}
  %0 = stablehlo.add %arg0, %c : {T}
  %1 = stablehlo.multiply %arg1, %c : {T}
  %2 = sdy.sharding_constraint %1 <@mesh, [{{}}, {{"x"}}]> : {T}
  %3 = stablehlo.optimization_barrier %2 : {T}
  return %0, %3 : {T}, {T}
}}
"""


def test_every_import_step_applies_in_order():
    out = run_pipeline(MODULE, "sdy-import-pipeline")
    assert "@unused" not in out  # symbol-dce
    assert 'sdy.mesh @mesh_0 = <["a"=4]>' in out  # the inline mesh is lifted
    assert '#sdy.sharding<@mesh_0, [{"a"}, {}]>' in out
    assert '[{"x"}, {}]' in out and '"x", "one"' not in out  # size-one axes removed
    assert out.count("sdy.constant dense<1.000000e+00>") == 2  # one constant per user
    assert "stablehlo.constant" not in out
    assert "%6 = sdy.data_flow_edge %5 : " in out  # the barrier's result owns an edge
    assert "return %2, %6 :" in out
    # without dedup-functions-fully, constraints are applied later (propagation pipeline)
    assert "%3 = stablehlo.multiply %arg1, %1 : " in out


def test_dedup_functions_fully_also_applies_constraints():
    out = run_pipeline(MODULE, "sdy-import-pipeline{dedup-functions-fully=true}")
    assert '%3 = stablehlo.multiply %arg1, %1 {sdy.sharding = #sdy.sharding_per_value<' \
        '[<@mesh, [{}, {"x"}]>]>}' in out


@settings(max_examples=30, deadline=None)
@given(constant_modules() | call_graph_modules(shardings=True)
       | constraint_modules(tuple(k for k in KINDS if k != "edge")))
def test_output_verifies(text):
    """On modules without data-flow edges yet (a second edge on an edge is invalid, as
    upstream), the pipeline's output verifies after every pass."""
    run_pipeline(text, "sdy-import-pipeline")


@pytest.mark.oracle
@pytest.mark.parametrize("dedup", [False, True])
def test_random_modules_like_real_shardy(dedup):
    rngs = [random.Random(seed) for seed in range(30)]
    texts = [constant_module(r, calls=True) if i % 2 else call_graph_module(r, shardings=True)
             for i, r in enumerate(rngs)]
    # upstream's sdy-lift-inlined-meshes crashes (SIGSEGV) on function declarations
    texts = [t for t in texts if not has_declaration(t)]
    pipeline = f"sdy-import-pipeline{{dedup-functions-fully={str(dedup).lower()}}}"
    assert_like_oracle(texts, pipeline)
