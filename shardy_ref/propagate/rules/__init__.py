"""Op sharding rules: how each op's dimensions map to factors ("Operation sharding rule" in
https://openxla.org/shardy/propagation).

:func:`create_op_sharding_rule` / :func:`get_or_create_sharding_rule` are the entry points;
rules are built with :class:`OpShardingRuleBuilder` by one module per op family, registered
in :data:`RULES` under upstream op names.
See ``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from shardy_ref.propagate.rules.builder import (
    NULL_DIM,
    FactorType,
    OpShardingRuleBuilder,
    create_identity_sharding_rule,
    tensor_shape,
)
from shardy_ref.propagate.rules.registry import (
    RULES,
    SHARDING_RULE_ATTR,
    UnknownToRegistry,
    create_op_sharding_rule,
    get_or_create_sharding_rule,
    rule,
)

__all__ = [
    "NULL_DIM",
    "RULES",
    "SHARDING_RULE_ATTR",
    "FactorType",
    "OpShardingRuleBuilder",
    "UnknownToRegistry",
    "create_identity_sharding_rule",
    "create_op_sharding_rule",
    "get_or_create_sharding_rule",
    "rule",
    "tensor_shape",
]
