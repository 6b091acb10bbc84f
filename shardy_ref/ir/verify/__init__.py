"""The verifier: run after parsing and after every pass, as mlir-opt does.

Verification follows MLIR's order (``mlir/lib/IR/Verifier.cpp``):

1. a walk of each op isolated from above (the module, then each function, ...): on
   entering an op, its discardable attributes (the dialect's ``verifyOperationAttribute``:
   ``sdy.sharding``, ``sdy.sharding_rule``, ...), then its own invariants (ODS
   constraints and ``verify()``; for ``func.func`` the argument and result attributes,
   ``verifyRegionArgAttribute``/``verifyRegionResultAttribute``); then each block (not
   empty on entry, ending with a terminator on exit) with the ops in it; on leaving the
   op, the checks of its regions (:data:`EXIT_VERIFIERS`, e.g. implicit terminators and
   inferred result types; isolation from above). Nested ops isolated from above are
   verified after the walk, each on its own, so one bad function does not hide
   another's errors; the first error ends a walk;
2. MLIR's core rules (dominance, unique symbols);
3. symbol uses (``verifySymbolUses``): the checks that need the meshes of the module,
   which upstream runs when the module's symbol table is verified.

Rules register themselves with the decorators below, keyed by op or attribute name, and
raise :class:`VerifyError` with upstream's message (from ``shardy/dialect/sdy/ir/verifiers.cc``
at the pinned commit a0277a83e7f8; the rule IDs in comments are ours, with a passing and a
failing case per ID in ``tests/ir/verify_cases``).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator

from shardy_ref.ir.change_count import (
    change_count,
    cross_checking,
    is_discardable,
    structure_count,
)
from shardy_ref.ir.diagnostics import Diagnostic, VerifyError
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import Operation, OpResult
from shardy_ref.ir.sdy_axes import Mesh

# op name -> checks of the op's own invariants (phase 1)
OP_VERIFIERS: dict[str, list[Callable]] = {}
# discardable attribute name -> check(op, attr, ctx) (phase 1, before the op's invariants)
ATTR_VERIFIERS: dict[str, Callable] = {}
# func argument / result attribute name -> check(func_op, kind, index, attr, type, ctx)
# where kind is "arg" or "result"
FUNC_ATTR_VERIFIERS: dict[str, Callable] = {}
# op name -> checks of the op's symbol uses (phase 3)
SYMBOL_USE_VERIFIERS: dict[str, list[Callable]] = {}
# op name -> checks run when leaving the op, after its regions (MLIR ``verifyRegions``)
EXIT_VERIFIERS: dict[str, list[Callable]] = {}


def op_verifier(*names: str):
    def register(fn):
        for name in names:
            OP_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def exit_verifier(*names: str):
    def register(fn):
        for name in names:
            EXIT_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def attr_verifier(*names: str):
    def register(fn):
        for name in names:
            ATTR_VERIFIERS[name] = fn
        return fn
    return register


def func_attr_verifier(*names: str):
    def register(fn):
        for name in names:
            FUNC_ATTR_VERIFIERS[name] = fn
        return fn
    return register


def symbol_use_verifier(*names: str):
    def register(fn):
        for name in names:
            SYMBOL_USE_VERIFIERS.setdefault(name, []).append(fn)
        return fn
    return register


def op_error(op: Operation, message: str, notes: list[Diagnostic] | None = None) -> VerifyError:
    """``'sdy.all_gather' op <message>`` at the op, as MLIR's ``emitOpError`` writes it."""
    return VerifyError(op.location, f"'{op.name}' op {message}", notes)


def _pipeline_memo(name: str = "verify") -> dict | None:
    """The verifier's memo ``name`` of the pipeline running in this thread, if any."""
    from shardy_ref.ir.run_memo import pipeline_memo

    return pipeline_memo(name)


def _module_env(module: Operation) -> tuple | None:
    top = module.regions[0].blocks[0] if module.regions and module.regions[0].blocks else ()
    symbols = tuple((child.name, child.attributes.get("sym_name"),
                     child.attributes.get("mesh") if child.name == "sdy.mesh" else None)
                    for child in top)
    names = [name for _, name, _ in symbols if name is not None]
    return (module, symbols) if len(set(names)) == len(names) else None


def _shared_module_env(module: Operation) -> tuple | None:
    """:func:`_module_env`, built once while the module's symbols are fixed (a function pass
    verifies each function: once per function would be quadratic in their number)."""
    from shardy_ref.ir.symbols import facts_while_fixed

    facts = facts_while_fixed(module)
    if facts is None:
        return _interned(_module_env(module))
    if "verify_env" not in facts:
        facts["verify_env"] = _interned(_module_env(module))
    return facts["verify_env"]


def _interned(env: tuple | None) -> tuple | None:
    """``env``, or an equal one an earlier verify of the running pipeline built: the memo
    keys then hold the very same object, which compares in constant time rather than
    symbol by symbol for each op (quadratic in a module of many functions)."""
    from shardy_ref.ir.run_memo import pipeline_memo

    envs = pipeline_memo("verify_envs")
    return env if env is None or envs is None else envs.setdefault(env, env)


def _nearer_module(op: Operation, outer: Operation | None) -> Operation | None:
    return op if op.name == "builtin.module" else outer


def note(location, message: str) -> Diagnostic:
    return Diagnostic("note", location, message)


class VerifyContext:
    """What rules may consult besides the op: the module and its meshes."""

    def __init__(self, module: Operation):
        from shardy_ref.ir.symbols import symbol_table

        self.module = module
        self.symbols = symbol_table(module) if module.name == "builtin.module" else None
        self._positions = None
        self._enclosing: dict[str, dict] = {}
        self._envs: dict[Operation, tuple] = {}
        self._tables: dict[Operation, object] = {}
        self._block_keys: dict[object, tuple | None] = {}
        # op -> {_BASE: the inputs besides its attributes (_verify_op_memoised); _STAMPED:
        # its stamp when all its checks passed; attribute name, or None for the op's own
        # invariants: the inputs of that check's last success under it}, and (func, "func
        # attrs") -> its arguments' checks; kept while a pipeline runs (None: no pipeline)
        self.memo: dict[Operation, dict] | None = _pipeline_memo()
        self.cross_check = self.memo is not None and cross_checking()
        # (check, op) -> the structure count when the check last passed on op, while a
        # pipeline runs (None: no pipeline)
        self._structure_memo: dict[tuple, int] | None = _pipeline_memo("verify_structure")
        # root -> (the change count when it last passed as the verified root, its snapshot
        # when cross-checking), while a pipeline runs (None: no pipeline)
        self._roots: dict[Operation, tuple] | None = _pipeline_memo("verified roots")
        # region op or terminator -> the key all its checks last passed under
        # (_whole_op_key), while a pipeline runs (None: no pipeline)
        self.whole_ops: dict[Operation, tuple] | None = _pipeline_memo("verified whole ops")
        # (check, ids of its inputs) -> the inputs it passed on (unless_passed_before)
        self._passed_inputs: dict[tuple, tuple] | None = _pipeline_memo("passed inputs")

    def unless_passed_before(self, check: Callable[[], None], inputs: tuple) -> None:
        """``check()``, a function of ``inputs`` alone (immutable objects: a shared
        sharding rule and types), unless it passed on these very objects in the running
        pipeline: ops sharing them need not check them again. When cross-checking it runs
        anyway, and failing after a pass means the inputs were not all it read."""
        memo = self._passed_inputs
        if memo is None:
            check()
            return
        key = (check.__code__, *map(id, inputs))
        passed = memo.get(key)
        if passed is None or any(a is not b for a, b in zip(passed, inputs)):
            check()
            memo[key] = inputs  # kept alive: their ids stay theirs
        elif self.cross_check:
            _must_still_pass(check, "a check memoised on its inputs read more than them")

    def verified_now(self, op: Operation) -> bool:
        """Whether ``op`` (isolated from above) passed a verify, as its root or walked on its
        own in it, since which nothing changed (the change count has not moved): a function
        pass verifies each function it ran on, and the module's verify after the next
        module pass need not look into them again; nor a function pass's verify into a
        function the module's verify has just passed."""
        passed = self._roots.get(op) if self._roots is not None else None
        if passed is None or passed[0] != change_count():
            return False
        if passed[1] is not None:
            from shardy_ref.ir.ir_snapshot import unchanged_since
            from shardy_ref.ir.operation import IRError

            if not unchanged_since(passed[1], op):
                raise IRError(f"'{op.name}' changed without the change count moving: a "
                              "change made outside the IR API")
        return True

    def passed(self, root: Operation) -> None:
        """Record that ``root`` passed, with all it holds (see :meth:`verified_now`)."""
        if self._roots is not None:
            from shardy_ref.ir.ir_snapshot import ir_snapshot

            self._roots[root] = (change_count(),
                                 ir_snapshot(root) if self.cross_check else None)

    def preorder(self, root: Operation) -> Iterator[Operation]:
        """``root`` and the ops nested in it, pre-order, not looking into the nested ops
        :meth:`verified_now` (the rules of phases 2 and 3 passed in them)."""
        return core.preorder(root, self.verified_now)

    def unless_structure_verified(self, op: Operation, check: Callable) -> None:
        """``check(op, self)``, a rule only the IR's structure decides (dominance,
        isolation from above), unless it passed on ``op`` in the running pipeline with no
        change of structure since: passes that only rewrite attributes need not pay for a
        walk of every operand (:func:`~shardy_ref.ir.change_count.structure_count`)."""
        memo = self._structure_memo
        if memo is not None and memo.get((check, op)) == structure_count():
            return
        check(op, self)
        if memo is not None:
            memo[(check, op)] = structure_count()

    def table_of(self, module: Operation):
        """The symbol table of ``module`` (the verified one's, or one built once per verify
        and shared while its symbols are fixed: a function pass verifies each function,
        whose calls look their callees up in the module)."""
        if module is self.module and self.symbols is not None:
            return self.symbols
        table = self._tables.get(module)
        if table is None:
            from shardy_ref.ir.symbols import symbol_table

            table = self._tables[module] = symbol_table(module)
        return table

    def from_enclosing(self, name: str, op: Operation, step: Callable, top):
        """What the ops enclosing ``op`` (not ``op`` itself) make of ``top``, innermost last:
        ``step(enclosing_op, value_from_further_out)``, memoised per block under ``name``,
        so that asking it of every op costs time linear in the module, not quadratic in
        the depth of its regions (the verifier does not change the IR)."""
        memo = self._enclosing.setdefault(name, {})
        chain = []
        block = op.parent
        while block is not None and block not in memo:
            chain.append(block)
            holder = block.parent.parent if block.parent is not None else None
            block = holder.parent if holder is not None else None
        value = memo[block] if block is not None else top
        for block in reversed(chain):
            holder = block.parent.parent if block.parent is not None else None
            if holder is not None:
                value = step(holder, value)
            memo[block] = value
        return value

    def module_env(self, op: Operation) -> tuple | None:
        """The module nearest ``op`` (whose meshes its shardings name) and each of its
        top-level ops: kind, symbol name and, for a mesh, the mesh. None if ``op`` is in no
        module or its symbol names repeat (then the module's symbol table, used when the
        module is the verified root, and a scan for the mesh could disagree)."""
        module = self.from_enclosing("memo_module", op, _nearer_module, None)
        if module is None:
            return None
        if module not in self._envs:
            self._envs[module] = _shared_module_env(module)
        return self._envs[module]

    def block_key(self, block, op: Operation) -> tuple | None:
        """``(module env, block, manual axes)`` for the ops of ``block`` (``op`` is one of
        them), built once per block and verify; None: the module's symbols repeat."""
        key = self._block_keys.get(block, False)
        if key is False:
            from shardy_ref.ir.verify.sharding import parent_manual_axes

            env = self.module_env(op)
            key = self._block_keys[block] = None if env is None else (
                env, block, tuple(parent_manual_axes(op, self).items()))
        return key

    @property
    def positions(self):
        """The module's :class:`~shardy_ref.ir.verify.core.TreePositions`, numbered on
        first use (the verifier does not change the IR)."""
        from shardy_ref.ir.verify.core import TreePositions

        if self._positions is None:
            self._positions = TreePositions(self.module, self.verified_now)
        return self._positions

    def mesh_of(self, sharding):
        """The Mesh a TensorSharding is bound to (inline, or the named ``sdy.mesh``), or None."""
        ref = sharding.mesh_or_ref
        if isinstance(ref, Mesh):
            return ref
        if self.symbols is None:
            return None
        op = self.symbols.lookup(ref)
        if op is None or op.name != "sdy.mesh":
            return None
        mesh = op.attributes.get("mesh")
        return mesh if isinstance(mesh, Mesh) else None


def verify_module(module: Operation) -> None:
    """Raise the first VerifyError of ``module`` (its other errors become ``.others``)."""
    errors = collect_errors(module)
    if errors:
        first = errors[0]
        first.others = errors[1:]
        raise first


def collect_errors(module: Operation) -> list[VerifyError]:
    """Every error MLIR's verifier would report for ``module``, in its order."""
    _load_rules(module)
    ctx = VerifyContext(module)
    if ctx.verified_now(module):
        return []
    errors: list[VerifyError] = []
    walked = _verify_tree(module, ctx, errors)
    if errors:
        return errors
    try:
        core.verify_unique_symbols(module)
        for op in ctx.preorder(module):
            for check in SYMBOL_USE_VERIFIERS.get(op.name, ()):
                check(op, ctx)
        ctx.unless_structure_verified(module, core.verify_dominance)
    except VerifyError as e:
        return [e]
    for root in walked:  # the module, and each op isolated from above walked on its own
        ctx.passed(root)
    return errors


def _verify_tree(root: Operation, ctx: VerifyContext,
                 errors: list[VerifyError]) -> list[Operation]:
    """Phase 1 for ``root`` (the module or an op isolated from above): walk it, then each
    op isolated from above found in it, independently (MLIR verifies those in parallel
    once the walk is done, and not at all if it failed), but for those
    :meth:`VerifyContext.verified_now`. Depth-first, with a stack of the ops still to
    verify: regions may nest deeper than Python's recursion limit. Returns the ops
    walked."""
    walked: list[Operation] = []
    pending: list[Iterator[Operation]] = [iter([root])]
    while pending:
        op = next(pending[-1], None)
        if op is None:
            pending.pop()
            continue
        deferred: list[Operation] = []
        walked.append(op)
        try:
            _walk(op, ctx, deferred)
        except VerifyError as e:
            errors.append(e)
            continue
        pending.append(iter(deferred))
    return walked


def _walk(root: Operation, ctx: VerifyContext, deferred: list[Operation]) -> None:
    """The walk of one op isolated from above, without recursion: each :func:`_visit`
    yields the children to walk before it resumes."""
    stack = [_visit(root, ctx, deferred)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        else:
            stack.append(_visit(child, ctx, deferred))


def _visit(op: Operation, ctx: VerifyContext, deferred: list[Operation]) -> Iterator[Operation]:
    """``op`` on entry, each nested op to walk (yielded; nested ops isolated from above are
    deferred, ops without regions verified here), each block on entry and exit, then
    ``op`` on exit. Nothing if all of it passed under its :func:`_whole_op_key`, which
    holds the stamps of every op nested in it (when cross-checking, its nested ops are
    walked, each checked against its own memo)."""
    key = _whole_op_key(op, ctx)
    passed = key is not None and _passed_whole(op, key, ctx)
    if passed and not ctx.cross_check:
        return
    if not passed:
        _verify_op_memoised(op, ctx)
    yield from _visit_regions(op, ctx, deferred)
    if not passed:
        _verify_on_exit(op, ctx, key)
    if core.is_isolated(op):
        ctx.unless_structure_verified(op, core.verify_isolated)


def _visit_regions(op: Operation, ctx: VerifyContext,
                   deferred: list[Operation]) -> Iterator[Operation]:
    """The blocks of ``op`` on entry and exit, and the ops in them (see :func:`_visit`)."""
    for region in op.regions:
        for block in region.blocks:
            core.verify_block_entry(block)
            for child in block:
                if not child.regions:  # walked here: no generator for most ops
                    _verify_leaf(child, ctx)
                elif core.is_isolated(child):
                    if not ctx.verified_now(child):
                        deferred.append(child)
                else:
                    yield child
            core.verify_block_exit(block)


def _verify_on_exit(op: Operation, ctx: VerifyContext, key: tuple | None) -> None:
    """The checks of ``op`` on exit; then, with its :func:`_whole_op_key`, record that all
    its checks passed."""
    for check in EXIT_VERIFIERS.get(op.name, ()):
        check(op, ctx)
    if key is not None:
        ctx.whole_ops[op] = key


def _verify_leaf(op: Operation, ctx: VerifyContext) -> None:
    """An op without regions: its own checks and those on exit, unless it is a
    terminator that passed them under its :func:`_whole_op_key`."""
    key = _whole_op_key(op, ctx) if op.parent.last_op is op else None
    if key is not None and _passed_whole(op, key, ctx):
        return
    _verify_op_memoised(op, ctx)
    _verify_on_exit(op, ctx, key)


def _whole_op_key(op: Operation, ctx: VerifyContext) -> tuple | None:
    """For an op the memo of :func:`_verify_op_memoised` leaves out, a region op (not
    isolated from above) or a terminator, what all its checks read: its stamps and block
    key, a terminator's parent's stamp, and a region op's regions (blocks, their
    arguments' types, and each nested op with its stamps); None outside a pipeline, for
    an sdy op (its checks read its operands' shardings), an op isolated from above (a
    root of its own: :meth:`VerifyContext.verified_now`) or one with an attribute whose
    check always runs."""
    block = op.parent
    if ctx.whole_ops is None or block is None or op.dialect == "sdy" or (
            op.regions and core.is_isolated(op)):
        return None
    for name in op.attributes:
        if name in ATTR_VERIFIERS and name not in _MEMO_ATTRS:
            return None
    block_key = ctx.block_key(block, op)
    if block_key is None:
        return None
    if not op.regions:
        parent = block.parent_op
        return (block_key, op._stamp, op._dstamp,
                None if parent is None else (parent, parent._stamp))
    signature = _regions_signature(op)
    return None if signature is None else (block_key, op._stamp, op._dstamp, signature)


def _regions_signature(op: Operation) -> tuple | None:
    """The regions of ``op`` as its checks and those of the ops in them may read them: per
    region its blocks, per block its arguments' types and its ops with their stamps,
    nested ops' regions alike; None if an op isolated from above is nested (verified as
    a root of its own, after the walk)."""
    signature: list = []
    pending = [op]
    while pending:
        current = pending.pop()
        for region in current.regions:
            signature.append(len(region.blocks))
            for block in region.blocks:
                signature.append(block)
                signature.append(tuple([a.type for a in block.args]))
                for nested in block:
                    signature.append(nested)
                    signature.append(nested._stamp)
                    signature.append(nested._dstamp)
                    if nested.regions:
                        if core.is_isolated(nested):
                            return None
                        pending.append(nested)
    return tuple(signature)


def _passed_whole(op: Operation, key: tuple, ctx: VerifyContext) -> bool:
    """Whether all checks of ``op`` passed under ``key`` in the running pipeline; when
    cross-checking they run anyway, and failing means a change no stamp saw."""
    if ctx.whole_ops.get(op) != key:
        return False
    if ctx.cross_check:
        def checks() -> None:
            verify_op(op, ctx)
            _run_checks(EXIT_VERIFIERS.get(op.name, ()), op, ctx)

        _must_still_pass(checks, f"'{op.name}' changed without its stamps moving: a change "
                         "made outside the IR API")
    return True


def _must_still_pass(check: Callable[[], None], message: str) -> None:
    """When cross-checking a skipped check: run it, and raise IRError(``message``) if it
    fails (the skip would have hidden an error)."""
    from shardy_ref.ir.operation import IRError

    try:
        check()
    except VerifyError as e:
        raise IRError(message) from e


# the discardable attributes whose checks read nothing beyond the op's names, values,
# types, enclosing manual axes and module meshes (``_verify_op_memoised``); others always run
_MEMO_ATTRS = frozenset({"sdy.sharding", "sdy.sharding_rule"})
_BASE = object()  # key of an op's memo entry holding the inputs its successes are under


_STAMPED = object()  # key of an op's memo entry: (its stamps, block key) when all passed


def _verify_op_memoised(op: Operation, ctx: VerifyContext) -> None:
    """:func:`verify_op`, skipping each check whose inputs are those of its last success
    on ``op`` in the running pipeline: the pass manager verifies after every pass that
    changed the IR, and most passes change few ops. Only for ops without regions that do
    not end their block (checks of those read nested ops and the parent); the op's own
    invariants are skipped only for ops outside the sdy dialect (whose collectives read
    their operand's sharding).

    When every check of ``op`` is memoised and passed, the op's stamps are kept too: while
    neither its stamp (moved by any change of the op, of its operands' types or of their
    defining ops' inherent attributes: :func:`~shardy_ref.ir.change_count.touch`) nor the
    block key changes, the op is not looked at again, but for the checks of its
    discardable attributes when they changed (``op._dstamp`` moved: ``sdy.sharding`` set
    by propagation, ``sdy.sharding_rule`` dropped)."""
    memo = ctx.memo
    block_key = _memo_block_key(op, ctx) if memo is not None else None
    if block_key is None:
        verify_op(op, ctx)
        return
    passed = memo.get(op)
    stamped = passed.get(_STAMPED) if passed is not None else None
    if stamped is not None and stamped[0] == op._stamp and stamped[1] == block_key:
        if stamped[2] != op._dstamp:  # only discardable attributes changed
            if not _verify_discardable(op, ctx, passed):
                del passed[_STAMPED]  # one must run every time: the long way next time
                return
            passed[_STAMPED] = (op._stamp, block_key, op._dstamp)
        if ctx.cross_check:
            _check_nothing_to_verify(op, ctx, passed, block_key)
        return
    base = _memo_base(op, block_key)
    if passed is None or passed[_BASE] != base:  # every entry is a success under base
        passed = memo[op] = {_BASE: base}
    if _verify_memoised_checks(op, ctx, passed):
        passed[_STAMPED] = (op._stamp, block_key, op._dstamp)


def _memo_base(op: Operation, block_key: tuple) -> tuple:
    """What the memoised checks of ``op`` may read besides its attributes: the block key,
    its name, operands and their types, and its result types."""
    operands = op.operands
    return (block_key, op.name, operands, tuple([v.type for v in operands]),
            tuple([r.type for r in op.results]))


def _check_nothing_to_verify(op: Operation, ctx: VerifyContext, passed: dict,
                             block_key: tuple) -> None:
    """When cross-checking: that ``op``, skipped because its stamp did not move, has the
    inputs of its last success, so every memoised check would have been skipped too."""
    from shardy_ref.ir.operation import IRError

    inherent = [(name, attr) for name, attr in op.attributes.items()
                if not is_discardable(name)]
    same = passed[_BASE] == _memo_base(op, block_key) and all(
        passed.get(name) == attr for name, attr in op.attributes.items()
        if name in ATTR_VERIFIERS) and (
        None not in passed or passed[None] == _invariants_key(op, inherent))
    if not same:
        raise IRError(f"'{op.name}' changed without its stamp moving: a change made outside "
                      "the IR API")


def _verify_memoised_checks(op: Operation, ctx: VerifyContext, passed: dict) -> bool:
    """The checks of ``op`` whose inputs (under ``passed[_BASE]``) differ from their last
    success's; whether all of them are memoised (none must run every time)."""
    inherent: list[tuple[str, object]] = []
    all_memoised = _verify_discardable(op, ctx, passed, inherent)
    checks = OP_VERIFIERS.get(op.name)
    if checks:
        key = _invariants_key(op, inherent)
        if key is None or passed.get(None) != key:
            inputs = None if key is None else _invariants_inputs(op, inherent)
            if inputs is None:
                _run_checks(checks, op, ctx)
            else:  # the same types and attributes on another op passed: so would these
                ctx.unless_passed_before(lambda: _run_checks(checks, op, ctx), inputs)
            passed[None] = key
        all_memoised = all_memoised and key is not None
    return all_memoised


def _run_checks(checks, op: Operation, ctx: VerifyContext) -> None:
    for check in checks:
        check(op, ctx)


def _invariants_inputs(op: Operation, inherent: list) -> tuple | None:
    """All that the own invariants of ``op`` (outside the sdy dialect) read, as objects
    equal ops share (parsed types and attributes are shared): its name, properties,
    inherent attributes, operand and result types and constant operands' values (MLIR's
    ``matchInts``), for :meth:`VerifyContext.unless_passed_before`. None for an op whose
    checks read its place (a terminator) or successors."""
    if op.successors or is_terminator(op):
        return None
    inputs = [sys.intern(op.name), op.properties]  # names by identity: interned
    for name, attr in inherent:
        inputs += (sys.intern(name), attr)
    inputs += op.operand_types
    inputs += _constant_operands(op)
    inputs.append(None)
    inputs += op.result_types
    return tuple(inputs)


def _verify_discardable(op: Operation, ctx: VerifyContext, passed: dict,
                        inherent: list | None = None) -> bool:
    """The checks of ``op``'s discardable attributes whose inputs (the attribute, under
    ``passed[_BASE]``) differ from their last success's, collecting the inherent
    attributes into ``inherent`` if given; whether all of them are memoised."""
    all_memoised = True
    for name, attr in op.attributes.items():
        if not is_discardable(name):
            if inherent is not None:
                inherent.append((name, attr))
            continue
        check = ATTR_VERIFIERS.get(name)
        if check is None:
            continue
        key = attr if name in _MEMO_ATTRS else None
        if key is None or passed.get(name) != key:
            check(op, attr, ctx)
            passed[name] = key
        all_memoised = all_memoised and key is not None
    return all_memoised


def _invariants_key(op: Operation, inherent: list) -> tuple | None:
    """What the op's own invariants read besides the memo base: its inherent attributes,
    properties and constant operands; None for an sdy op (always checked)."""
    if op.dialect == "sdy":
        return None
    return tuple(inherent), op.properties, _constant_operands(op)


def _memo_block_key(op: Operation, ctx: VerifyContext) -> tuple | None:
    """What any memoised check of ``op`` may read besides the op itself (its attributes,
    name, operands and their types, and its result types): the symbols and meshes of its
    module, its block and the axes enclosing manual computations bind (the same for every
    op of the block: :meth:`VerifyContext.block_key`); None: verify ``op`` without the
    memo."""
    block = op.parent
    if op.regions or block is None or block.last_op is op:
        return None
    return ctx.block_key(block, op)


def _constant_operands(op: Operation) -> tuple:
    """Per operand of ``op``, the value of the ``stablehlo.constant`` defining it (None for
    any other): shape operands some StableHLO checks read (``matchInts``)."""
    return tuple([v.op.attributes.get("value") if isinstance(v, OpResult)
                  and v.op.name == "stablehlo.constant" else None for v in op.operands])


def verify_op(op: Operation, ctx: VerifyContext) -> None:
    """Phase 1 for one op: its discardable attributes, its own invariants, then (for a
    function) the attributes of its arguments and results."""
    for name, attr in op.attributes.items():
        check = ATTR_VERIFIERS.get(name)
        if check is not None:
            check(op, attr, ctx)
    _run_checks(OP_VERIFIERS.get(op.name, ()), op, ctx)
    if op.name == "func.func":
        _verify_func_attrs(op, ctx)


def _verify_func_attrs(func: Operation, ctx: VerifyContext) -> None:
    """The checks of each argument's and result's attributes; in a pipeline, a check of an
    attribute in :data:`_MEMO_ATTRS` is skipped when the attribute, the value's type and
    the function's module symbols are those of its last success (a function with many
    sharded arguments is verified after every pass that changed it)."""
    from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr

    ftype = getattr(func.attributes.get("function_type"), "value", None)
    if ftype is None:
        return
    memo = _func_attr_memo(func, ctx)
    for kind, key, types in (("arg", "arg_attrs", ftype.inputs),
                             ("result", "res_attrs", ftype.results)):
        dicts = func.attributes.get(key)
        if not isinstance(dicts, ArrayAttr):
            continue
        for index, (d, t) in enumerate(zip(dicts, types)):
            if isinstance(d, DictionaryAttr):
                for name, attr in d.value:
                    _verify_func_attr(func, kind, index, name, attr, t, ctx, memo)


def _func_attr_memo(func: Operation, ctx: VerifyContext) -> tuple | None:
    """``(block key, {(kind, index, name): inputs of the last success})`` of ``func`` in
    the running pipeline, or None (no pipeline, or its module's symbols repeat)."""
    if ctx.memo is None or func.parent is None:
        return None
    block_key = ctx.block_key(func.parent, func)
    return None if block_key is None else (block_key,
                                           ctx.memo.setdefault((func, "func attrs"), {}))


def _verify_func_attr(func: Operation, kind: str, index: int, name: str, attr, type_,
                      ctx: VerifyContext, memo: tuple | None) -> None:
    check = FUNC_ATTR_VERIFIERS.get(name)
    if check is None:
        return
    inputs = (memo[0], attr, type_) if memo is not None and name in _MEMO_ATTRS else None
    if inputs is None or memo[1].get((kind, index, name)) != inputs:
        check(func, kind, index, attr, type_, ctx)
        if inputs is not None:
            memo[1][(kind, index, name)] = inputs


# rule modules, imported when the verifier first runs
_RULE_MODULES = ("core", "sharding", "collectives", "sdy_ops", "rules", "builtin_ops",
                 "chlo_ops", "stablehlo_elementwise_shape", "stablehlo_structured",
                 "stablehlo_collective_ops", "stablehlo_misc_ops", "stablehlo_dynamic_region_ops",
                 "stablehlo_ods")


def _load_rules(module: Operation | None = None) -> None:
    """Import the rule modules the verifier needs. The first time, for ``module``, that is
    every one except the :data:`~shardy_ref.ir.verify.rule_index.LAZY_RULES` modules that
    ``module`` names no op or attribute of (a tool verifying one StableHLO program skips
    the sdy rules); later, or without a module, all of them (a pipeline verifying after
    every pass does not search the module each time). The lazy modules' names are theirs
    alone (the index's test checks this), so rules run in the same order either way."""
    import importlib

    from shardy_ref.ir.verify.rule_index import LAZY_MODULES, LAZY_RULES

    missing = [name for name in LAZY_MODULES
               if f"shardy_ref.ir.verify.{name}" not in sys.modules]
    if not missing and _LOADED:
        return
    first = not _LOADED
    for name in _RULE_MODULES:
        if name not in LAZY_MODULES:
            importlib.import_module(f"shardy_ref.ir.verify.{name}")
    _LOADED.append(True)
    if first and module is not None and missing:
        missing = _names_used(module, LAZY_RULES, missing)
    for name in missing:
        importlib.import_module(f"shardy_ref.ir.verify.{name}")


_LOADED: list = []  # non-empty after the first call


def _names_used(module: Operation, index: dict[str, str], candidates: list[str]) -> list[str]:
    """The ``candidates`` (in order) that ``index`` names for an op or attribute name of an
    op in ``module``."""
    from shardy_ref.ir.verify.core import preorder

    wanted = set(candidates)
    found = set()
    for op in preorder(module):
        names = [op.name, *op.attributes] if op.attributes else (op.name,)
        for name in names:
            owner = index.get(name)
            if owner in wanted:
                found.add(owner)
                if found == wanted:
                    return candidates
    return [name for name in candidates if name in found]


# MLIR's core rules register with the decorators above, so they are imported once those
# are defined; the walk uses them on every op
from shardy_ref.ir.verify import core  # noqa: E402
