"""``sdy-basic-propagate``: the basic propagation driver (upstream
``transforms/propagation/basic_propagation.cc``; see
https://openxla.org/shardy/sdy_propagation_passes#-sdy-basic-propagate and the "Core
Propagation Algorithm" and "Data flow ops" sections of https://openxla.org/shardy/propagation).

Per op, shardings are projected onto the factors of the op's sharding rule, a factor
propagation strategy extends them, and the changed tensors are written back. MLIR's greedy
driver visits the ops (pre-order, one sweep); every sharding change re-queues the ops it
affects (users, defining op, data-flow edges, callers), and since the worklist is LIFO
those come next. Which op runs first decides conflicts, so the order is upstream's exactly.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr, SymbolRefAttr
from shardy_ref.ir.call_graph import CALL_OP, FUNC_OP, callee_name, has_body
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import BlockArgument, Operation, OpResult, Value
from shardy_ref.ir.pattern_match import PatternRewriter, RewritePattern
from shardy_ref.ir.run_memo import pipeline_memo
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable, symbol_name
from shardy_ref.ir.types import RankedTensorType, TupleType, UnrankedTensorType, VectorType
from shardy_ref.ir.utils import (
    common_mesh_or_ref,
    is_static_shaped,
    main_func_or_die,
    mesh_or_lookup,
    remove_sharding_rules,
)
from shardy_ref.ir.value_sharding import (
    get_func_result_sharding,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
    shardable_value,
)
from shardy_ref.pass_manager import Pass, PassContext
from shardy_ref.propagate.basic_factor_propagation import BasicFactorPropagation
from shardy_ref.propagate.data_flow import (
    body_terminator_operands,
    edge_of_source,
    edge_sources,
    non_owner_targets,
    transform_target_sharding,
)
from shardy_ref.propagate.debugging.source_sharding import create_handler, snapshot
from shardy_ref.propagate.provenance import FuncResult, ProvenanceLog, log_of
from shardy_ref.propagate.rules.builder import create_identity_sharding_rule
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule
from shardy_ref.propagate.sharding_group_map import ShardingGroupMap
from shardy_ref.propagate.sharding_projection import ShardingProjection, UpdateTensorShardings
from shardy_ref.transforms.greedy import GreedyRewriteConfig, apply_patterns_greedily

# (op, factor index) -> direction to propagate along that factor of that op
GetDirectionToPropagate = Callable[[Operation, int], PropagationDirection]


def propagate_any(op: Operation, factor: int) -> PropagationDirection:
    """Upstream ``propagateAny``: both ways everywhere (the basic strategy)."""
    return PropagationDirection.BOTH


@dataclass(slots=True)
class TensorParams:
    """The tensors on one side of a propagation step, their shardings, and how to store a
    new sharding for the tensor at an index (upstream ``PropagationTensorParams``)."""

    tensors: Sequence[Value]
    shardings: Sequence[TensorSharding | None]
    set_sharding: Callable[[TensorSharding, int], None]
    is_func_result: bool = False
    keys: Sequence | None = None  # what provenance calls the tensors, when not ``tensors``


def _values_params(values: Sequence[Value]) -> TensorParams:
    values = list(values)
    return TensorParams(values, [get_sharding(v) for v in values],
                        lambda s, i: set_sharding(values[i], s))


def _function_refs(attr, out: list[str]) -> None:
    if isinstance(attr, SymbolRefAttr):
        out.append(attr.root)
    elif isinstance(attr, ArrayAttr):
        for a in attr.value:
            _function_refs(a, out)
    elif isinstance(attr, DictionaryAttr):
        for _, a in attr.value:
            _function_refs(a, out)


# Upstream's factor propagation skips a factor whose direction is NONE (``getCompatibleMajorAxes``
# returns no axes), so a step whose factors are all NONE updates nothing: op-priority
# rounds give many ops no direction at all (benchmarks/propagate.py: a third of the steps)
_NONE_ONLY = frozenset({PropagationDirection.NONE})


def _directions(rule: OpShardingRule,
                direction: Callable[[int], PropagationDirection]) -> tuple:
    """The direction along each factor of ``rule``: NONE along its blocked factors."""
    blocked = rule.blocked_propagation_factors
    return tuple(PropagationDirection.NONE if f in blocked else direction(f)
                 for f in range(len(rule.factor_sizes)))


def _empty_axes(sharding: TensorSharding) -> bool:
    """Upstream ``TensorShardingAttr::emptyAxes``."""
    return (not sharding.replicated_axes and not sharding.unreduced_axes
            and all(not d.axes for d in sharding.dim_shardings))


class Propagator:
    """One run of the basic driver over a module: the symbol tables, the sharding groups,
    the factor propagation strategy and the direction function, plus the notifications
    that feed MLIR's worklist (``BasicPropagationPassImpl::propagate``)."""

    def __init__(self, module: Operation, groups: ShardingGroupMap,
                 factor_propagation=None,
                 direction: GetDirectionToPropagate = propagate_any,
                 conservative: bool = False, ctx: PassContext | None = None,
                 pass_name: str = "sdy-basic-propagate"):
        self.module = module
        self.table = SymbolTable(module)
        self.groups = groups
        self.factor_propagation = factor_propagation or BasicFactorPropagation()
        self.direction = direction
        self.conservative = conservative
        self.ctx = ctx
        self._users: dict[str, list[Operation]] | None = None  # built on first use
        # the pass's SourceShardingHandler when a debug option is on, else None
        self.debug = getattr(ctx, "sharding_debug", None)
        self.provenance = _provenance_log(ctx, pass_name, self.factor_propagation)
        self._group_moves: list[tuple] = []  # sharding-group updates of the current step
        # op -> (step key, directions or None, shardings) of its last step that changed
        # nothing, kept across the passes of the running pipeline (None in debug mode)
        self._no_change: dict | None = None
        if self.debug is None:
            memo = pipeline_memo("no-change propagation steps")
            self._no_change = {} if memo is None else memo
        # ops the registry has no rule for: a rule reads the op's name, types and inherent
        # attributes, which propagation does not change (constants, returns, ...)
        self._no_rule: set[Operation] = set()
        self._rewriter: PatternRewriter | None = None
        self._current: Operation | None = None

    @property
    def users(self) -> dict[str, list[Operation]]:
        """:meth:`_symbol_users` of the module, built when a step first asks (many rounds
        of op-priority propagation change no returned value and ask nothing)."""
        if self._users is None:
            self._users = self._symbol_users(self.module)
        return self._users

    @staticmethod
    def _symbol_users(module: Operation) -> dict[str, list[Operation]]:
        """Upstream ``SymbolUserMap`` for functions: symbol name -> the ops referring to it
        (``func.call``'s callee, a custom call's called computations ...), in walk order.
        Only symbol references, arrays and dictionaries are searched: sdy attributes refer
        to meshes, never to functions."""
        users: dict[str, list[Operation]] = {}
        for op in module.walk():
            names: list[str] = []
            for attr in op.attributes.values():
                _function_refs(attr, names)
            for name in dict.fromkeys(names):
                users.setdefault(name, []).append(op)
        return users

    # -- notifications -------------------------------------------------------------------
    def _notify_op(self, op: Operation) -> None:
        """``rewriter.modifyOpInPlace(op)``: re-queue ``op`` (and its ancestors), unless it
        is the op being propagated or no rewriter is active (func results)."""
        if self._rewriter is not None and op is not self._current:
            self._rewriter.modify_op_in_place(op, lambda: None)

    def notify_sharding_modified(self, value: Value) -> None:
        """Upstream ``notifyShardingModified``: everything affected by ``value``'s new
        sharding."""
        definer = value.defining_op
        if definer is not None and definer.name == "sdy.data_flow_edge":
            for target in non_owner_targets(definer):
                self.notify_users_modified(target)
        if isinstance(value, OpResult):
            self._notify_op(value.op)
        else:
            self._notify_op(value.parent_block.parent_op)
        self.notify_users_modified(value)

    def notify_users_modified(self, value: Value) -> None:
        """Upstream ``notifyUsersModified``: a data-flow edge fed by a use, the parent op
        (or the callers' results) for a terminator, the callee's argument users for a
        call, else the user itself."""
        for use in list(value.uses):
            user = use.owner
            edge = edge_of_source(use)
            if edge is not None:
                self._notify_op(edge)
            elif is_terminator(user):
                self._notify_terminator_users(user, use.index)
            elif user.name == CALL_OP:
                callee = self.table.lookup(callee_name(user))
                if callee is not None and has_body(callee):
                    self.notify_users_modified(callee.regions[0].blocks[0].args[use.index])
            else:
                self._notify_op(user)

    def _notify_terminator_users(self, terminator: Operation, index: int) -> None:
        parent = terminator.parent_op
        if terminator.name != "func.return":
            self._notify_op(parent)
            return
        func = parent
        callers = self.users.get(symbol_name(func), [])
        if not callers:
            self._notify_op(func)
            return
        for caller in callers:
            if caller.name == CALL_OP:
                self.notify_users_modified(caller.results[index])

    # -- one propagation step ------------------------------------------------------------
    def propagate_tensor_shardings(self, operands: TensorParams, results: TensorParams,
                                   rule: OpShardingRule,
                                   direction: Callable[[int], PropagationDirection],
                                   op: Operation, conservative: bool = False,
                                   directions: tuple | None = None) -> bool:
        """Upstream ``propagateTensorShardings``: project, propagate the factors, write back
        the tensors that changed; True if any did. ``directions``: :func:`_directions` of
        ``rule`` and ``direction``, when the caller has them and found a factor that may
        propagate."""
        if directions is None:
            directions = _directions(rule, direction)
            if _NONE_ONLY.issuperset(directions):  # no factor may propagate: no change
                return False
        mesh_or_ref = common_mesh_or_ref(
            [s for s in (*operands.shardings, *results.shardings) if s is not None], self.table)
        if mesh_or_ref is None:
            return False
        mesh = mesh_or_lookup(self.table, mesh_or_ref)
        if mesh is None or mesh.is_maximal:
            return False
        shardings = (*operands.shardings, *results.shardings)
        key = (type(self.factor_propagation), conservative, rule, mesh)
        if self._repeats_no_change(op, key, directions, shardings):
            return False
        projection = ShardingProjection.build(operands.shardings, results.shardings, rule, mesh)
        if self.factor_propagation.is_fixed_point(projection):
            self._remember_no_change(op, key, None, shardings)  # whatever the directions
            return False
        update = self.factor_propagation.propagate_factor_shardings(
            projection, directions.__getitem__, rule.factor_sizes, mesh, conservative, op)
        any_updated, after = self.update_tensor_shardings(operands, results, rule, projection,
                                                          update, mesh_or_ref, mesh)
        if any_updated:
            self._record_step(operands, results, rule, op, mesh, after, projection)
        else:
            self._remember_no_change(op, key, directions, shardings)
        self._group_moves.clear()
        return any_updated

    def _record_step(self, operands: TensorParams, results: TensorParams, rule: OpShardingRule,
                     op: Operation, mesh: Mesh, after: list, projection: ShardingProjection
                     ) -> None:
        """Tell the provenance log and the debug handler (when on) of a step that changed
        shardings: ``after`` holds the operand and result shardings it left."""
        if self.provenance is not None:
            self.provenance.record(
                op, rule, mesh, (*(operands.keys or operands.tensors),
                                 *(results.keys or results.tensors)),
                len(operands.shardings), (*operands.shardings, *results.shardings),
                (*after[0], *after[1]))
            for move in self._group_moves:
                self.provenance.record_group(*move)
        if self.debug is not None:
            # the projection was updated in place: rebuild the old one from the old shardings
            before = ShardingProjection.build(operands.shardings, results.shardings, rule, mesh)
            self.debug.record(op, operands.tensors, results.tensors, mesh, rule,
                              snapshot(before), snapshot(projection))

    def _repeats_no_change(self, op: Operation, key: tuple, directions: tuple,
                           shardings: tuple) -> bool:
        """Whether the step about to run on ``op`` is its last step that changed nothing:
        the same strategy, rule and mesh, the same directions (unless that step found a
        fixed point, which no direction changes) and the very same sharding objects
        (immutable), so it would change nothing again (op-priority rounds and re-queued
        ops repeat many steps). Never in debug mode, which records every step."""
        memo = self._no_change.get(op) if self._no_change is not None else None
        return memo is not None and memo[0] == key and (
            memo[1] is None or memo[1] == directions) and len(memo[2]) == len(shardings) \
            and all(a is b for a, b in zip(memo[2], shardings))

    def _remember_no_change(self, op: Operation, key: tuple, directions: tuple | None,
                            shardings: tuple) -> None:
        """Keep a step that changed nothing for :meth:`_repeats_no_change` (``directions``
        None: it found a fixed point, no direction would have changed anything)."""
        if self._no_change is not None:
            self._no_change[op] = (key, directions, shardings)

    def update_tensor_shardings(self, operands: TensorParams, results: TensorParams,
                                rule: OpShardingRule, projection: ShardingProjection,
                                update: UpdateTensorShardings, mesh_or_ref, mesh: Mesh):
        """Upstream ``updateTensorShardings``: write back each flagged tensor's projected
        sharding; whether any changed, and the operand and result shardings after."""
        any_updated = False
        after = [list(operands.shardings), list(results.shardings)]
        for side, (params, tensors, mappings, flags) in enumerate((
                (operands, projection.operands, rule.operand_mappings, update.update_operands),
                (results, projection.results, rule.result_mappings, update.update_results))):
            for index, flagged in enumerate(flags):
                if not flagged:
                    continue
                new = tensors[index].to_tensor_sharding(mappings[index], rule.factor_sizes,
                                                        mesh_or_ref, mesh)
                if self._update_tensor(params, index, new):
                    any_updated = True
                    after[side][index] = new
        return any_updated, after

    def _update_tensor(self, params: TensorParams, index: int, new: TensorSharding) -> bool:
        """Upstream ``updateTensorSharding``: store ``new`` unless it changes nothing, then
        notify and keep the value's sharding group in sync."""
        old = params.shardings[index]
        if (old is None and _empty_axes(new)) or new == old:
            return False
        params.set_sharding(new, index)
        if params.is_func_result:
            return True
        value = shardable_value(params.tensors[index])
        if value is None:
            return True
        self.notify_sharding_modified(value)
        for member in self.groups.group_members(value):
            if member is value:
                continue
            if self.provenance is not None:  # recorded after the step that set ``value``
                self._group_moves.append((value, member, get_sharding(member), new))
            set_sharding(member, new)
            self.notify_sharding_modified(member)
        return True

    # -- the patterns --------------------------------------------------------------------
    def _op_direction(self, op: Operation) -> Callable[[int], PropagationDirection]:
        """The direction function for one step on ``op``: bound once to the op when the
        direction function can be (:class:`~shardy_ref.propagate.op_priority_propagation.
        OpBasedDirection` reads the op's uses once per step, not once per factor)."""
        bind = getattr(self.direction, "bind", None)
        if bind is not None:
            return bind(op)
        return lambda factor: self.direction(op, factor)

    def propagate_registered_op(self, op: Operation) -> bool:
        """``PropagateRegisteredOp``: through any op with a (registered or custom) rule."""
        if op in self._no_rule:
            return False
        rule = get_or_create_sharding_rule(op, self.conservative, ctx=self.ctx)
        if rule is None:
            self._no_rule.add(op)
            return False
        along_factors = getattr(self.direction, "along_factors", None)
        directions = (along_factors(op, rule) if along_factors is not None
                      else _directions(rule, self._op_direction(op)))
        if _NONE_ONLY.issuperset(directions):  # before reading any sharding
            return False
        return self.propagate_tensor_shardings(
            _values_params(op.operands), _values_params(op.results), rule,
            directions.__getitem__, op, self.conservative, directions)

    def propagate_data_flow_edge(self, edge: Operation) -> bool:
        """``PropagateDataFlowEdgeOp``: sources -> the edge's sharding (all targets)."""
        result = edge.results[0]
        if not is_static_shaped(result):
            return False
        sources = edge_sources(edge)
        stored = edge.attributes.get("sharding")
        target = (transform_target_sharding(edge, stored, before_propagation=True)
                  if isinstance(stored, TensorSharding) else None)

        def set_target(sharding: TensorSharding, _index: int) -> None:
            edge.attributes["sharding"] = transform_target_sharding(
                edge, sharding, before_propagation=False)

        rule = create_identity_sharding_rule(result.type, len(sources))
        return self.propagate_tensor_shardings(
            _values_params(sources), TensorParams([result], [target], set_target), rule,
            self._op_direction(edge), edge)

    def propagate_func_data_flow_edge(self, edge: Operation) -> bool:
        """``PropagateFuncDataFlowEdgeOp``: a func argument's callers' operands, or a call
        result's callee return value -> the edge."""
        result = edge.results[0]
        if not is_static_shaped(result):
            return False
        operand = edge.operands[0]
        if isinstance(operand, BlockArgument):
            func = edge.parent_op
            while func is not None and func.name != FUNC_OP:
                func = func.parent_op
            sources = [user.operands[operand.index]
                       for user in self.users.get(symbol_name(func), []) if user.name == CALL_OP]
            if not sources:
                return True
        else:
            callee = self.table.lookup(callee_name(operand.op))
            terminator = callee.regions[0].blocks[0].terminator
            sources = ([terminator.operands[operand.index]]
                       if terminator.name == "func.return" else [])
        rule = create_identity_sharding_rule(result.type, len(sources))
        return self.propagate_tensor_shardings(
            _values_params(sources), _values_params([result]), rule,
            self._op_direction(edge), edge)

    def propagate_propagation_barrier(self, op: Operation) -> bool:
        """``PropagatePropagationBarrier``: identity, in the barrier's allowed direction."""
        direction = PropagationDirection(op.attributes["allowed_direction"].value)
        return self.propagate_tensor_shardings(
            _values_params(op.operands), _values_params(op.results),
            create_identity_sharding_rule(op.results[0].type), lambda _f: direction, op)

    # -- the driver ----------------------------------------------------------------------
    def propagate_func_results(self) -> None:
        """Upstream ``propagateFuncResults`` for the main function: between each returned
        value and the function's result attribute, both ways, without notifications."""
        func = main_func_or_die(self.module, self.table)
        if not has_body(func):
            return
        for index, value in enumerate(body_terminator_operands(func)):
            if not is_static_shaped(value):
                continue
            operand = TensorParams([value], [get_sharding(value)],
                                   lambda s, _i, v=value: set_sharding(v, s))
            result = TensorParams(
                [value], [get_func_result_sharding(func, index)],
                lambda s, _i, i=index: set_func_result_sharding(func, i, s), True,
                [FuncResult(func, index)])
            self.propagate_tensor_shardings(operand, result,
                                            create_identity_sharding_rule(value.type),
                                            lambda _f: PropagationDirection.BOTH, func)

    def _pattern(self, root: str | None, fn: Callable[[Operation], bool]) -> RewritePattern:
        def apply(op: Operation, rewriter: PatternRewriter) -> bool:
            self._rewriter, self._current = rewriter, op
            try:
                return fn(op)
            finally:
                self._current = None
        return RewritePattern(apply, root, 1, fn.__name__)

    def propagate(self) -> None:
        """Func results, one greedy sweep of the four patterns, func results again."""
        self.propagate_func_results()
        patterns = [
            self._pattern("sdy.propagation_barrier", self.propagate_propagation_barrier),
            self._pattern("sdy.data_flow_edge", self.propagate_data_flow_edge),
            self._pattern("sdy.func_data_flow_edge", self.propagate_func_data_flow_edge),
            self._pattern(None, self.propagate_registered_op),
        ]
        config = GreedyRewriteConfig(use_top_down_traversal=True, max_iterations=1,
                                     fold=False, cse_constants=False,
                                     region_simplification="disabled")
        apply_patterns_greedily(self.module, patterns, config)
        self._rewriter = None
        self.propagate_func_results()


def _provenance_log(ctx: PassContext | None, pass_name: str,
                    factor_propagation) -> ProvenanceLog | None:
    """The run's provenance log (made on first use unless turned off), entering the phase
    of the running pass and strategy."""
    log = log_of(ctx)
    if log is not None:
        log.begin(pass_name, factor_propagation.STRATEGY)
    return log


def check_valid_shapes(module: Operation) -> None:
    """Upstream ``allValidShapes``: propagation handles static-shaped ranked tensors and
    no tuples (first offending op result in post-order)."""
    for op in module.walk(post_order=True):
        for t in op.result_types:
            if isinstance(t, UnrankedTensorType) or (
                    isinstance(t, (RankedTensorType, VectorType)) and None in t.shape):
                raise PassError(op.location, "Shardy propagation only supports ranked tensors "
                                f"with a static shape. type: '{t}'")
            if isinstance(t, TupleType):
                raise PassError(op.location, f"Shardy propagation doesn't support tuples: '{t}'")


def prepare_module(module: Operation, options, ctx: PassContext) -> ShardingGroupMap:
    """What ``runOnOperation`` does before propagating: start recording debug info if
    asked, check shapes, build and sync the sharding groups."""
    ctx.sharding_debug = create_handler(module, options.debug_sharding_origins,
                                        options.debug_propagation_edge_sharding)
    check_valid_shapes(module)
    groups = ShardingGroupMap(module)
    groups.sync_group_member_shardings(ctx.warn)
    return groups


@dataclass(frozen=True, slots=True)
class BasicPropagationPassImpl(Pass):
    """Upstream ``BasicPropagationPassImpl``: the basic sharding propagation algorithm (only
    axes compatible between all operands and results propagate, no conflict resolution)
    and the options every strategy shares. ``module-dump-directory`` is accepted and, as
    upstream's basic pass does, unused. The strategies (aggressive, op priority, user
    priority) subclass it and override :meth:`propagate`, as upstream's do; the passes
    are registered in :mod:`shardy_ref.propagate.passes`."""

    keep_sharding_rules: bool = field(
        default=False, metadata={"help": "Whether to keep existing and created op sharding rules"})
    module_dump_directory: str = field(default="", metadata={"help": (
        "Where to dump any rewritten modules for debugging; accepted, but nothing is dumped")})
    conservative_propagation: bool = field(default=False, metadata={"help": (
        "Whether to disallow split axes and non-divisible sharding axes during propagation")})
    debug_sharding_origins: bool = field(default=False, metadata={"help": (
        "Whether to save on the module where each sharding originated (sdy.sharding_origins)")})
    debug_propagation_edge_sharding: bool = field(default=False, metadata={"help": (
        "Whether to save from which operand/result each sharding propagated "
        "(sdy.propagation_edges)")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        try:
            groups = prepare_module(op, self, ctx)
            self.propagate(op, ctx, groups, propagate_any)
            if not self.keep_sharding_rules:
                remove_sharding_rules(op)
            if ctx.sharding_debug is not None:
                ctx.sharding_debug.save_on_module()
        finally:
            ctx.sharding_debug = None

    def propagate(self, module: Operation, ctx: PassContext, groups: ShardingGroupMap,
                  direction: GetDirectionToPropagate, factor_propagation=None) -> None:
        """One run of the basic driver with ``factor_propagation`` (basic by default)."""
        Propagator(module, groups, factor_propagation, direction,
                   self.conservative_propagation, ctx, self.NAME).propagate()
