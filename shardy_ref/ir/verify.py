"""The verifier hook run after parsing and after every pass (mlir-opt's ``verify``).

This holds MLIR's core structural rules; the sdy dialect's own rules (spec 003) plug in
here as they are implemented. Each failed rule raises a VerifyError at the op's location
with upstream's message.
"""
from __future__ import annotations

from shardy_ref.ir.diagnostics import Diagnostic, VerifyError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import FunctionType


def verify_module(module: Operation) -> None:
    _verify_unique_symbols(module)
    for op in module.walk():
        check = _OP_CHECKS.get(op.name)
        if check is not None:
            check(op)


def _verify_unique_symbols(op: Operation) -> None:
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
                    _verify_unique_symbols(child)


def _verify_func_return(op: Operation) -> None:
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
            raise VerifyError(op.location, f"'func.return' op type of return operand {i} ('{t}') "
                              f"doesn't match function result type ('{expected}') in function "
                              f"@{name}")


_OP_CHECKS = {"func.return": _verify_func_return}
