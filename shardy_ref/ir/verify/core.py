"""The verifier hook run after parsing and after every pass (mlir-opt's ``verify``).

This holds MLIR's core structural rules (unique symbols, SSA dominance, isolation from
above, ``func.return`` against its function); the sdy dialect's own rules (spec 003)
plug in here as they are implemented. Each failed rule raises a VerifyError at the op's
location with upstream's message.
"""
from __future__ import annotations

from shardy_ref.ir.diagnostics import Diagnostic, VerifyError
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, BlockArgument, Operation, OpResult
from shardy_ref.ir.types import FunctionType
from shardy_ref.ir.verify import op_verifier

# Regions whose values need not dominate their uses (MLIR graph regions).
_GRAPH_REGION_OPS = {"builtin.module"}


def verify_dominance(module: Operation) -> None:
    for op in module.walk():
        _verify_operands(op)


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


def _verify_operands(op: Operation) -> None:
    """Every operand must dominate its use (single-block regions: defined before it)."""
    for i, value in enumerate(op.operands):
        if isinstance(value, OpResult):
            if not _result_dominates(value.op, op):
                raise VerifyError(op.location, f"operand #{i} does not dominate this use",
                                  [Diagnostic("note", value.op.location,
                                              f"operand defined here ({_where(value.op, op)})")])
        elif isinstance(value, BlockArgument) and not _block_contains(value.block, op):
            raise VerifyError(op.location, f"operand #{i} does not dominate this use")


def _result_dominates(definer: Operation, user: Operation) -> bool:
    block = definer.parent
    ancestor = user
    while ancestor is not None and ancestor.parent is not block:
        ancestor = ancestor.parent_op
    if ancestor is None:
        return False
    if ancestor is definer:
        return False  # used inside the defining op's own regions
    region = block.parent if block is not None else None
    if region is not None and region.parent is not None and \
            region.parent.name in _GRAPH_REGION_OPS:
        return True
    return definer.is_before_in_block(ancestor)


def _where(definer: Operation, user: Operation) -> str:
    """How MLIR describes the definer's position relative to the user."""
    if definer.parent is user.parent:
        return "op in the same block"
    if _block_contains(definer.parent, user):
        return "op in a parent region"
    if user.is_ancestor_of(definer):
        return "op in a child region"
    return "op is neither in a parent nor in a child region"


def _block_contains(block, op: Operation) -> bool:
    while op is not None:
        if op.parent is block:
            return True
        op = op.parent_op
    return False


def verify_isolated(isolated: Operation) -> None:
    """Ops nested in an op isolated from above may only use values defined inside it."""
    for region in isolated.regions:
        for block in region.blocks:
            for nested in block:
                for inner in nested.walk():
                    for value in inner.operands:
                        owner = value.op if isinstance(value, OpResult) else None
                        inside = (isolated.is_ancestor_of(owner) and owner is not isolated
                                  if owner is not None
                                  else _block_contains(value.block, inner)
                                  and isolated.is_ancestor_of(value.block.parent_op))
                        if not inside:
                            raise VerifyError(
                                inner.location,
                                f"'{inner.name}' op using value defined outside the region",
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
    from shardy_ref.parser.printer import Printer

    root = op
    while root.parent_op is not None:
        d = op_def(root.name)
        if d is not None and d.isolated_from_above:
            break
        root = root.parent_op
    printer = Printer(root, generic=True)
    printer.print_op(op)
    return printer.text()
