"""Transformer callbacks for check.lark: the ``check`` and ``interpreter`` ops of
StableHLO's interpreter tests, stored with their ODS attribute names so the pretty and
generic forms read alike."""
from __future__ import annotations

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.types import F64, IntegerType

UI64 = IntegerType(64, "unsigned")
UI32 = IntegerType(32, "unsigned")


class CheckBuilder:
    """Mixin of :class:`shardy_ref.parser.builder.CoreBuilder` callbacks."""

    def _check_attrs(self, attr_dict) -> dict:
        return dict(attr_dict.value) if attr_dict is not None else {}

    def check_number(self, items):
        return items[0]

    def _tolerance(self, attributes: dict, tok) -> None:
        if tok is not None:
            attributes.setdefault("tolerance", ba.FloatAttr(float(str(tok)), F64))

    def check_const_op(self, items):
        tok, value, attr, tolerance, attrs = items
        attributes = self._check_attrs(attrs)
        attributes["value"] = attr
        self._tolerance(attributes, tolerance)
        t = getattr(attr, "type", None)
        return self.make_op(tok, str(tok), [value], [t], [], attributes)

    def check_binary_op(self, items):
        tok, lhs, rhs, tolerance, attrs, t = items
        attributes = self._check_attrs(attrs)
        self._tolerance(attributes, tolerance)
        return self.make_op(tok, str(tok), [lhs, rhs], [t, t], [], attributes)

    def check_close_op(self, items):
        tok, actual, expected, max_ulp, min_ulp, attrs, t1, t2 = items
        attributes = self._check_attrs(attrs)
        attributes["max_ulp_difference"] = ba.IntegerAttr(int(max_ulp), UI64)
        if min_ulp is not None:
            attributes["min_ulp_difference"] = ba.IntegerAttr(int(min_ulp), UI64)
        return self.make_op(tok, str(tok), [actual, expected], [t1, t2], [], attributes)

    def check_serialized_op(self, items):
        tok, value, probe_id, iteration, attrs, t = items
        attributes = self._check_attrs(attrs)
        attributes["probe_id"] = ba.StringAttr(self.string(probe_id))
        if iteration is not None:
            attributes["iteration"] = ba.IntegerAttr(int(iteration), UI32)
        return self.make_op(tok, str(tok), [value], [t], [], attributes)

    def interp_print_op(self, items):
        tok, value, attrs, t = items
        return self.make_op(tok, str(tok), [value], [t], [], self._check_attrs(attrs))

    def interp_probe_op(self, items):
        tok, value, probe_id, attrs, t = items
        attributes = self._check_attrs(attrs)
        attributes["probe_id"] = ba.StringAttr(self.string(probe_id))
        return self.make_op(tok, str(tok), [value], [t], [t], attributes)
