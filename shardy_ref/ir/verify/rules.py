"""Verifier rules for op sharding rules and propagation-edge debug attributes.

Two families of discardable attributes, checked the way upstream's
``SdyDialect::verifyOperationAttribute`` does (``shardy/dialect/sdy/ir/verifiers.cc``):

* ``sdy.sharding_rule``: an :class:`OpShardingRule` whose mappings must fit the op's
  operand and result types (our rules OSR-*, TMAP-*, DIMMAP-*: the constraints of
  ``#opshardingruleattr``, ``#tensormappingattr`` and ``#dimmappingattr`` of the page
  below);
* ``sdy.propagation_edges`` (and the per-result / per-block-argument arrays
  ``sdy.result_propagation_edges`` / ``sdy.block_arg_propagation_edges``): debug records of
  propagation whose axes and value refs must make sense on the op
  (``#propagationedgesattr``, ``#propagationonestepattr``,
  ``#axistopropagationdetailsattr`` and ``#edgevaluerefattr`` of the page below).

Which sharding a value carries (upstream ``getSharding``) comes from
:mod:`shardy_ref.ir.value_sharding`.
See https://openxla.org/shardy/sdy_dialect#opshardingruleattr.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence

from shardy_ref.ir.builtin_attrs import ArrayAttr
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_debug import EdgeValueRef, PropagationEdges
from shardy_ref.ir.sdy_rules import OpShardingRule, TensorMapping, factor_symbol
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import RankedTensorType, Type, VectorType
from shardy_ref.ir.verify import VerifyContext, attr_verifier, op_error
from shardy_ref.ir.verify.sharding import common_mesh

SHARDING_RULE = "sdy.sharding_rule"
PROPAGATION_EDGES = "sdy.propagation_edges"
RESULT_PROPAGATION_EDGES = "sdy.result_propagation_edges"
BLOCK_ARG_PROPAGATION_EDGES = "sdy.block_arg_propagation_edges"


# -- sdy.sharding_rule (sdy_dialect #opshardingruleattr, #tensormappingattr) ------------

@attr_verifier(SHARDING_RULE)
def verify_sharding_rule_attr(op: Operation, attr, ctx: VerifyContext) -> None:
    """``sdy.sharding_rule`` on any op must be an OpShardingRule fitting the op
    (sdy_dialect#opshardingruleattr)."""
    if not isinstance(attr, OpShardingRule):
        raise op_error(op, "should have a sharding rule attribute of type OpShardingRuleAttr "
                           f"for attr named '{SHARDING_RULE}'")
    # the rule (shared by equal ops while a pipeline runs) and the types are all it reads
    ctx.unless_passed_before(lambda: verify_op_sharding_rule(op, attr),
                             (attr, *op.operand_types, None, *op.result_types))


def verify_op_sharding_rule(op: Operation, rule: OpShardingRule) -> None:
    """Upstream ``verifyOpShardingRuleAttr``: the mappings fit the op's types (OSR-1..3,
    TMAP-*, DIMMAP-*), every factor is used, the special factor sets are sorted, unique,
    in range and disjoint (OSR-4, OSR-5), and reduction factors stay out of results.
    Like upstream, it does not compare dimension sizes with factor sizes, and blocked
    factors may also be of any factor type."""
    n = rule.num_factors
    in_operands = _verify_mappings(op, op.operand_types, rule.operand_mappings,
                                   rule.factor_sizes, "operand")
    in_results = _verify_mappings(op, op.result_types, rule.result_mappings,
                                  rule.factor_sizes, "result")
    for factor, size in enumerate(rule.factor_sizes):
        if factor not in in_operands and factor not in in_results:
            raise op_error(op, f"has factor {factor_symbol(factor)}={size} that isn't used "
                               "in operand and result mappings")
    typed = (rule.reduction_factors, rule.need_replication_factors, rule.permutation_factors)
    for factors in typed:
        _verify_special_factors(op, n, factors)
    if len(set().union(*typed)) != sum(map(len, typed)):
        raise op_error(op, "a factor can only be in one of the reduction, need replication, "
                           "or permutation factor sets")
    _verify_special_factors(op, n, rule.blocked_propagation_factors)
    if any(f in in_results for f in rule.reduction_factors):
        raise op_error(op, "reduction factor cannot be in result mappings")


def _verify_mappings(op: Operation, types: Sequence[Type], mappings: Sequence[TensorMapping],
                     factor_sizes: Sequence[int], kind: str) -> set[int]:
    """Upstream ``verifyShardingRuleMapping`` for the operands or the results (``kind``):
    one mapping per static-shaped value, of its rank (OSR-1..3), every dimension mapped to
    at least one in-range factor (DIMMAP-1, -2), no size-1 factor in a multi-factor
    dimension (DIMMAP-3) and no factor twice in one value (DIMMAP-4, TMAP-2).
    Returns the factors the mappings use."""
    if len(types) != len(mappings):
        raise op_error(op, f"number of {kind}s and mappings must match: "
                           f"{len(types)} != {len(mappings)}")
    if not mappings:
        raise op_error(op, f"number of {kind}s mappings cannot be 0. Op sharding rules can "
                           "only be defined on operations with at least one operand and result.")
    seen: set[int] = set()
    for index, (type_, mapping) in enumerate(zip(types, mappings)):
        prefix = f"{kind} - " if len(types) == 1 else f"{kind} {index} - "
        seen |= _verify_value_mapping(op, type_, mapping, factor_sizes, prefix)
    return seen


def _verify_value_mapping(op: Operation, type_: Type, mapping: TensorMapping,
                          factor_sizes: Sequence[int], prefix: str) -> set[int]:
    shape = static_shape(type_)
    if shape is None:
        raise op_error(op, f"{prefix}expected a ranked tensor with a static shape. "
                           f"type: '{type_}'")
    if mapping.rank != len(shape):
        raise op_error(op, f"{prefix}mapping rank must match: {mapping.rank} != {len(shape)}")
    seen: set[int] = set()
    for dim in mapping.dim_mappings:
        factors = dim.factor_indices
        if not factors:
            raise op_error(op, f"{prefix}dim mapping must have at least one factor")
        for factor in factors:
            if not 0 <= factor < len(factor_sizes):
                raise op_error(op, f"{prefix}expecting factor indices to be within "
                                   f"0<=...<num_factors; received: {factor}, "
                                   f"num_factors: {len(factor_sizes)}")
            if factor in seen:
                raise op_error(op, f"{prefix}cannot reuse factors for the same tensor value")
            if factor_sizes[factor] == 1 and len(factors) > 1:
                raise op_error(op, f"{prefix}dim mapping can't have a factor of size 1 if "
                                   "there are multiple factors")
            seen.add(factor)
    return seen


def static_shape(type_: Type) -> tuple[int, ...] | None:
    """The shape of a static-shaped type (upstream ``dynCastStaticShapedType``), else None."""
    if isinstance(type_, RankedTensorType) and type_.has_static_shape:
        return tuple(type_.shape)
    if isinstance(type_, VectorType):
        return tuple(type_.shape)
    return None


def _verify_special_factors(op: Operation, num_factors: int, factors: Sequence[int]) -> None:
    """Upstream ``indicesSortedUniqueInBound``: sorted, unique, in [0, num_factors)."""
    if not factors:
        return
    pairs = list(itertools.pairwise(factors))
    if any(a > b for a, b in pairs):
        raise op_error(op, "indices of special factors must be sorted")
    if any(a == b for a, b in pairs):
        raise op_error(op, "indices of special factors must be unique")
    if factors[0] < 0:
        raise op_error(op, "index must be non-negative")
    if factors[-1] >= num_factors:
        raise op_error(op, f"index must be less than {num_factors}, got: {factors[-1]}")


# -- propagation edges (sdy_dialect #propagationedgesattr and the attributes it holds) ---

def _check_edges_attr(op: Operation, edges: PropagationEdges) -> None:
    """The parse-time rules again, for edges built in memory (a pass, not the parser);
    reported at the op, without the ``'op' op`` prefix, as the parser reports them."""
    message = edges.verify_params()
    if message is not None:
        raise VerifyError(op.location, message)


@attr_verifier(PROPAGATION_EDGES)
def verify_propagation_edges_attr(op: Operation, attr, ctx: VerifyContext) -> None:
    """Upstream ``verifyPropagationEdgesShardingAttr``: the edges reference at least one
    sharded value, those shardings share a mesh holding every axis named, and every value
    ref is in range for the op (sdy_dialect ``#propagationedgesattr``,
    ``#edgevaluerefattr``)."""
    if not isinstance(attr, PropagationEdges):
        raise op_error(op, "should have a propagation edges attribute of type "
                           f"PropagationEdgesAttr for attr named '{PROPAGATION_EDGES}'")
    _check_edges_attr(op, attr)
    shardings = shardings_referenced_by_edges(attr, op)
    if not shardings:
        raise op_error(op, "expected propagation edges attr to reference a sharding.")
    mesh = common_mesh(shardings, op, ctx)
    if mesh is None:
        raise op_error(op, "expected a common mesh for propagation edges attr.")
    for step in attr.value:
        for entry in step.axis_entries:
            if not mesh.has_axis(entry.axis_name.name):
                raise op_error(op, "expected axis ref to be in one of the meshes")
            for ref in (entry.source, *entry.targets):
                _verify_edge_value_ref(op, ref)


@attr_verifier(RESULT_PROPAGATION_EDGES, BLOCK_ARG_PROPAGATION_EDGES)
def verify_propagation_edges_array_attr(op: Operation, attr, ctx: VerifyContext) -> None:
    """Upstream checks only the type of the per-value arrays (``verifiers.cc``)."""
    if not isinstance(attr, ArrayAttr) or \
            not all(isinstance(edges, PropagationEdges) for edges in attr):
        raise op_error(op, "should have a propagation edges attribute of type "
                           "ArrayAttr<PropagationEdgesAttr> for attr named "
                           f"'{RESULT_PROPAGATION_EDGES}' or '{BLOCK_ARG_PROPAGATION_EDGES}'")
    for edges in attr:
        _check_edges_attr(op, edges)


def _verify_edge_value_ref(op: Operation, ref: EdgeValueRef) -> None:
    """Upstream ``verifyEdgeValueRef`` (``verifiers.cc``); ``sdy.func_data_flow_edge`` is
    exempt, its edges name the function's values."""
    if op.name == "sdy.func_data_flow_edge":
        return
    if ref.type == "result" and not 0 <= ref.index < op.num_results:
        raise op_error(op, "expected a value ref to have a result index in range "
                           f"[0, {op.num_results}), got: {ref.index}")
    if ref.type == "operand" and not 0 <= ref.index < op.num_operands:
        raise op_error(op, "expected a value ref to have an operand index in range "
                           f"[0, {op.num_operands}), got: {ref.index}")


def edge_value(op: Operation, ref: EdgeValueRef) -> Value | None:
    """The operand or result of ``op`` that ``ref`` names, or None when out of range
    (upstream ``getValueFromEdgeValueRef``)."""
    values = op.results if ref.type == "result" else op.operands
    return values[ref.index] if 0 <= ref.index < len(values) else None


def shardings_referenced_by_edges(edges: PropagationEdges,
                                  op: Operation) -> list[TensorSharding]:
    """The shardings of every source and target value the edges name, in order
    (upstream ``getShardingsReferenceByPropagationEdge``)."""
    from shardy_ref.ir.value_sharding import get_sharding

    out = []
    for step in edges.value:
        for entry in step.axis_entries:
            for ref in (entry.source, *entry.targets):
                value = edge_value(op, ref)
                sharding = get_sharding(value) if value is not None else None
                if sharding is not None:
                    out.append(sharding)
    return out
