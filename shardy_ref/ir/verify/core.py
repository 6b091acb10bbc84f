"""The verifier hook run after parsing and after every pass (mlir-opt's ``verify``).

This holds MLIR's core structural rules (unique symbols, SSA dominance, isolation from
above, ``func.return`` against its function); the sdy dialect's own rules
(https://openxla.org/shardy/sdy_dialect) plug in here as they are implemented. Each failed
rule raises a VerifyError at the op's location with upstream's message.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from shardy_ref.ir.asm_hooks import generic_op_text
from shardy_ref.ir.diagnostics import Diagnostic, VerifyError
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, BlockArgument, Operation, OpResult, Region
from shardy_ref.ir.types import FunctionType
from shardy_ref.ir.verify import op_verifier

# Regions whose values need not dominate their uses (MLIR graph regions).
_GRAPH_REGION_OPS = {"builtin.module"}


class TreePositions:
    """Pre-order entry and exit numbers of every op, region and block under a root, so that
    "is X nested in Y" is two comparisons: walking up the parents instead, as MLIR does,
    makes verification quadratic (or, with nested ops isolated from above, cubic) in the
    depth of the regions. Ops for which ``skip`` holds are numbered, not what they hold."""

    __slots__ = ("enter", "exit")

    def __init__(self, root: Operation, skip: Callable[[Operation], bool] | None = None):
        self.enter: dict[object, int] = {}
        self.exit: dict[object, int] = {}
        count = 0
        stack: list[tuple[object, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.exit[node] = count
                continue
            count += 1
            self.enter[node] = count
            stack.append((node, True))
            if skip is None or node is root or not isinstance(node, Operation) \
                    or not node.regions or not skip(node):
                stack.extend((child, False) for child in reversed(_children(node)))

    def inside(self, node, container) -> bool:
        """``node`` is strictly nested in ``container`` (both under the root)."""
        at = self.enter.get(node)
        start = self.enter.get(container)
        return at is not None and start is not None and start < at <= self.exit[container]


def _children(node) -> list:
    if isinstance(node, Operation):
        return node.regions
    if isinstance(node, Region):
        return node.blocks
    return list(node)


def preorder(root: Operation,
             skip: Callable[[Operation], bool] | None = None) -> Iterator[Operation]:
    """``root`` and every op nested in it, pre-order, without recursion (regions may nest
    deeper than Python's recursion limit); not looking into the nested ops for which
    ``skip`` holds."""
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        if skip is not None and op is not root and op.regions and skip(op):
            continue
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(list(block)))


def is_isolated(op: Operation) -> bool:
    """``op`` has MLIR's ``IsolatedFromAbove`` trait (unregistered ops do not)."""
    d = op_def(op.name)
    return d is not None and d.isolated_from_above


def verify_dominance(module: Operation, ctx) -> None:
    """Every operand of every op under ``module`` dominates its use (not looking into the
    ops ``ctx`` has verified since the last change: :meth:`VerifyContext.verified_now`).
    One walk of the blocks in order shows that all do; only when it finds one that may
    not are the ops checked one by one, for the first error in MLIR's order."""
    if not module.operands and _all_visible(module, [], ctx.verified_now, 0):
        return
    positions = ctx.positions
    for op in ctx.preorder(module):
        _verify_operands(op, positions)


_MAX_VISIBLE_DEPTH = 64  # deeper nests of regions: checked op by op, without recursion


def _all_visible(op: Operation, outer: list[set], skip, depth: int) -> bool:
    """Whether every operand of every op in ``op``'s regions is a value visible at its use
    (what :func:`_result_dominates` decides): an argument of an enclosing block, or a
    result of an op before the use's ancestor in an enclosing block (in a graph region,
    of any op of the block but the use's ancestor). Not looking into ops for which
    ``skip`` holds; False also when in doubt (a deep nest)."""
    if depth > _MAX_VISIBLE_DEPTH:
        return False
    graph = op.name in _GRAPH_REGION_OPS
    return all(_all_visible_in_block(block, outer, graph, skip, depth)
               for region in op.regions for block in region.blocks)


def _all_visible_in_block(block: Block, outer: list[set], graph: bool, skip,
                          depth: int) -> bool:
    defined = set(block.args)
    if graph:
        for child in block:
            defined.update(child.results)
    chain = [*outer, defined]
    for child in block:
        for value in child.operands:
            if not any(value in visible for visible in chain) or (
                    graph and isinstance(value, OpResult) and value.op is child):
                return False
        if child.regions and not skip(child):
            inner = chain
            if graph and child.results:  # its own results are not visible in it
                inner = [*outer, defined.difference(child.results)]
            if not _all_visible(child, inner, skip, depth + 1):
                return False
        if not graph:
            defined.update(child.results)
    return True


def verify_unique_symbols(op: Operation) -> None:
    from shardy_ref.ir.symbols import symbol_name

    for region in op.regions:
        seen: dict[str, Operation] = {}
        for block in region.blocks:
            for child in block:
                name = symbol_name(child)
                if name is None:
                    continue
                if name in seen:
                    raise VerifyError(child.location, f"redefinition of symbol named '{name}'",
                                      [Diagnostic("note", seen[name].location,
                                                  "see existing symbol definition here")])
                seen[name] = child
                if child.name == "builtin.module":
                    verify_unique_symbols(child)


def _verify_operands(op: Operation, positions: TreePositions) -> None:
    """Every operand must dominate its use (single-block regions: defined before it)."""
    for i, value in enumerate(op.operands):
        if isinstance(value, OpResult):
            if not _result_dominates(value.op, op, positions):
                raise VerifyError(op.location, f"operand #{i} does not dominate this use",
                                  [Diagnostic("note", value.op.location,
                                              f"operand defined here ({_where(value.op, op)})")])
        elif isinstance(value, BlockArgument) and not positions.inside(op, value.block):
            raise VerifyError(op.location, f"operand #{i} does not dominate this use")


def _result_dominates(definer: Operation, user: Operation, positions: TreePositions) -> bool:
    """``user`` is in the definer's block (or nested in an op of it), not in the definer
    itself, and after the definer unless the block is in a graph region."""
    block = definer.parent
    if block is None or not positions.inside(user, block) or definer is user \
            or positions.inside(user, definer):
        return False
    region = block.parent
    if region is not None and region.parent is not None and \
            region.parent.name in _GRAPH_REGION_OPS:
        return True
    return positions.enter[user] > positions.exit[definer]


def _where(definer: Operation, user: Operation) -> str:
    """How MLIR describes the definer's position relative to the user
    (``diagnoseInvalidOperandDominance``)."""
    if definer.parent is user.parent:
        return "op in the same block"
    use_region = user.parent.parent if user.parent is not None else None
    def_region = definer.parent.parent if definer.parent is not None else None
    if use_region is def_region:
        return "op in the same region"
    if _properly_encloses(def_region, use_region):
        return "op in a parent region"
    if _properly_encloses(use_region, def_region):
        return "op in a child region"
    return "op is neither in a parent nor in a child region"


def _properly_encloses(outer: Region | None, region: Region | None) -> bool:
    """MLIR ``Region::isProperAncestor``."""
    if outer is None:
        return False
    while region is not None:
        op = region.parent
        block = op.parent if op is not None else None
        region = block.parent if block is not None else None
        if region is outer:
            return True
    return False


def verify_isolated(isolated: Operation, ctx) -> None:
    """MLIR ``verifyIsIsolatedFromAbove``: the ops in each region of ``isolated`` (not
    looking into nested ops isolated from above, which are checked on their own) only use
    values defined in that region."""
    for region in isolated.regions:
        pending = [region]
        while pending:
            for block in pending.pop().blocks:
                for op in block:
                    for value in op.operands:
                        definer = value.op if isinstance(value, OpResult) else value.block
                        if not _within(definer, region, ctx.verified_now):
                            _check_isolated_operand(isolated, region, op, value,
                                                    ctx.positions)
                    if op.regions and not is_isolated(op):
                        pending.extend(op.regions)


def _within(node, region: Region, skip) -> bool:
    """Whether ``node`` (an op or a block) is nested in ``region``, as :class:`TreePositions`
    numbers them: not inside an op for which ``skip`` holds. False when in doubt: the
    region is more than a few levels up (walking up every time would be quadratic in
    the depth of the regions)."""
    node = node.parent
    for _ in range(_MAX_WALK_UP):
        if node is None:
            return False
        if node is region:
            return True
        if isinstance(node, Operation) and skip(node):
            return False
        node = node.parent
    return False


_MAX_WALK_UP = 8  # an op in a block in a region in an op ... (4 ops up)


def _check_isolated_operand(isolated: Operation, region: Region, op: Operation, value,
                            positions: TreePositions) -> None:
    definer = value.op if isinstance(value, OpResult) else value.block
    if definer.parent is None:
        raise VerifyError(op.location, "operation's operand is unlinked")
    if not positions.inside(definer, region):
        raise VerifyError(op.location, f"'{op.name}' op using value defined outside the region",
                          [Diagnostic("note", isolated.location,
                                      "required by region isolation constraints")])


@op_verifier("func.return")
def _verify_func_return(op: Operation, ctx) -> None:
    func = op.parent_op
    if func is None or func.name != "func.func":
        return
    ftype = func.attributes.get("function_type")
    results = ftype.value.results if isinstance(getattr(ftype, "value", None), FunctionType) else ()
    name = func.attributes["sym_name"].value
    if op.num_operands != len(results):
        raise VerifyError(op.location, f"'func.return' op has {op.num_operands} operands, but "
                          f"enclosing function (@{name}) returns {len(results)}")
    for i, (t, expected) in enumerate(zip(op.operand_types, results)):
        if t != expected:
            # MLIR's emitError here, not emitOpError: no "'func.return' op" prefix
            raise VerifyError(op.location, f"type of return operand {i} ('{t}') "
                              f"doesn't match function result type ('{expected}') in function "
                              f"@{name}")


# --- blocks (MLIR ``OperationVerifier::verifyOnEntrance/verifyOnExit(Block&)``) ------------

# registered ops whose regions need no terminator (MLIR's ``NoTerminator`` trait)
_NO_TERMINATOR = frozenset({"builtin.module"})


def verify_block_entry(block: Block) -> None:
    """On entering a block, before its ops: it is not empty unless it may lack a
    terminator."""
    if block.last_op is None and not _may_lack_terminator(block):
        raise VerifyError(block.parent.parent.location,
                          "empty block: expect at least a terminator")


def verify_block_exit(block: Block) -> None:
    """On leaving a block, after its ops: it ends with a terminator (or may lack one)."""
    last = block.last_op
    if last is None or _may_lack_terminator(block):
        return
    d = op_def(last.name)
    if d is not None and not d.terminator:
        raise VerifyError(last.location, f"block with no terminator, has {_generic_text(last)}")


def _may_lack_terminator(block: Block) -> bool:
    """MLIR ``mayBeValidWithoutTerminator``: the block is the only one of its region and
    the op holding it is unregistered or has ``NoTerminator``."""
    region = block.parent
    if region is None:
        return True
    if len(region.blocks) != 1:
        return False
    parent = region.parent
    return parent is None or op_def(parent.name) is None or parent.name in _NO_TERMINATOR


def _generic_text(op: Operation) -> str:
    """``op`` as MLIR streams it into an error: the generic form, with values numbered
    from the nearest op isolated from above (MLIR's local scope)."""
    root = op
    while root.parent_op is not None:
        d = op_def(root.name)
        if d is not None and d.isolated_from_above:
            break
        root = root.parent_op
    text = generic_op_text(root, op)
    return text if text is not None else f'"{op.name}"(...)'
