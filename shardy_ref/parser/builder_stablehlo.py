"""Transformer callbacks for stablehlo.lark: StableHLO ops in their pretty forms.

Each op stores its inherent attributes under their ODS names (``permutation``,
``dot_dimension_numbers``, ...), so an op read from its pretty form equals the same op
read from the generic form. Ops sharing the common shape are read against their
:class:`~shardy_ref.parser.stablehlo_formats.Format`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from lark import Token

from shardy_ref._lazy import lazy_module
from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.ir.location import FileLineColLoc, Location
from shardy_ref.ir.operation import Block, Operation, Region
from shardy_ref.ir.types import I1, I32, I64, ComplexType, FunctionType, TupleType
from shardy_ref.parser import literals as lit
from shardy_ref.parser.stablehlo_formats import FORMATS, Clause, Word

sa = lazy_module("shardy_ref.ir.stablehlo_attrs")
sap = lazy_module("shardy_ref.parser.stablehlo_attr_parser")


def _i64_array(values) -> ba.DenseArrayAttr:
    return ba.DenseArrayAttr(I64, tuple(values))


class ShloList(list):
    """A bracketed list from op syntax (``[1, 0]``, ``[DEFAULT, HIGH]``)."""


class StablehloBuilder:
    """Mixin of :class:`shardy_ref.parser.builder.CoreBuilder` callbacks for StableHLO."""

    def _attrs(self, attr_dict) -> dict:
        return dict(attr_dict.value) if attr_dict is not None else {}

    # -- the common shape ----------------------------------------------------------------
    def shlo_op(self, items):
        tok, shlo_items, attrs, types = items
        name = str(tok)
        fmt = FORMATS.get(name)
        if fmt is None:
            from shardy_ref.parser.errors import _unknown_op
            raise self.error(tok, _unknown_op(name, self.text, tok.start_pos))
        queue = list(shlo_items or [])
        inherent: dict = {}
        for element in fmt.before:
            self._read_element(tok, element, queue, inherent)
        operands = []
        if fmt.operands is not None:
            want = None if fmt.operands == "*" else fmt.operands
            while queue and isinstance(queue[0], Token) and queue[0].type == "VALUE" and \
                    (want is None or len(operands) < want):
                operands.append(queue.pop(0))
            if want is not None and len(operands) != want:
                raise self.error(tok, f"expected {want} operands, got {len(operands)}")
        for element in fmt.after:
            self._read_element(tok, element, queue, inherent)
        if queue:
            raise self.error(_token_of(queue[0], tok), f"unexpected '{_text(queue[0])}' in "
                             f"'{name}'")
        operand_types, result_types = self._signature(tok, fmt.sig, types, len(operands))
        if fmt.sig == "return" and operands:
            self.check_operand_types(name, operands, operand_types, operands[0].start_pos)
        attributes = self._attrs(attrs)
        for key, value in inherent.items():
            attributes.setdefault(key, value)  # the attr-dict wins, as in MLIR
        return self.make_op(tok, name, operands, operand_types, result_types, attributes)

    def _read_element(self, tok, element, queue: list, inherent: dict) -> None:
        head = queue[0] if queue else None
        if isinstance(element, Word):
            if isinstance(head, Token) and head.type in ("BARE_ID", "STRING"):
                queue.pop(0)
                inherent[element.attr] = self._enum(head, element.enum)
            elif not element.optional:
                raise self.error(_token_of(head, tok), f"expected {element.enum} keyword")
            return
        if isinstance(head, tuple) and str(head[0]) == element.key:
            queue.pop(0)
            try:
                self._store_clause(head[0], element, head[1], inherent)
            except _IntTooLarge as e:
                raise ParseError(e.location, f"custom op '{tok}' integer value too large") from None
        elif not element.optional:
            raise self.error(_token_of(head, tok), f"custom op '{tok}' expected '{element.key}'")

    def _store_clause(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        """Reads the value of a ``key = value`` clause into ``inherent``, as its kind says
        (``enum:<kind>`` clauses share one reader)."""
        reader = self._CLAUSE_READERS.get(clause.kind.partition(":")[0])
        if reader is None:  # pragma: no cover - the format table only uses the kinds below
            raise AssertionError(clause.kind)
        reader(self, key_tok, clause, value, inherent)

    def _clause_i64_array(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        inherent[clause.attr] = _i64_array(self._ints(key_tok, value))

    def _clause_i64(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        inherent[clause.attr] = ba.IntegerAttr(self._int(key_tok, value), I64)

    def _clause_bool(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        text = str(value)
        if text not in ("true", "false", "1", "0"):
            raise self.error(key_tok, f"expected 'true' or 'false' for '{clause.key}'")
        inherent[clause.attr] = ba.bool_attr(text in ("true", "1"))

    def _clause_string(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        if not (isinstance(value, Token) and value.type == "STRING"):
            raise self.error(key_tok, f"expected a string for '{clause.key}'")
        inherent[clause.attr] = ba.StringAttr(self.string(value))

    def _clause_enum(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        inherent[clause.attr] = self._enum(value, clause.kind[5:])

    def _clause_precision(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        names = [n for n in value] if isinstance(value, ShloList) else None
        if names is None:
            raise self.error(key_tok, "expected '['")
        inherent[clause.attr] = self._precision(key_tok, names)

    def _clause_algorithm(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        if not (isinstance(value, Token) and value.type == "OPAQUE_BODY"):
            raise self.error(key_tok, "expected '<'")
        inherent[clause.attr] = self._shlo_attr(value, "#stablehlo.dot_algorithm", str(value))

    def _clause_dot_dims(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        """``dot_batching``/``dot_contracting``: one half of the ``dot_dimension_numbers``
        attribute, merged with the other half if already read."""
        if not (isinstance(value, tuple) and value[0] == "pair"):
            raise self.error(key_tok, "expected 'x'")
        lhs, rhs = self._ints(key_tok, value[1]), self._ints(key_tok, value[2])
        dims = inherent.get(clause.attr, sa.DotDimensionNumbers())
        if clause.kind == "dot_batching":
            dims = dims.replace(lhs_batching_dimensions=tuple(lhs),
                                rhs_batching_dimensions=tuple(rhs))
        else:
            dims = dims.replace(lhs_contracting_dimensions=tuple(lhs),
                                rhs_contracting_dimensions=tuple(rhs))
        inherent[clause.attr] = dims

    def _clause_fp_format(self, key_tok, clause: Clause, value, inherent: dict) -> None:
        text = str(value)
        if not (text.startswith("e") and "m" in text):
            raise self.error(key_tok, f"expected a format like e5m10, got '{text}'")
        e, _, m = text[1:].partition("m")
        inherent["exponent_bits"] = ba.IntegerAttr(int(e), I32)
        inherent["mantissa_bits"] = ba.IntegerAttr(int(m), I32)

    _CLAUSE_READERS: ClassVar[dict[str, Callable]] = {
        "i64_array": _clause_i64_array,
        "i64": _clause_i64,
        "bool": _clause_bool,
        "string": _clause_string,
        "enum": _clause_enum,
        "precision": _clause_precision,
        "algorithm": _clause_algorithm,
        "dot_batching": _clause_dot_dims,
        "dot_contracting": _clause_dot_dims,
        "fp_format": _clause_fp_format,
    }

    def _ints(self, tok, value) -> list[int]:
        if not isinstance(value, ShloList):
            raise self.error(tok, "expected '['")
        return [self._int(tok, v) for v in value]

    def _int(self, tok, value) -> int:
        try:
            number = int(str(value))
        except ValueError:
            raise self.error(tok, f"expected integer value, got '{_text(value)}'") from None
        if not -(1 << 63) <= number < 1 << 63:  # MLIR parseInteger into an int64_t
            raise _IntTooLarge(self.loc(_token_of(value, tok)))
        return number

    def _signature(self, tok, sig: str, types, n_operands: int):
        """Operand and result types from the trailing type signature."""
        types = list(types or [])
        if len(types) == 1 and isinstance(types[0], FunctionType):
            return list(types[0].inputs), list(types[0].results)
        if sig == "return":
            return types, []
        if not types:
            raise self.error(tok, "expected ':'")
        if sig == "select" and len(types) == 2:
            return [types[0], types[1], types[1]], [types[1]]
        if len(types) != 1:
            raise self.error(tok, "expected a single type or a function type")
        t = types[0]
        if sig == "complex":
            real = t.replace(element_type=t.element_type.element_type) \
                if isinstance(getattr(t, "element_type", None), ComplexType) else t
            return [real] * n_operands, [t]
        if sig == "tuple":
            if not isinstance(t, TupleType):
                raise self.error(tok, "expected a tuple type")
            return list(t.types), [t]
        return [t] * n_operands, [t]

    def shlo_items(self, items):
        return items

    def shlo_word(self, items):
        return items[0]

    def shlo_clause(self, items):
        return (items[0], items[1])

    def shlo_list(self, items):
        return ShloList(x for x in items if x is not None)

    def shlo_dims_pair(self, items):
        return ("pair", items[0], items[1])

    # -- ops with their own syntax -------------------------------------------------------
    def shlo_constant_op(self, items):
        tok, attrs, dense, t = items
        attributes = self._attrs(attrs)
        attributes["value"] = self.dense_attr([dense, t])
        return self.make_op(tok, "stablehlo.constant", result_types=[t], attributes=attributes)

    def shlo_constant_generic(self, items):
        tok, props, attrs, ftype = items
        attributes = self._attrs(attrs)
        if props is not None:
            attributes.update(props.value)
        return self.make_op(tok, "stablehlo.constant", result_types=ftype.results,
                            attributes=attributes)

    def shlo_slice_op(self, items):
        tok, value, *ranges, attrs, types = items
        ranges = [r for r in ranges if r is not None]
        inherent = {"start_indices": _i64_array(r[0] for r in ranges),
                    "limit_indices": _i64_array(r[1] for r in ranges),
                    "strides": _i64_array(r[2] for r in ranges)}
        return self._with_signature(tok, [value], types, attrs, inherent)

    def slice_range(self, items):
        start, limit, stride = items
        return (int(start), int(limit), int(stride) if stride is not None else 1)

    def shlo_get_tuple_element_op(self, items):
        tok, value, index, attrs, types = items
        return self._with_signature(tok, [value], types, attrs,
                                    {"index": ba.IntegerAttr(
                                        self._fit_integer(index, int(index), I32), I32)})

    def _with_signature(self, tok, operands, types, attrs, inherent, sig="functional"):
        operand_types, result_types = self._signature(tok, sig, types, len(operands))
        attributes = self._attrs(attrs)
        for key, value in inherent.items():
            attributes.setdefault(key, value)
        return self.make_op(tok, str(tok), operands, operand_types, result_types, attributes)

    def shlo_custom_call_op(self, items):
        tok, target, operands, attrs, ftype = items
        attributes = {"call_target_name": ba.StringAttr(lit.symbol_name(target))}
        attributes.update(self._attrs(attrs))
        self.check_operand_types("stablehlo.custom_call", operands or [], ftype.inputs,
                                 tok.start_pos)
        return self.make_op(tok, "stablehlo.custom_call", operands or [], ftype.inputs,
                            ftype.results, attributes)

    def shlo_optimization_barrier_op(self, items):
        tok, attrs, operands, types = items
        types = list(types or [])
        if len(types) != len(operands):
            raise self.error(tok, f"expected {len(operands)} types, got {len(types)}")
        return self.make_op(tok, str(tok), operands, types, types, self._attrs(attrs))

    def shlo_optimization_barrier_empty(self, items):
        tok, attrs = items
        return self.make_op(tok, str(tok), attributes=self._attrs(attrs))

    def shlo_composite_op(self, items):
        tok, name, operands, regions, attrs, ftype = items
        attributes = {"name": ba.StringAttr(self.string(name))}
        attributes.update(self._attrs(attrs))
        return self.make_op(tok, "stablehlo.composite", operands or [], ftype.inputs,
                            ftype.results, attributes, regions or ())

    def shlo_convolution_op(self, items):
        tok, lhs, rhs, dims, window, attrs, types = items
        inherent = {"dimension_numbers": dims}
        try:
            inherent.update(sap.conv_window_from_dict(list(window.value)))
        except sap.AttrSyntaxError as e:
            raise self.error(tok, f"custom op 'stablehlo.convolution' {e.message}") from None
        return self._with_signature(tok, [lhs, rhs], types, attrs, inherent)

    def conv_dims(self, items):
        text, starts = "", []  # the dims as one string, and where each token is in it
        for part, sep in zip(items, ("x", "->", ""), strict=True):
            text += "["
            for i, t in enumerate(part):
                text += ", " * (i > 0)
                starts.append((len(text), t))
                text += str(t)
            text += "]" + sep
        try:
            return sap.parse_conv_dims(text)
        except sap.AttrSyntaxError as e:
            where = self._conv_dims_loc(text, starts, e.offset)
            raise ParseError(where, f"custom op 'stablehlo.convolution' {e.message}") from None

    def _conv_dims_loc(self, text: str, starts, offset: int):
        """The source location of ``offset`` into the rebuilt ``conv_dims`` text: a dim
        token, or as many punctuation characters after the last token before it."""
        before = [(start, t) for start, t in starts if start <= offset]
        if not before:
            return self.loc(starts[0][1]) if starts else None
        start, tok = before[-1]
        if start == offset:
            return self.loc(tok)
        skip = sum(not c.isspace() for c in text[start + len(str(tok)):offset])
        pos = tok.end_pos
        while pos < len(self.text) and (skip or self.text[pos].isspace()):
            skip -= not self.text[pos].isspace()
            pos += 1
        return self.loc_at(pos)

    def conv_dim_list(self, items):
        return [t for t in items if t is not None]

    def shlo_reduce_op(self, items):
        tok, *rest = items
        operands = []
        while rest and isinstance(rest[0], tuple):
            operands.append(rest.pop(0))
        applies, dims, attrs, types, loc, reducer = rest
        inputs = [o[0] for o in operands]
        inits = [o[1] for o in operands]
        operand_types, result_types = self._signature(tok, "functional", types, 2 * len(inputs))
        try:
            attributes = {"dimensions": _i64_array(self._ints(tok, dims))}
        except _IntTooLarge as e:
            raise ParseError(e.location, f"custom op '{tok}' integer value too large") from None
        attributes.update(self._attrs(attrs))
        if reducer is not None and applies is not None:
            raise self.error(applies, "expected either 'applies' or a reducer region")
        if reducer is None:
            if applies is None:
                raise self.error(tok, "expected 'reducer'")
            reducer = self._compact_reducer(applies, operand_types[:len(inputs)])
        op = self.make_op(tok, "stablehlo.reduce", inputs + inits, operand_types,
                          result_types, attributes, [reducer])
        if loc is not None:
            self.op_locs.append((op, loc))
        else:  # StableHLO's reduce parser locates the op at its "(" (seen with the oracle)
            at = self.loc_at(self.text.find("(", tok.end_pos))
            op.debug_location = FileLineColLoc(at.file, at.line, at.col)
        return op

    def reduce_applies(self, items):
        return items[0]

    def _compact_reducer(self, name_tok, input_types) -> Region:
        """The body `applies stablehlo.add` stands for: the op on scalar block arguments."""
        if not input_types:
            raise self.error(name_tok, "expected at least one input")
        scalar = input_types[0].replace(shape=(), encoding=None) \
            if hasattr(input_types[0], "shape") else input_types[0]
        n = len(input_types)
        block = Block([scalar] * (2 * n))
        results = []
        for i in range(n):
            op = Operation(str(name_tok), [block.args[i], block.args[n + i]], [scalar],
                           location=self.loc(name_tok))
            block.append(op)
            results.append(op.result)
        block.append(Operation("stablehlo.return", results, location=self.loc(name_tok)))
        return Region([block])

    def reduce_operand(self, items):
        return (items[0], items[1])

    def reducer(self, items):
        *pairs, region = items
        args = [p[0] for p in pairs] + [p[1] for p in pairs]
        return self.region_with_args(region, args)

    def reducer_args(self, items):
        return (items[0], items[1])

    def shlo_while_op(self, items):
        tok, *rest = items
        pairs = []
        while rest and isinstance(rest[0], tuple):
            pairs.append(rest.pop(0))
        if rest and rest[0] is None and not pairs:
            rest.pop(0)
        types, attrs, cond, body = rest
        types = list(types or [])
        if len(types) != len(pairs):
            raise self.error(tok, f"expected {len(pairs)} types, got {len(types)}")
        for region in (cond, body):
            self.region_with_args(region, [(name, t) for (name, _), t in zip(pairs, types)])
        return self.make_op(tok, "stablehlo.while", [v for _, v in pairs], types, types,
                            self._attrs(attrs), [cond, body])

    def while_arg(self, items):
        return (items[0], items[1])

    # -- attributes ----------------------------------------------------------------------
    def _enum(self, tok, kind: str):
        value = self.string(tok) if str(tok).startswith('"') else str(tok)
        if value not in sa.ENUMS[kind]:
            raise self.error(tok, f"expected {kind} to be one of: {', '.join(sa.ENUMS[kind])}")
        return sa.StablehloEnum(kind, value)

    def _precision(self, tok, names):
        for name in names:
            self._enum(name, "precision")
        return sap.precision_config_from_names([self.string(n) if str(n).startswith('"')
                                                else str(n) for n in names])

    def _shlo_attr(self, tok, name: str, body):
        try:
            return sap.parse_stablehlo_attr(name, body)
        except lit.LiteralError as e:
            raise self.error(tok, str(e)) from None
        except sap.AttrSyntaxError as e:
            line, col = _advance(tok.line, tok.column, (name + (body or ""))[:e.offset])
            raise ParseError(Location(self.filename, line + self.line_offset, col),
                             e.message) from None

    def dialect_attr_from_text(self, tok, name: str, body):
        if name == "#stablehlo" or name.startswith("#stablehlo."):
            text = lit.strip_comments(str(body)) if body is not None else None
            return self._shlo_attr(tok, name, text)
        return super().dialect_attr_from_text(tok, name, body)


class _IntTooLarge(Exception):
    """An integer of a custom op's clause does not fit an int64; the op's reader words the
    error (``custom op 'stablehlo.transpose' integer value too large``)."""

    def __init__(self, location):
        super().__init__(location)
        self.location = location


def _token_of(item, default):
    if isinstance(item, Token):
        return item
    if isinstance(item, tuple) and item and isinstance(item[0], Token):
        return item[0]
    return default


def _text(item) -> str:
    if isinstance(item, tuple):
        return str(item[0])
    return str(item)


def _advance(line: int, col: int, text: str) -> tuple[int, int]:
    """The position reached after ``text`` starting at (line, col)."""
    newlines = text.count("\n")
    if newlines:
        return line + newlines, len(text) - text.rfind("\n")
    return line, col + len(text)


__all__ = ["I1", "StablehloBuilder"]
