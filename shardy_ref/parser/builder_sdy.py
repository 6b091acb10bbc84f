"""Transformer callbacks for sdy.lark: sdy attributes and ops
(https://openxla.org/shardy/sdy_dialect)."""
from __future__ import annotations

from typing import NamedTuple

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.diagnostics import Diagnostic, ParseError
from shardy_ref.ir.sdy_axes import AxisRefList, ListOfAxisRefLists, Mesh
from shardy_ref.ir.sdy_debug import PropagationDirection, ReductionOp
from shardy_ref.ir.sdy_sharding import (
    AllToAllParamList,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.ir.types import I64
from shardy_ref.parser import literals as lit


class RawSdy(NamedTuple):
    """Where an sdy attribute's text lies; ``qualified`` for the ``#sdy...`` form."""

    start: int
    end: int
    qualified: bool


# what a qualified attribute in an op slot must be (else "invalid kind of attribute")
_SLOT_TYPES = {"sharding": TensorSharding, "mesh": Mesh, "manual_axes": ManualAxes,
               "axis_ref_list": AxisRefList, "list_of_axis_ref_lists": ListOfAxisRefLists,
               "all_to_all_param_list": AllToAllParamList}


def slot_kind(op_name: str, bracket: str) -> str | None:
    """Which stripped attribute an sdy op's syntax holds where ``bracket`` opens one (each
    op has at most one slot per bracket kind), for parsing a slot the grammar could not
    delimit (see ``errors.py``)."""
    if not op_name.startswith("sdy."):
        return None
    if bracket == "<":
        return "mesh" if op_name == "sdy.mesh" else "sharding"
    if bracket == "[":
        if op_name in ("sdy.manual_computation", "sdy.named_computation"):
            return "sharding_list"
        return "all_to_all_param_list" if op_name == "sdy.all_to_all" else \
            "list_of_axis_ref_lists"
    if bracket == "{":
        return "manual_axes" if op_name == "sdy.manual_computation" else "axis_ref_list"
    return None


class SdyBuilder:
    """Mixin of :class:`shardy_ref.parser.builder.CoreBuilder` callbacks for the sdy dialect."""

    # -- attributes ----------------------------------------------------------------------
    def _raw_sdy(self, items):
        first = items[0]
        last = items[1] if len(items) > 1 and items[1] is not None else first
        return RawSdy(first.start_pos, last.end_pos, first.type == "HASH_ID")

    sdy_angle = sdy_square = sdy_curly = sdy_sharding_list = _raw_sdy

    def sdy_slot(self, raw: RawSdy, kind: str, op_name: str):
        """Parse the attribute in an op's syntax slot ``kind`` (a key of
        ``sdy_attr_parser.STRIPPED``); errors get the ``custom op '...'`` prefix as
        upstream's op parser adds it."""
        from shardy_ref.parser import sdy_attr_parser as sap

        key = (kind, raw.qualified, self.text[raw.start:raw.end])
        hit = self.attr_text_cache.get(key)
        if hit is not None:
            return hit
        try:
            if raw.qualified and kind != "sharding_list":
                value, warnings = sap.parse_full(self.text, raw.start, raw.end)
                if not isinstance(value, _SLOT_TYPES[kind]):
                    raise sap.SdyParseError(raw.start, "invalid kind of attribute specified")
            else:
                value, warnings = sap.parse_stripped(kind, self.text, raw.start, raw.end)
        except sap.SdyParseError as e:
            raise self.sdy_error(e.errors, op_name) from None
        self.sdy_warnings(warnings, op_name)
        if kind == "sharding_list":
            value = TensorShardingPerValue(tuple(value))
        if not warnings:
            self.attr_text_cache[key] = value
        return value

    def dialect_attr_from_text(self, tok, name: str, body):
        if name != "#sdy" and not name.startswith("#sdy."):
            return super().dialect_attr_from_text(tok, name, body)
        from shardy_ref.parser import sdy_attr_parser as sap

        end = (body if body is not None else tok).end_pos
        key = ("full", self.text[tok.start_pos:end])
        hit = self.attr_text_cache.get(key)
        if hit is not None:
            return hit
        try:
            value, warnings = sap.parse_full(self.text, tok.start_pos, end)
        except sap.SdyParseError as e:
            raise self.sdy_error(e.errors) from None
        self.sdy_warnings(warnings)
        if not warnings:
            self.attr_text_cache[key] = value
        return value

    def sdy_error(self, errors, op_name: str | None = None) -> ParseError:
        """One ParseError for the sdy parser's ``(offset, message, prefixed)`` list."""
        out = [ParseError(self.loc_at(offset), _prefixed(message, prefixed, op_name))
               for offset, message, prefixed in errors]
        out[0].others = out[1:]
        return out[0]

    def sdy_warnings(self, warnings, op_name: str | None = None) -> None:
        for offset, message, prefixed in warnings:
            self.nonfatal.append(Diagnostic("error", self.loc_at(offset),
                                            _prefixed(message, prefixed, op_name)))

    # -- operations ----------------------------------------------------------------------
    def _attrs(self, attr_dict) -> dict:
        return dict(attr_dict.value) if attr_dict is not None else {}

    def sdy_mesh_op(self, items):
        tok, sym, mesh, attrs = items
        mesh = self.sdy_slot(mesh, "mesh", "sdy.mesh")
        attributes = self._attrs(attrs)
        attributes.setdefault("sym_name", ba.StringAttr(lit.symbol_name(sym)))
        attributes.setdefault("mesh", mesh)
        return self.make_op(tok, "sdy.mesh", attributes=attributes)

    def sdy_sharding_op(self, items):
        tok, value, sharding, attrs, t = items
        sharding = self.sdy_slot(sharding, "sharding", str(tok))
        attributes = self._attrs(attrs)
        attributes.setdefault("sharding", sharding)
        return self.make_op(tok, str(tok), [value], [t], [t], attributes)

    def sdy_propagation_barrier_op(self, items):
        tok, value, direction, attrs, t = items
        case = PropagationDirection.from_keyword(str(direction))
        if case is None:
            raise self.error(direction, f"expected one of [NONE, FORWARD, BACKWARD, BOTH] for "
                             f"propagation direction, got: {direction}")
        attributes = self._attrs(attrs)
        attributes["allowed_direction"] = case.attr()
        return self.make_op(tok, "sdy.propagation_barrier", [value], [t], [t], attributes)

    def sdy_sharding_group_op(self, items):
        tok, value, group, attrs, t = items
        attributes = self._attrs(attrs)
        number = int(group, 16) if group.startswith("0x") else int(group)
        attributes["group_id"] = ba.IntegerAttr(self._fit_integer(group, number, I64), I64)
        return self.make_op(tok, "sdy.sharding_group", [value], [t], [], attributes)

    def sdy_constant_op(self, items):
        tok, attrs, dense, t = items
        attributes = self._attrs(attrs)
        attributes["value"] = self.dense_attr([dense, t])
        return self.make_op(tok, "sdy.constant", result_types=[t], attributes=attributes)

    def sdy_data_flow_edge_op(self, items):
        tok, value, sharding, attrs, t = items
        attributes = self._attrs(attrs)
        if sharding is not None:
            attributes.setdefault("sharding", self.sdy_slot(sharding, "sharding",
                                                            "sdy.data_flow_edge"))
        return self.make_op(tok, "sdy.data_flow_edge", [value], [t], [t], attributes)

    def sdy_func_data_flow_edge_op(self, items):
        tok, value, attrs, t = items
        return self.make_op(tok, "sdy.func_data_flow_edge", [value], [t], [t], self._attrs(attrs))

    def sdy_manual_computation_op(self, items):
        tok, operands, in_sh, out_sh, axes, args, region, attrs, ftype = items
        name = "sdy.manual_computation"
        parsed = {"in_shardings": self.sdy_slot(in_sh, "sharding_list", name),
                  "out_shardings": self.sdy_slot(out_sh, "sharding_list", name),
                  "manual_axes": self.sdy_slot(axes, "manual_axes", name)}
        attributes = self._attrs(attrs)
        for key, value in parsed.items():
            attributes.setdefault(key, value)
        self.region_with_args(region, args)
        return self.make_op(tok, "sdy.manual_computation", operands or [], ftype.inputs,
                            ftype.results, attributes, [region])

    def sdy_named_computation_op(self, items):
        tok, name, operands, in_sh, out_sh, args, region, attrs, ftype = items
        attributes = self._attrs(attrs)
        attributes.setdefault("name", ba.StringAttr(self.string(name)))
        for key, raw in (("in_shardings", in_sh), ("out_shardings", out_sh)):
            if raw is not None:
                attributes.setdefault(key, self.sdy_slot(raw, "sharding_list",
                                                         "sdy.named_computation"))
        self.region_with_args(region, args)
        return self.make_op(tok, "sdy.named_computation", operands or [], ftype.inputs,
                            ftype.results, attributes, [region])

    def sdy_return_op(self, items):
        tok, attrs, operands, types = items
        if operands:
            self.check_operand_types("sdy.return", operands, types, operands[0].start_pos)
        return self.make_op(tok, "sdy.return", operands or [], types or [],
                            attributes=self._attrs(attrs))

    def _collective(self, tok, value, t, attrs, sharding, **inherent):
        """A collective: its inherent attributes parsed in syntax order, the trailing
        attr-dict overriding them as in upstream's custom formats."""
        name = str(tok)
        parsed = {key: self.sdy_slot(raw, kind, name) if isinstance(raw, RawSdy) else raw
                  for key, (raw, kind) in inherent.items()}
        parsed["out_sharding"] = self.sdy_slot(sharding, "sharding", name)
        attributes = self._attrs(attrs)
        for key, v in parsed.items():
            if v is not None:
                attributes.setdefault(key, v)
        return self.make_op(tok, name, [value], [t], [t], attributes)

    def sdy_gather_like_op(self, items):
        tok, axes, value, sharding, attrs, t = items
        key = {"sdy.all_gather": "gathering_axes", "sdy.all_slice": "slicing_axes",
               "sdy.sharded_to_unreduced": "axes"}[str(tok)]
        return self._collective(tok, value, t, attrs, sharding,
                                **{key: (axes, "list_of_axis_ref_lists")})

    def sdy_all_to_all_op(self, items):
        tok, params, value, sharding, attrs, t = items
        return self._collective(tok, value, t, attrs, sharding,
                                params=(params, "all_to_all_param_list"))

    def sdy_collective_permute_op(self, items):
        tok, value, sharding, attrs, t = items
        return self._collective(tok, value, t, attrs, sharding)

    def _reduction(self, tok):
        if tok is None:
            return (None, None)
        case = ReductionOp.from_keyword(str(tok))
        if case is None:
            raise self.error(tok, f"expected one of [sum, max, min] for reduction op, got: {tok}")
        return (case.attr(), None)

    def sdy_all_reduce_op(self, items):
        tok, red, axes, value, sharding, attrs, t = items
        return self._collective(tok, value, t, attrs, sharding,
                                reduction_op=self._reduction(red),
                                reduction_axes=(axes, "axis_ref_list"))

    def sdy_reduce_scatter_op(self, items):
        tok, red, axes, value, sharding, attrs, t = items
        return self._collective(tok, value, t, attrs, sharding,
                                reduction_op=self._reduction(red),
                                reduce_scatter_axes=(axes, "list_of_axis_ref_lists"))

    def sdy_replicated_to_unreduced_op(self, items):
        tok, axes, value, sharding, attrs, t = items
        return self._collective(tok, value, t, attrs, sharding, axes=(axes, "axis_ref_list"))


def _prefixed(message: str, prefixed: bool, op_name: str | None) -> str:
    return f"custom op '{op_name}' {message}" if prefixed and op_name else message


__all__ = ["ParseError", "SdyBuilder"]
