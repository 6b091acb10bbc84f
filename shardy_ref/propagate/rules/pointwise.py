"""Sharding rules of pointwise ops: every dimension of every operand
and result is the same factor. Also ``clamp`` and ``select``, whose ``min``/``max`` or
``pred`` operands may be scalars. See upstream ``op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from shardy_ref.ir.chlo_families import BINARY as CHLO_BINARY
from shardy_ref.ir.chlo_families import UNARY as CHLO_UNARY
from shardy_ref.ir.opdefs import ops_with_trait
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.propagate.rules.builder import OpShardingRuleBuilder, tensor_shape
from shardy_ref.propagate.rules.registry import rule

# StableHLO's ``Elementwise`` ops but the (de)quantizing ones, which have no rule upstream
POINTWISE_OPS = tuple(name for name in ops_with_trait("Elementwise", "stablehlo")
                      if name not in ("stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"))


# CHLO's elementwise ops: no rule by default, as upstream (XLA legalizes CHLO to StableHLO
# before Shardy runs). The special functions our chlo-legalize-to-stablehlo keeps (erf,
# lgamma, ...) legalize to pointwise StableHLO, so the simulator, which partitions the
# program XLA would, gives them the pointwise rule (PassContext.legalized_chlo).
CHLO_POINTWISE_OPS = tuple(n for n in CHLO_UNARY + CHLO_BINARY if n != "chlo._asin_acos_kernel")


@rule("sdy.sharding_constraint", *POINTWISE_OPS, op_local=True)
def pointwise_rule(op: Operation, _conservative: bool) -> OpShardingRule | None:
    """Upstream ``OpShardingRuleBuilder::buildPointwise``."""
    return OpShardingRuleBuilder.build_pointwise(op)


@rule("stablehlo.clamp", op_local=True)
def clamp_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Pointwise over ``operand``'s shape; scalar ``min``/``max`` are left unmapped."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise(
        tensor_shape(op.operands[1].type)).build()


@rule("stablehlo.select", op_local=True)
def select_rule(op: Operation, _conservative: bool) -> OpShardingRule:
    """Pointwise over the result's shape; a scalar ``pred`` is broadcast, so unmapped."""
    return OpShardingRuleBuilder.for_op(op).add_pointwise(
        tensor_shape(op.result_types[0])).build()
