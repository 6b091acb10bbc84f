"""``sdy-apply-sharding-constraints``: let constraints that dictate the sharding of their
input set it (https://openxla.org/shardy/sdy_import_passes#-sdy-apply-sharding-constraints).
Upstream ``transforms/import/apply_sharding_constraints.cc``.

A ``sdy.sharding_constraint`` (and each in-sharding of a ``sdy.manual_computation``, in
essence a constraint on its operand) copies its sharding onto the input when the input can
carry one, has none yet, the sharding is fully closed, and no other constraint or manual
computation wants a different sharding for it (the pass doc's first list of conditions).
When the input is a data-flow edge target, the input's other uses go through the
constraint instead. A chain of constraints first takes over the later uses of its input in
the same block (the pass doc's chain conditions).

Following upstream's source at the pinned commit a0277a83e7f8 (not the pass doc): a
constraint whose sharding is applied directly also gets its pointwise ``sdy.sharding_rule``
(``getOrCreateShardingRule(op, setShardingRuleOnOp=true)``), and in the data-flow-edge case
the constraint's unreduced axes are set on the input, since unreduced axes don't propagate.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shardy_ref.ir.constants import DATA_FLOW_EDGE, SHARDING_RULE_ATTR
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.utils import insert_after_value, lookup_data_flow_edge
from shardy_ref.ir.value_sharding import get_sharding, set_sharding, shardable_value
from shardy_ref.pass_manager import Pass, register_pass
from shardy_ref.propagate.debugging.source_sharding import create_handler, snapshot
from shardy_ref.propagate.sharding_projection import ShardingProjection

SHARDING_CONSTRAINT = "sdy.sharding_constraint"
MANUAL_COMPUTATION = "sdy.manual_computation"
CONSTRAINT_OPS = (SHARDING_CONSTRAINT, MANUAL_COMPUTATION)
K_DYNAMIC = -(2 ** 63)  # ``ShapedType::kDynamic``


def is_fully_closed(sharding: TensorSharding) -> bool:
    return all(d.is_closed for d in sharding.dim_shardings)


def is_used_by_constraint_with_different_sharding(value: Value,
                                                  sharding: TensorSharding) -> bool:
    """Some constraint or manual computation using ``value`` wants another sharding."""
    for use in value.uses:
        user = use.owner
        if user.name == SHARDING_CONSTRAINT and user.attributes["sharding"] != sharding:
            return True
        if user.name == MANUAL_COMPUTATION and \
                user.attributes["in_shardings"][use.index] != sharding:
            return True
    return False


def is_used_by_sharding_constraint(value: Value, excluded: Operation | None = None) -> bool:
    """Upstream ``isUsedByShardingConstraint``: a user other than ``excluded`` is a
    constraint or a manual computation."""
    return any(user is not excluded and user.name in CONSTRAINT_OPS for user in value.users)


def should_apply(value: Value, sharding: TensorSharding) -> bool:
    """The three conditions of the pass doc's first list, after checking ``value`` can carry
    a sharding at all (a scalar block argument of a non-function region cannot)."""
    if shardable_value(value) is None or get_sharding(value) is not None:
        return False
    # upstream keeps this for parity with GSPMD (b/358627707)
    if not is_fully_closed(sharding):
        return False
    return not is_used_by_constraint_with_different_sharding(value, sharding)


def pointwise_sharding_rule(op: Operation) -> OpShardingRule | None:
    """``OpShardingRuleBuilder::buildPointwise`` for a one-operand, one-result op (the rule
    upstream's registry gives ``sdy.sharding_constraint``): dimension d is factor d."""
    shape = getattr(op.result_types[0], "shape", None)
    if shape is None:
        return None
    mapping = TensorMapping(tuple(DimMapping((i,)) for i in range(len(shape))))
    sizes = tuple(K_DYNAMIC if d is None else d for d in shape)
    return OpShardingRule(sizes, (mapping,) * op.num_operands, (mapping,) * op.num_results)


def set_sharding_rule_if_missing(op: Operation) -> None:
    """``getOrCreateShardingRule(op, setShardingRuleOnOp=true)``: only constraints have a
    rule; a manual computation has none."""
    if op.name != SHARDING_CONSTRAINT or SHARDING_RULE_ATTR in op.attributes:
        return
    rule = pointwise_sharding_rule(op)
    if rule is not None:
        op.attributes[SHARDING_RULE_ATTR] = rule


def apply_constraint(op: Operation, value: Value, sharding: TensorSharding,
                     constraint_after_value: Callable[[], Operation], debug=None) -> None:
    """Upstream ``applyConstraint``: set ``sharding`` on ``value``, or for a data-flow edge
    target route ``value``'s other uses through the constraint that
    ``constraint_after_value`` places right after it. ``debug`` (a
    ``SourceShardingHandler``) records a direct application as a propagation step."""
    if not should_apply(value, sharding):
        return
    defining = value.defining_op
    if (defining is not None and defining.name == DATA_FLOW_EDGE) or \
            lookup_data_flow_edge(value) is not None:
        constraint = constraint_after_value()
        value.replace_uses_with_if(constraint.results[0], lambda use: use.owner is not constraint)
        if sharding.unreduced_axes:
            current = get_sharding(value) or TensorSharding.fully_open(sharding.mesh_or_ref,
                                                                       tensor_rank(value.type))
            set_sharding(value, current.replace(unreduced_axes=sharding.unreduced_axes,
                                                reduction_op=sharding.reduction_op))
        return
    set_sharding_rule_if_missing(op)
    if debug is not None:
        record_applied_constraint(debug, op, lambda: set_sharding(value, sharding))
        return
    set_sharding(value, sharding)


def record_applied_constraint(debug, op: Operation, apply: Callable[[], None]) -> None:
    """Apply a constraint and, if it changed the op's sharding projection, record it with
    ``debug`` as upstream's ``SourceShardingAction`` does (only ops with a rule: a
    constraint, not a manual computation)."""
    rule = op.attributes.get(SHARDING_RULE_ATTR)
    mesh = _common_mesh(op) if isinstance(rule, OpShardingRule) else None
    if mesh is None:
        apply()
        return

    def project():
        return snapshot(ShardingProjection.build([get_sharding(v) for v in op.operands],
                                                 [get_sharding(v) for v in op.results],
                                                 rule, mesh))
    before = project()
    apply()
    after = project()
    if after != before:
        debug.record(op, list(op.operands), list(op.results), mesh, rule, before, after)


def _common_mesh(op: Operation):
    """Upstream ``getCommonMesh`` of the op's operand and result shardings."""
    from shardy_ref.ir.symbols import SymbolTable
    from shardy_ref.ir.utils import common_mesh_or_ref, mesh_or_lookup
    module = op
    while module.parent_op is not None:
        module = module.parent_op
    table = SymbolTable(module)
    shardings = [s for s in map(get_sharding, (*op.operands, *op.results)) if s is not None]
    mesh_or_ref = common_mesh_or_ref(shardings, table)
    return mesh_or_lookup(table, mesh_or_ref) if mesh_or_ref is not None else None


def move_after_value(op: Operation, value: Value) -> None:
    """Upstream ``moveAfterValue``."""
    if isinstance(value, BlockArgument):
        op.detach()
        value.parent_block.prepend(op)
    else:
        op.move_after(value.op)


def tail_of_sharding_constraint_chain(head: Operation) -> Operation | None:
    """Upstream ``getTailOfShardingConstraintChain``: the last constraint of the chain
    starting at ``head`` when the chain has length >= 2, its input is neither a
    constraint's result nor sharded nor used by another constraint, and its tail is not
    used by a constraint (the pass doc's chain conditions); else None."""
    value = head.operands[0]
    defining = value.defining_op
    if defining is not None and defining.name == SHARDING_CONSTRAINT:
        return None
    if get_sharding(value) is not None or is_used_by_sharding_constraint(value, head):
        return None
    tail = head
    while True:
        uses = tail.results[0].uses
        if len(uses) != 1 or uses[0].owner.name != SHARDING_CONSTRAINT:
            break
        tail = uses[0].owner
    if tail is head or is_used_by_sharding_constraint(tail.results[0]):
        return None
    return tail


def apply_sharding_constraint(op: Operation, debug=None) -> None:
    tail = tail_of_sharding_constraint_chain(op)
    value = op.operands[0]
    if tail is not None:
        value.replace_uses_with_if(tail.results[0], lambda use: (
            use.owner is not op and use.owner.name != "func.return"
            and use.owner.parent is tail.parent and tail.is_before_in_block(use.owner)))

    def constraint_after_value() -> Operation:
        move_after_value(op, value)
        return op

    apply_constraint(op, value, op.attributes["sharding"], constraint_after_value, debug)


def apply_manual_computation_in_shardings(op: Operation) -> None:
    """The in-shardings of a manual computation act as constraints on its operands; in the
    data-flow-edge case a new constraint is created after the operand, as the manual
    computation itself can't move."""
    shardings = op.attributes["in_shardings"].shardings
    for operand, sharding in zip(op.operands, shardings, strict=True):
        def constraint_after_value(operand=operand, sharding=sharding) -> Operation:
            constraint = Operation(SHARDING_CONSTRAINT, [operand], [operand.type],
                                   {"sharding": sharding}, location=op.location)
            insert_after_value(operand, constraint)
            return constraint

        apply_constraint(op, operand, sharding, constraint_after_value)


@register_pass
@dataclass(frozen=True, slots=True)
class ApplyShardingConstraintsPass(Pass):
    """Applies constraints that dictate the sharding of their input. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``ApplyShardingConstraintsPass``).

    The debug options record the sharding origins / propagation edges of the constraints
    applied (``shardy_ref.propagate.debugging.source_sharding``).
    """

    NAME = "sdy-apply-sharding-constraints"
    debug_sharding_origins: bool = field(default=False, metadata={"help": (
        "Whether to compute the debug origin shardings for constraints "
        "(see propagation's option)")})
    debug_propagation_edge_sharding: bool = field(default=False, metadata={"help": (
        "Whether to compute the debug propagation edges for constraints "
        "(see propagation's option)")})

    def run(self, op: Operation, ctx) -> None:
        debug = create_handler(op, self.debug_sharding_origins,
                               self.debug_propagation_edge_sharding)
        for target in list(op.walk(post_order=True)):
            if target.name == SHARDING_CONSTRAINT:
                apply_sharding_constraint(target, debug)
            elif target.name == MANUAL_COMPUTATION:
                apply_manual_computation_in_shardings(target)
        if debug is not None:
            debug.save_on_module()
