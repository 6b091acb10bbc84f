"""The propagation strategies above the basic driver: aggressive conflict resolution, the
op-priority direction algebra and schedule, user priorities (``algorithms.md`` §5.3,
§5.7)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.ir.sdy_debug import PropagationDirection as Dir
from shardy_ref.propagate.op_priority_propagation import (
    intersection_of_directions,
    union_of_directions,
)

from .pass_helpers import run_pipeline

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'
DIRECTIONS = st.sampled_from(list(Dir))


@given(DIRECTIONS, DIRECTIONS)
def test_union_and_intersection_are_commutative(a, b):
    assert union_of_directions(a, b) == union_of_directions(b, a)
    assert intersection_of_directions(a, b) == intersection_of_directions(b, a)


@given(DIRECTIONS, DIRECTIONS, DIRECTIONS)
def test_union_and_intersection_are_associative(a, b, c):
    """The union is a lattice join: a bound direction unions the op-level schedules once,
    then the per-factor ones (``OpBasedDirection.bind``)."""
    assert union_of_directions(union_of_directions(a, b), c) == \
        union_of_directions(a, union_of_directions(b, c))
    assert intersection_of_directions(intersection_of_directions(a, b), c) == \
        intersection_of_directions(a, intersection_of_directions(b, c))


@given(DIRECTIONS)
def test_none_and_both_are_the_identities(d):
    assert union_of_directions(d, Dir.NONE) == d
    assert intersection_of_directions(d, Dir.BOTH) == d


def test_forward_and_backward_combine_to_both_and_share_nothing():
    assert union_of_directions(Dir.FORWARD, Dir.BACKWARD) == Dir.BOTH
    assert intersection_of_directions(Dir.FORWARD, Dir.BACKWARD) == Dir.NONE


# C = dot(A, B): A's non-contracting dim and C's second dim both want "a". Basic
# propagation gives up on the conflict; aggressive gives "a" to the factor whose source
# tensor is larger (C, 8x16, beats A, 8x8), so B gets "a" on its non-contracting dim.
DOT_CONFLICT = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
    %arg1: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}"""


def test_basic_leaves_a_conflict_and_aggressive_resolves_it_by_source_size():
    assert "%arg1: tensor<8x16xf32>)" in run_pipeline(DOT_CONFLICT, "sdy-basic-propagate")
    out = run_pipeline(DOT_CONFLICT, "sdy-aggressive-propagate")
    assert '%arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"a", ?}]>}' \
        in out
    basic = run_pipeline(DOT_CONFLICT, "sdy-aggressive-propagate{propagation-strategy=basic}")
    assert basic == run_pipeline(DOT_CONFLICT, "sdy-basic-propagate")


def test_unknown_strategy_is_a_clear_error():
    with pytest.raises(ShardyRefError, match="propagation-strategy"):
        run_pipeline(DOT_CONFLICT, "sdy-aggressive-propagate{propagation-strategy=fast}")


PRIORITIES = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}p1, {}]>},
    %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}p0, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}"""


def test_the_stronger_user_priority_wins_and_priorities_are_dropped():
    out = run_pipeline(PRIORITIES, "sdy-user-priority-propagate")
    assert 'stablehlo.add %arg0, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, ' \
        '[{"b", ?}, {?}]>]>}' in out
    assert "p0" not in out and "p1" not in out


def test_without_user_priorities_the_conflict_blocks_even_aggressive_propagation():
    flat = PRIORITIES.replace("p1", "").replace("p0", "")
    out = run_pipeline(flat, "sdy-user-priority-propagate")
    assert "sharding_per_value" not in out


BROADCAST = MESH + """func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.negate %0 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}"""


def test_op_priority_rounds_still_propagate_forward_through_broadcasts():
    no_rounds = run_pipeline(
        BROADCAST, "sdy-op-priority-propagate{run-op-priority-propagation=false}")
    rounds = run_pipeline(BROADCAST, "sdy-op-priority-propagate")
    expected = '%1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, ' \
        '[{"a", ?}, {?}]>]>}'
    assert expected in no_rounds and expected in rounds
