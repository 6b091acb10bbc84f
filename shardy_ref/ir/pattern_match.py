"""Rewrite patterns and the rewriter they mutate the IR through (MLIR ``PatternMatch.h``).

A :class:`RewritePattern` is a match-and-rewrite function rooted at an op name (or at any
op), with a benefit; a :class:`PatternRewriter` performs every IR change a pattern makes
and tells its :class:`Listener` (the greedy driver, ``shardy_ref.transforms.greedy``) what
was inserted, modified, replaced or erased, in the order MLIR's ``RewriterBase`` does
(``mlir/lib/IR/PatternMatch.cpp``, ``mlir/lib/IR/Builders.cpp``). Changes made directly on
the IR, bypassing the rewriter, are invisible to the driver, exactly as in MLIR.

Canonicalization patterns register per op name (MLIR ``getCanonicalizationPatterns``)
with :func:`add_canonicalization_patterns`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from shardy_ref.ir.diagnostics import Diagnostic
from shardy_ref.ir.location import UNKNOWN_LOC, Location
from shardy_ref.ir.operation import Block, Operation, OpResult, Region, Value


@dataclass(frozen=True, slots=True)
class RewritePattern:
    """``fn(op, rewriter) -> bool`` (True: matched and rewrote). ``root`` is the op name the
    pattern matches, or None for any op (``MatchAnyOpTypeTag``); ``labels`` are debug labels
    that ``canonicalize{enable-patterns=...}`` filters on, as is ``name``."""

    fn: Callable[[Operation, PatternRewriter], bool]
    root: str | None
    benefit: int = 1
    name: str = ""
    labels: tuple[str, ...] = ()

    def __call__(self, op: Operation, rewriter: PatternRewriter) -> bool:
        return bool(self.fn(op, rewriter))


def rewrite_pattern(root: str | None, benefit: int = 1, labels: Sequence[str] = ()):
    """Decorator: ``@rewrite_pattern("sdy.reshard", benefit=2)`` turns a function into a
    :class:`RewritePattern` named after it."""
    def wrap(fn) -> RewritePattern:
        return RewritePattern(fn, root, benefit, fn.__name__, tuple(labels))
    return wrap


CANONICALIZATION_PATTERNS: dict[str, list[RewritePattern]] = {}


def add_canonicalization_patterns(op_name: str, *patterns: RewritePattern) -> None:
    """Register ``op_name``'s ``getCanonicalizationPatterns`` (in ``results.add`` order)."""
    CANONICALIZATION_PATTERNS.setdefault(op_name, []).extend(patterns)


class PatternApplicator:
    """MLIR ``PatternApplicator`` with the default cost model: per root op, patterns by
    decreasing benefit (stable); op-specific and any-op patterns are interleaved by benefit,
    op-specific first on ties."""

    def __init__(self, patterns: Iterable[RewritePattern]):
        self.by_op: dict[str, list[RewritePattern]] = {}
        self.any_op: list[RewritePattern] = []
        for p in patterns:
            (self.any_op if p.root is None else self.by_op.setdefault(p.root, [])).append(p)
        for lst in (self.any_op, *self.by_op.values()):
            lst.sort(key=lambda p: -p.benefit)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        op_patterns = self.by_op.get(op.name, ())
        if not op_patterns:  # most ops: only the any-op patterns, in their order
            for pattern in self.any_op:
                rewriter.set_insertion_point(op)
                if pattern(op, rewriter):
                    return True
            return False
        i = j = 0
        while i < len(op_patterns) or j < len(self.any_op):
            if i < len(op_patterns) and (j >= len(self.any_op)
                                         or op_patterns[i].benefit >= self.any_op[j].benefit):
                pattern, i = op_patterns[i], i + 1
            else:
                pattern, j = self.any_op[j], j + 1
            rewriter.set_insertion_point(op)
            if pattern(op, rewriter):
                return True
        return False


def filter_patterns(patterns: Iterable[RewritePattern], disabled: Iterable[str] = (),
                    enabled: Iterable[str] = ()) -> list[RewritePattern]:
    """``FrozenRewritePatternSet(patterns, disabledPatterns, enabledPatterns)``: a pattern
    is kept when ``enabled`` is empty or names it (by name or label), unless ``disabled``
    does."""
    disabled, enabled = set(disabled), set(enabled)

    def names(p: RewritePattern) -> set[str]:
        return {p.name, *p.labels}
    return [p for p in patterns
            if (not enabled or names(p) & enabled) and not names(p) & disabled]


class Listener:
    """``RewriterBase::Listener``: every hook is a no-op unless overridden."""

    def notify_operation_inserted(self, op: Operation, previous) -> None:
        pass

    def notify_operation_modified(self, op: Operation) -> None:
        pass

    def notify_operation_replaced(self, op: Operation, values: Sequence[Value]) -> None:
        pass

    def notify_operation_erased(self, op: Operation) -> None:
        pass

    def notify_block_inserted(self, block: Block) -> None:
        pass

    def notify_block_erased(self, block: Block) -> None:
        pass

    def notify_match_failure(self, op: Operation, reason: str) -> None:
        pass


class PatternRewriter:
    """MLIR ``PatternRewriter``/``RewriterBase``: builds and mutates IR at an insertion point,
    notifying ``listener``. Without a listener it is MLIR's ``IRRewriter``."""

    def __init__(self, listener: Listener | None = None,
                 diagnostics: list[Diagnostic] | None = None):
        self.listener = listener
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.block: Block | None = None
        self.before: Operation | None = None  # insert before this op; None: at block end

    # -- insertion point ---------------------------------------------------------------
    def set_insertion_point(self, op: Operation) -> None:
        self.block, self.before = op.parent, op

    def set_insertion_point_after(self, op: Operation) -> None:
        self.block, self.before = op.parent, op.next_op

    def set_insertion_point_to_start(self, block: Block) -> None:
        self.block, self.before = block, block.first_op

    def set_insertion_point_to_end(self, block: Block) -> None:
        self.block, self.before = block, None

    def set_insertion_point_after_value(self, value: Value) -> None:
        """After the op defining ``value``, or at the start of its block (an argument)."""
        if isinstance(value, OpResult):
            self.set_insertion_point_after(value.op)
        else:
            self.set_insertion_point_to_start(value.block)

    @contextmanager
    def insertion_guard(self):
        saved = self.block, self.before
        try:
            yield
        finally:
            self.block, self.before = saved

    # -- building ----------------------------------------------------------------------
    def insert(self, op: Operation) -> Operation:
        if self.block is not None:
            if self.before is None:
                self.block.append(op)
            else:
                self.block.insert_before(self.before, op)
        if self.listener is not None:
            self.listener.notify_operation_inserted(op, None)
        return op

    def create(self, name: str, operands: Iterable[Value] = (), result_types: Iterable = (),
               attributes: dict | None = None, regions: Iterable[Region] = (),
               location: Location = UNKNOWN_LOC) -> Operation:
        return self.insert(Operation(name, operands, result_types, attributes, regions,
                                     location=location))

    def clone(self, op: Operation, mapping: dict | None = None) -> Operation:
        """``OpBuilder::clone``: insert a deep copy; nested ops are notified pre-order."""
        new = self.insert(op.clone(mapping))
        if self.listener is not None:
            for region in new.regions:
                for block in region.blocks:
                    self.listener.notify_block_inserted(block)
            for region in new.regions:
                for nested in region.walk():
                    self.listener.notify_operation_inserted(nested, None)
                    for r in nested.regions:
                        for block in r.blocks:
                            self.listener.notify_block_inserted(block)
        return new

    # -- replacing and erasing ------------------------------------------------------------
    def start_op_modification(self, op: Operation) -> None:
        pass

    def finalize_op_modification(self, op: Operation) -> None:
        if self.listener is not None:
            self.listener.notify_operation_modified(op)

    def modify_op_in_place(self, op: Operation, fn: Callable[[], None]) -> None:
        self.start_op_modification(op)
        fn()
        self.finalize_op_modification(op)

    def replace_all_uses_with(self, old: Value | Sequence[Value],
                              new: Value | Sequence[Value]) -> None:
        """Each use is redirected inside ``modify_op_in_place`` of its owner."""
        if isinstance(old, Value):
            old, new = [old], [new]
        for frm, to in zip(old, new, strict=True):
            for use in frm.uses:
                self.modify_op_in_place(use.owner, lambda u=use, v=to: u.set(v))

    def replace_uses_with_if(self, old: Value, new: Value, predicate) -> None:
        for use in old.uses:
            if predicate(use):
                self.modify_op_in_place(use.owner, lambda u=use: u.set(new))

    def replace_all_op_uses_with(self, op: Operation, values: Sequence[Value]) -> None:
        if self.listener is not None:
            self.listener.notify_operation_replaced(op, values)
        self.replace_all_uses_with(list(op.results), list(values))

    def replace_op(self, op: Operation, values: Sequence[Value] | Operation) -> None:
        """Redirect the uses of ``op``'s results to ``values`` (or another op's results),
        then erase ``op``."""
        if isinstance(values, Operation):
            values = values.results
        values = list(values)
        assert len(values) == len(op.results), "incorrect # of replacement values"
        self.replace_all_op_uses_with(op, values)
        self.erase_op(op)

    def replace_op_with_new_op(self, op: Operation, name: str, operands: Iterable[Value] = (),
                               result_types: Iterable = (), attributes: dict | None = None,
                               location: Location | None = None) -> Operation:
        new = self.create(name, operands, result_types, attributes,
                          location=op.location if location is None else location)
        self.replace_op(op, new)
        return new

    def erase_op(self, op: Operation) -> None:
        """Erase ``op`` (results unused): nested ops first, users before definitions, each
        notified as it goes (``RewriterBase::eraseOp``)."""
        assert not any(r.has_uses for r in op.results), f"erasing '{op.name}' with uses"
        if self.before is op:
            self.before = op.next_op
        if self.listener is None:
            op.erase()
            return
        self._erase_tree(op)

    def _erase_tree(self, op: Operation) -> None:
        for region in reversed(op.regions):
            blocks = list(reversed(region.blocks))
            for block in blocks:
                for nested in reversed(block):
                    self._erase_tree(nested)
            for block in blocks:
                self.erase_block(block)
        self.listener.notify_operation_erased(op)
        _drop_all_uses(op.results)
        op.erase()

    def erase_block(self, block: Block) -> None:
        for op in reversed(block):
            self.erase_op(op)
        if self.listener is not None:
            self.listener.notify_block_erased(block)
        _drop_all_uses(block.args)
        if block.parent is not None:
            block.parent.remove_block(block)

    # -- moving ----------------------------------------------------------------------------
    def move_op_before(self, op: Operation, anchor: Operation) -> None:
        previous = (op.parent, op.next_op)
        op.move_before(anchor)
        if self.listener is not None:
            self.listener.notify_operation_inserted(op, previous)

    def move_op_after(self, op: Operation, anchor: Operation) -> None:
        previous = (op.parent, op.next_op)
        op.move_after(anchor)
        if self.listener is not None:
            self.listener.notify_operation_inserted(op, previous)

    def inline_block_before(self, source: Block, dest: Block, before: Operation | None,
                            arg_values: Sequence[Value] = ()) -> None:
        """Move ``source``'s ops before ``before`` (None: end of ``dest``), its arguments
        replaced by ``arg_values``; ``source`` is erased (``inlineBlockBefore``)."""
        for arg, value in zip(source.args, arg_values, strict=True):
            self.replace_all_uses_with(arg, value)
        while source.first_op is not None:
            op = source.first_op
            if before is None:
                previous = (op.parent, op.next_op)
                dest.append(op)
                if self.listener is not None:
                    self.listener.notify_operation_inserted(op, previous)
            else:
                self.move_op_before(op, before)
        self.erase_block(source)

    # -- diagnostics ---------------------------------------------------------------------------
    def notify_match_failure(self, op: Operation, reason: str = "") -> bool:
        """Record why a pattern did not apply (a debugging aid); returns False."""
        if self.listener is not None:
            self.listener.notify_match_failure(op, reason)
        return False

    def emit_op_error(self, op: Operation, message: str) -> None:
        """``op->emitOpError(message)`` from inside a pattern: reported, not fatal."""
        self.diagnostics.append(Diagnostic("error", op.location, f"'{op.name}' op {message}"))


def _drop_all_uses(values: Iterable[Value]) -> None:
    for value in values:
        for use in value.uses:
            use.drop()


__all__ = [
    "CANONICALIZATION_PATTERNS", "Listener", "PatternApplicator",
    "PatternRewriter", "RewritePattern", "add_canonicalization_patterns", "filter_patterns",
    "rewrite_pattern",
]
