"""MLIR's greedy pattern rewrite driver (``applyPatternsGreedily``), step for step.

Upstream: ``mlir/lib/Transforms/Utils/GreedyPatternRewriteDriver.cpp`` (LLVM at Shardy's
pinned commit; Shardy's propagation runs it from
``shardy/dialect/sdy/transforms/propagation/basic_propagation.cc``). Which op a
pattern sees first decides results when patterns conflict (propagation, reshard CSE), so
the worklist is reproduced exactly, not approximated:

* Each iteration starts from an empty worklist filled by walking the region: pre-order and
  then reversed (``use_top_down_traversal``, the default), or post-order. With constant CSE
  a ConstantLike op already seen in its insertion region is replaced by the first one
  during the walk, and kept constants are hoisted to the front of that region's entry block.
* The worklist is a LIFO set: pushing an op already on it keeps its place; erased ops are
  removed. Pushing an op also pushes its ancestors up to the scope region (op first).
* A popped op is erased if trivially dead (``shardy_ref.ir.op_traits``), else folded (when
  a folder is registered), else offered to the patterns by decreasing benefit.
* Rewriter notifications re-queue work: an inserted or modified op is pushed; an erased op
  is removed and the defining ops of its operands that are left with at most one other
  user are pushed; a replaced op's users are pushed (as modified).
* When an iteration changed the IR (or region DCE erased something) and ``max_iterations``
  allows, the driver starts over.

Not modelled, as our IR has no branching control flow: unreachable-block erasure and the
skipping of ops in unreachable blocks; region simplification is dead-code elimination only.

Other passes use it like this (propagation: ``max_iterations=1``, no folding, no constant CSE,
no region simplification)::

    patterns = [my_pattern, ...]            # RewritePattern (shardy_ref.ir.pattern_match)
    config = GreedyRewriteConfig(max_iterations=1, fold=False, cse_constants=False,
                                 region_simplification="disabled")
    apply_patterns_greedily(module, patterns, config)
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from shardy_ref.ir.diagnostics import Diagnostic
from shardy_ref.ir.location import UNKNOWN_LOC
from shardy_ref.ir.op_traits import (
    constant_value,
    is_constant_like,
    is_op_trivially_dead,
    is_terminator,
    would_op_be_trivially_dead,
)
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.pattern_match import (
    Listener,
    PatternApplicator,
    PatternRewriter,
    RewritePattern,
)

NO_LIMIT = -1  # GreedyRewriteConfig::kNoLimit

# op name -> folder: None (no fold), [] (folded in place) or one Value/Attribute per result
FOLDERS: dict[str, Callable[[Operation], list | None]] = {}
# dialect -> materializeConstant(rewriter, attr, type, location) -> ConstantLike op or None
MATERIALIZERS: dict[str, Callable] = {}


def register_folder(op_name: str):
    def wrap(fn):
        FOLDERS[op_name] = fn
        return fn
    return wrap


@dataclass(frozen=True, slots=True)
class GreedyRewriteConfig:
    """MLIR ``GreedyRewriteConfig``; the defaults are MLIR's (and ``-canonicalize``'s)."""

    use_top_down_traversal: bool = True
    max_iterations: int = 10
    max_num_rewrites: int = NO_LIMIT
    fold: bool = True
    cse_constants: bool = True
    region_simplification: str = "normal"  # "disabled" | "normal" (dead-code elimination)
    strictness: str = "any"  # "any" | "existing_and_new" | "existing"
    scope: Region | None = None
    listener: Listener | None = None


@dataclass(frozen=True, slots=True)
class GreedyRewriteResult:
    converged: bool
    changed: bool
    all_erased: bool = False


class Worklist:
    """A LIFO list of ops with set semantics; removed ops leave a hole (MLIR ``Worklist``)."""

    def __init__(self):
        self.list: list[Operation | None] = []
        self.map: dict[Operation, int] = {}

    def clear(self) -> None:
        self.list.clear()
        self.map.clear()

    def empty(self) -> bool:
        return not self.map

    def push(self, op: Operation) -> None:
        if op not in self.map:
            self.map[op] = len(self.list)
            self.list.append(op)

    def pop(self) -> Operation:
        while self.list[-1] is None:
            self.list.pop()
        op = self.list.pop()
        del self.map[op]
        while self.list and self.list[-1] is None:
            self.list.pop()
        return op

    def remove(self, op: Operation) -> None:
        index = self.map.pop(op, None)
        if index is not None:
            self.list[index] = None

    def reverse(self) -> None:
        self.list.reverse()
        self.map = {op: i for i, op in enumerate(self.list) if op is not None}

    def __contains__(self, op: Operation) -> bool:
        return op in self.map

    def ops(self) -> list[Operation]:
        """The queued ops in pop order (for tests and debugging)."""
        return [op for op in reversed(self.list) if op is not None]


class GreedyPatternRewriteDriver(Listener):
    """Drives ``patterns`` over the IR; the rewriter it hands to patterns reports back here."""

    def __init__(self, patterns: Iterable[RewritePattern], config: GreedyRewriteConfig,
                 diagnostics: list[Diagnostic] | None = None):
        self.config = config
        self.applicator = PatternApplicator(patterns)
        self.rewriter = PatternRewriter(self, diagnostics)
        self.worklist = Worklist()
        self.strict_ops: set[Operation] = set()

    # -- worklist maintenance ------------------------------------------------------------
    def add_single_op_to_worklist(self, op: Operation) -> None:
        if self.config.strictness == "any" or op in self.strict_ops:
            self.worklist.push(op)

    def add_to_worklist(self, op: Operation) -> None:
        """Push ``op`` and its ancestors, provided the walk up reaches the scope region."""
        ancestors = []
        current: Operation | None = op
        while current is not None:
            ancestors.append(current)
            region = current.parent_region
            if region is self.config.scope:
                for a in ancestors:
                    self.add_single_op_to_worklist(a)
                return
            if region is None:
                return
            current = region.parent

    def add_operands_to_worklist(self, op: Operation) -> None:
        """Push the defining op of each operand left with at most one other user."""
        for operand in op.operands:
            definer = operand.defining_op
            if definer is None:
                continue
            if len([u for u in operand.users if u is not op]) > 1:
                continue
            self.add_to_worklist(definer)

    # -- listener hooks ------------------------------------------------------------------
    def notify_operation_inserted(self, op: Operation, previous) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_operation_inserted(op, previous)
        if self.config.strictness == "existing_and_new":
            self.strict_ops.add(op)
        self.add_to_worklist(op)

    def notify_operation_modified(self, op: Operation) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_operation_modified(op)
        self.add_to_worklist(op)

    def notify_operation_replaced(self, op: Operation, values: Sequence[Value]) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_operation_replaced(op, values)

    def notify_operation_erased(self, op: Operation) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_operation_erased(op)
        self.add_operands_to_worklist(op)
        self.worklist.remove(op)
        self.strict_ops.discard(op)

    def notify_block_inserted(self, block: Block) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_block_inserted(block)

    def notify_block_erased(self, block: Block) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_block_erased(block)

    def notify_match_failure(self, op: Operation, reason: str) -> None:
        if self.config.listener is not None:
            self.config.listener.notify_match_failure(op, reason)

    # -- processing ----------------------------------------------------------------------
    def process_worklist(self) -> bool:
        """Pop until empty (or ``max_num_rewrites``); True if the IR changed."""
        changed = False
        num_rewrites = 0
        limit = self.config.max_num_rewrites
        while not self.worklist.empty() and (limit == NO_LIMIT or num_rewrites < limit):
            op = self.worklist.pop()
            if is_op_trivially_dead(op):
                self.rewriter.erase_op(op)
                changed = True
                continue
            if self.config.fold and not is_constant_like(op) and self._try_fold(op):
                changed = True
                continue
            if self.applicator.match_and_rewrite(op, self.rewriter):
                changed = True
                num_rewrites += 1
        return changed

    def _try_fold(self, op: Operation) -> bool:
        """``op->fold``: in place (notify modified) or replace by values/constants."""
        folder = FOLDERS.get(op.name)
        results = folder(op) if folder is not None else None
        if results is None:
            return False
        if not results:
            self.notify_operation_modified(op)
            return True
        replacements: list[Value] = []
        with self.rewriter.insertion_guard():
            self.rewriter.set_insertion_point(op)
            for result, type_ in zip(results, op.result_types, strict=True):
                if isinstance(result, Value):
                    replacements.append(result)
                    continue
                materialize = MATERIALIZERS.get(op.dialect)
                constant = materialize(self.rewriter, result, type_, op.location) \
                    if materialize is not None else None
                if constant is None:
                    for v in replacements:
                        if v.defining_op is not None and not v.has_uses \
                                and is_constant_like(v.defining_op):
                            self.rewriter.erase_op(v.defining_op)
                    return False
                replacements.append(constant.results[0])
            self.rewriter.replace_op(op, replacements)
        return True


class RegionPatternRewriteDriver(GreedyPatternRewriteDriver):
    """Simplifies every op in one region (``RegionPatternRewriteDriver::simplify``)."""

    def __init__(self, patterns, config: GreedyRewriteConfig, region: Region,
                 diagnostics: list[Diagnostic] | None = None):
        super().__init__(patterns, config, diagnostics)
        self.region = region
        if config.strictness != "any":
            self.strict_ops.update(region.walk())

    def simplify(self) -> GreedyRewriteResult:
        config = self.config
        iteration = 0
        continue_rewrites = False
        while True:
            iteration += 1
            if config.max_iterations != NO_LIMIT and iteration > config.max_iterations:
                break
            self.worklist.clear()
            self._fill_worklist(_ConstantFolder(self.rewriter))
            continue_rewrites = self.process_worklist()
            if config.region_simplification != "disabled":
                continue_rewrites |= run_region_dce(self.rewriter, [self.region])
            if not continue_rewrites:
                break
        return GreedyRewriteResult(not continue_rewrites, iteration > 1)

    def _fill_worklist(self, folder: _ConstantFolder) -> None:
        cse = self.config.cse_constants

        def visit(op: Operation) -> bool:
            """Queue ``op`` unless constant CSE replaced it (then skip its regions)."""
            if cse and is_constant_like(op) and not folder.insert_known_constant(op):
                return False
            self.add_to_worklist(op)
            return True

        def visit_pre_order(op: Operation) -> bool:
            """``visit`` when the region is the scope, pushing ``op`` alone: walking down
            from the scope, its ancestors up to it are queued already (pushing them again
            would not move them)."""
            if cse and is_constant_like(op) and not folder.insert_known_constant(op):
                return False
            self.add_single_op_to_worklist(op)
            return True

        if self.config.use_top_down_traversal:
            _walk_pre_order(self.region,
                            visit_pre_order if self.config.scope is self.region else visit)
            self.worklist.reverse()
        else:
            _walk_post_order(self.region, visit)


def _walk_pre_order(region: Region, visit: Callable[[Operation], bool]) -> None:
    """``region.walk<PreOrder>`` with skip; block iteration survives erasing the visited op."""
    for block in list(region.blocks):
        for op in block:
            if visit(op):
                for nested in op.regions:
                    _walk_pre_order(nested, visit)


def _walk_post_order(region: Region, visit: Callable[[Operation], bool]) -> None:
    for block in list(region.blocks):
        for op in block:
            for nested in op.regions:
                _walk_post_order(nested, visit)
            visit(op)


class _ConstantFolder:
    """The constant-uniquing half of MLIR's ``OperationFolder`` (fresh each iteration): one
    ConstantLike op per (dialect, value, type) and insertion region, kept at the front of
    that region's entry block."""

    def __init__(self, rewriter: PatternRewriter):
        self.rewriter = rewriter
        self.scopes: dict[Region, dict[tuple, Operation]] = {}
        self.owned: set[Operation] = set()

    def insert_known_constant(self, op: Operation) -> bool:
        """False when ``op`` was replaced by (and erased in favour of) an existing constant."""
        block = op.parent
        region = _insertion_region(block)
        key = (op.dialect, str(constant_value(op)), str(op.result_types[0]))
        uniqued = self.scopes.setdefault(region, {})
        existing = uniqued.get(key)
        if existing is not None:
            self.rewriter.replace_op(op, existing.results)
            return False
        insert_block = region.blocks[0]
        if block is not insert_block or (insert_block.first_op is not op
                                         and op.prev_op not in self.owned):
            op.move_before(insert_block.first_op)
            op.location = UNKNOWN_LOC
        uniqued[key] = op
        self.owned.add(op)
        return True


def _insertion_region(block: Block) -> Region:
    """The region constants of ``block`` are uniqued in: the nearest one whose parent op is
    isolated from above (an unregistered parent might be)."""
    region = block.parent
    while region.parent is not None:
        parent = region.parent
        d = op_def(parent.name)
        if d is None or d.isolated_from_above or parent.parent_region is None:
            break
        region = parent.parent_region
    return region


# -- region simplification: dead code elimination (mlir/lib/Transforms/Utils/RegionUtils.cpp) --

def run_region_dce(rewriter: PatternRewriter, regions: Sequence[Region]) -> bool:
    """``runRegionDCE``: erase every op not proven live (not trivially dead, or feeding a
    live op; terminators are live). True if anything was erased."""
    live: set[Operation] = set()
    changed = True
    while changed:
        before = len(live)
        for region in regions:
            _propagate_region(region, live)
        changed = len(live) != before
    return _delete_dead(rewriter, regions, live)


def _post_order_blocks(region: Region) -> list[Block]:
    """Blocks reachable from the entry block, successors before predecessors."""
    out: list[Block] = []
    seen: set[Block] = set()

    def visit(block: Block) -> None:
        seen.add(block)
        terminator = block.last_op
        for succ in terminator.successors if terminator is not None else ():
            if succ not in seen and succ.parent is region:
                visit(succ)
        out.append(block)
    if region.blocks:
        visit(region.blocks[0])
    return out


def _propagate_region(region: Region, live: set[Operation]) -> None:
    for block in _post_order_blocks(region):
        for op in reversed(block):
            _propagate_op(op, live)


def _propagate_op(op: Operation, live: set[Operation]) -> None:
    for region in op.regions:
        _propagate_region(region, live)
    if is_terminator(op) or op in live:
        live.add(op)
        return
    if not would_op_be_trivially_dead(op) or any(
            use.owner in live for r in op.results for use in r.uses):
        live.add(op)


def _delete_dead(rewriter: PatternRewriter, regions: Sequence[Region], live) -> bool:
    erased = False
    for region in regions:
        for block in _post_order_blocks(region):
            for op in reversed(block):
                if op not in live:
                    erased = True
                    for r in op.results:
                        for use in r.uses:
                            use.drop()
                    rewriter.erase_op(op)
                else:
                    erased |= _delete_dead(rewriter, op.regions, live)
    return erased


# -- entry points ---------------------------------------------------------------------------

def apply_patterns_greedily(target: Operation | Region, patterns: Iterable[RewritePattern],
                            config: GreedyRewriteConfig = GreedyRewriteConfig(),
                            diagnostics: list[Diagnostic] | None = None) -> GreedyRewriteResult:
    """Rewrite the ops nested in ``target`` (an op's regions, each in turn, or one region)
    until no pattern applies (``applyPatternsGreedily``). The target itself is not
    rewritten."""
    patterns = list(patterns)
    regions = target.regions if isinstance(target, Operation) else [target]
    converged, changed = True, False
    for region in regions:
        cfg = config if config.scope is not None else _with_scope(config, region)
        result = RegionPatternRewriteDriver(patterns, cfg, region, diagnostics).simplify()
        converged &= result.converged
        changed |= result.changed
    return GreedyRewriteResult(converged, changed)


def apply_op_patterns_greedily(ops: Sequence[Operation], patterns: Iterable[RewritePattern],
                               config: GreedyRewriteConfig = GreedyRewriteConfig(),
                               diagnostics: list[Diagnostic] | None = None
                               ) -> GreedyRewriteResult:
    """Rewrite ``ops`` (and, per ``config.strictness``, ops they lead to) with one worklist
    pass and no initial walk (``applyOpPatternsGreedily``)."""
    if not ops:
        return GreedyRewriteResult(True, False, True)
    if config.scope is None:
        config = _with_scope(config, _common_ancestor_region(ops))
    driver = _MultiOpDriver(patterns, config, diagnostics, ops)
    for op in ops:
        driver.add_single_op_to_worklist(op)
    changed = driver.process_worklist()
    return GreedyRewriteResult(driver.worklist.empty(), changed, not driver.surviving)


class _MultiOpDriver(GreedyPatternRewriteDriver):
    """``MultiOpPatternRewriteDriver``: also tracks which of the given ops survive."""

    def __init__(self, patterns, config, diagnostics, ops: Sequence[Operation]):
        super().__init__(patterns, config, diagnostics)
        if config.strictness != "any":
            self.strict_ops.update(ops)
        self.surviving = set(ops)

    def notify_operation_erased(self, op: Operation) -> None:
        super().notify_operation_erased(op)
        self.surviving.discard(op)


def _with_scope(config: GreedyRewriteConfig, scope: Region | None) -> GreedyRewriteConfig:
    return replace(config, scope=scope)


def _common_ancestor_region(ops: Sequence[Operation]) -> Region | None:
    """The innermost region containing every op (None when one op is top-level)."""
    region = ops[0].parent_region
    while region is not None:
        if all(_region_contains(region, op) for op in ops[1:]):
            return region
        parent = region.parent
        region = parent.parent_region if parent is not None else None
    return None


def _region_contains(region: Region, op: Operation) -> bool:
    while op is not None:
        if op.parent_region is region:
            return True
        op = op.parent_op
    return False
