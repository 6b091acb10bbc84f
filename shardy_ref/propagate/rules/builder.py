"""A builder that creates an op sharding rule factor by factor.

Python counterpart of upstream's ``OpShardingRuleBuilder``: each ``add_factor*`` call appends
one factor (its size, its type, whether propagation along it is blocked) and maps it onto
dimensions of the operands and results; :meth:`OpShardingRuleBuilder.build` gives the
immutable :class:`OpShardingRule`, adding a size-1 factor to every dimension left unmapped.
See ``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_builder.{h,cc}``.
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.types import RankedTensorType, Type, VectorType

NULL_DIM = -1
"""Upstream ``kNullDim``: the tensor is not mapped to the factor being added."""


class FactorType(enum.Enum):
    """Upstream ``FactorType``: how propagation and partitioning treat a factor."""

    PASS_THROUGH = "pass_through"
    REDUCTION = "reduction"
    NEED_REPLICATION = "need_replication"
    PERMUTATION = "permutation"


def _pass_through(_dim: int) -> FactorType:
    return FactorType.PASS_THROUGH


def tensor_shape(type_: Type) -> tuple[int, ...]:
    """Upstream ``getTensorShape``: the shape of a shaped type, ``()`` for anything else
    (tokens, tuples). A dynamic dimension is kept as upstream's ``kDynamic``."""
    if isinstance(type_, RankedTensorType):
        shape = type_.shape
        return shape if None not in shape else tuple(_DYNAMIC if d is None else d
                                                     for d in shape)
    if isinstance(type_, VectorType):
        return type_.shape
    return ()


_DYNAMIC = -(2**63)  # ``ShapedType::kDynamic``


def _rank(type_: Type) -> int:
    """Non-shaped types (e.g. tokens) have rank 0, like upstream's constructor says."""
    return len(tensor_shape(type_))


class OpShardingRuleBuilder:
    """Upstream ``OpShardingRuleBuilder``. ``mappings`` hold, per operand/result and per
    dimension, the list of factor indices mapped to that dimension (major to minor)."""

    __slots__ = ("blocked_propagation_factors", "factor_sizes", "need_replication_factors",
                 "operand_mappings", "permutation_factors", "reduction_factors",
                 "result_mappings")

    def __init__(self, operand_types: Iterable[Type], result_types: Iterable[Type]):
        self.factor_sizes: list[int] = []
        self.operand_mappings: list[list[list[int]]] = [
            [[] for _ in range(_rank(t))] for t in operand_types]
        self.result_mappings: list[list[list[int]]] = [
            [[] for _ in range(_rank(t))] for t in result_types]
        self.reduction_factors: list[int] = []
        self.need_replication_factors: list[int] = []
        self.permutation_factors: list[int] = []
        self.blocked_propagation_factors: list[int] = []

    @classmethod
    def for_op(cls, op: Operation) -> OpShardingRuleBuilder:
        """The builder for ``op``'s operand and result types (upstream's ``Operation*``
        constructor)."""
        return cls(op.operand_types, op.result_types)

    # -- building ---------------------------------------------------------------------

    def build(self) -> OpShardingRule:
        """The rule; every dimension without a factor gets a new size-1 factor (operands
        first, then results), without changing the builder."""
        factor_sizes = list(self.factor_sizes)
        operands = _tensor_mappings(self.operand_mappings, factor_sizes)
        results = _tensor_mappings(self.result_mappings, factor_sizes)
        return OpShardingRule(
            tuple(factor_sizes), operands, results, tuple(self.reduction_factors),
            tuple(self.need_replication_factors), tuple(self.permutation_factors),
            tuple(self.blocked_propagation_factors))

    @staticmethod
    def build_pointwise(op: Operation) -> OpShardingRule | None:
        """Upstream ``buildPointwise``: dimension ``d`` of every operand/result is factor
        ``d``, sized from the first result; ``None`` when that result is not shaped."""
        if not op.results or not isinstance(op.result_types[0], (RankedTensorType, VectorType)):
            return None
        builder = OpShardingRuleBuilder.for_op(op)
        builder.factor_sizes = list(tensor_shape(op.result_types[0]))
        for mapping in (*builder.operand_mappings, *builder.result_mappings):
            for i, dim_mapping in enumerate(mapping):
                dim_mapping.append(i)
        return builder.build()

    # -- adding factors ---------------------------------------------------------------

    def _reserve_factor(self, factor_size: int, factor_type: FactorType,
                        is_blocked: bool) -> int:
        index = len(self.factor_sizes)
        self.factor_sizes.append(factor_size)
        if is_blocked:
            self.blocked_propagation_factors.append(index)
        if factor_type is FactorType.REDUCTION:
            self.reduction_factors.append(index)
        elif factor_type is FactorType.NEED_REPLICATION:
            self.need_replication_factors.append(index)
        elif factor_type is FactorType.PERMUTATION:
            self.permutation_factors.append(index)
        return index

    def add_factor(self, operand_dims: int | Sequence[int], result_dims: int | Sequence[int],
                   factor_size: int, factor_type: FactorType = FactorType.PASS_THROUGH,
                   is_blocked: bool = False) -> OpShardingRuleBuilder:
        """Upstream ``addFactor(operandDims, resultDims, ...)``: a new factor mapped to
        ``operand_dims[i]`` of operand ``i`` and ``result_dims[j]`` of result ``j``
        (``NULL_DIM`` skips a tensor). A single int stands for upstream's implicit
        one-element ``ArrayRef``. A size-1 factor is not appended to an already mapped
        dimension."""
        index = self._reserve_factor(factor_size, factor_type, is_blocked)
        _map_dims_to_factor(self.operand_mappings, _dims(operand_dims), index, factor_size)
        _map_dims_to_factor(self.result_mappings, _dims(result_dims), index, factor_size)
        return self

    def add_factor_all(self, dim: int, factor_size: int,
                       factor_type: FactorType = FactorType.PASS_THROUGH,
                       is_blocked: bool = False) -> OpShardingRuleBuilder:
        """Upstream ``addFactor(dim, ...)``: the new factor maps to ``dim`` of every operand
        and result of rank >= 1 (pointwise ops)."""
        index = self._reserve_factor(factor_size, factor_type, is_blocked)
        _map_single_dim(self.operand_mappings, dim, index)
        _map_single_dim(self.result_mappings, dim, index)
        return self

    def add_factor_same_for_all_operands(
            self, operand_dim: int, factor_size: int,
            factor_type: FactorType = FactorType.PASS_THROUGH,
            is_blocked: bool = False) -> OpShardingRuleBuilder:
        """Upstream ``addFactorSameForAllOperands``."""
        index = self._reserve_factor(factor_size, factor_type, is_blocked)
        _map_single_dim(self.operand_mappings, operand_dim, index)
        return self

    def add_factor_same_for_all_results(
            self, result_dim: int, factor_size: int,
            factor_type: FactorType = FactorType.PASS_THROUGH,
            is_blocked: bool = False) -> OpShardingRuleBuilder:
        """Upstream ``addFactorSameForAllResults``."""
        index = self._reserve_factor(factor_size, factor_type, is_blocked)
        _map_single_dim(self.result_mappings, result_dim, index)
        return self

    def add_pointwise(self, shape: Sequence[int],
                      get_factor_type: Callable[[int], FactorType] = _pass_through,
                      is_blocked: bool | Callable[[FactorType], bool] = False,
                      ) -> OpShardingRuleBuilder:
        """Upstream ``addPointwise``: one factor per dimension of ``shape``, mapped to that
        dimension of every operand/result of rank >= 1. ``is_blocked`` is a bool or, like
        upstream's overload, a function of the factor type."""
        blocked = is_blocked if callable(is_blocked) else (lambda _t: is_blocked)
        for dim, dim_size in enumerate(shape):
            factor_type = get_factor_type(dim)
            self.add_factor_all(dim, dim_size, factor_type, blocked(factor_type))
        return self

    def add_pointwise_if(self, shape: Sequence[int], pred: Callable[[int], bool],
                         get_factor_type: Callable[[int], FactorType] = _pass_through,
                         ) -> OpShardingRuleBuilder:
        """Upstream ``addPointwiseIf``: :meth:`add_pointwise` for the dimensions where
        ``pred`` holds."""
        for dim, dim_size in enumerate(shape):
            if pred(dim):
                self.add_factor_all(dim, dim_size, get_factor_type(dim))
        return self

    def add_pointwise_with_diff_type_for_mismatch(
            self, in_shape: Sequence[int], out_shape: Sequence[int],
            mismatch_factor_type: FactorType = FactorType.NEED_REPLICATION,
            mismatch_factor_is_blocked: bool = False) -> OpShardingRuleBuilder:
        """Upstream ``addPointwiseWithDiffTypeForMismatch``: pointwise, but a dimension
        whose sizes differ gets ``mismatch_factor_type`` (sized from ``in_shape``)."""
        if len(in_shape) != len(out_shape):
            raise ValueError(f"shapes {in_shape} and {out_shape} differ in rank")
        for dim, (in_size, out_size) in enumerate(zip(in_shape, out_shape, strict=True)):
            if in_size == out_size:
                self.add_factor_all(dim, in_size)
            else:
                self.add_factor_all(dim, in_size, mismatch_factor_type,
                                    mismatch_factor_is_blocked)
        return self


def int_attr(op: Operation, name: str, default: int = 0) -> int:
    """An op's integer attribute (``IntegerAttr``), ``default`` when absent."""
    attr = op.attributes.get(name)
    return default if attr is None else int(attr.value)


def ints_attr(op: Operation, name: str) -> tuple[int, ...]:
    """An op's list of integers (``DenseArrayAttr`` or flattened ``DenseElementsAttr``),
    ``()`` when absent."""
    attr = op.attributes.get(name)
    if attr is None:
        return ()
    if isinstance(attr, DenseElementsAttr):
        return tuple(int(v) for v in attr.flat_values())
    return tuple(int(v) for v in attr.value)


def create_identity_sharding_rule(type_: Type, num_operands: int = 1,
                                  num_results: int = 1) -> OpShardingRule:
    """Upstream ``createIdentityShardingRule``: ``num_operands`` operands and
    ``num_results`` results all of ``type_``, mapped identically (``([])->([])`` for a
    scalar)."""
    return (OpShardingRuleBuilder([type_] * num_operands, [type_] * num_results)
            .add_pointwise(tensor_shape(type_)).build())


# -- helpers ------------------------------------------------------------------------

def _dims(dims: int | Sequence[int]) -> Sequence[int]:
    return (dims,) if isinstance(dims, int) else dims


def _map_dims_to_factor(mappings: list[list[list[int]]], tensor_dims: Sequence[int],
                        factor_index: int, factor_size: int) -> None:
    """Upstream ``mapDimsToFactor`` (``zip_equal``: one dim per tensor)."""
    if len(tensor_dims) != len(mappings):
        raise ValueError(f"{len(tensor_dims)} dims given for {len(mappings)} tensors")
    for mapping, dim in zip(mappings, tensor_dims, strict=True):
        if dim == NULL_DIM:
            continue
        if dim < 0:
            raise ValueError(f"invalid tensor dimension {dim}")
        if factor_size == 1 and mapping[dim]:
            continue
        mapping[dim].append(factor_index)


def _map_single_dim(mappings: list[list[list[int]]], dim: int, factor_index: int) -> None:
    """Upstream ``mapSingleDimOverAllMappingsToFactor``: skips rank-0 tensors."""
    if dim < 0:
        raise ValueError(f"invalid tensor dimension {dim}")
    for mapping in mappings:
        if mapping:
            mapping[dim].append(factor_index)


# the dim and tensor mappings built so far, by value: immutable, and few distinct ones recur
# in every rule (``[i, j]``), so rules share them rather than build each anew
_DIM_MAPPINGS: dict[tuple[int, ...], DimMapping] = {}
_TENSOR_MAPPINGS: dict[tuple[DimMapping, ...], TensorMapping] = {}
_MAX_SHARED = 1 << 16  # then start afresh: a long fuzzing run meets ever new ones


def _shared(cache: dict, key: tuple, make: Callable[[tuple], object]):
    value = cache.get(key)
    if value is None:
        if len(cache) >= _MAX_SHARED:
            cache.clear()
        value = cache[key] = make(key)
    return value


def _tensor_mappings(mappings: list[list[list[int]]],
                     factor_sizes: list[int]) -> tuple[TensorMapping, ...]:
    """Upstream ``buildTensorMappingAttrList``: an unmapped dimension gets a new size-1
    factor, appended to ``factor_sizes``."""
    out = []
    for mapping in mappings:
        dims = []
        for factors in mapping:
            if not factors:
                factors = [len(factor_sizes)]
                factor_sizes.append(1)
            key = tuple(factors)
            dim = _DIM_MAPPINGS.get(key)
            dims.append(dim if dim is not None else _shared(_DIM_MAPPINGS, key, DimMapping))
        key = tuple(dims)
        tensor = _TENSOR_MAPPINGS.get(key)
        out.append(tensor if tensor is not None
                   else _shared(_TENSOR_MAPPINGS, key, TensorMapping))
    return tuple(out)
