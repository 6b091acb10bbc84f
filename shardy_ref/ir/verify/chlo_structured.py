"""Verification of ``chlo.ragged_dot`` (``checkRaggedDotConstraints``, dot_general's
``checkDotGeneralConstraints``) and ``chlo.scan`` (``ScanOp::verify`` and its result type
inference) with upstream's messages (``ChloOps.cpp``, ``TypeInference.cpp``); their specs
join :data:`shardy_ref.ir.verify.chlo_ops.SPECS`.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import ArrayAttr, IntegerAttr
from shardy_ref.ir.chlo_attrs import ChloEnum, RaggedDotDimensionNumbers, ragged_prefix_dims
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import I1, I64, RankedTensorType, Type
from shardy_ref.ir.verify import VerifyContext, exit_verifier, op_error
from shardy_ref.ir.verify.chlo_ops import (
    ANY,
    RANKED_INT,
    SPECS,
    TENSORS,
    ChloSpec,
    attr_constraint,
    compatible_dims,
    compatible_lists,
    compatible_types,
    infer_error,
)
from shardy_ref.ir.verify.ods import AttrConstraint, verify_inferred_result_types

# -- ragged_dot (ChloOps.cpp: checkRaggedDotConstraints, TypeInference.cpp) --------------

def _error(op: Operation, message: str):
    """``emitOptionalError(location, ...)``: a message without the op's name."""
    from shardy_ref.ir.diagnostics import VerifyError

    return VerifyError(op.location, message)


def _distinct(op, a, b, a_name: str, b_name: str) -> None:
    seen: set[int] = set()
    for d in (*a, *b):
        if d in seen:
            raise _error(op, f"has duplicated dimension from {a_name} and {b_name}: {d}")
        seen.add(d)


def _in_bounds(op, dim: int, bound: int, name: str, bound_name: str) -> None:
    if not 0 <= dim < bound:
        raise _error(op, f"Expects {name} to be in range [0, {bound_name}) i.e. [0, {bound}). "
                         f"got: {dim}.")


def _dot_general_constraints(op, lhs, rhs, dims) -> None:
    """``hlo::checkDotGeneralConstraints`` (dot_general_c1..c10)."""
    lb, rb = dims.lhs_batching_dimensions, dims.rhs_batching_dimensions
    lc, rc = dims.lhs_contracting_dimensions, dims.rhs_contracting_dimensions
    if len(lb) != len(rb):
        raise _error(op, "lhs and rhs should have the same number of batching dimensions")
    if len(lc) != len(rc):
        raise _error(op, "lhs and rhs should have the same number of contracting dimensions")
    _distinct(op, lb, lc, "lhs_batching_dimensions", "lhs_contracting_dimensions")
    _distinct(op, rb, rc, "rhs_batching_dimensions", "rhs_contracting_dimensions")
    for rank, values, name in ((lhs.rank, lb, "lhs_batching_dimensions"),
                               (lhs.rank, lc, "lhs_contracting_dimensions"),
                               (rhs.rank, rb, "rhs_batching_dimensions"),
                               (rhs.rank, rc, "rhs_contracting_dimensions")):
        for d in values:
            if not 0 <= d < rank:
                raise _error(op, f"{name} value: {d} is out of range: [0, {rank})")
    for pairs, what in (((lb, rb), "batching"), ((lc, rc), "contracting")):
        for a, b in zip(*pairs, strict=True):
            if not compatible_dims(lhs.shape[a], rhs.shape[b]):
                raise _error(op, f"{what} dimension sizes must match for lhs/rhs")




def _shape_text(shape) -> str:
    return ", ".join(str(-(1 << 63) if d is None else d) for d in shape)


def _check_group_sizes(op, lhs, sizes, dims, ragged: int) -> None:
    """group_sizes is ``[g]`` or ``[*prefix, g]``."""
    expected = [lhs.shape[d] for d in ragged_prefix_dims(dims, ragged)]
    if sizes.rank == 1:
        return
    if sizes.rank != len(expected) + 1:
        raise _error(op, f"expected group_sizes to have rank {len(expected) + 1}, got "
                         f"{sizes.rank}")
    if list(sizes.shape[:-1]) != expected:
        raise _error(op, f"group_sizes is expected to have shape [{_shape_text(expected)}, "
                         f"{_shape_text(sizes.shape[-1:])}], got [{_shape_text(sizes.shape)}]")


def _check_group_dims(op, rhs, sizes, dims, ragged: int) -> None:
    group = dims.rhs_group_dimensions
    for d in group:
        _in_bounds(op, d, rhs.rank, "rhs_group_dim", "rhs_rank")
    _distinct(op, group, dims.rhs_batching_dimensions, "rhs_group_dimensions",
              "rhs_batching_dimensions")
    _distinct(op, group, dims.rhs_contracting_dimensions, "rhs_group_dimensions",
              "rhs_contracting_dimensions")
    if ragged in dims.lhs_batching_dimensions or ragged in dims.lhs_contracting_dimensions:
        if group:
            raise _error(op, "There must be zero group dimensions in the rhs when the ragged "
                             "dimension is batch or contracting.")
        return
    if len(group) != 1:
        raise _error(op, "There must be exactly one group dimension in the rhs when the lhs "
                         "ragged dimension is non-contracting.")
    groups, size = sizes.shape[-1], rhs.shape[group[0]]
    if not compatible_dims(groups, size):
        raise _error(op, f"rhs group dimension is expected to have size={groups}, got "
                         f"{_shape_text([size])}")


def _ragged_result_shape(lhs, rhs, sizes, dims, ragged: int) -> list:
    shape = [sizes.shape[-1]] if ragged in dims.lhs_contracting_dimensions else []
    shape += [lhs.shape[d] for d in dims.lhs_batching_dimensions]
    used = {*dims.lhs_batching_dimensions, *dims.lhs_contracting_dimensions}
    shape += [lhs.shape[d] for d in range(lhs.rank) if d not in used]
    rhs_used = {*dims.rhs_batching_dimensions, *dims.rhs_contracting_dimensions,
                *dims.rhs_group_dimensions}
    return shape + [rhs.shape[d] for d in range(rhs.rank) if d not in rhs_used]


def _verify_ragged_dot(op: Operation) -> None:
    """``RaggedDotOp::verify``: ``inferRaggedDotOp`` and the result shape."""
    dims = op.attributes["ragged_dot_dimension_numbers"]
    precision = op.attributes.get("precision_config")
    if precision is not None and len(precision.value) > 2:
        raise _error(op, f"expects precision config to be empty or have <= 2 elements, got "
                         f"{len(precision.value)}")
    lhs, rhs, sizes = op.operand_types
    if not all(isinstance(t, RankedTensorType) for t in (lhs, rhs, sizes)):
        return
    _dot_general_constraints(op, lhs, rhs, dims)
    if len(dims.lhs_ragged_dimensions) != 1:
        raise _error(op, "There must be exactly one ragged dimension in the lhs.")
    ragged = dims.lhs_ragged_dimensions[0]
    _in_bounds(op, ragged, lhs.rank, "lhs_ragged_dim", "lhs_rank")
    _check_group_sizes(op, lhs, sizes, dims, ragged)
    _check_group_dims(op, rhs, sizes, dims, ragged)
    inferred = _ragged_result_shape(lhs, rhs, sizes, dims, ragged)
    result = op.result_types[0]
    if isinstance(result, RankedTensorType) and not (
            len(inferred) == result.rank and all(map(compatible_dims, inferred, result.shape))):
        raise _error(op, f"inferred shape '[{_shape_text(inferred)}]' is incompatible with "
                         f"return type of operation '{result}'")


SPECS["chlo.ragged_dot"] = ChloSpec(
    (ANY, ANY, RANKED_INT), (ANY,),
    (attr_constraint("ragged_dot_dimension_numbers", RaggedDotDimensionNumbers,
           "Attribute that models the dimension information for ragged dot."),
     AttrConstraint("precision_config", lambda a: isinstance(a, ArrayAttr) and all(
         isinstance(p, ChloEnum) and p.kind == "precision" for p in a.value),
         "Precision Config attribute", False)),
    verify=_verify_ragged_dot)


# -- scan (ChloOps.cpp: ScanOp::verify, inferReturnTypeComponents) ------------------------

def _segments(op: Operation) -> tuple[int, int]:
    sizes = op.attributes.get("operandSegmentSizes")
    return tuple(sizes.value) if sizes is not None else (0, op.num_operands)


def _verify_scan(op: Operation) -> None:
    """``ScanOp::verify``: something to scan, the scan dimension, the body's arguments."""
    n_in, _ = _segments(op)
    n_carry = op.num_operands - n_in
    if not n_in and op.num_results - n_carry <= 0:
        raise op_error(op, "at least one of inputs or outputs must be present")
    dim = op.attributes["dimension"].value
    _verify_scan_dimension(op, op.operand_types[:n_in], dim)
    block = op.regions[0].blocks[0] if op.regions[0].blocks else None
    args = block.args if block is not None else []
    if len(args) != op.num_operands:
        raise op_error(op, f"expects {op.num_operands} arguments in the body, but got "
                           f"{len(args)}")
    for i, (t, arg) in enumerate(zip(op.operand_types, args, strict=True)):
        if not isinstance(t, RankedTensorType):
            raise op_error(op, f"operand {i} is not ranked")
        if i < n_in:
            t = t.replace(shape=t.shape[:dim] + t.shape[dim + 1:])
        if not (isinstance(arg.type, TENSORS) and compatible_types(t, arg.type)):
            raise op_error(op, f"operand and body argument {i} are incompatible")


def _verify_scan_dimension(op: Operation, inputs, dim: int) -> None:
    """Every input has the scan dimension, all of one size (and ``scan_dim_size``'s)."""
    size_attr = op.attributes.get("scan_dim_size")
    size = size_attr.value if size_attr is not None else None
    for i, t in enumerate(inputs):
        if not isinstance(t, RankedTensorType):
            raise op_error(op, f"operand {i} is not ranked")
        if dim >= t.rank:
            raise op_error(op, f"scan dimension of operand {i} is out of bounds")
        if t.shape[dim] is None:
            continue
        if size is not None and size != t.shape[dim]:
            raise op_error(op, f"invalid scan dimension size of operand {i}")
        size = t.shape[dim]


def _infer_scan(op: Operation) -> list[Type]:
    n_in, n_carry = _segments(op)
    dim = op.attributes["dimension"].value
    size_attr = op.attributes.get("scan_dim_size")
    size = size_attr.value if size_attr is not None else None
    for t in op.operand_types[:n_in]:
        if size is None:
            size = t.shape[dim]
    returned = op.regions[0].blocks[0].last_op.operand_types
    if len(returned) < n_carry:
        raise infer_error(op, f"ScanOp body must return at least {n_carry} values (carries)")
    n_out = len(returned) - n_carry
    return [t.replace(shape=(*t.shape[:dim], size, *t.shape[dim:])) if i < n_out else t
            for i, t in enumerate(returned)]


_NON_NEGATIVE = "64-bit signless integer attribute whose value is non-negative"
_BOOL = "bool attribute"
SPECS["chlo.scan"] = ChloSpec(
    (ANY,), (ANY,),
    (AttrConstraint("dimension", lambda a: isinstance(a, IntegerAttr) and a.type == I64
                    and a.value >= 0, _NON_NEGATIVE),
     AttrConstraint("scan_dim_size", lambda a: isinstance(a, IntegerAttr) and a.type == I64
                    and a.value >= 0, _NON_NEGATIVE, False),
     AttrConstraint("is_reverse", lambda a: isinstance(a, IntegerAttr) and a.type == I1,
                    _BOOL, False),
     AttrConstraint("is_associative", lambda a: isinstance(a, IntegerAttr) and a.type == I1,
                    _BOOL, False)),
    verify=_verify_scan, variadic=True, regions=1)


@exit_verifier("chlo.scan")
def _verify_scan_regions(op: Operation, ctx: VerifyContext) -> None:
    """``InferTensorType`` after the body is verified."""
    block = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
    if block is None or block.last_op is None:
        return
    verify_inferred_result_types(op, _infer_scan(op), compatible_lists)
