"""The sharding projection: tensor shardings seen per factor of an op's sharding rule, and back
(upstream ``transforms/propagation/sharding_projection.{h,cc}``; see "Core Propagation
Algorithm" in https://openxla.org/shardy/propagation).

A dimension made of factors ``[f1, ..., fk]`` (major to minor) hands its axes to the factors
in that order: a non-minor-most factor takes axes (splitting one into sub-axes if needed)
until it is fully sharded; an axis whose size is coprime with what is left of the factor
becomes an *overflow* axis, kept so projecting back loses nothing; the minor-most factor
takes every axis left (padding is allowed there).

Example: rule ``([ij])->([i, j]) {i=2, j=4}``, mesh ``x=4, y=2``, operand ``[{"x", "y"}]``
projects to ``i: ["x":(1)2]`` and ``j: ["x":(2)2, "y"]``.
"""
from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from math import gcd

from shardy_ref.ir.axis_lists import add_axis_or_merge
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, SubAxisInfo
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_rules import OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding

AxesPerFactor = list[list[AxisRef]]


class PrefixStatus(enum.Enum):
    """How one axis list relates to another (upstream ``PrefixStatus``)."""

    EQUAL = 0
    STRICT_PREFIX = 1
    NOT_A_PREFIX = 2


def axis_list_prefix_status(first: Sequence[AxisRef], second: Sequence[AxisRef]) -> PrefixStatus:
    """Upstream ``isAxisListPrefixOf``: all but the last axis of ``first`` equal those of
    ``second`` and the last is a prefix of the matching axis (``["a":(1)2]`` is a strict
    prefix of ``["a", "b"]``)."""
    if not first:
        return PrefixStatus.EQUAL if not second else PrefixStatus.STRICT_PREFIX
    if len(first) > len(second):
        return PrefixStatus.NOT_A_PREFIX
    n = len(first)
    if any(first[i] != second[i] for i in range(n - 1)):
        return PrefixStatus.NOT_A_PREFIX
    if len(first) == len(second) and first[-1] == second[-1]:
        return PrefixStatus.EQUAL
    if first[-1].prefix_of(second[n - 1]):
        return PrefixStatus.STRICT_PREFIX
    return PrefixStatus.NOT_A_PREFIX


def is_strict_prefix(first: Sequence[AxisRef], second: Sequence[AxisRef]) -> bool:
    """Upstream ``isStrictPrefix``."""
    return axis_list_prefix_status(first, second) is PrefixStatus.STRICT_PREFIX


def greatest_common_prefix(first: Sequence[AxisRef], second: Sequence[AxisRef]) -> list[AxisRef]:
    """Upstream list ``getGreatestCommonPrefix``: equal axes, then at most one common
    prefix of the first pair that differs."""
    result: list[AxisRef] = []
    for a, b in zip(first, second):
        if a == b:
            result.append(a)
            continue
        prefix = a.greatest_common_prefix(b)
        if prefix is not None:
            result.append(prefix)
        break
    return result


def axes_size(axes: Sequence[AxisRef], mesh: Mesh) -> int:
    """The product of the sizes of ``axes``."""
    size = 1
    for axis in axes:
        size *= axis.size(mesh)
    return size


@dataclass(slots=True)
class FactorSharding:
    """One tensor's sharding along one factor (mutable: propagation expands it in place).

    ``overflow_axes`` are the dimension's axes after the first one whose size does not
    divide what is left of a non-minor-most factor; projecting back appends them."""

    axis_refs: list[AxisRef] = field(default_factory=list)
    is_closed: bool = False
    is_minor_most: bool = False
    overflow_axes: list[AxisRef] = field(default_factory=list)


@dataclass(slots=True)
class TensorFactorShardings:
    """A tensor's factor shardings (only for the factors its mapping names) plus the parts
    of its sharding that do not depend on dimensions."""

    factor_index_to_sharding: dict[int, FactorSharding] = field(default_factory=dict)
    replicated_axes: list[AxisRef] = field(default_factory=list)
    unreduced_axes: list[AxisRef] = field(default_factory=list)
    reduction_op: ReductionOp = ReductionOp.SUM

    def expand_sharding_axes(self, factor: int, new_axes: Sequence[AxisRef]) -> bool:
        """Set the factor's axes to ``new_axes`` iff this tensor has the factor and its
        axes are a strict prefix of ``new_axes``; returns whether it changed."""
        sharding = self.factor_index_to_sharding.get(factor)
        if sharding is None or not is_strict_prefix(sharding.axis_refs, new_axes):
            return False
        sharding.axis_refs = list(new_axes)
        return True

    def update_sharding_axes(self, factor: int, new_axes: Sequence[AxisRef],
                             new_overflow_axes: Sequence[AxisRef]) -> bool:
        """Overwrite the factor's axes and overflow axes (if this tensor has the factor);
        returns whether anything changed."""
        sharding = self.factor_index_to_sharding.get(factor)
        if sharding is None:
            return False
        new_axes, new_overflow_axes = list(new_axes), list(new_overflow_axes)
        if sharding.axis_refs == new_axes and sharding.overflow_axes == new_overflow_axes:
            return False
        sharding.axis_refs, sharding.overflow_axes = new_axes, new_overflow_axes
        return True

    def sharding_size(self, mesh: Mesh) -> int:
        """The product of all axes (and overflow axes) of all factors."""
        size = 1
        for sharding in self.factor_index_to_sharding.values():
            size *= axes_size(sharding.axis_refs, mesh) * axes_size(sharding.overflow_axes, mesh)
        return size

    def to_tensor_sharding(self, mapping: TensorMapping, factor_sizes: Sequence[int],
                           mesh_or_ref: str | Mesh, mesh: Mesh) -> TensorSharding:
        """Upstream ``createTensorShardingAttr``: each dimension gets its factors' axes in
        order, up to the first factor with overflow axes (appended) or not fully sharded
        (later factors would need a strided view). Priorities are not re-emitted."""
        dims: list[DimensionSharding] = []
        for dim_mapping in mapping.dim_mappings:
            is_closed = False
            axes: list[AxisRef] = []
            for factor in dim_mapping.factor_indices:
                sharding = self.factor_index_to_sharding[factor]
                is_closed |= sharding.is_closed
                sharded_size = _add_axes(axes, sharding.axis_refs, mesh)
                if sharding.overflow_axes:
                    _add_axes(axes, sharding.overflow_axes, mesh)
                    break
                if sharded_size < factor_sizes[factor]:
                    break
            dims.append(DimensionSharding(tuple(axes), is_closed))
        return TensorSharding(mesh_or_ref, tuple(dims), tuple(self.replicated_axes),
                              tuple(self.unreduced_axes), self.reduction_op)


def _add_axes(dim_axes: list[AxisRef], axes: Sequence[AxisRef], mesh: Mesh) -> int:
    """Upstream ``addAxesToDimSharding``: append ``axes``, merging the first with the
    dimension's last axis when they are consecutive sub-axes; returns their total size."""
    for i, axis in enumerate(axes):
        if i == 0:
            add_axis_or_merge(dim_axes, axis, mesh)
        else:
            dim_axes.append(axis)
    return axes_size(axes, mesh)


@dataclass(slots=True)
class UpdateTensorShardings:
    """Which operands and results a propagation step changed (upstream's two BitVectors)."""

    update_operands: list[bool]
    update_results: list[bool]

    @classmethod
    def empty(cls, num_operands: int, num_results: int) -> UpdateTensorShardings:
        return cls([False] * num_operands, [False] * num_results)

    def __ior__(self, other: UpdateTensorShardings) -> UpdateTensorShardings:
        self.update_operands = [a or b for a, b in
                                zip(self.update_operands, other.update_operands, strict=True)]
        self.update_results = [a or b for a, b in
                               zip(self.update_results, other.update_results, strict=True)]
        return self

    def any(self) -> bool:
        return any(self.update_operands) or any(self.update_results)


class _AxisCursor:
    """The part of the current axis not handed out yet: its size and, when it was (or has
    become) a sub-axis, its pre-size (upstream ``AxisRefInfo``)."""

    __slots__ = ("axes", "index", "mesh", "pre_size", "size")

    def __init__(self, axes: Sequence[AxisRef], mesh: Mesh):
        self.axes, self.index, self.mesh = axes, -1, mesh
        self.advance()

    def advance(self) -> None:
        self.index += 1
        if self.index < len(self.axes):
            axis = self.axes[self.index]
            self.size = axis.size(self.mesh)
            self.pre_size = axis.sub_axis_info.pre_size if axis.is_sub_axis else None

    @property
    def valid(self) -> bool:
        return self.index < len(self.axes)

    @property
    def name(self) -> str:
        return self.axes[self.index].name

    def current(self) -> AxisRef:
        """The remaining part of the current axis as an axis ref."""
        if self.pre_size is None:
            return AxisRef(self.name)
        return AxisRef(self.name, SubAxisInfo(self.pre_size, self.size))

    def take(self, size: int) -> AxisRef:
        """Split off the major ``size`` of the current axis (``size`` < the remaining size)."""
        pre = self.pre_size or 1
        taken = AxisRef.sub(self.name, pre, size)
        self.pre_size, self.size = pre * size, self.size // size
        return taken

    def take_dividing(self, remaining: int, out: list[AxisRef]) -> int:
        """The non-minor-most factor loop of upstream ``buildTensorFactorShardings``: move
        axes (splitting the last if needed) to ``out`` while they share a divisor with a
        factor's ``remaining`` size; returns the size still left."""
        while self.valid:
            if self.size != 1:
                g = gcd(remaining, self.size)
                if g == 1:
                    break
            else:
                g = 1
            if self.size > g:
                out.append(self.take(g))
                remaining //= g
            else:
                out.append(self.current())
                remaining //= self.size
                self.advance()
        return remaining

    def add_remaining(self, out: list[AxisRef]) -> None:
        """Upstream ``addRemainingAxes``: move everything left to ``out``."""
        while self.valid:
            add_axis_or_merge(out, self.current(), self.mesh)
            self.advance()


def _build_tensor(mapping: TensorMapping, sharding: TensorSharding | None,
                  factor_sizes: Sequence[int], mesh: Mesh,
                  closed_if_missing: bool) -> TensorFactorShardings:
    """Upstream ``buildTensorFactorShardings``: project each dimension sharding onto the
    dimension's factors, major-most factor and axis first."""
    result = TensorFactorShardings()
    by_factor = result.factor_index_to_sharding
    for dim, dim_mapping in enumerate(mapping.dim_mappings):
        if sharding is not None:
            dim_sharding = sharding.dim_shardings[dim]
            axes, is_dim_closed = dim_sharding.axes, dim_sharding.is_closed
        else:
            axes, is_dim_closed = (), closed_if_missing
        factors = dim_mapping.factor_indices
        if len(factors) > 1:
            _project_dim(by_factor, factors, axes, is_dim_closed, factor_sizes, mesh)
            continue
        for factor in factors:  # most dims: the one factor is minor-most, takes every axis
            fs = by_factor.setdefault(factor, FactorSharding())
            fs.is_minor_most, fs.is_closed = True, is_dim_closed
            for axis in axes:  # what the cursor would hand out: the same axes
                add_axis_or_merge(fs.axis_refs, axis, mesh)
    if sharding is not None:
        result.replicated_axes = list(sharding.replicated_axes)
        result.unreduced_axes = list(sharding.unreduced_axes)
        result.reduction_op = sharding.reduction_op
    return result


def _project_dim(by_factor: dict[int, FactorSharding], factors: Sequence[int],
                 axes: Sequence[AxisRef], is_dim_closed: bool, factor_sizes: Sequence[int],
                 mesh: Mesh) -> None:
    """One dimension mapped to several factors: hand its axes out major-most first, each
    factor taking what divides its size, the minor-most the rest (after an axis that does
    not fit, overflow axes, and later factors stay empty and closed)."""
    cursor = _AxisCursor(axes, mesh)
    has_overflow = False
    for factor in factors:
        fs = by_factor.setdefault(factor, FactorSharding())
        fs.is_minor_most = factor == factors[-1]
        if has_overflow:
            # after overflow axes, later factors stay empty and closed
            fs.is_closed = True
            break
        fs.is_closed = is_dim_closed
        remaining = factor_sizes[factor]
        if fs.is_minor_most:
            cursor.add_remaining(fs.axis_refs)
            break
        remaining = cursor.take_dividing(remaining, fs.axis_refs)
        if remaining > 1 and cursor.valid:
            has_overflow = True
            cursor.add_remaining(fs.overflow_axes)


@dataclass(slots=True)
class ShardingProjection:
    """Every operand's and result's factor shardings w.r.t. one op sharding rule."""

    operands: list[TensorFactorShardings]
    results: list[TensorFactorShardings]

    @classmethod
    def build(cls, operand_shardings: Sequence[TensorSharding | None],
              result_shardings: Sequence[TensorSharding | None], rule: OpShardingRule,
              mesh: Mesh, closed_if_missing: bool = False) -> ShardingProjection:
        """Project the given shardings (``None``: no sharding, fully open unless
        ``closed_if_missing``) w.r.t. ``rule``."""
        def project(shardings, mappings):
            return [_build_tensor(m, s, rule.factor_sizes, mesh, closed_if_missing)
                    for s, m in zip(shardings, mappings, strict=True)]
        return cls(project(operand_shardings, rule.operand_mappings),
                   project(result_shardings, rule.result_mappings))

    @classmethod
    def from_axes_per_factor(cls, axes_per_factor: Sequence[Sequence[AxisRef]],
                             rule: OpShardingRule) -> ShardingProjection:
        """Every tensor sharded along each factor by ``axes_per_factor``, all closed, no
        overflow (upstream's third ``build``)."""
        def project(mapping: TensorMapping) -> TensorFactorShardings:
            result = TensorFactorShardings()
            for dim_mapping in mapping.dim_mappings:
                for factor in dim_mapping.factor_indices:
                    result.factor_index_to_sharding[factor] = FactorSharding(
                        list(axes_per_factor[factor]), True,
                        factor == dim_mapping.factor_indices[-1])
            return result
        return cls([project(m) for m in rule.operand_mappings],
                   [project(m) for m in rule.result_mappings])

    @property
    def num_operands(self) -> int:
        return len(self.operands)

    @property
    def num_results(self) -> int:
        return len(self.results)

    @property
    def num_tensors(self) -> int:
        return len(self.operands) + len(self.results)

    def tensor(self, index: int) -> TensorFactorShardings:
        """Operands first, then results."""
        n = len(self.operands)
        return self.operands[index] if index < n else self.results[index - n]

    def tensors(self) -> Iterator[TensorFactorShardings]:
        yield from self.operands
        yield from self.results

    def expand_sharding(self, factor: int, new_axes: Sequence[AxisRef]) -> UpdateTensorShardings:
        """Expand every tensor having ``factor`` to ``new_axes`` (where its axes are a
        strict prefix of them)."""
        return UpdateTensorShardings(
            [t.expand_sharding_axes(factor, new_axes) for t in self.operands],
            [t.expand_sharding_axes(factor, new_axes) for t in self.results])

    def update_sharding(self, factor: int, new_axes: Sequence[AxisRef],
                        new_overflow_axes: Sequence[AxisRef]) -> UpdateTensorShardings:
        """Overwrite every tensor's sharding along ``factor`` (open/closed kept)."""
        return UpdateTensorShardings(
            [t.update_sharding_axes(factor, new_axes, new_overflow_axes) for t in self.operands],
            [t.update_sharding_axes(factor, new_axes, new_overflow_axes) for t in self.results])

    def greatest_common_prefix_axes(self, num_factors: int) -> AxesPerFactor:
        """Per factor, the greatest common prefix of its axes across all tensors."""
        result: AxesPerFactor = [[] for _ in range(num_factors)]
        seen = [False] * num_factors
        for tensor in self.tensors():
            for factor, sharding in tensor.factor_index_to_sharding.items():
                if not seen[factor]:
                    result[factor] = list(sharding.axis_refs)
                    seen[factor] = True
                else:
                    result[factor] = greatest_common_prefix(result[factor], sharding.axis_refs)
        return result

    def tensors_containing_overflow_axes(self) -> UpdateTensorShardings:
        """Which operands and results have overflow axes along some factor."""
        def has_overflow(t: TensorFactorShardings) -> bool:
            return any(fs.overflow_axes for fs in t.factor_index_to_sharding.values())
        return UpdateTensorShardings([has_overflow(t) for t in self.operands],
                                     [has_overflow(t) for t in self.results])


def distribute_axes_across_factors(shardings: Sequence[FactorSharding],
                                   factor_sizes: Sequence[int], all_axes: Sequence[AxisRef],
                                   mesh: Mesh) -> None:
    """Upstream ``distributeAxesAcrossFactors``: hand each axis, in order, to the first
    factor it divides (splitting it when only a part divides); an axis no factor accepts
    and everything after it become overflow axes of the last factor."""
    if not shardings:
        return
    remaining = list(factor_sizes)
    cursor = _AxisCursor(all_axes, mesh)
    while cursor.valid:
        used = False
        for i, sharding in enumerate(shardings):
            if remaining[i] <= 1:
                continue
            size = cursor.size
            g = gcd(remaining[i], size)
            if g == 1 and size != 1:
                continue
            used = True
            if size > g:
                add_axis_or_merge(sharding.axis_refs, cursor.take(g), mesh)
                remaining[i] //= g
            else:
                add_axis_or_merge(sharding.axis_refs, cursor.current(), mesh)
                remaining[i] //= size
                cursor.advance()
                break
        if not used:
            cursor.add_remaining(shardings[-1].overflow_axes)
            break
