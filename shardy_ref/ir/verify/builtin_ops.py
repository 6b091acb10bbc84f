"""MLIR's structural checks of blocks and terminators, with MLIR's messages.

These come from ``mlir/lib/IR/Verifier.cpp`` and from traits of the func and stablehlo
ops, not from Shardy; upstream's tests meet them whenever a region is malformed:

* a block that must end with a terminator does not (``block with no terminator, has
  <op>``), or is empty (``empty block: expect at least a terminator``);
* a terminator is not the last op of its block (the ``Terminator`` trait);
* ``func.return`` outside a ``func.func`` (``HasParent<FuncOp>``).

MLIR checks a block's terminator when it leaves the block, after verifying the ops in it,
and an op's region checks (``verifyRegionInvariants``) after its body. This verifier
checks both when it enters the op, which is cheaper; when such a check fails,
:func:`ops_verify` first verifies the body on the side, and the check stands back when
the body has an error of its own, which MLIR would report first.
"""
from __future__ import annotations

from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.opdefs import OPS, op_def
from shardy_ref.ir.operation import Block, Operation
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier
from shardy_ref.ir.verify.ods import verify_is_terminator

# registered ops whose regions need no terminator (MLIR's ``NoTerminator`` trait)
_NO_TERMINATOR = frozenset({"builtin.module"})


def ops_verify(ops, ctx: VerifyContext, isolated: bool = True) -> bool:
    """Whether ``ops`` and the ops nested in them verify (phase 1), without reporting
    anything; ``isolated=False`` leaves out the ops isolated from above among ``ops``,
    which MLIR verifies only after the block holding them."""
    from shardy_ref.ir.verify import _verify_tree

    errors: list[VerifyError] = []
    for op in ops:
        d = op_def(op.name)
        if isolated or d is None or not d.isolated_from_above:
            _verify_tree(op, ctx, errors)
            if errors:
                return False
    return True


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


def _verify_blocks(op: Operation, ctx: VerifyContext) -> None:
    """Each block of ``op`` that needs a terminator is not empty and ends with one."""
    for region in op.regions:
        for block in region.blocks:
            if _may_lack_terminator(block):
                continue
            last = block.last_op
            if last is None:
                raise VerifyError(op.location, "empty block: expect at least a terminator")
            d = op_def(last.name)
            if d is not None and not d.terminator:
                if not ops_verify(block.ops, ctx, isolated=False):
                    return
                raise VerifyError(last.location,
                                  f"block with no terminator, has {_generic_text(last)}")


def _verify_func_return_parent(op: Operation, ctx: VerifyContext) -> None:
    """``func.return``: ``HasParent<FuncOp>``."""
    parent = op.parent_op
    if parent is None or parent.name != "func.func":
        raise op_error(op, "expects parent op 'func.func'")


def _verify_terminator(op: Operation, ctx: VerifyContext) -> None:
    """MLIR's ``Terminator`` trait."""
    verify_is_terminator(op)


def _register() -> None:
    """Register the block checks for every registered op, after the op's own checks
    (this module is loaded last)."""
    op_def("builtin.module")  # loads the dialects' op definitions
    op_verifier("func.return")(_verify_func_return_parent)
    op_verifier("func.return", "stablehlo.return")(_verify_terminator)
    op_verifier(*sorted(OPS))(_verify_blocks)


_register()
