"""Pretty forms of CHLO ops (``ChloOps.td`` assembly formats, ``ScanOp::print``).

``chlo.constant_like`` and ``chlo.ragged_dot`` have no pretty form and print generic; an op
whose attributes cannot be written in its syntax falls back to the generic form too.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr
from shardy_ref.ir.chlo_families import BINARY, BROADCAST_BINARY, UNARY
from shardy_ref.ir.types import I1, I64
from shardy_ref.parser.printer import Printer, op_printer


@op_printer(*UNARY)
def print_unary(p: Printer, op):
    """``chlo.erf %x : tensor<4xf32> -> tensor<4xf32>``."""
    if op.num_operands != 1 or op.num_results != 1:
        return False
    p.write(f" {p.value(op.operand(0))}{p.op_attr_dict(op)} : {op.operand_types[0]} -> "
            f"{op.result_types[0]}")
    return None


@op_printer(*BINARY)
def print_binary(p: Printer, op):
    """``chlo.zeta %x, %q : tensor<f32>, tensor<f32> -> tensor<f32>``."""
    if op.num_operands != 2 or op.num_results != 1:
        return False
    lhs, rhs = op.operand_types
    p.write(f" {p.values(op.operands)}{p.op_attr_dict(op)} : {lhs}, {rhs} -> "
            f"{op.result_types[0]}")
    return None


@op_printer(*BROADCAST_BINARY, "chlo.broadcast_select")
def print_broadcast(p: Printer, op):
    """``chlo.broadcast_add %a, %b {broadcast_dimensions = ...} : (T, U) -> R``."""
    want = 3 if op.name == "chlo.broadcast_select" else 2
    if op.num_operands != want or op.num_results != 1:
        return False
    p.write(f" {p.values(op.operands)}{p.op_attr_dict(op)} : {p.functional_type(op)}")
    return None


@op_printer("chlo.top_k")
def print_top_k(p: Printer, op):
    """``chlo.top_k(%x, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)``."""
    k = op.attributes.get("k")
    if not (isinstance(k, IntegerAttr) and k.type == I64) or op.num_operands != 1 \
            or op.num_results != 2:
        return False
    values, indices = op.result_types
    p.write(f"({p.value(op.operand(0))}, k = {k.value}){p.op_attr_dict(op, ('k',))} : "
            f"{op.operand_types[0]} -> ({values}, {indices})")
    return None


_SCAN_ELIDED = ("dimension", "operandSegmentSizes", "resultSegmentSizes")


@op_printer("chlo.scan")
def print_scan(p: Printer, op):
    """``chlo.scan(%in) inits (%c) dimension=0 <attributes {...}> {region} : (T) -> R``."""
    sizes = op.attributes.get("operandSegmentSizes")
    dim = op.attributes.get("dimension")
    if not (isinstance(sizes, DenseArrayAttr) and len(sizes.value) == 2) or \
            not isinstance(dim, IntegerAttr) or len(op.regions) != 1 or \
            sum(sizes.value) != op.num_operands:
        return False
    n_in = sizes.value[0]
    p.write(f"({p.values(op.operands[:n_in])}) inits ({p.values(op.operands[n_in:])}) "
            f"dimension={dim.value} ")
    rest = p.attr_dict(op.attributes, _SCAN_ELIDED)
    if rest:
        p.write(" attributes" + rest)
    p.write(" ")
    p.print_region(op.regions[0], print_entry_args=True)
    p.write(" : " + p.functional_type(op))
    return None


__all__ = ["I1"]
