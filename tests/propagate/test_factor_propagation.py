"""Basic factor propagation (``algorithms.md`` §5.6): unit tests of the compatible-axes fold,
the conflict checks and the per-factor loop, plus hypothesis invariants on random projections.
"""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.aggressive_factor_propagation import AggressiveFactorPropagation
from shardy_ref.propagate.basic_factor_propagation import (
    BasicFactorPropagation,
    block_propagation_factors,
    compatible_major_axes_internal,
    propagate_any,
)
from shardy_ref.propagate.sharding_projection import (
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
)
from shardy_ref.testing.strategies import axis_pieces, meshes

BOTH = PropagationDirection.BOTH
FORWARD = PropagationDirection.FORWARD
BACKWARD = PropagationDirection.BACKWARD
NONE = PropagationDirection.NONE
PROP = BasicFactorPropagation()


def ax(spec: str) -> AxisRef:
    """``"a"`` or ``"a:1:2"`` (name:pre_size:size)."""
    if ":" in spec:
        name, pre, size = spec.split(":")
        return AxisRef.sub(name, int(pre), int(size))
    return AxisRef(spec)


def axes(*specs: str) -> list[AxisRef]:
    return [ax(s) for s in specs]


def fs(*specs: str, closed: bool = False, minor_most: bool = False,
       overflow: tuple[str, ...] = ()) -> FactorSharding:
    return FactorSharding(axis_refs=axes(*specs), is_closed=closed,
                          is_minor_most=minor_most, overflow_axes=axes(*overflow))


def tensor(factors: dict[int, FactorSharding], replicated: tuple[str, ...] = (),
           unreduced: tuple[str, ...] = ()) -> TensorFactorShardings:
    return TensorFactorShardings(factor_index_to_sharding=dict(factors),
                                 replicated_axes=axes(*replicated),
                                 unreduced_axes=axes(*unreduced))


def projection(operands, results=()) -> ShardingProjection:
    return ShardingProjection(list(operands), list(results))


def factor_axes(proj: ShardingProjection) -> list[dict[int, list[AxisRef]]]:
    return [{f: list(s.axis_refs) for f, s in t.factor_index_to_sharding.items()}
            for t in [*proj.operands, *proj.results]]


def set_bits(bits) -> list[int]:
    return [i for i, b in enumerate(bits) if b]


def propagate(proj, factor_sizes, mesh=None, direction=propagate_any, conservative=False):
    update = PROP.propagate_factor_shardings(proj, direction, factor_sizes, mesh, conservative)
    return set_bits(update.update_operands), set_bits(update.update_results)


def compatible(*tensor_axes: list[AxisRef], direction=BOTH, num_operands=None):
    """compatible_major_axes of one factor over tensors with the given axes (all operands
    unless ``num_operands`` says where results start)."""
    tensors = [tensor({0: FactorSharding(axis_refs=list(a))}) for a in tensor_axes]
    n = len(tensors) if num_operands is None else num_operands
    return PROP.compatible_major_axes(projection(tensors[:n], tensors[n:]), 0, direction)


MESH = Mesh((MeshAxis("a", 4), MeshAxis("b", 2), MeshAxis("c", 2), MeshAxis("d", 2)))


# --- compatibleMajorAxes -----------------------------------------------------------------

class TestCompatibleMajorAxes:
    def test_diverging_axes_keep_common_prefix(self):
        assert compatible(axes("a", "b"), axes("a", "c")) == axes("a")

    def test_longest_prefix_over_four_tensors(self):
        assert compatible(axes("a"), [], axes("a", "b", "c"), axes("a", "b", "d")) == \
            axes("a", "b")

    def test_sub_axis_extended_to_larger_sub_axis(self):
        assert compatible(axes("a:1:2"), axes("a:1:4")) == axes("a:1:4")

    def test_sub_axis_followed_by_more_blocks(self):
        assert compatible(axes("a:1:2", "b"), axes("a:1:4")) == axes("a:1:2")
        assert compatible(axes("a:1:4"), axes("a:1:2", "b")) == axes("a:1:2")

    def test_overlapping_non_prefix_sub_axes_conflict(self):
        assert compatible(axes("a:1:2"), axes("a:2:2")) == []

    def test_different_first_axis(self):
        assert compatible(axes("a"), axes("b")) == []

    def test_unmapped_tensor_is_ignored(self):
        proj = projection([tensor({0: fs("a")}), tensor({1: fs("b")})])
        assert PROP.compatible_major_axes(proj, 0, BOTH) == axes("a")

    def test_none_direction(self):
        assert compatible(axes("a"), axes("a"), direction=NONE) == []

    def test_forward_operands_expand_results_constrain(self):
        # operand ["a"], result ["a", "b"]: forward cannot take "b" from the result.
        assert compatible(axes("a"), axes("a", "b"), direction=FORWARD, num_operands=1) == \
            axes("a")
        assert compatible(axes("a"), axes("a", "b"), direction=BACKWARD, num_operands=1) == \
            axes("a", "b")

    def test_forward_result_conflict_still_counts(self):
        assert compatible(axes("a", "b"), axes("a", "c"), direction=FORWARD,
                          num_operands=1) == axes("a")
        assert compatible(axes("a", "b"), axes("c"), direction=FORWARD, num_operands=1) == []

    def test_backward_operands_constrain(self):
        assert compatible(axes("a", "b"), axes("a"), direction=BACKWARD, num_operands=1) == \
            axes("a")
        assert compatible(axes("a", "b"), axes("a"), direction=FORWARD, num_operands=1) == \
            axes("a", "b")


class TestInternalFold:
    @pytest.mark.parametrize(("old", "new", "can_expand", "expected", "expandable"), [
        (["a"], ["a", "b"], True, ["a", "b"], True),
        (["a", "b"], ["a", "c"], True, ["a"], False),
        (["a:1:2"], ["a:1:4"], True, ["a:1:4"], True),
        (["a:1:2", "b"], ["a:1:4", "b"], True, ["a:1:2"], False),
        (["a"], ["a"], False, ["a"], False),
        (["a"], ["a", "b"], False, ["a"], False),
        (["a", "b"], ["a"], False, ["a", "b"], False),
        (["a:1:2"], ["a:1:4"], False, ["a:1:2"], False),
        (["a:1:4"], ["a:1:2"], True, ["a:1:4"], True),
        (["a:1:4", "b"], ["a:1:2", "c"], True, ["a:1:2"], False),
    ])
    def test_examples(self, old, new, can_expand, expected, expandable):
        assert compatible_major_axes_internal(axes(*old), axes(*new), can_expand) == \
            (axes(*expected), expandable)


# --- conflicts (compatiblePrefix / truncate) ---------------------------------------------

class TestConflicts:
    def test_axis_used_by_other_factor_in_any_tensor(self):
        # factor 0 wants ["a", "b"]; "b" shards factor 1 of the second tensor.
        proj = projection([tensor({0: fs("a", "b")}), tensor({0: fs(), 1: fs("b")})])
        assert propagate(proj, [1, 1]) == ([1], [])
        assert factor_axes(proj)[1] == {0: axes("a"), 1: axes("b")}

    def test_other_factor_overflow_axes_conflict(self):
        proj = projection([tensor({0: fs("a")}), tensor({0: fs(), 1: fs(overflow=("a",))})])
        assert propagate(proj, [1, 1]) == ([], [])

    def test_other_factor_sub_axis_truncates_to_prefix(self):
        # "a":(2)2 is used by factor 1: only "a":(1)2 may shard factor 0.
        proj = projection([tensor({0: fs("a")}), tensor({0: fs(), 1: fs("a:2:2")})])
        assert propagate(proj, [4, 2], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a:1:2")

    def test_replicated_axis_blocks_mapped_tensor_only(self):
        proj = projection([tensor({0: fs("a")}), tensor({0: fs()}, replicated=("a",))],
                          [tensor({1: fs()}, replicated=("a",))])
        assert propagate(proj, [1, 1]) == ([], [])
        proj = projection([tensor({0: fs("a")}), tensor({0: fs()})],
                          [tensor({1: fs()}, replicated=("a",))])
        assert propagate(proj, [1, 1]) == ([1], [])

    def test_unreduced_axis_blocks(self):
        proj = projection([tensor({0: fs("a", "b")}), tensor({0: fs()}, unreduced=("b",))])
        assert propagate(proj, [1]) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a")

    def test_replicated_sub_axis_truncates(self):
        proj = projection([tensor({0: fs("a")}), tensor({0: fs()}, replicated=("a:2:2",))])
        assert propagate(proj, [4], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a:1:2")

    def test_closed_factor_blocks_and_is_kept(self):
        proj = projection([tensor({0: fs("a")}), tensor({0: fs(closed=True)}),
                           tensor({0: fs()})])
        assert propagate(proj, [4], MESH) == ([], [])

    def test_closed_factor_keeps_its_prefix(self):
        # the closed tensor already has "a": the others can still get it, not "b".
        proj = projection([tensor({0: fs("a", "b")}), tensor({0: fs("a", closed=True)}),
                           tensor({0: fs()})])
        assert propagate(proj, [8], MESH) == ([2], [])
        assert [t[0] for t in factor_axes(proj)] == [axes("a", "b"), axes("a"), axes("a")]

    def test_closed_factor_with_shorter_sub_axis(self):
        proj = projection([tensor({0: fs("a")}), tensor({0: fs("a:1:2", closed=True)}),
                           tensor({0: fs()})])
        assert propagate(proj, [4], MESH) == ([2], [])
        assert factor_axes(proj)[2][0] == axes("a:1:2")

    def test_own_overflow_axes_block_expansion(self):
        proj = projection([tensor({0: fs("b")}), tensor({0: fs(overflow=("c",))})])
        assert propagate(proj, [2], MESH) == ([], [])

    def test_non_divisible_factor_gets_sub_axis(self):
        # factor size 2, "a" has size 4: only "a":(1)2 divides the factor.
        proj = projection([tensor({0: fs("a", minor_most=True)}), tensor({0: fs()})])
        assert propagate(proj, [2], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a:1:2")

    def test_minor_most_factor_ignores_divisibility(self):
        # divisibility is only checked for tensors that would gain the axis
        proj = projection([tensor({0: fs("a")}), tensor({0: fs(minor_most=True)})])
        assert propagate(proj, [2], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a")
        proj = projection([tensor({0: fs("a")}), tensor({0: fs(minor_most=True)}),
                           tensor({0: fs()})])
        assert propagate(proj, [2], MESH) == ([1, 2], [])
        assert factor_axes(proj)[1][0] == axes("a:1:2")

    def test_divisibility_uses_previous_sharded_size(self):
        # factor size 8: "b" (2) then "a" (4) would be 8 -> fits; factor size 4 -> "a":(1)2.
        proj = projection([tensor({0: fs("b", "a", minor_most=True)}), tensor({0: fs()})])
        assert propagate(proj, [8], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("b", "a")
        proj = projection([tensor({0: fs("b", "a", minor_most=True)}), tensor({0: fs()})])
        assert propagate(proj, [4], MESH) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("b", "a:1:2")

    def test_coprime_factor_blocks(self):
        proj = projection([tensor({0: fs("a", minor_most=True)}), tensor({0: fs()})])
        assert propagate(proj, [3], MESH) == ([], [])

    def test_no_mesh_skips_divisibility(self):
        proj = projection([tensor({0: fs("a", "b")}), tensor({0: fs()})])
        assert propagate(proj, [1]) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("a", "b")


class TestConservative:
    def test_sub_axis_result_is_cut(self):
        proj = projection([tensor({0: fs("a", minor_most=True)}), tensor({0: fs()})])
        assert propagate(proj, [2], MESH, conservative=True) == ([], [])

    def test_existing_sub_axis_is_not_propagated(self):
        proj = projection([tensor({0: fs("a:1:2", "b")}), tensor({0: fs()})])
        assert propagate(proj, [1], conservative=True) == ([], [])
        proj = projection([tensor({0: fs("b", "a:1:2")}), tensor({0: fs()})])
        assert propagate(proj, [1], conservative=True) == ([1], [])
        assert factor_axes(proj)[1][0] == axes("b")


# --- the per-factor loop ------------------------------------------------------------------

class TestPropagateFactorShardings:
    def test_each_factor_separately(self):
        proj = projection(
            [tensor({0: fs("a"), 3: fs("h")}), tensor({0: fs(), 2: fs("g"), 3: fs("i")}),
             tensor({1: fs("e")})],
            [tensor({0: fs("a", "b", "c"), 1: fs("e", "f")}),
             tensor({0: fs("a", "b", "d"), 2: fs(), 3: fs("i", "j")})])
        assert propagate(proj, [1, 1, 1, 1]) == ([0, 1, 2], [1])
        assert factor_axes(proj) == [
            {0: axes("a", "b"), 3: axes("h")},
            {0: axes("a", "b"), 2: axes("g"), 3: axes("i")},
            {1: axes("e", "f")},
            {0: axes("a", "b", "c"), 1: axes("e", "f")},
            {0: axes("a", "b", "d"), 2: axes("g"), 3: axes("i", "j")},
        ]

    def test_axis_claimed_by_two_factors_goes_to_neither(self):
        # the other factor's use of "a" in *any* tensor blocks it (basic strategy).
        proj = projection([tensor({0: fs("a"), 1: fs()}), tensor({0: fs(), 1: fs("a")})])
        assert propagate(proj, [1, 1]) == ([], [])
        proj = projection([tensor({0: fs("a")}), tensor({0: fs()}), tensor({1: fs("a")}),
                           tensor({0: fs(), 1: fs()})])
        assert propagate(proj, [1, 1]) == ([], [])

    @pytest.mark.parametrize(("direction", "forward_case", "backward_case"), [
        (BOTH, ([0, 1], [1]), ([0], [0, 1])),
        (FORWARD, ([0], [1]), ([0], [0, 1])),
        (BACKWARD, ([0, 1], [1]), ([0], [1])),
        (NONE, ([], []), ([], [])),
    ])
    def test_directions(self, direction, forward_case, backward_case):
        # FORWARD: only operands may add axes ("b" comes from a result).
        proj = projection([tensor({0: fs()}), tensor({0: fs("a")})],
                          [tensor({0: fs("a", "b")}), tensor({0: fs()})])
        assert propagate(proj, [1], direction=lambda f: direction) == forward_case
        # BACKWARD: only results may add axes ("b" comes from an operand).
        proj = projection([tensor({0: fs()}), tensor({0: fs("a", "b")})],
                          [tensor({0: fs("a")}), tensor({0: fs()})])
        assert propagate(proj, [1], direction=lambda f: direction) == backward_case

    def test_direction_per_factor(self):
        proj = projection([tensor({0: fs("a"), 1: fs("b")})], [tensor({0: fs(), 1: fs()})])
        directions = {0: FORWARD, 1: BACKWARD}
        assert propagate(proj, [1, 1], direction=directions.__getitem__) == ([], [0])
        assert factor_axes(proj)[1] == {0: axes("a"), 1: []}

    def test_blocked_propagation_factors(self):
        rule = OpShardingRule((1, 1), (), (), blocked_propagation_factors=(1,))
        direction = block_propagation_factors(rule, propagate_any)
        assert [direction(0), direction(1)] == [BOTH, NONE]
        proj = projection([tensor({0: fs("a"), 1: fs("b")})], [tensor({0: fs(), 1: fs()})])
        assert propagate(proj, [1, 1], direction=direction) == ([], [0])
        assert factor_axes(proj)[1] == {0: axes("a"), 1: []}


# --- properties on random projections -----------------------------------------------------

FACTOR_SIZES = (1, 2, 3, 4, 6, 8, 16)


@st.composite
def tensor_factor_shardings(draw, mesh: Mesh, num_factors: int) -> TensorFactorShardings:
    """A valid tensor of the projection: its factors, replicated, unreduced and overflow
    axes use disjoint pieces of the mesh; overflow only on non-minor-most factors."""
    factors = sorted(draw(st.sets(st.integers(0, num_factors - 1))))
    pieces = draw(st.permutations(draw(axis_pieces(mesh))))
    # slot per piece: (factor position, axes|overflow), replicated, unreduced or unused
    slots = [draw(st.integers(0, 2 * len(factors) + 2)) for _ in pieces]
    shardings = {}
    for pos, f in enumerate(factors):
        minor_most = draw(st.booleans())
        overflow = [] if minor_most else \
            [p for p, s in zip(pieces, slots) if s == 2 * pos + 1]
        shardings[f] = FactorSharding(
            axis_refs=[p for p, s in zip(pieces, slots) if s == 2 * pos],
            is_closed=draw(st.booleans()), is_minor_most=minor_most, overflow_axes=overflow)
    n = 2 * len(factors)
    return TensorFactorShardings(
        factor_index_to_sharding=shardings,
        replicated_axes=[p for p, s in zip(pieces, slots) if s == n],
        unreduced_axes=[p for p, s in zip(pieces, slots) if s == n + 1])


@st.composite
def propagation_problems(draw):
    mesh = draw(meshes(min_axes=1, max_axes=3).filter(lambda m: not m.is_maximal))
    num_factors = draw(st.integers(1, 3))
    factor_sizes = [draw(st.sampled_from(FACTOR_SIZES)) for _ in range(num_factors)]
    operands = draw(st.lists(tensor_factor_shardings(mesh, num_factors), min_size=1,
                             max_size=3))
    results = draw(st.lists(tensor_factor_shardings(mesh, num_factors), max_size=2))
    directions = [draw(st.sampled_from(list(PropagationDirection)))
                  for _ in range(num_factors)]
    conservative = draw(st.booleans())
    return mesh, factor_sizes, projection(operands, results), directions, conservative


def _run(problem):
    mesh, factor_sizes, proj, directions, conservative = problem
    before = copy.deepcopy(proj)
    PROP.propagate_factor_shardings(proj, directions.__getitem__, factor_sizes, mesh,
                                    conservative)
    return before, proj


def _tensor_pairs(before, after):
    return zip([*before.operands, *before.results], [*after.operands, *after.results])


@settings(max_examples=50, deadline=None)
@given(propagation_problems())
def test_closed_factors_never_change(problem):
    before, after = _run(problem)
    for old, new in _tensor_pairs(before, after):
        for f, sharding in old.factor_index_to_sharding.items():
            if sharding.is_closed:
                assert new.factor_index_to_sharding[f] == sharding


@settings(max_examples=50, deadline=None)
@given(propagation_problems())
def test_never_uses_replicated_or_unreduced_axes(problem):
    before, after = _run(problem)
    for _, new in _tensor_pairs(before, after):
        blocked = [*new.replicated_axes, *new.unreduced_axes]
        for sharding in new.factor_index_to_sharding.values():
            assert not any(a.overlaps(b) for a in sharding.axis_refs for b in blocked)


@settings(max_examples=50, deadline=None)
@given(propagation_problems())
def test_new_axes_extend_old_and_stay_disjoint(problem):
    before, after = _run(problem)
    for old, new in _tensor_pairs(before, after):
        used = [*new.replicated_axes, *new.unreduced_axes]
        for f, sharding in old.factor_index_to_sharding.items():
            old_axes = list(sharding.axis_refs)
            new_sharding = new.factor_index_to_sharding[f]
            new_axes = list(new_sharding.axis_refs)
            if old_axes:  # old is a prefix of new: all but the last equal, last prefixOf
                assert new_axes[:len(old_axes) - 1] == old_axes[:-1]
                assert old_axes[-1].prefix_of(new_axes[len(old_axes) - 1])
            assert new_sharding.overflow_axes == sharding.overflow_axes
            used += [*new_axes, *new_sharding.overflow_axes]
        assert not any(a.overlaps(b) for i, a in enumerate(used) for b in used[i + 1:])


@settings(max_examples=50, deadline=None)
@given(propagation_problems())
def test_running_twice_equals_once(problem):
    mesh, factor_sizes, _, directions, conservative = problem
    _, once = _run(problem)
    twice = copy.deepcopy(once)
    update = PROP.propagate_factor_shardings(twice, directions.__getitem__, factor_sizes,
                                             mesh, conservative)
    assert twice == once
    assert not any(update.update_operands) and not any(update.update_results)


# --- fixed points: every factor with the same axes in every tensor -----------------------

def _agreeing(problem):
    """``problem`` with each factor's axes in every tensor replaced by those of the first
    tensor mapped to it (the other parts, closed, overflow, replicated, kept)."""
    mesh, factor_sizes, proj, directions, conservative = problem
    first: dict[int, list[AxisRef]] = {}
    for tensor in [*proj.operands, *proj.results]:
        for f, sharding in tensor.factor_index_to_sharding.items():
            sharding.axis_refs = list(first.setdefault(f, sharding.axis_refs))
    return mesh, factor_sizes, proj, directions, conservative


@settings(max_examples=100, deadline=None)
@given(propagation_problems().map(_agreeing), st.booleans())
def test_no_strategy_changes_a_fixed_point(problem, aggressive):
    """What lets the propagator skip such a step whatever its directions
    (``BasicFactorPropagation.is_fixed_point``)."""
    mesh, factor_sizes, proj, directions, conservative = problem
    strategy = AggressiveFactorPropagation() if aggressive else PROP
    assert strategy.is_fixed_point(proj)
    before = copy.deepcopy(proj)
    update = strategy.propagate_factor_shardings(proj, directions.__getitem__, factor_sizes,
                                                 mesh, conservative)
    assert proj == before
    assert not any(update.update_operands) and not any(update.update_results)


@settings(max_examples=200, deadline=None)
@given(propagation_problems(), st.booleans())
def test_a_step_that_changes_something_was_no_fixed_point(problem, aggressive):
    mesh, factor_sizes, proj, directions, conservative = problem
    strategy = AggressiveFactorPropagation() if aggressive else PROP
    fixed = strategy.is_fixed_point(proj)
    update = strategy.propagate_factor_shardings(proj, directions.__getitem__, factor_sizes,
                                                 mesh, conservative)
    assert not fixed or not update.any()


def test_factors_differing_in_one_tensor_are_no_fixed_point():
    same = projection([tensor({0: fs("a")}), tensor({0: fs("a"), 1: fs()})],
                      [tensor({0: fs("a"), 1: fs()})])
    assert PROP.is_fixed_point(same)
    differ = projection([tensor({0: fs("a")}), tensor({0: fs("a"), 1: fs()})],
                        [tensor({0: fs("a"), 1: fs("b")})])
    assert not PROP.is_fixed_point(differ)
    assert PROP.propagate_factor_shardings(differ, propagate_any, [4, 4], None).any()
    sub_axis = projection([tensor({0: fs("a")})], [tensor({0: fs("a:1:2")})])
    assert not PROP.is_fixed_point(sub_axis)
    assert PROP.propagate_factor_shardings(sub_axis, propagate_any, [4], None).any()
