"""Sharding rules of ``stablehlo.custom_call``, keyed by call target (see "Operation
sharding rule" in https://openxla.org/shardy/propagation).

Known targets get a pointwise rule or one modelled on the JAX primitive they implement
(``eigh``, ``qr``, ``householder_product``, ``top_k``, ``approx_max_k``); a few are left
without a rule on purpose; any other target gets no rule and, once per process, upstream's
warning. See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import UnknownToRegistry, rule

_NEED_REPLICATION = FactorType.NEED_REPLICATION

# Targets deliberately given no rule.
NO_RULE_TARGETS = frozenset({
    "sdy_testonly", "tpu_custom_call", "xla_python_cpu_callback", "xla_python_gpu_callback",
    "xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback", "xla.debug.Log"})

# Targets that are pointwise (incl. SPMD-internal ops that only permute between partitions).
POINTWISE_TARGETS = frozenset({
    "annotate_device_placement", "Cholesky", "CompactWyHelper", "InspectSharding",
    "InvertDiagBlocksLowerTriangular", "InvertDiagBlocksUpperTriangular", "LayoutConstraint",
    "mhlo.erf", "MoveToDevice", "MoveToHost", "X64SplitHigh", "X64SplitLow",
    "xla.megascale.provide_metadata", "_SPMDInternalOp_MultiPad",
    "_SPMDInternalOp_RotateRight", "_SPMDInternalOp_MultiRotate",
    "_SPMDInternalOp_MultiSlice", "_SPMDInternalOp_Wrap"})

TargetRule = Callable[[Operation], "OpShardingRule | None"]
_TARGET_RULES: dict[str, TargetRule] = {}


def _target(*names: str) -> Callable[[TargetRule], TargetRule]:
    def register(fn: TargetRule) -> TargetRule:
        for name in names:
            _TARGET_RULES[name] = fn
        return fn
    return register


def _shape(value) -> tuple[int, ...]:
    return tensor_shape(value.type)


@_target("Eigh")
def _eigh(op: Operation) -> OpShardingRule:
    """``jax.lax.linalg.eigh``: batch dims, and the two matrix dims shared with the
    eigenvectors; the eigenvalues' last dim is the input's last dim."""
    shape = _shape(op.operands[0])
    dim1, dim2 = len(shape) - 2, len(shape) - 1
    return (OpShardingRuleBuilder.for_op(op).add_pointwise(shape[:-2])
            .add_factor(dim1, (dim1, NULL_DIM), shape[dim1])
            .add_factor(dim2, (dim2, dim1), shape[dim2]).build())


@_target("Qr", "QrDecompositionBlock")
def _qr(op: Operation) -> OpShardingRule:
    """``jax.lax.linalg.qr``: batch dims; matrix dims shared with the first result and the
    second result's own dim, all need replication."""
    shape = _shape(op.operands[0])
    rhs_shape = _shape(op.results[1])
    dim1, dim2 = len(shape) - 2, len(shape) - 1
    return (OpShardingRuleBuilder.for_op(op).add_pointwise(shape[:-2])
            .add_factor(dim1, (dim1, NULL_DIM), shape[dim1], _NEED_REPLICATION)
            .add_factor(dim2, (dim2, NULL_DIM), shape[dim2], _NEED_REPLICATION)
            .add_factor(NULL_DIM, (NULL_DIM, dim1), rhs_shape[dim1], _NEED_REPLICATION)
            .build())


@_target("ProductOfElementaryHouseholderReflectors")
def _householder_product(op: Operation) -> OpShardingRule:
    """``jax.lax.linalg.householder_product``: batch dims; the matrix dims shared with the
    result, and the taus' own dim, all need replication."""
    lhs, rhs = _shape(op.operands[0]), _shape(op.operands[1])
    dim1, dim2 = len(lhs) - 2, len(lhs) - 1
    return (OpShardingRuleBuilder.for_op(op).add_pointwise(lhs[:-2])
            .add_factor((dim1, NULL_DIM), dim1, lhs[dim1], _NEED_REPLICATION)
            .add_factor((dim2, NULL_DIM), dim2, lhs[dim2], _NEED_REPLICATION)
            .add_factor((NULL_DIM, dim1), NULL_DIM, rhs[dim1], _NEED_REPLICATION)
            .build())


@_target("mhlo.topk")
def _topk(op: Operation) -> OpShardingRule:
    """``jax.lax.top_k``: pointwise, the top-k dimension blocked need-replication."""
    return (OpShardingRuleBuilder.for_op(op).add_pointwise_with_diff_type_for_mismatch(
        _shape(op.operands[0]), _shape(op.results[0]), _NEED_REPLICATION,
        mismatch_factor_is_blocked=True).build())


@_target("ApproxTopK", "PartialReduce")
def _approx_top_k(op: Operation) -> OpShardingRule:
    """``jax.lax.approx_max_k`` (operands: operand, iota, two scalar inits): the reduced
    dimension is an operand-only factor plus a blocked need-replication result factor."""
    builder = OpShardingRuleBuilder.for_op(op)
    for dim, (in_size, out_size) in enumerate(zip(_shape(op.operands[0]),
                                                  _shape(op.results[0]), strict=True)):
        if in_size == out_size:
            builder.add_factor_all(dim, in_size)
        else:
            builder.add_factor((dim, dim, NULL_DIM, NULL_DIM), (NULL_DIM, NULL_DIM), in_size)
            builder.add_factor((NULL_DIM,) * 4, (dim, dim), out_size, _NEED_REPLICATION,
                               is_blocked=True)
    return builder.build()


@_target("X64Combine")
def _x64_combine(op: Operation) -> OpShardingRule | None:
    """Pointwise, unless it feeds a ``rng_bit_generator``, whose ui64 state must stay
    replicated: then one blocked need-replication factor."""
    if any(user.name == "stablehlo.rng_bit_generator"
           for result in op.results for user in result.users):
        shape = _shape(op.results[0])
        return (OpShardingRuleBuilder.for_op(op)
                .add_factor_all(0, shape[0], _NEED_REPLICATION, is_blocked=True).build())
    return OpShardingRuleBuilder.build_pointwise(op)


@rule("stablehlo.custom_call")
def custom_call_rule(op: Operation, _conservative: bool) -> OpShardingRule | None:
    target = op.attributes["call_target_name"].value
    if target in NO_RULE_TARGETS:
        return None
    if target in POINTWISE_TARGETS:
        return OpShardingRuleBuilder.build_pointwise(op)
    fn = _TARGET_RULES.get(target)
    if fn is not None:
        return fn(op)
    raise UnknownToRegistry(
        f"custom call @{target} is unknown to SDY sharding rule registry", "custom_call")
