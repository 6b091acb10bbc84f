"""Pretty forms of the sdy ops, following the assembly formats of upstream ``ir/ops.td``
(https://openxla.org/shardy/sdy_dialect#operations). Attributes inside op syntax print in
their stripped form (``<@mesh, [...]>`` rather than ``#sdy.sharding<@mesh, [...]>``)."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseElementsAttr, StringAttr, quote_string
from shardy_ref.ir.sdy_axes import AxisRefList, ListOfAxisRefLists, Mesh
from shardy_ref.ir.sdy_debug import PropagationDirection, ReductionOp
from shardy_ref.ir.sdy_sharding import (
    AllToAllParamList,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.parser.printer import Printer, op_printer

_REDUCTION_DEFAULT = {"reduction_op": ReductionOp.SUM.attr()}


def _is(attr, cls) -> bool:
    return isinstance(attr, cls)


@op_printer("sdy.mesh")
def print_mesh(p: Printer, op):
    sym, mesh = op.attributes.get("sym_name"), op.attributes.get("mesh")
    if not (_is(sym, StringAttr) and _is(mesh, Mesh)):
        return False
    from shardy_ref.ir.builtin_attrs import format_symbol_name
    p.write(f" {format_symbol_name(sym.value)} = {mesh.params()}")
    p.write(p.attr_dict(op.attributes, ("sym_name", "mesh")))
    return None


@op_printer("sdy.sharding_constraint", "sdy.reshard")
def print_sharding_op(p: Printer, op):
    sharding = op.attributes.get("sharding")
    if not (_is(sharding, TensorSharding) and op.num_operands == 1 and op.num_results == 1):
        return False
    p.write(f" {p.value(op.operand(0))} {p.params_text(sharding)}")
    p.write(p.attr_dict(op.attributes, ("sharding",)))
    p.write(f" : {op.results[0].type}")
    return None


@op_printer("sdy.return")
def print_sdy_return(p: Printer, op):
    p.write(p.attr_dict(op.attributes))
    if op.num_operands:
        p.write(f" {p.values(op.operands)} : {p.types(op.operand_types)}")


@op_printer("sdy.manual_computation")
def print_manual_computation(p: Printer, op):
    attrs = op.attributes
    in_sh, out_sh, axes = (attrs.get("in_shardings"), attrs.get("out_shardings"),
                           attrs.get("manual_axes"))
    if not (_is(in_sh, TensorShardingPerValue) and _is(out_sh, TensorShardingPerValue)
            and _is(axes, ManualAxes) and len(op.regions) == 1):
        return False
    p.write(f"({p.values(op.operands)}) in_shardings={in_sh.body()} "
            f"out_shardings={out_sh.body()} manual_axes={axes.params()} ")
    _single_block_region(p, op.regions[0])
    p.write(p.attr_dict(attrs, ("in_shardings", "out_shardings", "manual_axes")))
    p.write(" : " + p.functional_type(op))
    return None


def _single_block_region(p: Printer, region) -> None:
    """``(%arg1: T) {...}``: entry block arguments printed inline, no ``^bb0`` label."""
    p.write(p.region_arguments(region) + " ")
    p.print_region(region)


@op_printer("sdy.named_computation")
def print_named_computation(p: Printer, op):
    attrs = op.attributes
    name = attrs.get("name")
    if not (_is(name, StringAttr) and len(op.regions) == 1):
        return False
    p.write(f"<{quote_string(name.value)}>({p.values(op.operands)}) ")
    for key in ("in_shardings", "out_shardings"):
        value = attrs.get(key)
        if _is(value, TensorShardingPerValue):
            p.write(f"{key}={value.body()} ")
        elif value is not None:
            return False
    _single_block_region(p, op.regions[0])
    p.write(p.attr_dict(attrs, ("name", "in_shardings", "out_shardings")))
    p.write(" : " + p.functional_type(op))
    return None


@op_printer("sdy.sharding_group")
def print_sharding_group(p: Printer, op):
    group = op.attributes.get("group_id")
    if group is None or op.num_operands != 1:
        return False
    p.write(f" {p.value(op.operand(0))} group_id={group.value}")
    p.write(p.attr_dict(op.attributes, ("group_id",)))
    p.write(f" : {op.operand(0).type}")
    return None


@op_printer("sdy.constant", "stablehlo.constant", "chlo.constant")
def print_constant(p: Printer, op):
    """``hlo::printConstantOp``: attr-dict first, then the value with its type; when the
    value's type differs from the result's (quantized constants) the rest is generic."""
    value = op.attributes.get("value")
    if not (_is(value, DenseElementsAttr) and op.num_results == 1):
        return False
    if value.type != op.results[0].type:
        p.print_generic(op, print_name=False)
        return None
    p.write(p.attr_dict(op.attributes, ("value",)))
    p.write(" " + p.attr_text(value))
    return None


@op_printer("sdy.data_flow_edge")
def print_data_flow_edge(p: Printer, op):
    sharding = op.attributes.get("sharding")
    if sharding is not None and not _is(sharding, TensorSharding):
        return False
    p.write(f" {p.value(op.operand(0))}")
    if sharding is not None:
        p.write(f" sharding={sharding.params()}")
    p.write(p.attr_dict(op.attributes, ("sharding",)))
    p.write(f" : {op.results[0].type}")
    return None


@op_printer("sdy.func_data_flow_edge")
def print_func_data_flow_edge(p: Printer, op):
    p.write(f" {p.value(op.operand(0))}{p.attr_dict(op.attributes)} : {op.results[0].type}")


@op_printer("sdy.propagation_barrier")
def print_propagation_barrier(p: Printer, op):
    direction = PropagationDirection.from_attr(op.attributes.get("allowed_direction"))
    if direction is None:
        return False
    p.write(f" {p.value(op.operand(0))} allowed_direction={direction.keyword}")
    p.write(p.attr_dict(op.attributes, ("allowed_direction",)))
    p.write(f" : {op.operand(0).type}")
    return None


# collective op -> (the attribute printed before the operand, its class)
_COLLECTIVE_AXES = {
    "sdy.all_gather": ("gathering_axes", ListOfAxisRefLists),
    "sdy.all_slice": ("slicing_axes", ListOfAxisRefLists),
    "sdy.sharded_to_unreduced": ("axes", ListOfAxisRefLists),
    "sdy.all_to_all": ("params", AllToAllParamList),
    "sdy.all_reduce": ("reduction_axes", AxisRefList),
    "sdy.reduce_scatter": ("reduce_scatter_axes", ListOfAxisRefLists),
    "sdy.replicated_to_unreduced": ("axes", AxisRefList),
    "sdy.collective_permute": (None, None),
}


@op_printer(*_COLLECTIVE_AXES)
def print_collective(p: Printer, op):
    key, cls = _COLLECTIVE_AXES[op.name]
    attrs = op.attributes
    out = attrs.get("out_sharding")
    axes = attrs.get(key) if key else None
    if not _is(out, TensorSharding) or (key and not _is(axes, cls)) or op.num_operands != 1:
        return False
    reduction = attrs.get("reduction_op")
    if reduction is not None and reduction != _REDUCTION_DEFAULT["reduction_op"]:
        case = ReductionOp.from_attr(reduction)
        if case is None:
            return False
        p.write(f" {case.keyword}")
    if key:
        p.write(f" {axes.params()}")
    p.write(f" {p.value(op.operand(0))} out_sharding={out.params()}")
    p.write(p.op_attr_dict(op, (key, "out_sharding", "reduction_op")))
    p.write(f" : {op.results[0].type}")
    return None
