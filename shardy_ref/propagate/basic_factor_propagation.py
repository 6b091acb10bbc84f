"""Basic factor propagation: per factor, find the axes all tensors agree on and expand every
tensor's factor sharding to them ("Core Propagation Algorithm" in
https://openxla.org/shardy/propagation).

The strategy is conservative: a factor only gains axes that shard it compatibly in every
tensor, that no other factor of any tensor uses, that no tensor mapped to the factor
replicates or keeps unreduced, and that fit the factor (closed, overflow, divisibility).
The aggressive strategy (:mod:`shardy_ref.propagate.aggressive_factor_propagation`)
subclasses :class:`BasicFactorPropagation`.
See upstream ``transforms/propagation/basic_factor_propagation.{h,cc}`` and
``factor_propagation.h``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from math import gcd

from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.sharding_projection import (
    FactorSharding,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
)

# Upstream ``PropagationDirectionAlongFactor``: factor index -> direction along that factor.
PropagationDirectionAlongFactor = Callable[[int], PropagationDirection]

# ``removeConflicts(curAxis, prevShardedSize)`` of ``truncateAxesByRemovingConflicts``.
RemoveConflicts = Callable[[AxisRef, int], AxisRef | None]


def propagate_any(factor_index: int) -> PropagationDirection:
    """Upstream ``propagateAny``: propagate both ways along every factor."""
    return PropagationDirection.BOTH


def block_propagation_factors(rule: OpShardingRule,
                              direction_along_factor: PropagationDirectionAlongFactor,
                              ) -> PropagationDirectionAlongFactor:
    """``NONE`` along the rule's blocked-propagation factors, else ``direction_along_factor``
    (the ``localDirectionAlongFactor`` of upstream ``basic_propagation.cc``)."""
    blocked = frozenset(rule.blocked_propagation_factors)

    def direction(factor_index: int) -> PropagationDirection:
        if factor_index in blocked:
            return PropagationDirection.NONE
        return direction_along_factor(factor_index)

    return direction


def prefix_without_overlap(axis: AxisRef, others: Sequence[AxisRef]) -> AxisRef | None:
    """Upstream ``getPrefixWithoutOverlap(axisRef, range)``: the largest prefix of ``axis``
    overlapping none of ``others``, or None."""
    result: AxisRef | None = axis
    for other in others:
        result = result.prefix_without_overlap(other)
        if result is None:
            return None
    return result


def compatible_major_axes_internal(old_axes: Sequence[AxisRef], new_axes: Sequence[AxisRef],
                                   can_expand: bool) -> tuple[list[AxisRef], bool]:
    """Upstream ``getCompatibleMajorAxesInternal``: the compatible major axes of ``old_axes``
    and ``new_axes``, and whether the result may still be expanded. With ``can_expand``
    false the result never goes beyond ``old_axes``.

    ``["a"], ["a", "b"]`` -> ``["a", "b"]``; ``["a", "b"], ["a", "c"]`` -> ``["a"]`` (no
    longer expandable); ``["a":(1)2], ["a":(1)4]`` -> ``["a":(1)4]``.
    """
    result: list[AxisRef] = []
    n = min(len(old_axes), len(new_axes))
    for i in range(n):
        old, new = old_axes[i], new_axes[i]
        if new.name != old.name:
            return result, False
        if new.sub_axis_info == old.sub_axis_info:
            result.append(new)
            continue
        if new.prefix_of(old):
            # A further new axis would conflict (it is not the next consecutive sub-axis, or
            # the two would have been merged): keep the new (shorter) axis and stop.
            if i + 1 < len(new_axes):
                result.append(new)
                return result, False
            result.append(old)
        elif old.prefix_of(new):
            if not can_expand or i + 1 < len(old_axes):
                result.append(old)
                return result, False
            result.append(new)
        else:
            return result, False
    result.extend(old_axes[n:])
    if can_expand:
        result.extend(new_axes[n:])
    return result, can_expand


def _direction_based_tensors(direction: PropagationDirection, projection: ShardingProjection,
                             ) -> tuple[Sequence[TensorFactorShardings],
                                        Sequence[TensorFactorShardings]]:
    """Upstream ``getDirectionBasedTensorShardings``: the tensors that may expand the axes,
    then those that may only constrain them (for ``BOTH`` both groups may expand)."""
    if direction is PropagationDirection.BACKWARD:
        return projection.results, projection.operands
    return projection.operands, projection.results


@dataclass(frozen=True, slots=True)
class BasicFactorPropagation:
    """Upstream ``BasicFactorPropagation``: the conservative factor propagation strategy
    (``basic_factor_propagation.cc``). Stateless; aggressive strategies override its
    methods."""

    STRATEGY = "basic"  # how provenance names it

    def propagate_factor_shardings(self, projection: ShardingProjection,
                                   direction_along_factor: PropagationDirectionAlongFactor,
                                   factor_sizes: Sequence[int], mesh: Mesh | None,
                                   conservative_propagation: bool = False,
                                   op=None) -> UpdateTensorShardings:
        """Propagate each factor in index order, mutating ``projection`` in place (later
        factors see earlier expansions); returns which operands/results were expanded."""
        update = UpdateTensorShardings.empty(projection.num_operands, projection.num_results)
        for factor_index, factor_size in enumerate(factor_sizes):
            axes = self.compatible_major_sharding_axes(
                projection, factor_index, direction_along_factor(factor_index), factor_size,
                mesh, conservative_propagation)
            update |= projection.expand_sharding(factor_index, axes)
        return update

    def is_fixed_point(self, projection: ShardingProjection) -> bool:
        """Whether no direction can make this strategy change ``projection``: every factor
        has the same axes in all the tensors mapped to it. A tensor only gains axes when
        its own are a strict prefix of the factor's new axes, and those are the tensors'
        compatible major axes (:meth:`compatible_major_axes`, of equal lists: that very
        list) cut by conflicts, so never longer. The aggressive strategy inherits this: its
        new axes per tensor are those cut further."""
        seen: dict[int, list[AxisRef]] = {}
        for tensor in chain(projection.operands, projection.results):
            for factor, sharding in tensor.factor_index_to_sharding.items():
                axes = seen.setdefault(factor, sharding.axis_refs)
                if axes is not sharding.axis_refs and axes != sharding.axis_refs:
                    return False
        return True

    def compatible_major_sharding_axes(self, projection: ShardingProjection, factor_index: int,
                                       direction: PropagationDirection, factor_size: int,
                                       mesh: Mesh | None,
                                       conservative_propagation: bool = False,
                                       ) -> list[AxisRef]:
        """Upstream ``getCompatibleMajorShardingAxes``: the compatible major axes of the
        factor, truncated at the first axis that conflicts across factors or within the
        factor (replicated/unreduced, closed, overflow, divisibility)."""
        axes = self.compatible_major_axes(projection, factor_index, direction)

        def remove_conflicts(axis: AxisRef, prev_sharded_size: int) -> AxisRef | None:
            return self._compatible_prefix(axis, projection, factor_index, prev_sharded_size,
                                           factor_size, mesh)

        self.truncate_axes_by_removing_conflicts(axes, remove_conflicts, mesh,
                                                 conservative_propagation)
        return axes

    def compatible_major_axes(self, projection: ShardingProjection, factor_index: int,
                              direction: PropagationDirection) -> list[AxisRef]:
        """Upstream ``getCompatibleMajorAxes``: the longest prefix of axes sharding the
        factor that every tensor mapped to it either shares, or has a prefix of without
        being sharded further along it. Conflicts are not resolved here."""
        if direction is PropagationDirection.NONE:
            return []
        first, second = _direction_based_tensors(direction, projection)
        result: list[AxisRef] = []
        can_expand = True
        for group_index, tensors in enumerate((first, second)):
            if group_index == 1 and direction is not PropagationDirection.BOTH:
                # The second group (results for FORWARD, operands for BACKWARD) only
                # constrains the axes, it cannot add to them.
                can_expand = False
            for tensor in tensors:
                sharding = tensor.factor_index_to_sharding.get(factor_index)
                if sharding is not None:
                    result, can_expand = compatible_major_axes_internal(
                        result, sharding.axis_refs, can_expand)
        return result

    def compatible_prefix_no_conflicts_across_factors(
            self, axis: AxisRef, factor_index_to_sharding: Mapping[int, FactorSharding],
            factor_index: int) -> AxisRef | None:
        """Upstream ``compatiblePrefixNoConflictsAcrossFactors``: the largest prefix of
        ``axis`` overlapping no sharding or overflow axis of any *other* factor."""
        result: AxisRef | None = axis
        for other_index, sharding in factor_index_to_sharding.items():
            if other_index == factor_index:
                continue
            result = prefix_without_overlap(result, sharding.overflow_axes)
            if result is None:
                return None
            result = prefix_without_overlap(result, sharding.axis_refs)
            if result is None:
                return None
        return result

    def compatible_prefix_no_conflicts_within_factor(
            self, axis: AxisRef, replicated_axes: Sequence[AxisRef],
            unreduced_axes: Sequence[AxisRef], factor_sharding: FactorSharding,
            prev_sharded_size: int, factor_size: int, mesh: Mesh | None) -> AxisRef | None:
        """Upstream ``compatiblePrefixNoConflictsWithinFactor``: the largest prefix of
        ``axis`` that is neither replicated nor unreduced and that the factor either already
        has or can take (open, no overflow, minor-most or dividing the factor size; a
        non-dividing axis is cut to the sub-axis that divides). ``mesh=None`` skips the
        divisibility check (upstream's tests pass a null mesh for that)."""
        result = prefix_without_overlap(axis, replicated_axes)
        if result is None:
            return None
        result = prefix_without_overlap(result, unreduced_axes)
        if result is None:
            return None
        factor_axes = factor_sharding.axis_refs
        if any(existing.contains(result) for existing in factor_axes):
            return result
        if not factor_sharding.is_closed and not factor_sharding.overflow_axes:
            if factor_sharding.is_minor_most or mesh is None:
                return result
            if factor_size % prev_sharded_size == 0:
                axis_size = result.size(mesh)
                common = gcd(factor_size // prev_sharded_size, axis_size)
                if common == axis_size:
                    return result
                if common != 1:
                    return AxisRef.sub(result.name, result.pre_size, common)
        # The full `result` cannot be added, but the factor's last axis may be kept when it
        # is a prefix of `result` (the axes before it are shared by construction).
        if factor_axes and factor_axes[-1].prefix_of(result):
            return factor_axes[-1]
        return None

    def truncate_axes_by_removing_conflicts(self, axes: list[AxisRef],
                                            remove_conflicts: RemoveConflicts,
                                            mesh: Mesh | None,
                                            conservative_propagation: bool = False) -> None:
        """Upstream ``truncateAxesByRemovingConflicts`` (mutates ``axes``): cut at the first
        axis without a compatible prefix (or with a sub-axis one in conservative mode);
        replace an axis by a strictly smaller compatible prefix and cut after it."""
        prev_sharded_size = 1
        for index, axis in enumerate(axes):
            new_axis = remove_conflicts(axis, prev_sharded_size)
            if new_axis is None or (conservative_propagation and new_axis.is_sub_axis):
                del axes[index:]
                return
            if new_axis != axis:
                axes[index] = new_axis
                del axes[index + 1:]
                return
            if mesh is not None:
                prev_sharded_size *= new_axis.size(mesh)

    def _compatible_prefix_in_tensor(self, axis: AxisRef, tensor: TensorFactorShardings,
                                     factor_index: int, prev_sharded_size: int,
                                     factor_size: int, mesh: Mesh | None) -> AxisRef | None:
        """The largest prefix of ``axis`` compatible with one tensor: across factors always;
        within the factor only if the tensor is mapped to it (an unmapped tensor's
        replicated/unreduced axes are no conflict)."""
        result = self.compatible_prefix_no_conflicts_across_factors(
            axis, tensor.factor_index_to_sharding, factor_index)
        if result is None:
            return None
        factor_sharding = tensor.factor_index_to_sharding.get(factor_index)
        if factor_sharding is None:
            return result
        return self.compatible_prefix_no_conflicts_within_factor(
            result, tensor.replicated_axes, tensor.unreduced_axes, factor_sharding,
            prev_sharded_size, factor_size, mesh)

    def _compatible_prefix(self, axis: AxisRef, projection: ShardingProjection,
                           factor_index: int, prev_sharded_size: int, factor_size: int,
                           mesh: Mesh | None) -> AxisRef | None:
        """The largest prefix of ``axis`` compatible with every tensor (operands first)."""
        result: AxisRef | None = axis
        for tensor in chain(projection.operands, projection.results):
            result = self._compatible_prefix_in_tensor(result, tensor, factor_index,
                                                       prev_sharded_size, factor_size, mesh)
            if result is None:
                return None
        return result
