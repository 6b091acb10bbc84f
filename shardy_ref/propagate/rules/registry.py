"""The op sharding rule registry: op name -> the function creating its rule.

Family modules (pointwise, dot_conv, reshape, ...) register their rule functions with
``@rule("stablehlo.add", ...)``; :func:`create_op_sharding_rule` dispatches on the op name,
and :func:`get_or_create_sharding_rule` lets an op's own ``sdy.sharding_rule`` (a custom
rule) take precedence. Ops upstream knows to have no rule get ``None`` silently; any other
op gets ``None`` and, once per process like upstream's ``emitOpWarningOnce``, a warning.
See ``shardy/dialect/sdy/transforms/propagation/op_sharding_rule_registry.cc``.
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.ir.change_count import cross_checking, is_discardable
from shardy_ref.ir.constants import SHARDING_RULE_ATTR
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import IRError, Operation
from shardy_ref.ir.run_memo import pipeline_memo
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.pass_manager import running_pass_context

RuleFn = Callable[[Operation, bool], "OpShardingRule | None"]
"""``fn(op, conservative_propagation) -> rule or None`` (``None``: no rule, like upstream's
null ``OpShardingRuleAttr``)."""

RULES: dict[str, RuleFn] = {}
# the rule functions that read nothing of the op but its name, operand and result types,
# inherent attributes and properties (not its neighbours, regions or uses): equal ops get
# one shared rule while a pipeline runs (``_shared_rule``)
OP_LOCAL_RULES: set[RuleFn] = set()

# Ops upstream deliberately gives no rule: handled separately (while, case, named and
# manual computations, data-flow edges...) or nothing to propagate (constants, tokens).
NO_RULE_OPS = frozenset("""
    builtin.module func.func func.call sdy.constant sdy.data_flow_edge
    sdy.func_data_flow_edge sdy.manual_computation sdy.named_computation sdy.mesh
    sdy.propagation_barrier sdy.sharding_group sdy.reshard stablehlo.after_all stablehlo.case
    stablehlo.constant stablehlo.create_token stablehlo.get_tuple_element stablehlo.infeed
    stablehlo.iota stablehlo.outfeed stablehlo.optimization_barrier stablehlo.partition_id
    stablehlo.recv stablehlo.send stablehlo.while""".split())

def rule(*op_names: str, op_local: bool = False) -> Callable[[RuleFn], RuleFn]:
    """Decorator registering a rule function for each of ``op_names`` (upstream names);
    ``op_local``: it reads only what :data:`OP_LOCAL_RULES` says."""
    def register(fn: RuleFn) -> RuleFn:
        for name in op_names:
            if name in RULES:
                raise ValueError(f"two sharding rules registered for '{name}'")
            RULES[name] = fn
        if op_local:
            OP_LOCAL_RULES.add(fn)
        return fn
    return register


class UnknownToRegistry(Exception):
    """Raised by a rule function for an op it cannot handle (an unknown custom call): the
    registry warns with ``message`` once per ``once_key`` and per process, and gives no
    rule."""

    def __init__(self, message: str, once_key: str):
        super().__init__(message)
        self.message = message
        self.once_key = once_key


_WARNED: set[str] = set()  # upstream's static ``llvm::once_flag``s


def reset_warnings_once() -> None:
    """Forget which once-per-process warnings were emitted (for tests)."""
    _WARNED.clear()


_loaded = False


def _load_families() -> None:
    """Import the family modules, which fill :data:`RULES` (lazily: they import this
    module for :func:`rule`)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from shardy_ref.propagate.rules import (  # noqa: F401
        broadcast,
        collectives,
        custom_call,
        dot_conv,
        gather_scatter,
        linalg,
        pointwise,
        reduce,
        reshape,
        slicing,
    )


def create_op_sharding_rule(op: Operation, conservative: bool = False,
                            ctx=None) -> OpShardingRule | None:
    """Upstream ``createOpShardingRule``: the rule for ``op`` built from its kind, shapes and
    attributes, or ``None``. With ``conservative`` (``conservative-propagation``) a
    dimension is only mapped to factors whose sizes multiply to the dimension size.
    Warnings go to ``ctx`` (a :class:`~shardy_ref.pass_manager.PassContext`), if given."""
    _load_families()
    fn = RULES.get(op.name)
    if fn is None and _legalized_chlo():
        from shardy_ref.propagate.rules.pointwise import CHLO_POINTWISE_OPS, pointwise_rule
        fn = pointwise_rule if op.name in CHLO_POINTWISE_OPS else None
    if fn is not None:
        try:
            if fn in OP_LOCAL_RULES:
                return _shared_rule(fn, op, conservative)
            return fn(op, conservative)
        except UnknownToRegistry as unknown:
            _warn_once(ctx, op, unknown.message, unknown.once_key)
            return None
    if op.name in NO_RULE_OPS:
        return None
    definition = op_def(op.name)
    if definition is not None and definition.terminator:
        return None
    _warn_once(ctx, op, f"op '{op.name}' is unknown to SDY sharding rule registry", "op")
    return None


_MISSING = object()


def _shared_rule(fn: RuleFn, op: Operation, conservative: bool) -> OpShardingRule | None:
    """``fn(op, conservative)`` for an op-local rule function, shared by the ops of equal
    name, types, inherent attributes and properties while a pipeline runs (rules are
    immutable; a transformer's layers repeat theirs). When cross-checking, a shared rule
    is built again and must be equal."""
    memo = pipeline_memo("op-local sharding rules")
    if memo is None:
        return fn(op, conservative)
    key = (fn, op.name, conservative, tuple(op.operand_types), tuple(op.result_types),
           tuple([item for item in op.attributes.items() if not is_discardable(item[0])]),
           op.properties)
    try:
        shared = memo.get(key, _MISSING)
    except TypeError:  # an unhashable attribute (a dense array): built for this op alone
        return fn(op, conservative)
    if shared is _MISSING:
        shared = memo[key] = fn(op, conservative)
    elif cross_checking() and fn(op, conservative) != shared:
        raise IRError(f"the sharding rule of '{op.name}' read more than the op: "
                      "it may not be shared")
    return shared


def _legalized_chlo() -> bool:
    """Whether the running pipeline asked for CHLO's elementwise ops to get the pointwise
    rule (:attr:`PassContext.legalized_chlo <shardy_ref.pass_manager.PassContext>`);
    outside it they have no rule, as in upstream's registry."""
    ctx = running_pass_context()
    return ctx is not None and ctx.legalized_chlo


def get_or_create_sharding_rule(op: Operation, conservative: bool = False,
                                set_sharding_rule_on_op: bool = True,
                                ctx=None) -> OpShardingRule | None:
    """Upstream ``getOrCreateShardingRule``: the op's own ``sdy.sharding_rule`` if it has
    one (custom rules take precedence), else a new rule, stored on the op when
    ``set_sharding_rule_on_op`` and not ``None``."""
    existing = op.attributes.get(SHARDING_RULE_ATTR)
    if isinstance(existing, OpShardingRule):
        return existing
    created = create_op_sharding_rule(op, conservative, ctx)
    if set_sharding_rule_on_op and created is not None:
        op.attributes[SHARDING_RULE_ATTR] = created
    return created


def _warn_once(ctx, op: Operation, message: str, once_key: str) -> None:
    if once_key in _WARNED:
        return
    _WARNED.add(once_key)
    if ctx is not None:
        ctx.warn(op.location, message)
