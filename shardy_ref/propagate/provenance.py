"""Provenance kept by the propagator itself: every propagation step that changed a sharding,
with the op, its sharding rule, the strategy and the priority round, so that
``shardy-ref explain`` can say which rule and factor moved each axis, from which tensor.

Recording is always on and cheap: a step stores references to the shardings before and
after (immutable :class:`TensorSharding` objects that exist anyway), never a copy or a
projection; which factor carried an axis, and from where, is worked out only when asked
(:func:`axis_story`). Upstream keeps no such record: its debug options
(``debug-sharding-origins`` / ``debug-propagation-edge-sharding``,
:mod:`shardy_ref.propagate.debugging.source_sharding`) rebuild projections at every step
and print attributes; this log serves the learner tools and costs little enough to leave on
(``benchmarks/propagate.py`` prints its overhead).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import (
    get_func_result_sharding,
    get_sharding,
    shardable_value,
)

EDGE_OPS = ("sdy.data_flow_edge", "sdy.func_data_flow_edge")


@dataclass(frozen=True, slots=True)
class FuncResult:
    """A function result, whose sharding lives in the function's result attributes."""

    func: Operation
    index: int


Key = Value | FuncResult  # what has a sharding


def sharding_of(key: Key) -> TensorSharding | None:
    """The sharding ``key`` has now."""
    if isinstance(key, FuncResult):
        return get_func_result_sharding(key.func, key.index)
    return get_sharding(key)


@dataclass(frozen=True, slots=True)
class Phase:
    """When a step ran: the pass, the factor propagation strategy, and the user-priority
    and op-priority rounds (None outside those passes)."""

    pass_name: str
    strategy: str
    user_priority: int | None = None
    op_priority: int | None = None

    def describe(self, with_pass: bool = True) -> str:
        parts = [self.pass_name] if with_pass else []
        if self.strategy:
            parts.append(self.strategy)
        if self.user_priority is not None:
            parts.append(f"user priority p{self.user_priority}")
        if self.op_priority is not None:
            parts.append(f"op-priority round {self.op_priority}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class Step:
    """One propagation step that changed at least one sharding: through ``op`` (a
    function, for its results) with ``rule``; a sharding group keeping its members equal;
    or a user-priority round giving a tensor back the dimensions of its priority (both
    without op and rule). ``keys`` are the operands then the results; ``before`` and
    ``after`` their shardings."""

    index: int
    phase: Phase
    op: Operation | None
    rule: OpShardingRule | None
    mesh: Mesh | None
    keys: tuple[Key, ...]
    num_operands: int
    before: tuple[TensorSharding | None, ...]
    after: tuple[TensorSharding | None, ...]
    kind: str = "op"  # "op", "group", or "priority" (a user-priority round restoring dims)


class ProvenanceLog:
    """The steps of every propagation pass of one pipeline run, in order, and an index of
    the steps touching each key (keyed by identity)."""

    __slots__ = ("by_key", "op_priority", "phase", "steps", "user_priority")

    def __init__(self):
        self.steps: list[Step] = []
        self.by_key: dict[int, list[Step]] = {}
        self.phase = Phase("", "")
        self.user_priority: int | None = None
        self.op_priority: int | None = None

    def begin(self, pass_name: str, strategy: str) -> None:
        """A propagation driver starts: later steps belong to this phase."""
        self.phase = Phase(pass_name, strategy, self.user_priority, self.op_priority)

    def record(self, op: Operation | None, rule: OpShardingRule | None, mesh: Mesh | None,
               keys: Sequence[Key], num_operands: int,
               before: Sequence[TensorSharding | None],
               after: Sequence[TensorSharding | None], kind: str = "op") -> None:
        step = Step(len(self.steps), self.phase, op, rule, mesh,
                    tuple(owner(k) for k in keys), num_operands, tuple(before), tuple(after),
                    kind)
        self.steps.append(step)
        for k, old, new in zip(step.keys, step.before, step.after):
            if old is not new:
                touched = self.by_key.setdefault(key_id(k), [])
                if not touched or touched[-1] is not step:
                    touched.append(step)

    def record_group(self, source: Value, member: Value, old: TensorSharding | None,
                     new: TensorSharding) -> None:
        """``member`` took ``source``'s new sharding because they share a sharding group."""
        self.record(None, None, None, (source, member), 1, (new, old), (new, new), "group")

    def record_priority_restore(self, pass_name: str, key: Key, old: TensorSharding | None,
                                new: TensorSharding) -> None:
        """A user-priority round gave ``key`` back the dimensions of its priority (which
        propagation kept empty until this round)."""
        self.phase = Phase(pass_name, "", self.user_priority, None)
        self.record(None, None, None, (key,), 0, (old,), (new,), "priority")

    def steps_of(self, key: Key) -> list[Step]:
        """The steps that changed ``key``'s sharding (``key`` as :func:`owner` gives it
        while the IR still has its data-flow edges, or as the user sees it after)."""
        return self.by_key.get(key_id(key), [])


def log_of(ctx) -> ProvenanceLog | None:
    """The pass context's log, made on first use, or None when recording is off."""
    if ctx is None or not ctx.record_provenance:
        return None
    if ctx.provenance is None:
        ctx.provenance = ProvenanceLog()
    return ctx.provenance


_KEEP = object()


def set_round(ctx, user_priority=_KEEP, op_priority=_KEEP) -> None:
    """A priority pass enters (or, with None, leaves) a user-priority or op-priority
    round; steps recorded from the next propagation driver on carry it."""
    log = log_of(ctx)
    if log is None:
        return
    if user_priority is not _KEEP:
        log.user_priority = user_priority
    if op_priority is not _KEEP:
        log.op_priority = op_priority


def owner(key: Key) -> Key:
    """The value whose sharding ``key`` shares (:func:`shardable_value`): a data-flow
    edge's result and the block arguments of a while loop stand for the edge's owner.
    Steps store owners, found while the edges exist (a pipeline sinks them later)."""
    if isinstance(key, FuncResult):
        return key
    value = shardable_value(key) or key
    if not isinstance(value, BlockArgument) and value.op.name in EDGE_OPS:
        return value.op.operands[0]
    return value


def key_id(key: Key):
    """What identifies a key: the value itself, or a function result's function and
    index (``FuncResult`` objects are made anew)."""
    return (id(key.func), key.index) if isinstance(key, FuncResult) else id(key)


def _same(a: Key, b: Key) -> bool:
    return key_id(a) == key_id(b)


# -- questions ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Move:
    """A step that put ``axis`` on dimension ``dim`` of ``key``: through which factor of
    the step's rule, and from which tensor of the step (``source``, on ``source_dim``; the
    part ``source_axis`` of the axis, when a reshape merged sub-axes into it)."""

    step: Step
    key: Key
    dim: int
    axis: AxisRef
    factor: int | None
    source: Key | None
    source_dim: int | None
    source_axis: AxisRef  # the part of ``axis`` the factor carried from the source


@dataclass(frozen=True, slots=True)
class AxisStory:
    """How ``axis`` reached a value: the moves from the latest back to the first, and the
    key whose sharding had the axis before propagation (None if no source was found)."""

    moves: tuple[Move, ...]
    origin: Key | None
    origin_dim: int | None
    origin_axis: AxisRef | None = None  # the part of the axis the origin had


def dim_axes(sharding: TensorSharding | None, dim: int) -> tuple[AxisRef, ...]:
    if sharding is None or dim >= len(sharding.dim_shardings):
        return ()
    return sharding.dim_shardings[dim].axes


def has_axis(axes: Sequence[AxisRef], axis: AxisRef | None) -> bool:
    """Whether one of ``axes`` is ``axis`` or contains it."""
    return any(a == axis or a.contains(axis) for a in axes)


def axis_story(log: ProvenanceLog, key: Key, dim: int, axis: AxisRef,
               max_moves: int = 64) -> AxisStory:
    """Follow ``axis`` on ``dim`` of ``key`` back through the steps that moved it, to the
    sharding it had before propagation."""
    moves: list[Move] = []
    before_index = len(log.steps)
    while len(moves) < max_moves:
        step = _latest_adding_step(log, key, dim, axis, before_index)
        if step is None:
            return AxisStory(tuple(moves), key, dim, axis)
        if step.kind == "priority":  # the user sharding itself, held back until its round
            moves.append(Move(step, key, dim, axis, None, None, None, axis))
            return AxisStory(tuple(moves), key, dim, axis)
        move = _move(step, key, dim, axis)
        moves.append(move)
        if move.source is None:
            return AxisStory(tuple(moves), None, None)
        key, dim, axis = move.source, move.source_dim, move.source_axis
        before_index = step.index
    return AxisStory(tuple(moves), None, None)


def _latest_adding_step(log: ProvenanceLog, key: Key, dim: int, axis: AxisRef,
                        before_index: int) -> Step | None:
    """The last step before ``before_index`` after which ``key`` had ``axis`` on ``dim``
    but did not before it."""
    for step in reversed(log.steps_of(key)):
        if step.index >= before_index:
            continue
        i = position(step, key)
        if has_axis(dim_axes(step.after[i], dim), axis) and \
                not has_axis(dim_axes(step.before[i], dim), axis):
            return step
    return None


def position(step: Step, key: Key) -> int:
    """Where ``key`` is among the step's tensors (the last place: a value both operand and
    result of a function's return step changes as the result)."""
    found = [i for i, k in enumerate(step.keys) if _same(k, key)]
    changed = [i for i in found if step.before[i] is not step.after[i]]
    return (changed or found)[-1]


def _move(step: Step, key: Key, dim: int, axis: AxisRef) -> Move:
    i = position(step, key)
    if step.kind == "group":  # the source is the group member that changed
        return Move(step, key, dim, axis, None, step.keys[0], dim, axis)
    mappings = (*step.rule.operand_mappings, *step.rule.result_mappings)
    factors = mappings[i].dim_mappings[dim].factor_indices if dim < len(
        mappings[i].dim_mappings) else ()
    factor, piece = (factors[0], axis) if len(factors) == 1 \
        else _factor_of(step, i, factors, axis)
    for j, other in enumerate(step.keys):
        if factor is None or _same(other, key):
            continue
        for other_dim, dm in enumerate(mappings[j].dim_mappings):
            if factor in dm.factor_indices and has_axis(dim_axes(step.before[j], other_dim), piece):
                return Move(step, key, dim, axis, factor, other, other_dim, piece)
    return Move(step, key, dim, axis, factor, None, None, piece)


def _factor_of(step: Step, i: int, factors: Sequence[int],
               axis: AxisRef) -> tuple[int | None, AxisRef]:
    """Of the factors a dimension is made of (a reshape), the first whose projected axes
    after the step hold ``axis`` or a part of it (a merged dimension's axis is made of
    sub-axes of several factors), and that part."""
    if not factors:
        return None, axis
    from shardy_ref.propagate.sharding_projection import ShardingProjection

    n = step.num_operands
    projection = ShardingProjection.build(step.after[:n], step.after[n:], step.rule, step.mesh)
    tensor = (*projection.operands, *projection.results)[i]
    for factor in factors:
        sharding = tensor.factor_index_to_sharding.get(factor)
        for a in sharding.axis_refs if sharding is not None else ():
            if a == axis or a.contains(axis):
                return factor, axis
            if a.overlaps(axis):
                return factor, a
    return factors[0], axis
