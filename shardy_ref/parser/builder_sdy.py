"""Transformer callbacks for sdy.lark: sdy attributes and ops (spec 003)."""
from __future__ import annotations

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.ir.location import Location
from shardy_ref.ir.sdy_axes import (
    AxisRef,
    AxisRefList,
    ListOfAxisRefLists,
    Mesh,
    MeshAxis,
    SubAxisInfo,
)
from shardy_ref.ir.sdy_debug import (
    AxisToPropagationDetails,
    EdgeValueRef,
    PropagationDirection,
    PropagationEdges,
    PropagationOneStep,
    ReductionOp,
)
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import (
    AllToAllParam,
    AllToAllParamList,
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.ir.types import I64
from shardy_ref.parser import literals as lit


def _factor_index(tok_text: str) -> list[int]:
    """``ijz_1`` -> ``[0, 1, 18]``."""
    out: list[int] = []
    i = 0
    while i < len(tok_text):
        c = tok_text[i]
        i += 1
        if c == "z" and i < len(tok_text) and tok_text[i] == "_":
            j = i + 1
            while j < len(tok_text) and tok_text[j].isdigit():
                j += 1
            out.append(17 + int(tok_text[i + 1:j]))
            i = j
        else:
            out.append(ord(c) - ord("i"))
    return out


class SdyBuilder:
    """Mixin of :class:`shardy_ref.parser.builder.CoreBuilder` callbacks for the sdy dialect."""

    # -- attributes ----------------------------------------------------------------------
    def sharding(self, items):
        mesh, *rest = items
        dims, replicated, unreduced, reduction = [], (), (), ReductionOp.SUM
        for item in rest:
            if isinstance(item, DimensionSharding):
                dims.append(item)
            elif item is None:
                continue
            elif item[0] == "replicated":
                replicated = item[1]
            else:
                unreduced, reduction = item[1], item[2]
        return TensorSharding(mesh, tuple(dims), replicated, unreduced, reduction)

    def mesh_ref(self, items):
        return lit.symbol_name(items[0])

    def inline_mesh(self, items):
        return items[0]

    def sharding_extra(self, items):
        if items[0].type == "REPLICATED_KW":
            return ("replicated", items[1].value)
        _, op, axes = items
        reduction = ReductionOp.SUM
        if op is not None:
            reduction = ReductionOp.from_keyword(str(op))
            if reduction is None:
                raise self.error(op, f"unknown reduction op: {op}")
        return ("unreduced", axes.value, reduction)

    def dim_sharding(self, items):
        axes_info, prio = items
        axes, is_closed = axes_info if axes_info is not None else ((), True)
        priority = None
        if prio is not None:
            text = str(prio)
            # upstream reports these once the priority keyword is consumed: just after it
            end = Location(self.filename, prio.line + self.line_offset, prio.column + len(text))
            if not (text.startswith("p") and text[1:].isdigit()):
                raise ParseError(end, f"expecting priority in format 'p<number>', got: {text}")
            if len(text) > 2 and text[1] == "0":
                raise ParseError(end, "priorities with leading zeros are not allowed, got: "
                                 f"{text}")
            priority = int(text[1:])
        return DimensionSharding(axes, is_closed, priority)

    def dim_axes(self, items):
        if len(items) == 1 and getattr(items[0], "type", None) == "QUESTION":
            return ((), False)
        is_closed = items[-1] is None
        return (tuple(x for x in items[:-1]), is_closed)

    def axis_ref(self, items):
        name, pre, size = items
        if pre is None:
            return AxisRef(self.string(name))
        return AxisRef(self.string(name), SubAxisInfo(int(pre), int(size)))

    def axis_list(self, items):
        return AxisRefList(tuple(x for x in items if x is not None))

    def mesh_body(self, items):
        axes, ids = items
        return Mesh(tuple(axes or ()), tuple(ids or ()))

    def mesh_axes(self, items):
        return items

    def device_ids(self, items):
        return [int(t) for t in items if t is not None]

    def mesh_axis(self, items):
        name, size = items
        return MeshAxis(self.string(name), int(size))

    def sharding_list(self, items):
        return TensorShardingPerValue(tuple(x for x in items if x is not None))

    def manual_axes(self, items):
        return ManualAxes(tuple(self.string(t) for t in items if t is not None))

    def list_of_axis_lists(self, items):
        return ListOfAxisRefLists(tuple(x for x in items if x is not None))

    def all_to_all_params(self, items):
        return AllToAllParamList(tuple(x for x in items if x is not None))

    def all_to_all_param(self, items):
        axes, src, tgt = items
        return AllToAllParam(axes.value, int(src), int(tgt))

    def op_sharding_rule(self, items):
        operand_maps, result_maps, sizes, *specials, custom = items
        fields = {"reduction": (), "need_replication": (), "permutation": (),
                  "blocked_propagation": ()}
        for tok, factors in specials:
            key = str(tok)
            if key not in fields:
                raise self.error(tok, f"unknown special factor type: {key}")
            fields[key] = tuple(factors)
        return OpShardingRule(tuple(sizes or ()), tuple(operand_maps or ()),
                              tuple(result_maps or ()), fields["reduction"],
                              fields["need_replication"], fields["permutation"],
                              fields["blocked_propagation"], custom is not None)

    def tensor_mappings(self, items):
        return items

    def tensor_mapping(self, items):
        return TensorMapping(tuple(DimMapping(tuple(_factor_index(str(t)))) for t in items
                                   if t is not None))

    def factor_sizes(self, items):
        sizes = []
        for i, (tok, size) in enumerate(items):
            if _factor_index(str(tok)) != [i]:
                raise self.error(tok, "expecting factor indices to be ordered like an iota "
                                 "([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index "
                                 f"symbol '{_symbol(i)}', received: '{tok}'")
            sizes.append(size)
        return sizes

    def factor_size(self, items):
        return (items[0], int(items[1]))

    def special_factors(self, items):
        kind, *factors = items
        return (kind, [f for t in factors if t is not None for f in _factor_index(str(t))])

    def propagation_edges(self, items):
        return PropagationEdges(tuple(x for x in items if x is not None))

    def propagation_step(self, items):
        step, *entries = items
        return PropagationOneStep(int(str(step)[5:]), tuple(e for e in entries if e is not None))

    def axis_propagation(self, items):
        axis, source, *targets = items
        return AxisToPropagationDetails(axis, _edge_ref(source),
                                        tuple(_edge_ref(t) for t in targets if t is not None))

    def sub_axis_info(self, items):
        return SubAxisInfo(int(items[0]), int(items[1]))

    # -- operations ----------------------------------------------------------------------
    def _attrs(self, attr_dict) -> dict:
        return dict(attr_dict.value) if attr_dict is not None else {}

    def sdy_mesh_op(self, items):
        tok, sym, mesh, attrs = items
        attributes = self._attrs(attrs)
        attributes["sym_name"] = ba.StringAttr(lit.symbol_name(sym))
        attributes["mesh"] = mesh
        return self.make_op(tok, "sdy.mesh", attributes=attributes)

    def sdy_sharding_op(self, items):
        tok, value, sharding, attrs, t = items
        attributes = self._attrs(attrs)
        attributes["sharding"] = sharding
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
        attributes["group_id"] = ba.IntegerAttr(int(group), I64)
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
            attributes["sharding"] = sharding
        return self.make_op(tok, "sdy.data_flow_edge", [value], [t], [t], attributes)

    def sdy_func_data_flow_edge_op(self, items):
        tok, value, attrs, t = items
        return self.make_op(tok, "sdy.func_data_flow_edge", [value], [t], [t], self._attrs(attrs))

    def sdy_manual_computation_op(self, items):
        tok, operands, in_sh, out_sh, axes, args, region, attrs, ftype = items
        attributes = self._attrs(attrs)
        attributes.update(in_shardings=in_sh, out_shardings=out_sh, manual_axes=axes)
        self.region_with_args(region, args)
        return self.make_op(tok, "sdy.manual_computation", operands or [], ftype.inputs,
                            ftype.results, attributes, [region])

    def sdy_named_computation_op(self, items):
        tok, name, operands, in_sh, out_sh, args, region, attrs, ftype = items
        attributes = self._attrs(attrs)
        attributes["name"] = ba.StringAttr(self.string(name))
        if in_sh is not None:
            attributes["in_shardings"] = in_sh
        if out_sh is not None:
            attributes["out_shardings"] = out_sh
        self.region_with_args(region, args)
        return self.make_op(tok, "sdy.named_computation", operands or [], ftype.inputs,
                            ftype.results, attributes, [region])

    def sdy_return_op(self, items):
        tok, attrs, operands, types = items
        return self.make_op(tok, "sdy.return", operands or [], types or [],
                            attributes=self._attrs(attrs))

    def _collective(self, tok, name, value, t, attrs, **inherent):
        attributes = self._attrs(attrs)
        attributes.update(inherent)
        return self.make_op(tok, name, [value], [t], [t], attributes)

    def sdy_gather_like_op(self, items):
        tok, axes, value, sharding, attrs, t = items
        key = {"sdy.all_gather": "gathering_axes", "sdy.all_slice": "slicing_axes",
               "sdy.sharded_to_unreduced": "axes"}[str(tok)]
        return self._collective(tok, str(tok), value, t, attrs, **{key: axes},
                                out_sharding=sharding)

    def sdy_all_to_all_op(self, items):
        tok, params, value, sharding, attrs, t = items
        return self._collective(tok, "sdy.all_to_all", value, t, attrs, params=params,
                                out_sharding=sharding)

    def sdy_collective_permute_op(self, items):
        tok, value, sharding, attrs, t = items
        return self._collective(tok, "sdy.collective_permute", value, t, attrs,
                                out_sharding=sharding)

    def _reduction(self, tok):
        if tok is None:
            return {}
        case = ReductionOp.from_keyword(str(tok))
        if case is None:
            raise self.error(tok, f"expected one of [sum, max, min] for reduction op, got: {tok}")
        return {"reduction_op": case.attr()}

    def sdy_all_reduce_op(self, items):
        tok, red, axes, value, sharding, attrs, t = items
        return self._collective(tok, "sdy.all_reduce", value, t, attrs, reduction_axes=axes,
                                out_sharding=sharding, **self._reduction(red))

    def sdy_reduce_scatter_op(self, items):
        tok, red, axes, value, sharding, attrs, t = items
        return self._collective(tok, "sdy.reduce_scatter", value, t, attrs,
                                reduce_scatter_axes=axes, out_sharding=sharding,
                                **self._reduction(red))

    def sdy_replicated_to_unreduced_op(self, items):
        tok, axes, value, sharding, attrs, t = items
        return self._collective(tok, "sdy.replicated_to_unreduced", value, t, attrs, axes=axes,
                                out_sharding=sharding)


def _symbol(i: int) -> str:
    from shardy_ref.ir.sdy_rules import factor_symbol
    return factor_symbol(i)


def _edge_ref(tok) -> EdgeValueRef:
    kind, _, index = str(tok).rpartition("-")
    return EdgeValueRef(kind, int(index))


__all__ = ["ParseError", "SdyBuilder"]
