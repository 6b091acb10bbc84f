"""The rule builder, the registry's dispatch (custom rules first, ops without rules,
once-per-process warnings for unknown ops) and the ``sdy-populate-op-sharding-rules`` pass.
Upstream's pass is idempotent: an op that has a rule keeps it."""
from __future__ import annotations

import pytest

from shardy_ref.ir.types import FloatType, RankedTensorType, TokenType
from shardy_ref.pass_manager import PassContext, make_pass
from shardy_ref.propagate.rules import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    create_identity_sharding_rule,
    create_op_sharding_rule,
    get_or_create_sharding_rule,
)
from shardy_ref.propagate.rules.registry import reset_warnings_once

from ..pass_helpers import assert_idempotent, run_pipeline
from .rule_helpers import func_ops, single_op

F32 = FloatType("f32")


def _t(*shape: int) -> RankedTensorType:
    return RankedTensorType(shape, F32)


def test_build_fills_unmapped_dims_with_size_one_factors_and_keeps_builder():
    builder = OpShardingRuleBuilder([_t(4, 3)], [_t(4)])
    builder.add_factor(0, 0, 4)
    assert builder.build().params() == "<([i, j])->([i]) {i=4, j=1}>"
    builder.add_factor(1, NULL_DIM, 3, FactorType.REDUCTION)
    assert builder.build().params() == "<([i, j])->([i]) {i=4, j=3} reduction={j}>"


def test_rules_share_equal_mappings_and_stay_right_when_the_cache_starts_afresh(
        monkeypatch):
    from shardy_ref.propagate.rules import builder as builder_module

    def build():
        b = OpShardingRuleBuilder([_t(4, 3), _t(4, 3)], [_t(4, 3)])
        b.add_factor_all(0, 4).add_factor_all(1, 3)
        return b.build()

    first, second = build(), build()
    assert first == second and first.operand_mappings[0] is second.result_mappings[0]
    assert first.params() == "<([i, j], [i, j])->([i, j]) {i=4, j=3}>"
    monkeypatch.setattr(builder_module, "_MAX_SHARED", 1)
    monkeypatch.setattr(builder_module, "_DIM_MAPPINGS", {})
    monkeypatch.setattr(builder_module, "_TENSOR_MAPPINGS", {})
    assert build() == first
    assert len(builder_module._DIM_MAPPINGS) <= 1 and len(builder_module._TENSOR_MAPPINGS) <= 1


def test_size_one_factor_not_appended_to_mapped_dim():
    builder = OpShardingRuleBuilder([_t(4)], [_t(4)])
    builder.add_factor(0, 0, 4).add_factor(0, NULL_DIM, 1).add_factor(0, NULL_DIM, 2)
    assert builder.build().params() == "<([ik])->([i]) {i=4, j=1, k=2}>"


def test_factor_types_and_blocking():
    builder = OpShardingRuleBuilder([_t(2, 3, 5)], [_t(2, 3, 5)])
    builder.add_pointwise((2, 3, 5), lambda d: (FactorType.PASS_THROUGH, FactorType.PERMUTATION,
                                                FactorType.NEED_REPLICATION)[d],
                          lambda t: t == FactorType.PERMUTATION)
    assert builder.build().params() == ("<([i, j, k])->([i, j, k]) {i=2, j=3, k=5} "
                                        "need_replication={k} permutation={j} "
                                        "blocked_propagation={j}>")


def test_same_for_all_operands_and_results_skip_scalars_and_tokens():
    builder = OpShardingRuleBuilder([_t(6), _t(), TokenType()], [_t(3)])
    builder.add_factor_same_for_all_operands(0, 6).add_factor_same_for_all_results(0, 3)
    assert builder.build().params() == "<([i], [], [])->([j]) {i=6, j=3}>"


def test_identity_rule():
    assert create_identity_sharding_rule(_t(2, 7), 2, 1).params() == \
        "<([i, j], [i, j])->([i, j]) {i=2, j=7}>"
    assert create_identity_sharding_rule(_t()).params() == "<([])->([])>"


def test_pointwise_mismatch_rank_is_an_error():
    with pytest.raises(ValueError, match="rank"):
        OpShardingRuleBuilder([_t(2)], [_t(2)]).add_pointwise_with_diff_type_for_mismatch(
            (2,), (2, 1))


ADD = single_op("%0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32>", ["tensor<8x4xf32>"],
                ["tensor<8x4xf32>"])


def test_existing_rule_takes_precedence():
    custom = ("#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4} "
              "need_replication={j}, custom>")
    text = ADD.replace(": tensor<8x4xf32>\n", f"{{sdy.sharding_rule = {custom}}} : "
                       "tensor<8x4xf32>\n", 1)
    op = func_ops(text)[0]
    assert str(get_or_create_sharding_rule(op)) == custom
    assert str(create_op_sharding_rule(op)) == \
        "#sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=8, j=4}>"


def test_get_or_create_can_leave_op_untouched():
    op = func_ops(ADD)[0]
    assert get_or_create_sharding_rule(op, set_sharding_rule_on_op=False) is not None
    assert "sdy.sharding_rule" not in op.attributes
    get_or_create_sharding_rule(op)
    assert "sdy.sharding_rule" in op.attributes


@pytest.mark.parametrize("op_text", [
    "%0 = stablehlo.constant dense<1.0> : tensor<8xf32>",
    "%0 = stablehlo.iota dim = 0 : tensor<8xf32>",
])
def test_ops_without_rules_are_silent(op_text):
    reset_warnings_once()
    ctx = PassContext()
    text = single_op(op_text, [], ["tensor<8xf32>"])
    for op in func_ops(text):
        assert create_op_sharding_rule(op, ctx=ctx) is None
    assert ctx.diagnostics == []


def test_unknown_op_warns_once_and_terminators_are_silent():
    reset_warnings_once()
    text = single_op('%0 = "stablehlo.rng"(%arg0, %arg0, %arg1) {rng_distribution = '
                     "#stablehlo<rng_distribution UNIFORM>} : (tensor<f32>, tensor<f32>, "
                     "tensor<1xi64>) -> tensor<8xf32>", ["tensor<f32>", "tensor<1xi64>"],
                     ["tensor<8xf32>"])
    ctx = PassContext()
    out = run_pipeline(text + text.replace("@f", "@g"), "func.func(sdy-populate-op-sharding-rules)",
                       ctx)
    assert "sdy.sharding_rule" not in out
    assert [(d.severity, d.location.line, d.message) for d in ctx.diagnostics] == [
        ("warning", 2, "op 'stablehlo.rng' is unknown to SDY sharding rule registry")]
    reset_warnings_once()


def test_pass_populates_nested_ops_and_is_idempotent():
    text = (
        "func.func @f(%arg0: tensor<4x2xf32>) -> tensor<2xf32> {\n"
        "  %init = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %0 = stablehlo.reduce(%arg0 init: %init) applies stablehlo.add across "
        "dimensions = [0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<2xf32>\n"
        "  %1 = stablehlo.abs %0 : tensor<2xf32>\n"
        "  return %1 : tensor<2xf32>\n}\n")
    assert_idempotent(text, "func.func(sdy-populate-op-sharding-rules)")
    ops = func_ops(text)
    func = ops[0].parent_op
    make_pass("sdy-populate-op-sharding-rules").run(func, PassContext())
    with_rule = [op.name for op in func.walk() if "sdy.sharding_rule" in op.attributes]
    # the add in reduce's body too, though the compact reduce syntax does not print it
    assert with_rule == ["stablehlo.reduce", "stablehlo.add", "stablehlo.abs"]


def test_conservative_option():
    text = single_op("%0 = stablehlo.concatenate %arg0, %arg0, dim = 0 : "
                     "(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
                     ["tensor<2x3xf32>"], ["tensor<4x3xf32>"])
    out = run_pipeline(text, "func.func(sdy-populate-op-sharding-rules"
                             "{conservative-propagation=true})")
    assert "([j, i], [k, i])->([l, i]) {i=3, j=1, k=1, l=1}" in out


T48, T82, T42 = "tensor<4x8xf32>", "tensor<8x2xf32>", "tensor<4x2xf32>"
SIGNATURE = f"({T48}, {T82}) -> {T42}"
DOT = f"contracting_dims = [1] x [0] : {SIGNATURE}"
SHARED = f"""func.func @f(%a: {T48}, %b: {T82}) -> {T42} {{
  %0 = stablehlo.abs %a : {T48}
  %1 = stablehlo.abs %a : {T48}
  %2 = stablehlo.abs %b : {T82}
  %3 = stablehlo.dot_general %0, %b, {DOT}
  %4 = stablehlo.dot_general %1, %2, {DOT}
  %5 = stablehlo.dot_general %0, %2, contracting_dims = [1] x [0],
      precision = [HIGHEST, DEFAULT] : {SIGNATURE}
  return %5 : {T42}
}}"""


def test_op_local_rules_are_shared_by_equal_ops_while_a_pipeline_runs():
    from shardy_ref.ir.run_memo import pipeline_memos

    ops = func_ops(SHARED)
    abs0, abs1 = ops[:2]
    with pipeline_memos():
        rules = [create_op_sharding_rule(op) for op in ops[:6]]
    assert rules[0] is rules[1] and rules[0] is not rules[2]  # abs: same types, other types
    assert rules[3] is rules[4]  # the same dot_general on other values
    assert rules[5] is not rules[3] and rules[5] == rules[3]  # another inherent attribute
    assert [create_op_sharding_rule(op) for op in ops[:6]] == rules  # outside: built anew
    assert create_op_sharding_rule(abs0) is not create_op_sharding_rule(abs1)


def test_cross_checking_catches_an_op_local_rule_that_reads_a_neighbour(monkeypatch):
    """A rule function declared op-local that reads the op defining its operand: equal
    ops with different neighbours would share a rule that is wrong for one of them."""
    from shardy_ref.ir.operation import IRError
    from shardy_ref.ir.run_memo import pipeline_memos
    from shardy_ref.propagate.rules import registry

    def neighbourly(op, conservative):
        builder = OpShardingRuleBuilder.for_op(op)
        definer = op.operands[0].defining_op
        builder.add_factor_all(0, 8 if definer is None else 4)
        return builder.build()

    monkeypatch.setitem(registry.RULES, "stablehlo.negate", neighbourly)
    monkeypatch.setattr(registry, "OP_LOCAL_RULES", {neighbourly})
    monkeypatch.setenv("SHARDY_REF_CROSS_CHECK_CHANGES", "1")
    ops = func_ops("""func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}""")
    with pipeline_memos():
        create_op_sharding_rule(ops[0])
        with pytest.raises(IRError, match="read more than the op"):
            create_op_sharding_rule(ops[1])
