"""Pretty forms of the ``check`` and ``interpreter`` ops of StableHLO's interpreter tests
(``stablehlo/tests/CheckOps.td``, ``stablehlo/reference/InterpreterOps.td`` assembly
formats), so that ``shardy-ref-opt`` output reads like ``stablehlo-opt``'s:
``check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>``.

Attributes with a buildable type print without it (``tolerance = 1.000000e-03``); an
optional group is left out when its attribute has its default value. An op whose
attributes do not fit its syntax prints generic.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import (
    DenseElementsAttr,
    DenseResourceElementsAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
)
from shardy_ref.ir.floatfmt import format_float
from shardy_ref.ir.types import F64
from shardy_ref.parser.printer import Printer, op_printer

DEFAULT_TOLERANCE = FloatAttr(1e-4, F64)


def _tolerance(op) -> str | None:
    """``, tolerance = X`` (empty at the default), or None if it is not an f64 float."""
    tol = op.attributes.get("tolerance")
    if tol is None or tol == DEFAULT_TOLERANCE:
        return ""
    if not isinstance(tol, FloatAttr) or tol.type != F64:
        return None
    return f", tolerance = {format_float(tol.value, F64)}"


@op_printer("check.expect_eq_const", "check.expect_almost_eq_const")
def print_expect_const(p: Printer, op):
    """``$lhs, $value (, tolerance = $tolerance)? attr-dict``."""
    value = op.attributes.get("value")
    tol = _tolerance(op)
    elements = isinstance(value, (DenseElementsAttr, DenseResourceElementsAttr))
    if not elements or tol is None or op.num_operands != 1:
        return False
    p.write(f" {p.value(op.operand(0))}, {value}{tol}"
            f"{p.attr_dict(op.attributes, ('value', 'tolerance'))}")
    return None


@op_printer("check.expect_eq", "check.expect_almost_eq")
def print_expect_binary(p: Printer, op):
    """``$lhs, $rhs (, tolerance = $tolerance)? attr-dict : type($lhs)``."""
    tol = _tolerance(op)
    if tol is None or op.num_operands != 2:
        return False
    p.write(f" {p.values(op.operands)}{tol}{p.attr_dict(op.attributes, ('tolerance',))} : "
            f"{op.operand_types[0]}")
    return None


def _uint(op, name: str):
    value = op.attributes.get(name)
    return value.value if isinstance(value, IntegerAttr) else None


@op_printer("check.expect_close")
def print_expect_close(p: Printer, op):
    """``$actual, $expected, max_ulp_difference = N (, min_ulp_difference = M)? :
    attr-dict type($actual), type($expected)``."""
    max_ulp = _uint(op, "max_ulp_difference") if "max_ulp_difference" in op.attributes else 1
    min_ulp = _uint(op, "min_ulp_difference") if "min_ulp_difference" in op.attributes else 0
    if max_ulp is None or min_ulp is None or op.num_operands != 2:
        return False
    p.write(f" {p.values(op.operands)}, max_ulp_difference = {max_ulp}")
    if min_ulp:
        p.write(f", min_ulp_difference = {min_ulp}")
    rest = p.attr_dict(op.attributes, ("max_ulp_difference", "min_ulp_difference"))
    p.write(f" :{rest} {op.operand_types[0]}, {op.operand_types[1]}")
    return None


@op_printer("check.expect_serialized_eq")
def print_expect_serialized(p: Printer, op):
    """``$expected, probe_id = "id" (, iter = N)? attr-dict : type($expected)``."""
    probe = op.attributes.get("probe_id")
    if not isinstance(probe, StringAttr) or op.num_operands != 1:
        return False
    iteration = _uint(op, "iteration") if "iteration" in op.attributes else 0
    if iteration is None:
        return False
    p.write(f" {p.value(op.operand(0))}, probe_id = {probe}")
    if iteration:
        p.write(f", iter = {iteration}")
    p.write(f"{p.attr_dict(op.attributes, ('probe_id', 'iteration'))} : {op.operand_types[0]}")
    return None


@op_printer("interpreter.print")
def print_print(p: Printer, op):
    """``$operand attr-dict : type($operand)``."""
    if op.num_operands != 1:
        return False
    p.write(f" {p.value(op.operand(0))}{p.attr_dict(op.attributes)} : {op.operand_types[0]}")
    return None


@op_printer("interpreter.probe")
def print_probe(p: Printer, op):
    """``$operand, probe_id = "id" attr-dict : type($result)``."""
    probe = op.attributes.get("probe_id")
    if not isinstance(probe, StringAttr) or op.num_operands != 1 or op.num_results != 1:
        return False
    p.write(f" {p.value(op.operand(0))}, probe_id = {probe}"
            f"{p.attr_dict(op.attributes, ('probe_id',))} : {op.result_types[0]}")
    return None
