"""Convolutions sharded along a window-size factor whose windows are not tiled.

Upstream's convolution rule (``op_sharding_rule_registry.cc``) splits an input spatial
dimension into a number-of-windows factor (permutation) and a window-size factor shared with
the kernel, typed reduction: each device convolves its piece of the kernel with its piece of
the input and an all-reduce sums the pieces. That sum equals the convolution only when the
windows tile the input: no padding, no dilation, no reversal, a stride equal to the window
size, an input exactly as long as the windows it holds, and the window-size factor minor to
the number-of-windows factor, as a window's offset is in memory (the rule makes the larger
factor major, which steers propagation but is not where the data lies; its TODO notes that
such a factor "also needs permutation (halo-swap)"). Otherwise this pass replicates the
factor, like any other permutation factor it cannot resolve, and takes its axes out of the
``sdy.all_reduce`` explicit reshards put after the op, since the result is then complete
along them.

An operand dimension the rule maps only to factors of size 1 (a spatial dimension of size
1) cannot be split, so a sharding of it means padding on all devices but one, which the
convolution would read as data: such a dimension is gathered first.
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import AxisRefList
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.replicate import (
    replicate_permutation_factors,
)
from shardy_ref.propagate.rules.builder import ints_attr


def _tiled(op: Operation, i: int, lhs_dim: int, rhs_dim: int, out_dim: int) -> bool:
    """Does spatial dimension ``i`` cut the input into whole, disjoint windows?"""
    lhs, rhs, out = (op.operands[0].type.shape[lhs_dim], op.operands[1].type.shape[rhs_dim],
                     op.results[0].type.shape[out_dim])

    def entry(name: str, default: int, width: int = 1) -> tuple:
        values = ints_attr(op, name)
        return tuple(values[i * width:(i + 1) * width]) if values else (default,) * width

    return (entry("padding", 0, 2) == (0, 0) and entry("lhs_dilation", 1) == (1,)
            and entry("rhs_dilation", 1) == (1,) and not any(entry("window_reversal", 0))
            and entry("window_strides", 1) == (rhs,) and lhs == out * rhs)


def untiled_window_factors(op: Operation, rule: OpShardingRule) -> list[int]:
    """The window-size (reduction) factors of spatial dimensions whose windows do not tile
    the input."""
    nums = op.attributes["dimension_numbers"]
    kernel = rule.operand_mappings[1].dim_mappings
    factors = []
    for i, (lhs_dim, rhs_dim, out_dim) in enumerate(zip(
            nums.input_spatial_dimensions, nums.kernel_spatial_dimensions,
            nums.output_spatial_dimensions, strict=True)):
        window = [f for f in kernel[rhs_dim].factor_indices if f in rule.reduction_factors]
        # in the input, a window's offset is minor to the window's index
        minor = rule.operand_mappings[0].dim_mappings[lhs_dim].factor_indices[-1:] == tuple(window)
        if window and not (minor and _tiled(op, i, lhs_dim, rhs_dim, out_dim)):
            factors.extend(window)
    return factors


def _sharded_axes(op: Operation) -> set:
    """Every axis the kernel's spatial dimensions are sharded along."""
    sharding = get_sharding(op.operands[1])
    if sharding is None:
        return set()
    nums = op.attributes["dimension_numbers"]
    return {a for d in nums.kernel_spatial_dimensions for a in sharding.dim_shardings[d].axes}


def _gather_unsplittable_dims(op: Operation, rule: OpShardingRule) -> set:
    """Reshard each operand so that no dimension of size-1 factors stays sharded; the
    axes taken off a reduction factor's dimension (its all-reduce no longer sums over
    them: every device now holds the whole, not a part and padding)."""
    freed = set()
    for index, mapping in enumerate(rule.operand_mappings):
        value = op.operands[index]
        sharding = get_sharding(value)
        if sharding is None:
            continue
        dims = [d for d, dim in enumerate(mapping.dim_mappings)
                if all(rule.factor_sizes[f] == 1 for f in dim.factor_indices)
                and sharding.dim_shardings[d].axes]
        if not dims:
            continue
        for d in dims:
            if any(f in rule.reduction_factors
                   for f in mapping.dim_mappings[d].factor_indices):
                freed.update(sharding.dim_shardings[d].axes)
        new_dims = tuple(dim.replace(axes=(), priority=None) if d in dims else dim
                         for d, dim in enumerate(sharding.dim_shardings))
        op.set_operand(index, reshard(value, sharding.replace(dim_shardings=new_dims),
                                      op).results[0])
    return freed


def handle_convolution(op: Operation, rule: OpShardingRule, state: State) -> None:
    """Gather dimensions of size-1 factors, replicate the untiled window-size factors of
    ``op`` and drop the axes these free from the all-reduce of its result."""
    freed = _gather_unsplittable_dims(op, rule)
    factors = untiled_window_factors(op, rule)
    before = _sharded_axes(op)
    if factors and before:
        replicate_permutation_factors(op, rule, factors, state)
        freed |= before - _sharded_axes(op)
    result = op.results[0]
    if not freed or not result.has_one_use or result.users[0].name != "sdy.all_reduce":
        return
    reduce = result.users[0]
    axes = tuple(a for a in reduce.attributes["reduction_axes"] if a not in freed)
    if axes:
        reduce.attributes["reduction_axes"] = AxisRefList(axes)
    else:
        reduce.results[0].replace_all_uses_with(result)
        reduce.erase()
