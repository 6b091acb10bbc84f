"""Traits of the func and stablehlo terminators, with MLIR's messages (upstream's tests
meet them whenever a region is malformed; the block checks themselves are MLIR core, in
:mod:`.core`):

* a terminator is not the last op of its block (the ``Terminator`` trait);
* ``func.return`` outside a ``func.func`` (``HasParent<FuncOp>``).
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier
from shardy_ref.ir.verify.ods import verify_is_terminator

# registered ops whose regions need no terminator (MLIR's ``NoTerminator`` trait)
_NO_TERMINATOR = frozenset({"builtin.module"})


def _verify_func_return_parent(op: Operation, ctx: VerifyContext) -> None:
    """``func.return``: ``HasParent<FuncOp>``."""
    parent = op.parent_op
    if parent is None or parent.name != "func.func":
        raise op_error(op, "expects parent op 'func.func'")


def _verify_symbol_parent(op: Operation, ctx: VerifyContext) -> None:
    """MLIR's ``SymbolOpInterface``: a symbol's parent op, if any, is a symbol table (of ours
    only ``builtin.module``; an unregistered op might be one). A module without a name is no
    symbol."""
    from shardy_ref.ir.opdefs import op_def

    parent = op.parent_op
    if parent is None or parent.name == "builtin.module" or op_def(parent.name) is None:
        return
    if op.name == "builtin.module" and "sym_name" not in op.attributes:
        return
    raise op_error(op, "symbol's parent must have the SymbolTable trait")


def _verify_terminator(op: Operation, ctx: VerifyContext) -> None:
    """MLIR's ``Terminator`` trait."""
    verify_is_terminator(op)


def _register() -> None:
    """After the op's own checks (this module is loaded last)."""
    op_verifier("func.return")(_verify_func_return_parent)
    op_verifier("func.func", "sdy.mesh", "builtin.module")(_verify_symbol_parent)
    op_verifier("func.return", "stablehlo.return")(_verify_terminator)


_register()
