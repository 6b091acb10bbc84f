# ruff: noqa: E501  (MLIR function signatures)
"""Sharding rules of CHLO ops: real Shardy's registry (``op_sharding_rule_registry.cc``)
has none, so every CHLO op gets no rule and the once-per-process warning "op '...' is
unknown to SDY sharding rule registry"; propagation then passes shardings around them only
through their users and operands' other uses. Ours does the same: checked op by op, and
whole programs against the oracle (rules populated, and the propagation pipeline's output
text)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.chlo_families import ALL_OPS as CHLO_OPS
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.rules import create_op_sharding_rule
from shardy_ref.propagate.rules.registry import reset_warnings_once
from tests.parser.test_chlo_syntax import ALL_OPS

from ..pass_helpers import run_pipeline
from .rule_helpers import func_ops


def _chlo_ops():
    from shardy_ref.parser import parse_module

    module = parse_module(ALL_OPS)
    return [op for op in module.walk() if op.name.startswith("chlo.")]


def test_every_chlo_op_has_no_rule_and_warns_once():
    ops = _chlo_ops()
    assert {op.name for op in ops} == set(CHLO_OPS)
    reset_warnings_once()
    ctx = PassContext()
    assert all(create_op_sharding_rule(op, ctx=ctx) is None for op in ops)
    assert [d.message for d in ctx.diagnostics] == \
        [f"op '{ops[0].name}' is unknown to SDY sharding rule registry"]


def test_ops_inside_scan_get_their_rules():
    text = ALL_OPS[ALL_OPS.index("func.func @scan"):]
    scan = func_ops(text)[0]
    add = scan.regions[0].blocks[0].ops[0]
    assert create_op_sharding_rule(scan) is None
    assert str(create_op_sharding_rule(add)) == "#sdy.op_sharding_rule<([], [])->([])>"


PROGRAMS = [
    """sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}) -> tensor<8x16xf32> {
  %0 = chlo.square %arg0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %1 = chlo.erf %0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %2 = stablehlo.add %1, %arg0 : tensor<8x16xf32>
  %3 = chlo.broadcast_add %2, %arg0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %v, %i = chlo.top_k(%3, k = 2) : tensor<8x16xf32> -> (tensor<8x2xf32>, tensor<8x2xi32>)
  return %3 : tensor<8x16xf32>
}""",
    """sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8x4xf32>, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8x4xf32>, tensor<8x2xf32>) {
  %0 = chlo.broadcast_multiply %arg0, %arg1 : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.negate %0 : tensor<8x4xf32>
  %2 = chlo.lgamma %1 : tensor<8x4xf32> -> tensor<8x4xf32>
  %v, %i = chlo.top_k(%2, k = 2) : tensor<8x4xf32> -> (tensor<8x2xf32>, tensor<8x2xi32>)
  %3 = stablehlo.multiply %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : tensor<8x4xf32>
  %4 = chlo.next_after %3, %2 : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return %4, %v : tensor<8x4xf32>, tensor<8x2xf32>
}""",
]


@pytest.mark.oracle
def test_populated_rules_match_real_shardy():
    import corpus

    from shardy_ref.parser import parse_module, print_module

    ref = corpus.oracle_print([(ALL_OPS, False)], pipeline=(
        "builtin.module(func.func(sdy-populate-op-sharding-rules))"))[0]
    assert ref["ok"], ref["err"]
    ours = run_pipeline(ALL_OPS, "func.func(sdy-populate-op-sharding-rules)")
    assert ours == print_module(parse_module(ref["out"]))


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_propagation_around_chlo_ops_matches_real_shardy(index):
    import corpus

    from shardy_ref.parser import parse_module, print_module

    text = PROGRAMS[index]
    ref = corpus.oracle_print([(text, False)],
                              pipeline="builtin.module(sdy-propagation-pipeline)")[0]
    assert ref["ok"], ref["err"]
    ours = run_pipeline(text, "sdy-propagation-pipeline")
    assert ours == print_module(parse_module(ref["out"]))
