"""Which axes each factor of an op gets when its operands and results disagree: upstream's
``findCommonAxes`` (``shardy/dialect/sdy/transforms/export/explicit_reshards_util.cc``).

Compatible shardings are kept as they are. A unary op takes the sharding of its preferred
tensor (no sharded permutation factor, then larger, then more sharded). Otherwise a greedy
heuristic repeatedly picks the (factor, axes) candidate with the largest total size of the
tensors already sharded that way (then pass-through > reduction > permutation >
need-replication factors, then the larger extra sharding), assigns it, and trims the other
candidates so no axis is used twice; a factor becomes eligible only once the factors before
it in a dimension are fully sharded (no strided views).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cmp_to_key

from shardy_ref.ir.axis_lists import add_axis_or_merge
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.basic_factor_propagation import prefix_without_overlap
from shardy_ref.propagate.sharding_projection import ShardingProjection, axes_size

AxisList = tuple[AxisRef, ...]


def truncate_without_overlap(axes: AxisList, others: Sequence[AxisRef]) -> AxisList:
    """``AxisListRef::truncateWithoutOverlap`` / ``truncateAxesByRemovingOverlaps``: cut
    ``axes`` at the first axis overlapping ``others`` (keeping its non-overlapping prefix)."""
    for i, axis in enumerate(axes):
        prefix = prefix_without_overlap(axis, others)
        if prefix != axis:
            return axes[:i] + ((prefix,) if prefix is not None else ())
    return axes


def strict_prefix_of(a: AxisList, b: AxisList) -> bool:
    """``AxisListRef::strictPrefixOf``."""
    if not a:
        return bool(b)
    if len(a) > len(b) or a[:-1] != b[:len(a) - 1]:
        return False
    if len(a) == len(b):
        return a[-1].strict_prefix_of(b[-1])
    return a[-1].prefix_of(b[len(a) - 1])


def _axis_cmp(a: AxisRef, b: AxisRef) -> int:
    return 0 if a == b else (-1 if a < b else 1)


def _list_cmp(a: AxisList, b: AxisList) -> int:
    """``AxisListRef::operator<``: shorter first, then axis by axis."""
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    for x, y in zip(a, b):
        if x != y:
            return _axis_cmp(x, y)
    return 0


def _precedence(rule: OpShardingRule, factor: int) -> int:
    """Pass-through 3, reduction 2, permutation 1, need-replication 0
    (``getFactorType`` order: reduction, need replication, permutation)."""
    if factor in rule.reduction_factors:
        return 2
    if factor in rule.need_replication_factors:
        return 0
    if factor in rule.permutation_factors:
        return 1
    return 3


class _Candidate:
    __slots__ = ("axes", "factor", "precedence", "sharding_size", "source_size")

    def __init__(self, factor: int, axes: AxisList, mesh: Mesh, rule: OpShardingRule):
        self.factor, self.axes = factor, axes
        self.source_size = 0
        self.sharding_size = axes_size(axes, mesh)
        self.precedence = _precedence(rule, factor)


def _candidate_cmp(a: _Candidate, b: _Candidate) -> int:
    for x, y in ((a.source_size, b.source_size), (a.precedence, b.precedence),
                 (a.sharding_size, b.sharding_size), (a.factor, b.factor)):
        if x != y:
            return -1 if x < y else 1
    return _list_cmp(a.axes, b.axes)


def _factor_dependencies(rule: OpShardingRule) -> dict[int, set[int]]:
    """Factor -> the factors right before it in some dimension (not yet fully sharded)."""
    deps: dict[int, set[int]] = {}
    for mapping in (*rule.operand_mappings, *rule.result_mappings):
        for dim in mapping.dim_mappings:
            for prev, factor in zip(dim.factor_indices, dim.factor_indices[1:]):
                deps.setdefault(factor, set()).add(prev)
    return deps


def _find_factor_axes_candidates(projection: ShardingProjection, rule: OpShardingRule,
                                 tensor_sizes: Sequence[int], mesh: Mesh) -> list[_Candidate]:
    """Upstream ``findFactorAxesCandidates``: every (factor, axes) pair that is a tensor's
    factor sharding or a prefix of one, with the total size of the tensors it is a source
    for."""
    pairs: set[tuple[int, AxisList]] = set()
    for tensor in projection.tensors():
        for factor, sharding in tensor.factor_index_to_sharding.items():
            axes = tuple(sharding.axis_refs)
            while axes:
                pairs.add((factor, axes))
                axes = axes[:-1]
    candidates = [_Candidate(f, axes, mesh, rule) for f, axes in pairs]
    for size, tensor in zip(tensor_sizes, projection.tensors(), strict=True):
        for factor, sharding in tensor.factor_index_to_sharding.items():
            source = tuple(sharding.axis_refs)
            for c in candidates:
                if c.factor == factor and (c.axes == source or strict_prefix_of(c.axes, source)):
                    c.source_size += size
    return candidates


def _invalidate_overlapping_candidates(candidates: list[_Candidate], best: _Candidate,
                                       assigned: list[AxisList],
                                       mesh: Mesh) -> list[_Candidate]:
    """The candidates left once ``best`` is assigned (the inner loop of upstream
    ``findCommonAxesHeuristic``): those of its factor that extend it, and the others cut
    where they overlap it unless nothing beyond their factor's assignment is left; each
    with the sharding size it would add."""
    kept = []
    for c in candidates:
        if c.factor == best.factor:
            if strict_prefix_of(best.axes, c.axes):
                c.sharding_size = axes_size(c.axes, mesh) // axes_size(best.axes, mesh)
                kept.append(c)
            continue
        trimmed = truncate_without_overlap(c.axes, best.axes)
        if trimmed != c.axes:
            c.axes = trimmed
            if trimmed == assigned[c.factor]:
                continue
            c.sharding_size = axes_size(trimmed, mesh) // axes_size(assigned[c.factor], mesh)
        else:
            c.sharding_size = axes_size(c.axes, mesh)
        kept.append(c)
    return kept


def _heuristic(projection: ShardingProjection, rule: OpShardingRule,
               tensor_sizes: Sequence[int], mesh: Mesh) -> list[list[AxisRef]]:
    """Upstream ``findCommonAxesHeuristic``."""
    candidates = _find_factor_axes_candidates(projection, rule, tensor_sizes, mesh)
    deps = _factor_dependencies(rule)
    assigned: list[AxisList] = [() for _ in range(rule.num_factors)]
    key = cmp_to_key(_candidate_cmp)
    while candidates:
        valid = [c for c in candidates if not deps.get(c.factor)]
        if not valid:
            break
        best = max(valid, key=key)
        assigned[best.factor] = best.axes
        if axes_size(best.axes, mesh) == rule.factor_sizes[best.factor]:
            for d in deps.values():
                d.discard(best.factor)
        candidates = _invalidate_overlapping_candidates(candidates, best, assigned, mesh)
    return [list(a) for a in assigned]


def _compatible_factor_shardings(projection: ShardingProjection,
                                 rule: OpShardingRule) -> list[list[AxisRef]] | None:
    """Upstream ``getCompatibleFactorShardings``: every factor sharded alike everywhere,
    need-replication factors unsharded, no axis in two factors; else None."""
    common: list[list[AxisRef]] = [[] for _ in range(rule.num_factors)]
    seen: list[AxisRef] = []
    for factor in range(rule.num_factors):
        found = None
        for tensor in projection.tensors():
            sharding = tensor.factor_index_to_sharding.get(factor)
            if sharding is None:
                continue
            if found is None:
                found = sharding.axis_refs
            elif sharding.axis_refs != found:
                return None
        found = found or []
        if factor in rule.need_replication_factors:
            if found:
                return None
            continue
        if any(a.overlaps(b) for a in found for b in seen):
            return None
        common[factor] = list(found)
        seen += found
    return common


def _non_scalar_tensors(rule: OpShardingRule) -> list[int]:
    return [i for i, m in enumerate((*rule.operand_mappings, *rule.result_mappings))
            if m.dim_mappings]


def _in_all_non_scalar_tensors(rule: OpShardingRule, factor: int) -> bool:
    return all(m.contains_factor(factor) for m in (*rule.operand_mappings,
                                                   *rule.result_mappings) if m.dim_mappings)


def _batching_factors(rule: OpShardingRule) -> list[int]:
    return [f for f in range(rule.num_factors)
            if _precedence(rule, f) == 3 and _in_all_non_scalar_tensors(rule, f)]


def _on_unary(projection: ShardingProjection, rule: OpShardingRule,
              tensor_sizes: Sequence[int], mesh: Mesh) -> list[list[AxisRef]]:
    """Upstream ``findCommonAxesOnUnaryOperation``: the preferred tensor's sharding, the
    other's for the factors only it has (cut where they overlap)."""
    lhs, rhs = _non_scalar_tensors(rule)[:2]

    def preference(index: int):
        tensor = projection.tensor(index)
        permuted = any(f in rule.permutation_factors and s.axis_refs
                       for f, s in tensor.factor_index_to_sharding.items())
        return (not permuted, tensor_sizes[index], tensor.sharding_size(mesh))

    preferred, other = (lhs, rhs) if preference(lhs) >= preference(rhs) else (rhs, lhs)
    preferred_shardings = projection.tensor(preferred).factor_index_to_sharding
    common: list[list[AxisRef]] = [[] for _ in range(rule.num_factors)]
    used: list[AxisRef] = []
    for factor, sharding in preferred_shardings.items():
        common[factor] = list(sharding.axis_refs)
        used += sharding.axis_refs
    for factor, sharding in projection.tensor(other).factor_index_to_sharding.items():
        if factor not in preferred_shardings:
            common[factor] = list(truncate_without_overlap(tuple(sharding.axis_refs), used))
    return common


def _distribute_to_batching_factors(rule: OpShardingRule, mesh: Mesh,
                                    common: list[list[AxisRef]]) -> None:
    """Upstream ``distributeAxisRefsToBatchingFactors``: a need-replication factor's axes
    move to batching factors that have room for them."""
    batching = _batching_factors(rule)
    for factor in rule.need_replication_factors:
        to_distribute, common[factor] = list(common[factor]), []
        if not to_distribute or not _in_all_non_scalar_tensors(rule, factor):
            continue
        for target in batching:
            size = rule.factor_sizes[target]
            if size == 0:
                continue
            sharded = axes_size(common[target], mesh)
            if size % sharded:
                continue
            capacity = size // sharded
            while to_distribute:
                axis_size = to_distribute[0].size(mesh)
                if capacity % axis_size:
                    break
                add_axis_or_merge(common[target], to_distribute.pop(0), mesh)
                capacity //= axis_size
            if not to_distribute:
                break


def find_common_axes(projection: ShardingProjection, rule: OpShardingRule,
                     tensor_sizes: Sequence[int], mesh: Mesh) -> list[list[AxisRef]]:
    """Upstream ``findCommonAxes``: per factor, the axes every tensor will be resharded
    to."""
    compatible = _compatible_factor_shardings(projection, rule)
    if compatible is not None:
        return compatible
    multiple = any(len(d.factor_indices) > 1 for m in (*rule.operand_mappings,
                                                       *rule.result_mappings)
                   for d in m.dim_mappings)
    if (len(_non_scalar_tensors(rule)) == 2 and not rule.need_replication_factors
            and not multiple):
        return _on_unary(projection, rule, tensor_sizes, mesh)
    common = _heuristic(projection, rule, tensor_sizes, mesh)
    if rule.need_replication_factors:
        _distribute_to_batching_factors(rule, mesh, common)
    return common
