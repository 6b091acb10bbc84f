"""The op graph keeps use lists consistent through every mutation the IR API offers."""
from __future__ import annotations

import pytest

from shardy_ref.ir.operation import Block, IRError, Operation, Region
from shardy_ref.ir.types import F32, I32


def _const(name="t.c", t=F32):
    return Operation(name, result_types=[t])


def test_operands_register_uses_most_recent_first():
    a = _const()
    u1 = Operation("t.u", [a.result, a.result])
    u2 = Operation("t.u", [a.result])
    assert [(u.owner, u.index) for u in a.result.uses] == [(u2, 0), (u1, 1), (u1, 0)]
    assert a.result.users == [u2, u1]


def test_replace_all_uses_moves_every_use():
    a, b = _const(), _const()
    user = Operation("t.u", [a.result, a.result])
    a.result.replace_all_uses_with(b.result)
    assert user.operands == (b.result, b.result)
    assert not a.result.has_uses
    assert len(b.result.uses) == 2


def test_replace_uses_with_if_is_selective():
    a, b = _const(), _const()
    user = Operation("t.u", [a.result, a.result])
    a.result.replace_uses_with_if(b.result, lambda use: use.index == 1)
    assert user.operands == (a.result, b.result)


def test_set_operand_and_set_operands_update_uses():
    a, b = _const(), _const()
    user = Operation("t.u", [a.result])
    user.set_operand(0, b.result)
    assert not a.result.has_uses and b.result.has_one_use
    user.set_operands([a.result, a.result])
    assert not b.result.has_uses and len(a.result.uses) == 2


def test_erase_requires_unused_results_and_drops_operand_uses():
    block = Block()
    a = block.append(_const())
    user = block.append(Operation("t.u", [a.result]))
    with pytest.raises(IRError):
        a.erase()
    user.erase()
    assert not a.result.has_uses
    assert block.ops == [a]
    a.erase()
    assert block.ops == [] and len(block) == 0


def test_erasing_a_region_op_drops_nested_uses():
    block = Block()
    a = block.append(_const())
    inner = Block()
    inner.append(Operation("t.u", [a.result]))
    outer = block.append(Operation("t.region", regions=[Region([inner])]))
    outer.erase()
    assert not a.result.has_uses


def test_block_is_a_linked_list():
    block = Block()
    a, b, c = _const("t.a"), _const("t.b"), _const("t.c")
    block.append(a)
    block.append(c)
    block.insert_before(c, b)
    assert [op.name for op in block] == ["t.a", "t.b", "t.c"]
    assert [op.name for op in reversed(block)] == ["t.c", "t.b", "t.a"]
    assert a.next_op is b and c.prev_op is b and a.is_before_in_block(c)
    block.prepend(c)  # moving an op unlinks it first
    assert [op.name for op in block] == ["t.c", "t.a", "t.b"]
    for op in block:  # erasing while iterating is safe
        op.erase()
    assert block.first_op is None and block.last_op is None


def test_walk_orders_and_ancestry():
    inner = Block()
    leaf = inner.append(_const("t.leaf"))
    outer_block = Block()
    parent = outer_block.append(Operation("t.parent", regions=[Region([inner])]))
    assert [op.name for op in parent.walk()] == ["t.parent", "t.leaf"]
    assert [op.name for op in parent.walk(post_order=True)] == ["t.leaf", "t.parent"]
    assert leaf.parent_op is parent and parent.is_ancestor_of(leaf)
    assert not leaf.is_ancestor_of(parent)


def test_block_arguments_insert_and_erase_keep_indices():
    block = Block([F32, I32])
    block.insert_argument(1, F32)
    assert [a.index for a in block.args] == [0, 1, 2]
    user = Operation("t.u", [block.args[2]])
    with pytest.raises(IRError):
        block.erase_argument(2)
    user.drop_all_references()
    block.erase_argument(0)
    assert [a.type for a in block.args] == [F32, I32]
    assert [a.index for a in block.args] == [0, 1]


def test_replace_all_uses_of_op_results():
    a = Operation("t.two", result_types=[F32, I32])
    b = Operation("t.two", result_types=[F32, I32])
    user = Operation("t.u", [a.results[1], a.results[0]])
    a.replace_all_uses_with(b.results)
    assert user.operands == (b.results[1], b.results[0])
    with pytest.raises(IRError):
        a.replace_all_uses_with([b.results[0]])


def test_replace_all_uses_with_reverses_the_moved_uses_like_mlir():
    """MLIR moves uses most recent first, each to the front of the new list."""
    from shardy_ref.ir.operation import Block, Operation
    from shardy_ref.ir.types import I32

    block = Block([I32, I32])
    a, b = block.args
    users = [block.append(Operation("t.use", [a])) for _ in range(3)]
    existing = block.append(Operation("t.use", [b]))
    assert [u.owner for u in a.uses] == users[::-1]
    a.replace_all_uses_with(b)
    assert [u.owner for u in b.uses] == [*users, existing]
