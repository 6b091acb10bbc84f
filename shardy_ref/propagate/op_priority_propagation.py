"""``sdy-op-priority-propagate``: aggressive propagation in five rounds, each letting more
ops propagate in more directions (upstream
``transforms/propagation/op_priority_propagation.cc``; see
https://openxla.org/shardy/sdy_propagation_passes#-sdy-op-priority-propagate).

Round ``p`` allows, per op and factor, the union of the first ``p + 1`` schedules below,
intersected with the direction the caller allows: pass-through ops whose operands have one
use; pass-through ops; only pass-through factors (broadcasts backward only); everything but
broadcasts forward; everything.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shardy_ref.ir.constants import SHARDING_RULE_ATTR
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.utils import is_scalar
from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.aggressive_propagation import AggressivePropagationPassImpl
from shardy_ref.propagate.basic_propagation import GetDirectionToPropagate, propagate_any
from shardy_ref.propagate.provenance import set_round
from shardy_ref.propagate.sharding_group_map import ShardingGroupMap
from shardy_ref.transforms.common.op_properties import is_elementwise

NONE, FORWARD, BACKWARD, BOTH = (PropagationDirection.NONE, PropagationDirection.FORWARD,
                                 PropagationDirection.BACKWARD, PropagationDirection.BOTH)


def _forward_and_backward(a: PropagationDirection, b: PropagationDirection) -> bool:
    return {a, b} == {FORWARD, BACKWARD}


# both tables by upstream's definitions below, looked up per factor of every propagation step
_UNION = {(a, b): BOTH if _forward_and_backward(a, b) else max(a, b)
          for a in PropagationDirection for b in PropagationDirection}
_INTERSECTION = {(a, b): NONE if _forward_and_backward(a, b) else min(a, b)
                 for a in PropagationDirection for b in PropagationDirection}


def union_of_directions(a: PropagationDirection, b: PropagationDirection) -> PropagationDirection:
    """Upstream ``unionOfPropagationDirections``: FORWARD + BACKWARD is BOTH, else the max
    (the join of the lattice NONE < FORWARD, BACKWARD < BOTH)."""
    return _UNION[a, b]


def intersection_of_directions(a: PropagationDirection,
                               b: PropagationDirection) -> PropagationDirection:
    """Upstream ``intersectionOfPropagationDirections``: FORWARD and BACKWARD share nothing,
    else the min (the lattice's meet)."""
    return _INTERSECTION[a, b]


def _direction_based_on_uses(op: Operation, allow_multi_use: bool) -> PropagationDirection:
    """Nowhere if a non-scalar operand has other uses (propagating would add a conflict
    at each use), unless ``allow_multi_use``."""
    if allow_multi_use:
        return BOTH
    multi = any(not v.has_one_use and not is_scalar(v) for v in op.operands)
    return NONE if multi else BOTH


_PASS_THROUGH = frozenset({"stablehlo.reshape", "stablehlo.transpose", "sdy.data_flow_edge",
                           "sdy.func_data_flow_edge"})
_OFFLOAD_TARGETS = frozenset({"MoveToDevice", "MoveToHost"})


def _is_offload_custom_call(op: Operation) -> bool:
    if op.name != "stablehlo.custom_call":
        return False
    target = op.attributes.get("call_target_name")
    return getattr(target, "value", target) in _OFFLOAD_TARGETS


def _pass_through(op: Operation, allow_multi_use: bool) -> PropagationDirection:
    """Upstream ``isPassThroughOp``."""
    if is_elementwise(op) or _is_offload_custom_call(op) or op.name in _PASS_THROUGH:
        return _direction_based_on_uses(op, allow_multi_use)
    if op.name in ("stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"):
        return intersection_of_directions(_direction_based_on_uses(op, allow_multi_use),
                                          FORWARD)
    return NONE


def _pass_through_single_use(op: Operation, factor: int) -> PropagationDirection:
    return _pass_through(op, allow_multi_use=False)


def _pass_through_multi_use(op: Operation, factor: int) -> PropagationDirection:
    return _pass_through(op, allow_multi_use=True)


def _is_pass_through_factor(rule: OpShardingRule, factor: int) -> bool:
    """``OpShardingRuleAttr::isPassThroughFactor``: not a reduction, need-replication or
    permutation factor."""
    return factor not in (*rule.reduction_factors, *rule.need_replication_factors,
                          *rule.permutation_factors)


def _only_pass_through_factors_broadcast_backward(op: Operation,
                                                  factor: int) -> PropagationDirection:
    """An op without a sharding rule counts as identity (e.g. a data-flow edge)."""
    rule = op.attributes.get(SHARDING_RULE_ATTR)
    if isinstance(rule, OpShardingRule) and not _is_pass_through_factor(rule, factor):
        return NONE
    return BACKWARD if op.name == "stablehlo.broadcast_in_dim" else BOTH


def _any_except_broadcast_forward(op: Operation, factor: int) -> PropagationDirection:
    return BACKWARD if op.name == "stablehlo.broadcast_in_dim" else BOTH


OP_PROPAGATION_SCHEDULE: tuple[Callable[[Operation, int], PropagationDirection], ...] = (
    _pass_through_single_use, _pass_through_multi_use,
    _only_pass_through_factors_broadcast_backward, _any_except_broadcast_forward,
    propagate_any)


# the schedules that read only the op, not the factor
_OP_LEVEL_SCHEDULES = frozenset({_pass_through_single_use, _pass_through_multi_use,
                                 _any_except_broadcast_forward, propagate_any})
# per round: its op-level schedules, most permissive (latest) first, and its others
_ROUND_SCHEDULES = tuple(
    (tuple(s for s in reversed(OP_PROPAGATION_SCHEDULE[:p + 1]) if s in _OP_LEVEL_SCHEDULES),
     tuple(s for s in OP_PROPAGATION_SCHEDULE[:p + 1] if s not in _OP_LEVEL_SCHEDULES))
    for p in range(len(OP_PROPAGATION_SCHEDULE)))


@dataclass(frozen=True, slots=True)
class OpBasedDirection:
    """Upstream ``getOpBasedDirectionToPropagate`` for round ``priority``: called per (op,
    factor), or :meth:`bind` to an op for one propagation step, which asks the schedules
    that do not depend on the factor once instead of once per factor."""

    priority: int
    outer: GetDirectionToPropagate

    def __call__(self, op: Operation, factor: int) -> PropagationDirection:
        allowed = NONE
        for schedule in OP_PROPAGATION_SCHEDULE[:self.priority + 1]:
            allowed = union_of_directions(allowed, schedule(op, factor))
        return intersection_of_directions(allowed, self.outer(op, factor))

    def bind(self, op: Operation) -> Callable[[int], PropagationDirection]:
        """The direction along each factor of ``op`` during one step (the use counts the
        pass-through schedules read may change once it is over). The op-level schedules
        are asked on the first call (a step that stops before asking asks nothing) and
        their union kept: the union is the lattice's join, so the order does not matter."""
        schedules = OP_PROPAGATION_SCHEDULE[:self.priority + 1]
        per_factor = [s for s in schedules if s not in _OP_LEVEL_SCHEDULES]
        fixed = []  # the union of the op-level schedules' directions, once asked
        outer = self.outer

        def direction(factor: int) -> PropagationDirection:
            if not fixed:
                allowed = NONE
                for schedule in schedules:
                    if schedule in _OP_LEVEL_SCHEDULES:
                        allowed = _UNION[allowed, schedule(op, factor)]
                fixed.append(allowed)
            allowed = fixed[0]
            for schedule in per_factor:
                allowed = _UNION[allowed, schedule(op, factor)]
            return _INTERSECTION[allowed, outer(op, factor)]

        return direction

    def along_factors(self, op: Operation, rule: OpShardingRule) -> tuple:
        """The direction along each factor of ``rule`` for one step on ``op``, NONE along
        its blocked factors: what :meth:`bind` gives, asked at once. The op-level
        schedules are asked most permissive first, and no further once their union is
        BOTH, the lattice's top (the union is then BOTH whatever the others say; the
        schedules only read the op)."""
        num_factors = len(rule.factor_sizes)
        if not num_factors:
            return ()
        op_level, per_factor = _ROUND_SCHEDULES[self.priority]
        allowed = NONE
        for schedule in op_level:
            allowed = _UNION[allowed, schedule(op, 0)]
            if allowed is BOTH:
                per_factor = ()
                break
        blocked = rule.blocked_propagation_factors
        outer = self.outer
        if not per_factor and not blocked and outer is propagate_any:
            return (allowed,) * num_factors
        directions = []
        for factor in range(num_factors):
            if factor in blocked:
                directions.append(NONE)
                continue
            along = allowed
            for schedule in per_factor:
                along = _UNION[along, schedule(op, factor)]
            directions.append(_INTERSECTION[along, outer(op, factor)])
        return tuple(directions)


def op_based_direction(priority: int,
                       outer: GetDirectionToPropagate) -> GetDirectionToPropagate:
    """Upstream ``getOpBasedDirectionToPropagate`` for round ``priority``."""
    return OpBasedDirection(priority, outer)


@dataclass(frozen=True, slots=True)
class OpPriorityPropagationPassImpl(AggressivePropagationPassImpl):
    """Upstream ``OpPriorityPropagationPassImpl``: the aggressive strategies once per
    op-priority round (five rounds), or just once with ``run-op-priority-propagation=false``."""

    run_op_priority_propagation: bool = field(
        default=True, metadata={"help": "Whether to run (or skip) op-priority propagation"})

    def propagate(self, module: Operation, ctx: PassContext, groups: ShardingGroupMap,
                  direction: GetDirectionToPropagate, factor_propagation=None) -> None:
        if not self.run_op_priority_propagation:
            AggressivePropagationPassImpl.propagate(self, module, ctx, groups, direction)
            return
        for priority in range(len(OP_PROPAGATION_SCHEDULE)):
            set_round(ctx, op_priority=priority)
            AggressivePropagationPassImpl.propagate(self, module, ctx, groups,
                                                    op_based_direction(priority, direction))
        set_round(ctx, op_priority=None)
