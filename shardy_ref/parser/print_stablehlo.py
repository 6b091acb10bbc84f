"""Pretty forms of StableHLO ops (``StablehloOps.td`` formats, ``AssemblyFormat.cpp``).

Ops of the common shape print from their :class:`Format`; the rest have printers below.
Inside the attr-dict an inherent attribute is dropped when the syntax already printed it
or when it equals its declared default (as MLIR's printer does).
"""
from __future__ import annotations

from functools import cache

from shardy_ref._lazy import lazy_module
from shardy_ref.ir.builtin_attrs import (
    ArrayAttr,
    DenseArrayAttr,
    IntegerAttr,
    StringAttr,
    format_symbol_name,
    quote_string,
)
from shardy_ref.ir.opdefs import ops_with_trait
from shardy_ref.ir.types import ComplexType
from shardy_ref.parser.printer import Printer, op_printer
from shardy_ref.parser.stablehlo_formats import FORMATS, Clause, Format, Word

sa = lazy_module("shardy_ref.ir.stablehlo_attrs")
sap = lazy_module("shardy_ref.parser.stablehlo_attr_parser")


@cache
def _default(text: str):
    return sap.parse_stablehlo_attr(*_split_attr_text(text))


def _split_attr_text(text: str) -> tuple[str, str]:
    i = text.index("<")
    return text[:i], text[i:]


def _defaults(fmt: Format) -> dict:
    return {k: _default(v) if isinstance(v, str) else v for k, v in fmt.defaults.items()}


# op name -> (its format, consumed attrs, parsed defaults, whether it has no word or clause)
_PREPARED: dict[str, tuple] = {}


def _prepared(name: str) -> tuple:
    """What :func:`print_common` needs of an op's format, computed once per format (the
    defaults are attribute texts to parse)."""
    fmt = FORMATS[name]
    known = _PREPARED.get(name)
    if known is None or known[0] is not fmt:
        known = _PREPARED[name] = (fmt, fmt.consumed(), _defaults(fmt),
                                   not (fmt.before or fmt.after))
    return known


@op_printer(*FORMATS)
def print_common(p: Printer, op):
    fmt, consumed, defaults, plain = _prepared(op.name)
    if plain and fmt.operands is not None:
        return print_plain(p, op)
    parts = _elements(op, fmt.before)
    if parts is False:
        return False
    if fmt.operands is not None:
        if fmt.operands != "*" and op.num_operands != fmt.operands:
            return False
        parts.append(p.values(op.operands))
    after = _elements(op, fmt.after)
    if after is False:
        return False
    parts += after
    if parts:
        p.write(" " + ", ".join(parts))
    p.write(p.op_attr_dict(op, consumed, defaults))
    sig = _signature(p, op, fmt.sig)
    if sig is False:
        return False
    p.write(sig)
    return None


@op_printer(*(name for name, f in FORMATS.items()
              if not (f.before or f.after) and f.operands is not None))
def print_plain(p: Printer, op):
    """:func:`print_common` for a format that is only operands, attr-dict and signature
    (elementwise ops: ``stablehlo.add %0, %1 : tensor<4xf32>``), without the element
    walk; the same text."""
    fmt, consumed, defaults, plain = _prepared(op.name)
    if not plain or fmt.operands is None:
        return print_common(p, op)
    operands = op.operands
    if fmt.operands != "*" and len(operands) != fmt.operands:
        return False
    attrs = p.op_attr_dict(op, consumed, defaults) if op.attributes else ""
    if fmt.sig == "same" or fmt.sig == "result":
        sig = _same_signature(p, op, operands)
    else:
        sig = _signature(p, op, fmt.sig)
    if sig is False:
        return False
    p.write(f" {p.values(operands)}{attrs}{sig}")
    return None


def _same_signature(p: Printer, op, operands) -> str:
    """``_signature`` for ``same``/``result``: `` : T`` when every operand has the one
    result's type (the types of a parsed module are mostly shared objects: ``is`` first)."""
    results = op.results
    if len(results) != 1:
        return " : " + p.functional_type(op)
    result = results[0].type
    for v in operands:
        t = v.type
        if t is not result and t != result:
            return " : " + p.functional_type(op)
    return f" : {result}"


def _elements(op, elements) -> list[str] | bool:
    """The texts of the words and clauses present, False if one cannot be written."""
    texts = []
    for element in elements:
        text = _element(op, element)
        if text is False:
            return False
        if text is not None:
            texts.append(text)
    return texts


def _element(op, element):
    """The text of one word or clause, None when an optional one is absent, False if the
    op's attributes cannot be written in this syntax."""
    if isinstance(element, Word):
        value = op.attributes.get(element.attr)
        if value is None:
            return None if element.optional else False
        return value.value if isinstance(value, sa.StablehloEnum) else False
    return _clause(op, element)


def _clause(op, clause: Clause):
    """``key = value`` as the clause's kind spells its attribute (``enum:<kind>`` clauses
    share one spelling); None and False as for :func:`_element`."""
    if clause.kind == "fp_format":
        return _fp_format_clause(op, clause)
    value = op.attributes.get(clause.attr)
    if value is None:
        return None if clause.optional else False
    spell = _clause_speller(clause.kind)
    if spell is None:  # pragma: no cover - the format table only uses the kinds below
        raise AssertionError(clause.kind)
    text = spell(clause, value)
    if text is None or text is False:
        return text
    return f"{clause.key} = {text}"


def _fp_format_clause(op, clause: Clause):
    """``format = e5m10`` from the ``exponent_bits`` and ``mantissa_bits`` attributes."""
    e, m = op.attributes.get("exponent_bits"), op.attributes.get("mantissa_bits")
    if not (isinstance(e, IntegerAttr) and isinstance(m, IntegerAttr)):
        return False
    return f"{clause.key} = e{e.value}m{m.value}"


def _bool_text(clause: Clause, value):
    if clause.default is not None and value == IntegerAttr(int(clause.default), value.type):
        return None
    return str(value)


def _i64_array_text(clause: Clause, value):
    return _list(value.value) if isinstance(value, DenseArrayAttr) else False


def _i64_text(clause: Clause, value):
    return str(value.value) if isinstance(value, IntegerAttr) else False


def _string_text(clause: Clause, value):
    return quote_string(value.value) if isinstance(value, StringAttr) else False


def _enum_text(clause: Clause, value):
    return value.value if isinstance(value, sa.StablehloEnum) else False


def _precision_text(clause: Clause, value):
    return sap.format_precision_list(value) if isinstance(value, ArrayAttr) else False


def _algorithm_text(clause: Clause, value):
    full = str(value)
    return full[full.index("<"):]


def _dot_batching_text(clause: Clause, value):
    """Omitted when there are no batching dimensions."""
    if not isinstance(value, sa.DotDimensionNumbers):
        return False
    if not (value.lhs_batching_dimensions or value.rhs_batching_dimensions):
        return None
    return f"{_list(value.lhs_batching_dimensions)} x {_list(value.rhs_batching_dimensions)}"


def _dot_contracting_text(clause: Clause, value):
    if not isinstance(value, sa.DotDimensionNumbers):
        return False
    return (f"{_list(value.lhs_contracting_dimensions)} x "
            f"{_list(value.rhs_contracting_dimensions)}")


# Clause kind -> the text of its attribute value, None to omit the clause, or False if the
# value cannot be written in this syntax.
_CLAUSE_TEXT = {
    "bool": _bool_text,
    "i64_array": _i64_array_text,
    "i64": _i64_text,
    "string": _string_text,
    "enum": _enum_text,
    "precision": _precision_text,
    "algorithm": _algorithm_text,
    "dot_batching": _dot_batching_text,
    "dot_contracting": _dot_contracting_text,
}


@cache
def _clause_speller(kind: str):
    """The :data:`_CLAUSE_TEXT` entry of a clause kind (``enum:<kind>`` is ``enum``)."""
    return _CLAUSE_TEXT.get(kind.partition(":")[0])


def _list(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _signature(p: Printer, op, sig: str):
    operand_types = op.operand_types
    result_types = op.result_types
    if sig == "return":
        return f" : {p.types(operand_types)}" if operand_types else ""
    if sig in ("same", "result"):
        if len(result_types) != 1:
            return " : " + p.functional_type(op)
        result = result_types[0]
        if all(t == result for t in operand_types):
            return f" : {result}"
        return " : " + p.functional_type(op)
    if sig == "select":
        if len(operand_types) == 3 and operand_types[1] == operand_types[2] == result_types[0]:
            return f" : {operand_types[0]}, {result_types[0]}"
        return " : " + p.functional_type(op)
    if sig == "complex":
        result = result_types[0]
        et = getattr(result, "element_type", None)
        if isinstance(et, ComplexType) and all(
                t == result.replace(element_type=et.element_type) for t in operand_types):
            return f" : {result}"
        return " : " + p.functional_type(op)
    if sig == "tuple":
        return f" : {result_types[0]}"
    return " : " + p.functional_type(op)


# -- ops with their own syntax -----------------------------------------------------------

@op_printer("stablehlo.slice")
def print_slice(p: Printer, op):
    a = op.attributes
    start, limit, strides = a.get("start_indices"), a.get("limit_indices"), a.get("strides")
    if not all(isinstance(x, DenseArrayAttr) for x in (start, limit, strides)):
        return False
    ranges = [f"{s}:{lim}" + (f":{st}" if st != 1 else "")
              for s, lim, st in zip(start.value, limit.value, strides.value)]
    p.write(f" {p.value(op.operand(0))} [{', '.join(ranges)}]")
    p.write(p.attr_dict(a, ("start_indices", "limit_indices", "strides")))
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("stablehlo.get_tuple_element")
def print_get_tuple_element(p: Printer, op):
    index = op.attributes.get("index")
    if not isinstance(index, IntegerAttr):
        return False
    p.write(f" {p.value(op.operand(0))}[{index.value}]{p.attr_dict(op.attributes, ('index',))}")
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("stablehlo.custom_call")
def print_custom_call(p: Printer, op):
    target = op.attributes.get("call_target_name")
    if not isinstance(target, StringAttr):
        return False
    from shardy_ref.ir.builtin_attrs import FALSE
    from shardy_ref.ir.types import I32
    defaults = {"has_side_effect": FALSE, "api_version": IntegerAttr(1, I32),
                "called_computations": ArrayAttr(()), "output_operand_aliases": ArrayAttr(())}
    p.write(f" {format_symbol_name(target.value)}({p.values(op.operands)})")
    p.write(p.op_attr_dict(op, ("call_target_name",), defaults))
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("stablehlo.optimization_barrier")
def print_optimization_barrier(p: Printer, op):
    p.write(p.attr_dict(op.attributes))
    if op.num_operands:
        p.write(f" {p.values(op.operands)} : {p.types(op.operand_types)}")
    else:
        p.write("()")
    return None


@op_printer("stablehlo.composite")
def print_composite(p: Printer, op):
    from shardy_ref.ir.builtin_attrs import DictionaryAttr
    from shardy_ref.ir.types import I32
    name = op.attributes.get("name")
    if not isinstance(name, StringAttr):
        return False
    p.write(f" {quote_string(name.value)} {p.values(op.operands)}")
    p.print_generic_regions(op.regions)
    defaults = {"version": IntegerAttr(0, I32), "composite_attributes": DictionaryAttr(())}
    p.write(p.op_attr_dict(op, ("name",), defaults))
    p.write(" : " + p.functional_type(op))
    return None


_WINDOW_ATTRS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal")


@op_printer("stablehlo.convolution")
def print_convolution(p: Printer, op):
    dims = op.attributes.get("dimension_numbers")
    if not isinstance(dims, sa.ConvDimensionNumbers) or op.num_operands != 2:
        return False
    window = {k: op.attributes[k] for k in _WINDOW_ATTRS if k in op.attributes}
    p.write(f"({p.values(op.operands)}) dim_numbers = {dims.pretty()}, "
            f"window = {sap.format_conv_window(window)}")
    p.write(p.attr_dict(op.attributes, ("dimension_numbers", *_WINDOW_ATTRS)))
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("stablehlo.while")
def print_while(p: Printer, op):
    if len(op.regions) != 2 or any(not r.blocks for r in op.regions):
        return False
    cond, body = op.regions
    args = cond.blocks[0].args
    if len(args) != op.num_operands:
        return False
    pairs = ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(args, op.operands))
    p.write(f"({pairs})")
    if op.num_operands:
        p.write(f" : {p.types(op.operand_types)}")
    rest = p.attr_dict(op.attributes)
    if rest:
        p.write(" attributes" + rest)
    p.write("\n" + " " * p.indent + "cond ")
    p.print_region(cond)
    p.write(" do ")
    p.print_region(body)
    return None


_COMMUTATIVE = frozenset(ops_with_trait("Commutative", "stablehlo"))


@op_printer("stablehlo.reduce")
def print_reduce(p: Printer, op):
    dims = op.attributes.get("dimensions")
    if not isinstance(dims, DenseArrayAttr) or len(op.regions) != 1 or not op.regions[0].blocks:
        return False
    n = op.num_operands // 2
    inputs, inits = op.operands[:n], op.operands[n:]
    p.write("(" + "), (".join(f"{p.value(a)} init: {p.value(b)}" for a, b in zip(inputs, inits))
            + ")")
    inner = _compact_reduce_op(op, n)
    if inner is not None:
        p.write(f" applies {inner}")
    p.write(f" across dimensions = {_list(dims.value)}")
    p.write(p.attr_dict(op.attributes, ("dimensions",)))
    p.write(" : " + p.functional_type(op))
    if inner is None:
        block = op.regions[0].blocks[0]
        args = block.args
        pairs = "".join(f"({p.argument(args[i])}, {p.argument(args[i + n])}) "
                        for i in range(n))
        p.write("\n" + " " * p.indent + " reducer" + pairs + " ")
        p.print_region(op.regions[0])
    return None


def _compact_reduce_op(op, n: int) -> str | None:
    """The inner op's name when the body is one commutative op (``applies stablehlo.add``)."""
    block = op.regions[0].blocks[0]
    ops = block.ops
    if n < 1 or len(ops) != 2 or len(block.args) != 2:
        return None
    inner, ret = ops
    if inner.name not in _COMMUTATIVE or inner.regions or inner.num_operands != 2 or \
            inner.num_results != 1:
        return None
    types = {*inner.operand_types, *inner.result_types}
    input_type = op.operand(0).type
    if len(types) != 1 or getattr(input_type, "element_type", None) is None:
        return None
    scalar = input_type.replace(shape=(), encoding=None)
    if inner.operand_types[0] != scalar:
        return None
    if list(inner.operands) != list(block.args):
        return None
    if ret.name.partition(".")[2] != "return" or list(ret.operands) != inner.results:
        return None
    return inner.name

