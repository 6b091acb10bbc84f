"""``sdy-sharding-group-import``: groups sharing a value merge, are renumbered ``0..N-1``,
duplicate memberships are erased, and groups may not cross manual computation boundaries
or mix shapes. Upstream's pass is not idempotent in its numbering (a merged class is
numbered by its leader's position, a second run by first appearance), but it is on the
grouping, and a third run changes nothing more."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.propagate.import_.sharding_group_import import EquivalenceClasses

from .pass_helpers import assert_like_oracle, examples, run_pipeline
from .strategies_constraints import sharding_group_modules

PASS = "sdy-sharding-group-import"
T = "tensor<4xf32>"


def groups(*members: tuple[int, int], n_args: int = 3) -> str:
    args = ", ".join(f"%arg{i}: {T}" for i in range(n_args))
    body = "".join(f"  sdy.sharding_group %arg{v} group_id = {g} : {T}\n" for v, g in members)
    return f"func.func @f({args}) {{\n{body}  return\n}}\n"


def memberships(text: str) -> list[tuple[str, int]]:
    out = []
    for line in run_pipeline(text, PASS).splitlines():
        if "sdy.sharding_group" in line:
            words = line.split()
            out.append((words[1], int(words[2].removeprefix("group_id="))))
    return out


def test_disjoint_groups_are_renumbered_in_order():
    assert memberships(groups((0, 12), (1, 89))) == [("%arg0", 0), ("%arg1", 1)]


def test_groups_sharing_a_value_merge_and_duplicates_go():
    assert memberships(groups((0, 3), (0, 7), (1, 7), (2, 9), (1, 3))) == [
        ("%arg0", 0), ("%arg1", 0), ("%arg2", 1)]


def test_merged_class_is_numbered_by_its_leaders_position():
    # %arg2 merges {4} into {1, 2} under leader 4, inserted after 3: {3} comes first
    assert memberships(groups((0, 1), (0, 2), (1, 3), (2, 4), (2, 2))) == [
        ("%arg0", 1), ("%arg1", 0), ("%arg2", 1)]


def test_equivalence_classes_keep_the_first_leader_and_insertion_order():
    classes = EquivalenceClasses()
    for a, b in ((5, 5), (5, 2), (3, 3), (1, 1), (3, 5)):
        classes.union(a, b)
    assert list(classes.leaders()) == [3, 1]
    assert {classes.leader(x) for x in (2, 3, 5)} == {3}


def test_no_groups_is_a_no_op():
    text = groups()
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


MANUAL = """sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{}}]>] out_shardings=[<@mesh, [{{}}]>]
      manual_axes={{}} (%x: tensor<8xf32>) {{
    sdy.sharding_group %x group_id = {inner} : tensor<8xf32>
    sdy.return %x : tensor<8xf32>
  }} : (tensor<8xf32>) -> tensor<8xf32>
  sdy.sharding_group %0 group_id = {outer} : {outer_type}
  return %0 : tensor<8xf32>
}}
"""


def test_group_crossing_a_manual_computation_boundary_fails_at_the_second_member():
    text = MANUAL.format(inner=5, outer=5, outer_type="tensor<8xf32>")
    with pytest.raises(PassError) as e:
        run_pipeline(text, PASS)
    assert e.value.message == \
        "ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: 5"
    assert e.value.location.line == 8


def test_group_mixing_shapes_fails():
    text = groups((0, 1), (1, 1), n_args=2).replace(f"%arg1: {T}", "%arg1: tensor<2x2xf32>") \
        .replace(f"%arg1 group_id = 1 : {T}", "%arg1 group_id = 1 : tensor<2x2xf32>")
    with pytest.raises(PassError, match="must have the same shape for groupId: 1"):
        run_pipeline(text, PASS)


def test_groups_on_either_side_of_a_boundary_are_fine():
    text = MANUAL.format(inner=5, outer=6, outer_type="tensor<8xf32>")
    assert [g for _, g in memberships(text)] == [0, 1]


def partition(printed: str) -> set[frozenset[str]]:
    """The printed groups as sets of value names, whatever their ids."""
    by_group: dict[str, set[str]] = {}
    for line in printed.splitlines():
        if "sdy.sharding_group" in line:
            words = line.split()
            by_group.setdefault(words[2], set()).add(words[1])
    return {frozenset(members) for members in by_group.values()}


@settings(max_examples=40, deadline=None)
@given(sharding_group_modules())
def test_grouping_is_stable_and_numbering_settles_after_two_runs(text):
    once = run_pipeline(text, PASS)
    twice = run_pipeline(once, PASS)
    assert run_pipeline(twice, PASS) == twice
    assert partition(once) == partition(twice)
    ids = sorted({line.split("group_id=")[1].split()[0] for line in once.splitlines()
                  if "group_id=" in line}, key=int)
    assert ids == [str(i) for i in range(len(ids))]


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = examples(sharding_group_modules(), 40)
    assert_like_oracle(texts, PASS)
