"""Pretty forms of ``builtin.module``, the func dialect (``func.func``, ``func.call``,
``func.return``) and ``arith.constant``, as MLIR's ``FunctionImplementation`` and ODS
formats print them."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import (
    DictionaryAttr,
    StringAttr,
    SymbolRefAttr,
    format_symbol_name,
)
from shardy_ref.ir.types import FunctionType
from shardy_ref.parser.printer import Printer, op_printer


@op_printer("builtin.module")
def print_module_op(p: Printer, op) -> None:
    sym = op.attributes.get("sym_name")
    if isinstance(sym, StringAttr):
        p.write(" " + format_symbol_name(sym.value))
    rest = p.attr_dict(op.attributes, ("sym_name", "sym_visibility"))
    if rest:
        p.write(" attributes" + rest)
    p.write(" ")
    p.print_region(op.regions[0])


@op_printer("func.func")
def print_func(p: Printer, op) -> bool | None:
    ftype = op.attributes.get("function_type")
    sym = op.attributes.get("sym_name")
    if not (hasattr(ftype, "value") and isinstance(ftype.value, FunctionType)
            and isinstance(sym, StringAttr)):
        return False
    ftype = ftype.value
    p.write(" ")
    visibility = op.attributes.get("sym_visibility")
    if isinstance(visibility, StringAttr):
        p.write(visibility.value + " ")
    p.write(format_symbol_name(sym.value))
    body = op.regions[0]
    external = not body.blocks
    arg_attrs = _dicts(op.attributes.get("arg_attrs"), len(ftype.inputs))
    res_attrs = _dicts(op.attributes.get("res_attrs"), len(ftype.results))
    args = []
    for i, t in enumerate(ftype.inputs):
        attrs = p.attr_dict(arg_attrs[i]) if arg_attrs else ""
        if external:
            args.append(f"{t}{attrs}")
        else:
            arg = body.blocks[0].args[i]
            args.append(f"{p.value(arg)}: {t}{attrs}{p.argument_location(arg)}")
    p.write("(" + ", ".join(args) + ")")
    if ftype.results:
        needs_parens = len(ftype.results) > 1 or isinstance(ftype.results[0], FunctionType) or \
            bool(res_attrs and res_attrs[0])
        results = ", ".join(f"{t}{p.attr_dict(res_attrs[i]) if res_attrs else ''}"
                            for i, t in enumerate(ftype.results))
        p.write(" -> " + (f"({results})" if needs_parens else results))
    rest = p.attr_dict(op.attributes, ("sym_name", "sym_visibility", "function_type",
                                       "arg_attrs", "res_attrs"))
    if rest:
        p.write(" attributes" + rest)
    if not external:
        p.write(" ")
        p.print_region(body)
    return None


def _dicts(attr, n: int) -> list[dict] | None:
    if attr is None:
        return None
    values = [dict(d.value) if isinstance(d, DictionaryAttr) else {} for d in attr]
    return values + [{}] * (n - len(values))


@op_printer("func.call")
def print_call(p: Printer, op) -> bool | None:
    callee = op.attributes.get("callee")
    if not isinstance(callee, SymbolRefAttr):
        return False
    p.write(f" {callee}({p.values(op.operands)})")
    p.write(p.attr_dict(op.attributes, ("callee",)))
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("func.return")
def print_return(p: Printer, op) -> None:
    p.write(p.attr_dict(op.attributes))
    if op.num_operands:
        p.write(f" {p.values(op.operands)} : {p.types(op.operand_types)}")


@op_printer("arith.constant")
def print_arith_constant(p: Printer, op) -> bool | None:
    """``attr-dict $value``: the value prints with its type."""
    value = op.attributes.get("value")
    if value is None or getattr(value, "type", None) != op.results[0].type:
        return False
    p.write(p.attr_dict(op.attributes, ("value",)))
    p.write(f" {value}")
    return None
