"""The greedy pattern rewrite driver: worklist order, dead-op erasure, re-queueing on
rewriter notifications, iterations, pattern order by benefit, constant CSE, folding and
region DCE, with small synthetic patterns (MLIR ``GreedyPatternRewriteDriver.cpp``)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.pattern_match import PatternRewriter, RewritePattern, rewrite_pattern
from shardy_ref.parser import parse_module, print_module
from shardy_ref.transforms import greedy
from shardy_ref.transforms.greedy import (
    GreedyRewriteConfig,
    Worklist,
    apply_op_patterns_greedily,
    apply_patterns_greedily,
)

T = "tensor<4xf32>"
NO_CLEANUP = GreedyRewriteConfig(fold=False, cse_constants=False,
                                 region_simplification="disabled")


def module(body: str, args: str = f"%arg0: {T}", results: str = T) -> Operation:
    return parse_module(f"func.func @f({args}) -> ({results}) {{\n{body}\n}}\n", "t.mlir")


def func_ops(m: Operation) -> list[str]:
    func = m.regions[0].blocks[0].first_op
    return [op.name for op in func.regions[0].blocks[0]]


def recorder(seen: list[str], root: str | None = None) -> RewritePattern:
    """A pattern that only records which ops it was offered."""
    def record(op, rewriter):
        seen.append(op.name)
        return False
    return RewritePattern(record, root)


CHAIN = f"""  %0 = stablehlo.abs %arg0 : {T}
  %1 = stablehlo.negate %0 : {T}
  %2 = stablehlo.sine %1 : {T}
  return %2 : {T}"""


# -- the worklist ---------------------------------------------------------------------------

def test_worklist_is_a_lifo_set_with_holes():
    ops = [Operation(f"t.op{i}") for i in range(4)]
    w = Worklist()
    for op in (*ops, ops[1]):
        w.push(op)
    assert w.ops() == [ops[3], ops[2], ops[1], ops[0]]  # re-push keeps the old position
    w.remove(ops[3])
    assert w.pop() is ops[2]
    w.reverse()
    assert w.ops() == [ops[0], ops[1]]
    assert w.pop() is ops[0] and w.pop() is ops[1] and w.empty()


# -- initial order --------------------------------------------------------------------------

def test_top_down_visits_in_pre_order():
    seen: list[str] = []
    apply_patterns_greedily(module(CHAIN), [recorder(seen)], NO_CLEANUP)
    assert seen == ["func.func", "stablehlo.abs", "stablehlo.negate", "stablehlo.sine",
                    "func.return"]


def test_bottom_up_queues_ancestors_with_the_first_nested_op():
    seen: list[str] = []
    config = GreedyRewriteConfig(use_top_down_traversal=False, fold=False)
    apply_patterns_greedily(module(CHAIN), [recorder(seen)], config)
    # post-order walk; queuing abs also queues its ancestor func.func right after it
    assert seen == ["func.return", "stablehlo.sine", "stablehlo.negate", "func.func",
                    "stablehlo.abs"]


def test_nested_ops_follow_their_parent_in_pre_order():
    body = f"""  %0 = sdy.named_computation<"n">(%arg0) (%arg1: {T}) {{
    %1 = stablehlo.abs %arg1 : {T}
    sdy.return %1 : {T}
  }} : ({T}) -> {T}
  %2 = stablehlo.negate %0 : {T}
  return %2 : {T}"""
    seen: list[str] = []
    apply_patterns_greedily(module(body), [recorder(seen)], NO_CLEANUP)
    assert seen == ["func.func", "sdy.named_computation", "stablehlo.abs", "sdy.return",
                    "stablehlo.negate", "func.return"]


def test_top_down_in_a_region_under_the_scope_also_queues_the_ancestors_up_to_it():
    from dataclasses import replace

    m = module(CHAIN)
    func = m.regions[0].blocks[0].first_op
    seen: list[str] = []
    apply_patterns_greedily(func.regions[0], [recorder(seen)],
                            replace(NO_CLEANUP, scope=m.regions[0]))
    # pushing abs pushes func.func right after it; the reversal puts it after abs
    assert seen == ["stablehlo.abs", "func.func", "stablehlo.negate", "stablehlo.sine",
                    "func.return"]


# -- trivially dead ops ---------------------------------------------------------------------

def test_dead_pure_chain_is_erased_and_side_effects_kept():
    body = f"""  %0 = stablehlo.abs %arg0 : {T}
  %1 = stablehlo.negate %0 : {T}
  %2 = stablehlo.custom_call @foo(%arg0) {{has_side_effect = true}} : ({T}) -> {T}
  %3 = stablehlo.custom_call @bar(%arg0) : ({T}) -> {T}
  %4 = sdy.sharding_constraint %arg0 <@mesh, [{{"a"}}]> : {T}
  %5 = sdy.reshard %arg0 <@mesh, [{{"a"}}]> : {T}
  %6 = sdy.data_flow_edge %arg0 : {T}
  sdy.sharding_group %arg0 group_id=0 : {T}
  return %arg0 : {T}"""
    m = parse_module(f'sdy.mesh @mesh = <["a"=2]>\nfunc.func @f(%arg0: {T}) -> {T} {{\n'
                     f"{body}\n}}\n", "t.mlir")
    apply_patterns_greedily(m, [], NO_CLEANUP)
    func = m.regions[0].blocks[0].last_op
    assert [op.name for op in func.regions[0].blocks[0]] == [
        "stablehlo.custom_call", "sdy.sharding_constraint", "sdy.data_flow_edge",
        "sdy.sharding_group", "func.return"]


def test_dead_region_op_goes_only_if_its_body_has_no_effects():
    def mc(inner: str) -> str:
        return f"""  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{"a"}}]>]
      out_shardings=[<@mesh, [{{"a"}}]>] manual_axes={{"a"}} (%arg1: tensor<2xf32>) {{
    %1 = {inner}
    sdy.return %1 : tensor<2xf32>
  }} : ({T}) -> {T}
  return %arg0 : {T}"""
    for inner, kept in (("stablehlo.abs %arg1 : tensor<2xf32>", False),
                        ("stablehlo.custom_call @f(%arg1) {has_side_effect = true} : "
                         "(tensor<2xf32>) -> tensor<2xf32>", True)):
        m = parse_module('sdy.mesh @mesh = <["a"=2]>\n'
                         f"func.func @f(%arg0: {T}) -> {T} {{\n{mc(inner)}\n}}\n", "t.mlir")
        apply_patterns_greedily(m, [], NO_CLEANUP)
        assert ("sdy.manual_computation" in print_module(m)) is kept


# -- notifications --------------------------------------------------------------------------

def test_modified_op_is_requeued_after_its_ancestors():
    """Rewriting sine touches abs (already popped): abs is pushed, then its ancestor
    func.func, so func.func comes out first, then abs, before the ops still queued."""
    seen: list[str] = []

    @rewrite_pattern("stablehlo.sine")
    def touch_abs(op, rewriter: PatternRewriter):
        first = op.parent.first_op
        if "touched" in first.attributes:
            return False
        rewriter.modify_op_in_place(first, lambda: first.attributes.setdefault(
            "touched", op.attributes.get("x")))
        return True

    apply_patterns_greedily(module(CHAIN), [touch_abs, recorder(seen)],
                            GreedyRewriteConfig(max_iterations=1, fold=False))
    assert seen == ["func.func", "stablehlo.abs", "stablehlo.negate", "func.func",
                    "stablehlo.abs", "func.return"]


def test_already_queued_op_keeps_its_place_when_modified():
    seen: list[str] = []

    @rewrite_pattern("stablehlo.abs")
    def touch_sine(op, rewriter: PatternRewriter):
        sine = op.parent.last_op.prev_op
        if "touched" in sine.attributes:
            return False
        rewriter.modify_op_in_place(sine, lambda: sine.attributes.setdefault(
            "touched", op.attributes.get("x")))
        return True

    apply_patterns_greedily(module(CHAIN), [touch_sine, recorder(seen)],
                            GreedyRewriteConfig(max_iterations=1, fold=False))
    assert seen == ["func.func", "func.func", "stablehlo.negate", "stablehlo.sine",
                    "func.return"]


def test_erasing_an_op_requeues_operand_definers_left_with_one_user():
    """``negate`` is replaced by %arg0: abs, left with one other user, is re-offered right
    away (a definer left with two users would not be)."""
    seen: list[str] = []

    @rewrite_pattern("stablehlo.negate", benefit=2)
    def drop_negate(op, rewriter):
        rewriter.replace_op(op, [op.parent.args[0]])
        return True

    body = f"""  %0 = stablehlo.abs %arg0 : {T}
  %1 = stablehlo.negate %0 : {T}
  %2 = stablehlo.sine %1 : {T}
  %3 = stablehlo.cosine %0 : {T}
  return %2, %3 : {T}, {T}"""
    m = module(body, results=f"{T}, {T}")
    apply_patterns_greedily(m, [drop_negate, recorder(seen)],
                            GreedyRewriteConfig(max_iterations=1, fold=False))
    # replacing negate pushes sine (its user) and func; erasing it pushes abs
    assert seen == ["func.func", "stablehlo.abs", "stablehlo.abs", "func.func",
                    "stablehlo.sine", "stablehlo.cosine", "func.return"]
    assert func_ops(m) == ["stablehlo.abs", "stablehlo.sine", "stablehlo.cosine",
                           "func.return"]


def test_created_op_is_processed_before_the_rest():
    seen: list[str] = []

    @rewrite_pattern("stablehlo.abs", benefit=2)
    def abs_to_negate_negate(op, rewriter):
        inner = rewriter.create("stablehlo.negate", op.operands, op.result_types)
        rewriter.replace_op_with_new_op(op, "stablehlo.negate", inner.results, op.result_types)
        return True

    m = module(CHAIN)
    apply_patterns_greedily(m, [abs_to_negate_negate, recorder(seen)],
                            GreedyRewriteConfig(max_iterations=1, fold=False))
    assert seen == ["func.func", "stablehlo.negate", "func.func", "stablehlo.negate",
                    "stablehlo.negate", "stablehlo.sine", "func.return"]
    assert func_ops(m)[:3] == ["stablehlo.negate"] * 3


# -- iterations ---------------------------------------------------------------------------

def _raw_rewire():
    """On sine: point it at %arg0 directly, without telling the rewriter."""
    @rewrite_pattern("stablehlo.sine")
    def rewire(op, rewriter):
        block = op.parent
        arg = block.args[0]
        if op.operands[0] is arg:
            return False
        op.set_operand(0, arg)
        return True
    return rewire


def test_unnotified_dead_ops_wait_for_the_next_iteration():
    m = module(CHAIN)
    result = apply_patterns_greedily(m, [_raw_rewire()], GreedyRewriteConfig(
        max_iterations=1, fold=False, region_simplification="disabled"))
    assert not result.converged
    assert func_ops(m) == ["stablehlo.abs", "stablehlo.negate", "stablehlo.sine", "func.return"]
    result = apply_patterns_greedily(m, [], GreedyRewriteConfig(max_iterations=2))
    assert result.converged and func_ops(m) == ["stablehlo.sine", "func.return"]


def test_region_dce_erases_dead_ops_the_worklist_missed():
    m = module(CHAIN)
    apply_patterns_greedily(m, [_raw_rewire()], GreedyRewriteConfig(max_iterations=1))
    assert func_ops(m) == ["stablehlo.sine", "func.return"]


# -- pattern order --------------------------------------------------------------------------

@pytest.mark.parametrize(("any_benefit", "expected"), [(1, ["op2", "op1", "any"]),
                                                      (2, ["op2", "any", "op1"]),
                                                      (3, ["any", "op2", "op1"])])
def test_patterns_by_benefit_op_specific_first_on_ties(any_benefit, expected):
    tried: list[str] = []

    def pat(label, root, benefit):
        def fn(op, rewriter):
            if op.name == "stablehlo.abs":
                tried.append(label)
            return False
        return RewritePattern(fn, root, benefit, label)

    patterns = [pat("op1", "stablehlo.abs", 1), pat("any", None, any_benefit),
                pat("op2", "stablehlo.abs", 2)]
    apply_patterns_greedily(module(CHAIN), patterns, NO_CLEANUP)
    assert tried == expected


# -- constants and folding ---------------------------------------------------------------

CONSTANTS = f"""  %c0 = stablehlo.constant dense<1.0> : {T}
  %0 = stablehlo.add %arg0, %c0 : {T}
  %c1 = stablehlo.constant dense<2.0> : {T}
  %1 = stablehlo.add %0, %c1 : {T}
  %c2 = stablehlo.constant dense<1.0> : {T}
  %2 = stablehlo.add %1, %c2 : {T}
  return %2 : {T}"""


def test_constant_cse_unifies_and_hoists_to_the_block_front():
    m = module(CONSTANTS)
    apply_patterns_greedily(m, [])
    text = print_module(m)
    assert func_ops(m)[:2] == ["stablehlo.constant"] * 2
    # the 2.0 constant was hoisted in front of the 1.0 one; the second 1.0 is gone
    assert text.index("dense<2.0") < text.index("dense<1.0") and text.count("dense<1.0") == 1


def test_no_constant_cse_keeps_constants_in_place():
    m = module(CONSTANTS)
    apply_patterns_greedily(m, [], GreedyRewriteConfig(cse_constants=False))
    assert func_ops(m).count("stablehlo.constant") == 3


def test_folder_replaces_op_unless_folding_is_off(monkeypatch):
    def fold_double_negate(op):
        inner = op.operands[0].defining_op
        if inner is not None and inner.name == "stablehlo.negate":
            return [inner.operands[0]]
        return None
    monkeypatch.setitem(greedy.FOLDERS, "stablehlo.negate", fold_double_negate)
    body = f"""  %0 = stablehlo.negate %arg0 : {T}
  %1 = stablehlo.negate %0 : {T}
  return %1 : {T}"""
    m = module(body)
    apply_patterns_greedily(m, [], GreedyRewriteConfig(fold=False))
    assert func_ops(m) == ["stablehlo.negate", "stablehlo.negate", "func.return"]
    apply_patterns_greedily(m, [])
    assert func_ops(m) == ["func.return"]


# -- applying to chosen ops ---------------------------------------------------------------

def test_apply_op_patterns_only_visits_given_ops_in_strict_mode():
    seen: list[str] = []
    m = module(CHAIN)
    block = m.regions[0].blocks[0].first_op.regions[0].blocks[0]
    negate = block.first_op.next_op
    result = apply_op_patterns_greedily(
        [negate], [recorder(seen)], GreedyRewriteConfig(strictness="existing"))
    assert seen == ["stablehlo.negate"] and result.converged and not result.all_erased
