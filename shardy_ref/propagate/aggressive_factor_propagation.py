"""Aggressive factor propagation: conflicts are resolved instead of blocking propagation
(upstream ``shardy/dialect/sdy/transforms/propagation/aggressive_factor_propagation.{h,cc}``;
see https://openxla.org/shardy/sdy_propagation_passes#-sdy-aggressive-propagate).

Two differences from the basic strategy: each tensor may take a different prefix of a
factor's compatible axes (its own conflicts cut them, not every tensor's), and when two
factors of one tensor want the same axis, the factor whose *source tensor* (the largest
tensor already sharded that way) is bigger wins.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.propagate.basic_factor_propagation import (
    BasicFactorPropagation,
    PropagationDirectionAlongFactor,
)
from shardy_ref.propagate.sharding_projection import (
    AxesPerFactor,
    PrefixStatus,
    ShardingProjection,
    TensorFactorShardings,
    UpdateTensorShardings,
    axes_size,
    axis_list_prefix_status,
    is_strict_prefix,
)
from shardy_ref.transforms.common.op_properties import is_elementwise


def factor_to_source_tensor(projection: ShardingProjection, factor_sizes: Sequence[int],
                            axes_per_factor: AxesPerFactor) -> list[tuple[int, int]]:
    """Upstream ``getFactorToSourceTensor``: per factor, ``(size, index)`` of the largest
    tensor (operands then results; the first on ties) whose axes along the factor are a
    prefix of the factor's new axes; ``(-1, -1)`` if none. A tensor's size is the product
    of the sizes of its factors."""
    sources = [(-1, -1)] * len(factor_sizes)
    for index, tensor in enumerate(projection.tensors()):
        size = 1
        for factor in tensor.factor_index_to_sharding:
            size *= factor_sizes[factor]
        for factor, sharding in tensor.factor_index_to_sharding.items():
            new_axes = axes_per_factor[factor]
            if (new_axes and axis_list_prefix_status(new_axes, sharding.axis_refs)
                    is not PrefixStatus.NOT_A_PREFIX and size > sources[factor][0]):
                sources[factor] = (size, index)
    return sources


@dataclass(frozen=True, slots=True)
class AggressiveFactorPropagation(BasicFactorPropagation):
    """Upstream ``AggressiveFactorPropagation``."""

    STRATEGY = "aggressive"

    def propagated_factor_sharding(self, factor: int, tensor: TensorFactorShardings,
                                   axes_per_factor: AxesPerFactor, mesh: Mesh,
                                   conservative: bool,
                                   factor_sizes: Sequence[int]) -> list[AxisRef]:
        """Upstream ``getPropagatedFactorSharding``: the factor's new axes cut by this
        tensor's conflicts within the factor, then (if still an expansion) by the other
        factors of the tensor as they are now."""
        sharding = tensor.factor_index_to_sharding.get(factor)
        if sharding is None:
            return []
        new_axes = list(axes_per_factor[factor])
        self.truncate_axes_by_removing_conflicts(
            new_axes,
            lambda axis, prev: self.compatible_prefix_no_conflicts_within_factor(
                axis, tensor.replicated_axes, tensor.unreduced_axes, sharding, prev,
                factor_sizes[factor], mesh),
            mesh, conservative)
        if not is_strict_prefix(sharding.axis_refs, new_axes):
            return []
        self.truncate_axes_by_removing_conflicts(
            new_axes,
            lambda axis, _prev: self.compatible_prefix_no_conflicts_across_factors(
                axis, tensor.factor_index_to_sharding, factor),
            mesh, conservative)
        return new_axes

    def propagate_factor_shardings(self, projection: ShardingProjection,
                                   direction_along_factor: PropagationDirectionAlongFactor,
                                   factor_sizes: Sequence[int], mesh: Mesh | None,
                                   conservative_propagation: bool = False,
                                   op: Operation | None = None) -> UpdateTensorShardings:
        """Results first, then operands; per tensor, factors in order of preference
        (larger source tensor, [elementwise ops] more sharded, smaller source index,
        smaller factor index). Along an elementwise op, an operand never gets more than a
        result has along the factor."""
        update = UpdateTensorShardings.empty(projection.num_operands, projection.num_results)
        axes_per_factor = [self.compatible_major_axes(projection, f, direction_along_factor(f))
                           for f in range(len(factor_sizes))]
        if not any(axes_per_factor):
            return update
        sources = factor_to_source_tensor(projection, factor_sizes, axes_per_factor)
        elementwise = op is not None and is_elementwise(op)

        def preference(f: int):
            sharded = axes_size(axes_per_factor[f], mesh) if elementwise else 0
            return (-sources[f][0], -sharded, sources[f][1], f)

        # factors with no new axes propagate nothing: left out of the order
        order = sorted((f for f in range(len(factor_sizes)) if axes_per_factor[f]),
                       key=preference)
        for tensors, flags, is_operand in ((projection.results, update.update_results, False),
                                           (projection.operands, update.update_operands, True)):
            for index, tensor in enumerate(tensors):
                updated = False
                for factor in order:
                    new_axes = self.propagated_factor_sharding(
                        factor, tensor, axes_per_factor, mesh, conservative_propagation,
                        factor_sizes)
                    if not new_axes:
                        continue
                    if is_operand and elementwise:
                        for result in projection.results:
                            result_sharding = result.factor_index_to_sharding.get(factor)
                            if result_sharding is not None and is_strict_prefix(
                                    result_sharding.axis_refs, new_axes):
                                new_axes = list(result_sharding.axis_refs)
                    updated |= tensor.expand_sharding_axes(factor, new_axes)
                flags[index] = updated
        return update
