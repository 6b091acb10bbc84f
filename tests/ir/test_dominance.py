"""SSA dominance (``shardy_ref.ir.verify.core.verify_dominance``): the one walk of the blocks
in order that shows all operands visible gives the verdict of checking each operand with
the tree positions, on random programs edited into and out of dominance."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.verify import core
from shardy_ref.parser import parse_module
from shardy_ref.testing.programs import random_program
from tests.profiles import examples


def _op_by_op(module) -> bool:
    positions = core.TreePositions(module)
    try:
        for op in core.preorder(module):
            core._verify_operands(op, positions)
    except VerifyError:
        return False
    return True


def _edit(ops, pick: int) -> None:
    """Move an op or reroute an operand; never an op into itself (a cycle MLIR forbids)."""
    a, b = ops[pick % len(ops)], ops[(pick // 7) % len(ops)]
    if a.parent is None or a.is_ancestor_of(b):
        return
    if pick % 3 == 0:
        a.move_before(b)  # maybe into another block, after its users, before its definers
    elif pick % 3 == 1 and a.operands and b.results:
        a.set_operand(0, b.results[0])  # maybe a value defined later or in a nested block
    elif b.regions and b.regions[0].blocks and b.regions[0].blocks[0].first_op is not None:
        a.move_before(b.regions[0].blocks[0].first_op)  # into a region, maybe its definer's


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 10**6), picks=st.lists(st.integers(0, 10**6), max_size=4))
def test_the_walk_in_order_agrees_with_the_op_by_op_check(seed, picks):
    module = parse_module(random_program(seed))
    ops = [op for op in module.walk() if op.name not in ("builtin.module", "func.func")]
    for pick in picks:
        if not ops:
            break
        _edit(ops, pick)
    assert core._all_visible(module, [], lambda op: False, 0) == _op_by_op(module)


def test_a_graph_region_sees_every_op_of_its_block_but_its_own_results_inside_it():
    module = parse_module("""sdy.mesh @m = <["x"=2]>
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}""")
    assert core._all_visible(module, [], lambda op: False, 0) and _op_by_op(module)
    func = module.regions[0].blocks[0].last_op
    ret = func.regions[0].blocks[0].last_op
    ret.set_operand(0, ret.operands[0].op.operands[0])
    abs_ = func.regions[0].blocks[0].first_op
    abs_.move_before(ret)
    abs_.set_operand(0, abs_.results[0])  # uses its own result
    assert not core._all_visible(module, [], lambda op: False, 0) and not _op_by_op(module)


def test_an_op_of_a_graph_region_does_not_see_its_own_result():
    module = parse_module("""func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<4xf32>
  return %a : tensor<4xf32>
}""")
    func = module.regions[0].blocks[0].first_op
    negate = func.regions[0].blocks[0].first_op
    negate.move_before(func)  # into the module's graph region
    negate.set_operand(0, negate.results[0])
    assert not _op_by_op(module)
    assert not core._all_visible(module, [], lambda op: False, 0)
