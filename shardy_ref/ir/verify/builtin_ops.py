"""Traits of the func and stablehlo terminators, with MLIR's messages (upstream's tests
meet them whenever a region is malformed; the block checks themselves are MLIR core, in
:mod:`.core`):

* a terminator is not the last op of its block (the ``Terminator`` trait);
* ``func.return`` outside a ``func.func`` (``HasParent<FuncOp>``);
* a public function declaration (``SymbolOpInterface``), and a ``func.call`` whose callee
  is no function or whose types differ from it (``CallOp::verifySymbolUses``).
"""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.verify import VerifyContext, note, op_error, op_verifier, symbol_use_verifier
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


def _verify_declaration_visibility(op: Operation, ctx: VerifyContext) -> None:
    """MLIR's ``SymbolOpInterface`` verifier: a declaration (a function without a body) must
    not be public, the default visibility."""
    from shardy_ref.ir.builtin_attrs import StringAttr

    visibility = op.attributes.get("sym_visibility")
    public = not isinstance(visibility, StringAttr) or visibility.value == "public"
    if public and not any(region.blocks for region in op.regions):
        raise op_error(op, "symbol declaration cannot have public visibility")


def _verify_dialect_arg_attrs(op: Operation, ctx: VerifyContext) -> None:
    """``function_interface_impl::verifyTrait``: argument and result attributes are
    dialect attributes (their names have a ``dialect.`` prefix)."""
    from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr

    for key, what in (("arg_attrs", "arguments"), ("res_attrs", "results")):
        dicts = op.attributes.get(key)
        if not isinstance(dicts, ArrayAttr):
            continue
        for d in dicts.value:
            if isinstance(d, DictionaryAttr) and any("." not in name for name, _ in d.value):
                raise op_error(op, f"{what} may only have dialect attributes")


@symbol_use_verifier("func.call")
def _verify_call(op: Operation, ctx: VerifyContext) -> None:
    """``func::CallOp::verifySymbolUses``: the callee is a function of the nearest symbol
    table, whose argument and result types are the call's operand and result types."""
    from shardy_ref.ir.builtin_attrs import SymbolRefAttr

    callee = op.attributes.get("callee")
    if not isinstance(callee, SymbolRefAttr) or callee.nested:  # a FlatSymbolRefAttr
        raise op_error(op, "requires a 'callee' symbol reference attribute")
    func = _lookup_nearest(op, callee, ctx)
    if func is None or func.name != "func.func":
        raise op_error(op, f"'{callee.root}' does not reference a valid function")
    ftype = func.attributes["function_type"].value
    operand_types = [v.type for v in op.operands]
    if len(ftype.inputs) != len(operand_types):
        raise op_error(op, "incorrect number of operands for callee")
    for i, (expected, given) in enumerate(zip(ftype.inputs, operand_types)):
        if expected != given:
            raise op_error(op, f"operand type mismatch: expected operand type '{expected}', "
                               f"but provided '{given}' for operand number {i}")
    if len(ftype.results) != len(op.result_types):
        raise op_error(op, "incorrect number of results for callee")
    for i, (expected, given) in enumerate(zip(ftype.results, op.result_types)):
        if expected != given:
            raise op_error(op, f"result type mismatch at index {i}", [
                note(op.location, f"      op result types: {_types(op.result_types)}"),
                note(op.location, f"function result types: {_types(ftype.results)}")])


def _types(types) -> str:
    return "{" + ", ".join(str(t) for t in types) + "}"


def _lookup_nearest(op: Operation, ref, ctx: VerifyContext) -> Operation | None:
    """MLIR's ``lookupNearestSymbolFrom``: ``ref`` in the closest enclosing symbol table
    (a ``builtin.module``)."""
    table = op.parent_op
    while table is not None and table.name != "builtin.module":
        table = table.parent_op
    return None if table is None else ctx.table_of(table).lookup(ref.root)


def _verify_terminator(op: Operation, ctx: VerifyContext) -> None:
    """MLIR's ``Terminator`` trait."""
    verify_is_terminator(op)


def _register() -> None:
    """After the op's own checks (this module is loaded last)."""
    op_verifier("func.return")(_verify_func_return_parent)
    op_verifier("func.func", "sdy.mesh", "builtin.module")(_verify_symbol_parent)
    op_verifier("func.func")(_verify_declaration_visibility)
    op_verifier("func.func")(_verify_dialect_arg_attrs)
    op_verifier("func.return", "stablehlo.return")(_verify_terminator)


_register()
