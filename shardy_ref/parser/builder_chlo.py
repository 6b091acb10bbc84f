"""Transformer callbacks for chlo.lark: CHLO ops in their pretty forms, and ``#chlo``
attributes. Ops store their inherent attributes under their ODS names, so the pretty and
generic forms of an op read alike (``chlo.scan`` adds its segment sizes as MLIR does)."""
from __future__ import annotations

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.ir.location import Location
from shardy_ref.ir.types import I32, I64


class ChloBuilder:
    """Mixin of :class:`shardy_ref.parser.builder.CoreBuilder` callbacks."""

    def _chlo_attrs(self, attr_dict) -> dict:
        return dict(attr_dict.value) if attr_dict is not None else {}

    def chlo_unary_op(self, items):
        tok, value, attrs, operand_type, result_type = items
        return self.make_op(tok, str(tok), [value], [operand_type], [result_type],
                            self._chlo_attrs(attrs))

    def chlo_binary_op(self, items):
        tok, lhs, rhs, attrs, lhs_type, rhs_type, result_type = items
        return self.make_op(tok, str(tok), [lhs, rhs], [lhs_type, rhs_type], [result_type],
                            self._chlo_attrs(attrs))

    def chlo_broadcast_op(self, items):
        tok, operands, attrs, ftype = items
        want = 3 if str(tok) == "chlo.broadcast_select" else 2
        if len(operands) != want:
            raise self.error(tok, f"expected {want} operands, got {len(operands)}")
        if len(ftype.inputs) != want or len(ftype.results) != 1:
            raise self.error(tok, f"expected a type signature with {want} operand types and "
                             "one result type")
        return self.make_op(tok, str(tok), operands, ftype.inputs, ftype.results,
                            self._chlo_attrs(attrs))

    def chlo_constant_op(self, items):
        tok, attrs, dense, t = items
        attributes = self._chlo_attrs(attrs)
        attributes["value"] = self.dense_attr([dense, t])
        return self.make_op(tok, "chlo.constant", result_types=[t], attributes=attributes)

    def chlo_top_k_op(self, items):
        tok, value, k, is_stable, attrs, operand_type, values_type, indices_type = items
        attributes = self._chlo_attrs(attrs)
        attributes["k"] = ba.IntegerAttr(self._fit_integer(k, int(k), I64), I64)
        if is_stable is not None:
            attributes["is_stable"] = is_stable
        return self.make_op(tok, "chlo.top_k", [value], [operand_type],
                            [values_type, indices_type], attributes)

    def chlo_scan_op(self, items):
        tok, inputs, inits, dimension, attrs, region, ftype = items
        inputs, inits = inputs or [], inits or []
        n_in, n_carry = len(inputs), len(inits)
        if len(ftype.inputs) != n_in + n_carry:
            raise self.error(tok, "operand types must match the number of inputs and inits")
        n_out = len(ftype.results) - n_carry
        if n_out < 0:
            raise self.error(tok, "not enough result types to cover the required carries")
        attributes = self._chlo_attrs(attrs)
        attributes["dimension"] = ba.IntegerAttr(self._fit_integer(dimension, int(dimension),
                                                                   I64), I64)
        attributes["operandSegmentSizes"] = ba.DenseArrayAttr(I32, (n_in, n_carry))
        attributes["resultSegmentSizes"] = ba.DenseArrayAttr(I32, (n_out, n_carry))
        return self.make_op(tok, "chlo.scan", inputs + inits, ftype.inputs, ftype.results,
                            attributes, [region])

    # -- attributes ----------------------------------------------------------------------
    def dialect_attr_from_text(self, tok, name: str, body):
        if name == "#chlo" or name.startswith("#chlo."):
            from shardy_ref.ir.chlo_attrs import ChloAttrSyntaxError, parse_chlo_attr

            try:
                return parse_chlo_attr(name, str(body) if body is not None else None)
            except ChloAttrSyntaxError as e:
                line, col = tok.line, tok.column + e.offset
                raise ParseError(Location(self.filename, line + self.line_offset, col),
                                 e.message) from None
        return super().dialect_attr_from_text(tok, name, body)
