"""Names of attributes and ops that several passes share, as upstream's
``shardy/dialect/sdy/ir/constants.h``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/ir/constants.h)."""
from __future__ import annotations

DATA_FLOW_EDGE = "sdy.data_flow_edge"
SHARDING_RULE_ATTR = "sdy.sharding_rule"  # upstream ``kShardingRuleAttr``
EXECUTION_THREAD_ATTR = "execution_thread"  # upstream ``kExecutionThreadAttr``
REPLICA_GROUPS = "replica_groups"
