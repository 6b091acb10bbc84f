"""Verification of StableHLO's structured ops (dot, convolution, gather, scatter, reduce,
reduce_window, sort, while, if, case, get_tuple_element, collectives) with upstream's
messages: the checks of ``hlo::verify*Op``/``hlo::infer*Op`` (``TypeInference.cpp``) that
keep dimension numbers in range and shapes consistent, so later code never indexes out
of range. Most messages come from ``emitOptionalError(location, ...)`` and name no op;
ops with unranked or non-tensor operands are left alone (ODS rejects them elsewhere).
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.stablehlo_attrs import (
    ConvDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
)
from shardy_ref.ir.types import I1, I32, I64, RankedTensorType, TupleType, Type
from shardy_ref.ir.verify import VerifyContext, exit_verifier, op_error, op_verifier
from shardy_ref.ir.verify.ods import verify_inferred_result_types


def _fail(op: Operation, message: str) -> VerifyError:
    """``emitOptionalError(location, ...)``: a message at the op that names no op."""
    return VerifyError(op.location, message)


def _ranked(types: Sequence[Type]) -> bool:
    return all(isinstance(t, RankedTensorType) for t in types)


def _ints(attr) -> tuple[int, ...]:
    if isinstance(attr, DenseArrayAttr):
        return tuple(attr.value)
    return ()


def _int(attr, default: int | None = None) -> int | None:
    return attr.value if isinstance(attr, IntegerAttr) else default


def verify_i64_attrs(op: Operation, constraints: Sequence[tuple[str, str]]) -> None:
    """ODS ``ConfinedAttr<I64Attr, [IntPositive | IntNonNegative]>`` attributes (checked in
    name order, as ``verifyInvariantsImpl`` does): an i64 ``IntegerAttr`` in range."""
    for name, kind in sorted(constraints):
        attr = op.attributes.get(name)
        if attr is None:
            continue
        if not (isinstance(attr, IntegerAttr) and attr.type == I64 and
                attr.value >= (1 if kind == "positive" else 0)):
            raise op_error(op, f"attribute '{name}' failed to satisfy constraint: 64-bit "
                               f"signless integer attribute whose value is {kind}")


def _compatible_dims(a, b) -> bool:
    return a is None or b is None or a == b


def _compatible_shape(a: Sequence, b: Sequence) -> bool:
    return len(a) == len(b) and all(map(_compatible_dims, a, b))


def _list(dims: Sequence[int]) -> str:
    return ", ".join(map(str, dims))


def _dim_sizes(dims: Sequence) -> str:
    """StableHLO's ``dimSizesToString``: ``[2, ?]``."""
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def _check_distinct(op: Operation, lhs: Sequence[int], rhs: Sequence[int],
                    lhs_name: str, rhs_name: str) -> None:
    """``checkDimsDistinct``: no dim twice in ``lhs`` + ``rhs``."""
    seen: set[int] = set()
    for dim in (*lhs, *rhs):
        if dim in seen:
            raise _fail(op, f"has duplicated dimension from {lhs_name} and {rhs_name}: {dim}")
        seen.add(dim)


def _check_in_bounds(op: Operation, dims: Sequence[int], bound: int, name: str,
                     bound_name: str) -> None:
    """``checkDimsInBounds``: each dim in [0, bound)."""
    for dim in dims:
        if not 0 <= dim < bound:
            raise _fail(op, f"Expects each element of {name} to be in range [0, {bound_name}) "
                            f"i.e. [0, {bound}). got: {dim}.")


def _check_dim_in_bounds(op: Operation, dim: int, bound: int, name: str,
                         bound_name: str) -> None:
    """``checkDimInBounds`` with an inclusive upper bound (index_vector_dim)."""
    if not 0 <= dim <= bound:
        raise _fail(op, f"Expects {name} to be in range [0, {bound_name}] i.e. [0, {bound}]. "
                        f"got: {dim}.")


def _check_result_shape(op: Operation, inferred: Sequence) -> None:
    """``verifyDotOp``/``verifyDotGeneralOp``: the result shape against the inferred one."""
    result = op.result_types[0] if op.num_results == 1 else None
    if isinstance(result, RankedTensorType) and not _compatible_shape(inferred, result.shape):
        raise _fail(op, f"inferred shape '{_dim_sizes(inferred)}' is incompatible with "
                        f"return type of operation '{result}'")


def _compatible_types(a: Sequence[Type], b: Sequence[Type]) -> bool:
    """``isCompatibleForHloTypeInference`` on type lists, for ranked tensors (other types
    must be equal)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, RankedTensorType) and isinstance(y, RankedTensorType):
            if x.element_type != y.element_type or not _compatible_shape(x.shape, y.shape):
                return False
        elif type(x) is not type(y) or (not isinstance(x, RankedTensorType) and x != y):
            return False
    return True


def _sorted(dims: Sequence[int]) -> bool:
    return all(a <= b for a, b in pairwise(dims))


def _unique(dims: Sequence[int]) -> bool:
    return len(set(dims)) == len(dims)


# -- dot_general, dot ----------------------------------------------------------------------

def _check_dims_in_range(op: Operation, rank: int, dims: Sequence[int], name: str) -> None:
    for dim in dims:
        if not 0 <= dim < rank:
            raise _fail(op, f"{name} value: {dim} is out of range: [0, {rank})")


@op_verifier("stablehlo.dot_general")
def verify_dot_general(op: Operation, ctx: VerifyContext) -> None:
    """``checkDotGeneralConstraints`` then ``inferDotGeneralOp``'s shape against the result."""
    dn = op.attributes.get("dot_dimension_numbers")
    types = op.operand_types
    if not isinstance(dn, DotDimensionNumbers) or len(types) != 2 or not _ranked(types):
        return
    lhs, rhs = types
    lb, rb = dn.lhs_batching_dimensions, dn.rhs_batching_dimensions
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    if len(lb) != len(rb):
        raise _fail(op, "lhs and rhs should have the same number of batching dimensions")
    if len(lc) != len(rc):
        raise _fail(op, "lhs and rhs should have the same number of contracting dimensions")
    _check_distinct(op, lb, lc, "lhs_batching_dimensions", "lhs_contracting_dimensions")
    _check_distinct(op, rb, rc, "rhs_batching_dimensions", "rhs_contracting_dimensions")
    _check_dims_in_range(op, lhs.rank, lb, "lhs_batching_dimensions")
    _check_dims_in_range(op, lhs.rank, lc, "lhs_contracting_dimensions")
    _check_dims_in_range(op, rhs.rank, rb, "rhs_batching_dimensions")
    _check_dims_in_range(op, rhs.rank, rc, "rhs_contracting_dimensions")
    for what, ldims, rdims in (("batching", lb, rb), ("contracting", lc, rc)):
        for ld, rd in zip(ldims, rdims):
            if not _compatible_dims(lhs.shape[ld], rhs.shape[rd]):
                raise _fail(op, f"{what} dimension sizes must match for lhs/rhs")
    inferred = [lhs.shape[ld] if lhs.shape[ld] is not None else rhs.shape[rd]
                for ld, rd in zip(lb, rb)]
    inferred += [d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc]
    inferred += [d for i, d in enumerate(rhs.shape) if i not in rb and i not in rc]
    _check_result_shape(op, inferred)


@op_verifier("stablehlo.dot")
def verify_dot(op: Operation, ctx: VerifyContext) -> None:
    """``inferDotOp``: vector/matrix operands with matching contracted sizes."""
    types = op.operand_types
    if len(types) != 2 or not _ranked(types):
        return
    lhs, rhs = types
    ranks = (lhs.rank, rhs.rank)
    contracted = {(1, 1): (0, 0), (2, 1): (1, 0), (1, 2): (0, 0), (2, 2): (1, 0)}.get(ranks)
    if contracted is None or not _compatible_dims(lhs.shape[contracted[0]],
                                                  rhs.shape[contracted[1]]):
        raise _fail(op, "expected both lhs/rhs ranks to be either 1 or 2")
    inferred = [*lhs.shape[:lhs.rank - 1], *rhs.shape[1:]]
    _check_result_shape(op, inferred)


# -- convolution ---------------------------------------------------------------------------

def _verify_conv_dims(op: Operation, rank: int, dn: ConvDimensionNumbers) -> None:
    """``isSpatialDimensionsValid``: as many spatial dims in each layout, all in range and
    unique within each."""
    spatial = (dn.input_spatial_dimensions, dn.kernel_spatial_dimensions,
               dn.output_spatial_dimensions)
    if len({len(s) for s in spatial}) != 1:
        raise _fail(op, "expects the same size for input, kernel and output "
                        f"spatial-dimensions, but got {len(spatial[0])}, {len(spatial[1])}, "
                        f"and {len(spatial[2])} resp.")
    layouts = (("input", (dn.input_batch_dimension, dn.input_feature_dimension, *spatial[0])),
               ("kernel", (dn.kernel_input_feature_dimension,
                           dn.kernel_output_feature_dimension, *spatial[1])),
               ("output", (dn.output_batch_dimension, dn.output_feature_dimension,
                           *spatial[2])))
    if any(not 0 <= d < rank for _, dims in layouts for d in dims):
        raise _fail(op, "expects input, kernel, and output dimension-numbers to be in-range "
                        f"[0, {rank}).")
    for name, dims in layouts:
        if not _unique(dims):
            raise _fail(op, f"expects {name} dimension-numbers to be unique, got "
                            f"{{{_list(dims)}}}.")


def _verify_conv_groups(op: Operation, lhs: RankedTensorType, rhs: RankedTensorType,
                        dn: ConvDimensionNumbers) -> None:
    """The group-count checks of ``verifyConvolutionAttributes``."""
    fgc = _int(op.attributes.get("feature_group_count"), 1)
    bgc = _int(op.attributes.get("batch_group_count"), 1)
    if fgc < 1 or bgc < 1:
        return
    if bgc > 1 and fgc > 1:
        raise _fail(op, "expects batch_group_count and feature_group_count not to be both "
                        f"greater than 1. Got {bgc} and {fgc} resp.")
    features, batch = lhs.shape[dn.input_feature_dimension], lhs.shape[dn.input_batch_dimension]
    kin = rhs.shape[dn.kernel_input_feature_dimension]
    kout = rhs.shape[dn.kernel_output_feature_dimension]
    if batch is not None and batch % bgc:
        raise _fail(op, f"expects input batch dimension ({batch}) to be divisible by "
                        f"batch_group_count. Got batch_group_count = {bgc}.")
    if features is not None:
        if features % fgc:
            raise _fail(op, f"expects input feature dimension ({features}) to be a multiple "
                            f"of feature_group_count. Got feature_group_count = {fgc}.")
        if kin is not None and features // fgc != kin:
            raise _fail(op, f"expects input feature dimension ({features}) / "
                            f"feature_group_count = kernel input feature dimension ({kin}). "
                            f"Got feature_group_count = {fgc}.")
    if kout is not None:
        if kout % bgc:
            raise _fail(op, f"expects output feature dimension size ({kout}) to be a "
                            f"multiple of batch_group_count. Got batch_group_count = {bgc}.")
        if kout % fgc:
            raise _fail(op, f"expects kernel output feature dimension ({kout}) to be "
                            f"divisible by feature_group_count. For feature_group_count = "
                            f"{fgc}.")


@op_verifier("stablehlo.convolution")
def verify_convolution(op: Operation, ctx: VerifyContext) -> None:
    """The structural part of ``inferConvolutionOp``: ranks, dimension numbers, groups
    (after the ODS constraints of the group counts)."""
    verify_i64_attrs(op, (("batch_group_count", "positive"), ("feature_group_count", "positive")))
    dn = op.attributes.get("dimension_numbers")
    types = op.operand_types
    if not isinstance(dn, ConvDimensionNumbers) or len(types) != 2 or not _ranked(types):
        return
    lhs, rhs = types
    if lhs.rank < 2:
        raise _fail(op, "expects convolution arguments to have >= 2 dimensions. Got: "
                        f"'{lhs}' and '{rhs}'.")
    if lhs.rank != rhs.rank:
        raise _fail(op, "expects convolution arguments to have same number of dimensions. "
                        f"Got: '{lhs}' and '{rhs}'.")
    _verify_conv_dims(op, lhs.rank, dn)
    _verify_conv_groups(op, lhs, rhs, dn)


# -- reduce and the reduction regions ------------------------------------------------------

def _verify_reducer(op: Operation, input_types: Sequence[RankedTensorType],
                    init_types: Sequence[Type], region: int = 0) -> None:
    """The counts of ``verifyReducerShape``: 2N block arguments, N returned tensors, each
    of the accumulator's type (the reducer is region ``region`` of ``op``)."""
    if len(op.regions) <= region or not op.regions[region].blocks:
        return
    block = op.regions[region].blocks[0]
    n = len(input_types)
    args = block.arg_types
    if len(args) != 2 * n:
        raise _fail(op, f"Reduction-region must take {2 * n} parameters, but takes "
                        f"{len(args)} parameter(s)")
    terminator = block.last_op
    if terminator is None:
        raise _fail(op, "The reduction-region expected to have a terminator")
    returned = terminator.operand_types
    if not returned:
        raise _fail(op, "The reduction-region expected to return some value(s)")
    if len(returned) != n:
        raise _fail(op, f"Reduction-region here must produce {n} tensors, but produces "
                        f"{len(returned)} instead")
    for t in returned:
        if not isinstance(t, RankedTensorType):
            raise _fail(op, "Reduction-region here must produce tensor-typed result(s), "
                            f"but produces {t} instead")
    _verify_reducer_types(op, args, returned)


def _verify_reducer_types(op: Operation, args: Sequence[Type], returned: Sequence[Type]) -> None:
    """``verifyReducerShape``: each pair of block arguments has its accumulator's shape."""
    n = len(returned)
    for i, acc in enumerate(returned):
        for index in (i, n + i):
            arg = args[index]
            if not (isinstance(arg, RankedTensorType)
                    and _compatible_shape(arg.shape, acc.shape)):
                raise _fail(op, f"The type of reduction-region's parameter at index {index} "
                                f"is different than the corresponding result type: {arg} "
                                f"vs {acc}")


def _reduce_shape(op: Operation, inputs: Sequence[RankedTensorType],
                  dims: Sequence[int]) -> list:
    """``verifyReduceOpInputsAndInferShape``: the shape of each result."""
    witness = inputs[0]
    for i, t in enumerate(inputs[1:], 1):
        if not _compatible_shape(witness.shape, t.shape):
            raise _fail(op, "expects all inputs to have compatible shapes. Shape at "
                            f"input-index {i} is not compatible with shape at input-index 0")
    seen: set[int] = set()
    for dim in dims:
        if not 0 <= dim < witness.rank:
            raise _fail(op, f"Out-of-bounds dimension {dim}, expected to be in range "
                            f"[0, {witness.rank})")
        if dim in seen:
            raise _fail(op, f"Duplicate reduction dimension: {dim}")
        seen.add(dim)
    return [d for i, d in enumerate(witness.shape) if i not in seen]


@op_verifier("stablehlo.reduce")
def verify_reduce(op: Operation, ctx: VerifyContext) -> None:
    """``verifyReduceOp``: inputs and init values pair up, dimensions in range and unique,
    a reducer taking and returning one accumulator per input."""
    types = op.operand_types
    if len(types) % 2 or not types or not _ranked(types):
        return
    n = len(types) // 2
    _reduce_shape(op, types[:n], _ints(op.attributes.get("dimensions")))
    _verify_reducer(op, types[:n], types[n:])


@exit_verifier("stablehlo.reduce")
def verify_reduce_result(op: Operation, ctx: VerifyContext) -> None:
    """``inferReduceOp``: each result has the reduced shape, the accumulator's element type."""
    types = op.operand_types
    if len(types) % 2 or not types or not _ranked(types) or not op.regions[0].blocks:
        return
    n = len(types) // 2
    shape = _reduce_shape(op, types[:n], _ints(op.attributes.get("dimensions")))
    terminator = op.regions[0].blocks[0].last_op
    accumulators = terminator.operand_types if terminator is not None else types[n:]
    inferred = [RankedTensorType(tuple(shape), getattr(t, "element_type", t))
                for t in accumulators]
    verify_inferred_result_types(op, inferred, _compatible_types)


# -- reduce_window, select_and_scatter ----------------------------------------------------

def _verify_window(op: Operation, dims: Sequence[int]) -> None:
    """``verifyWindowAttributesAndInferWindowDimensions``: each window attribute has one
    entry per window dimension, and sizes, strides and dilations are positive."""
    attrs = {name: _ints(op.attributes.get(name))
             for name in ("window_strides", "base_dilations", "window_dilations")}
    padding = op.attributes.get("padding")
    pads = padding.type.shape[0] if isinstance(padding, DenseElementsAttr) else 0
    for name, size in (("window-strides", len(attrs["window_strides"])),
                       ("base-dilation factors", len(attrs["base_dilations"])),
                       ("window-dilation factors", len(attrs["window_dilations"])),
                       ("padding-entries", pads)):
        if size not in (0, len(dims)):
            raise _fail(op, f"expects {name} to have same dimension-size as size of window "
                            f"dimensions ({len(dims)}), but got: {size}.")
    for i, size in enumerate(dims):
        if size <= 0:
            raise _fail(op, f"expects window to have positive value for {i}-th window "
                            f"dimension, but got {size}.")
        for key, what in (("window_strides", "stride"),
                          ("base_dilations", "base dilation factor"),
                          ("window_dilations", "window dilation factor")):
            value = attrs[key][i] if attrs[key] else 1
            if value <= 0:
                raise _fail(op, f"expects window to have positive {what} for {i}-th window "
                                f"dimension, but got {value}.")


def _verify_padding_shape(op: Operation) -> None:
    """``convertPaddingAttribute``: a padding attribute of shape [N, 2]."""
    padding = op.attributes.get("padding")
    if isinstance(padding, DenseElementsAttr) and isinstance(padding.type, RankedTensorType):
        shape = padding.type.shape
        if len(shape) != 2 or shape[1] != 2:
            raise _fail(op, "expects the shape of padding-attribute to be {N, 2}, but got "
                            f"{{{_list(shape)}}}.")


@op_verifier("stablehlo.reduce_window")
def verify_reduce_window(op: Operation, ctx: VerifyContext) -> None:
    """``verifyReduceWindowOp``: compatible inputs, one window entry per input dimension,
    a valid window, and the reducer's counts."""
    types = op.operand_types
    if len(types) % 2 or not _ranked(types):
        return
    n = len(types) // 2
    if n == 0:
        raise _fail(op, "requires at least 1 input value")
    inputs = types[:n]
    for i, t in enumerate(inputs[1:], 1):
        if not _compatible_shape(inputs[0].shape, t.shape):
            raise _fail(op, "expects all inputs to have compatible shapes. Shape at "
                            f"input-index {i} is not compatible with shape at input-index 0")
    _verify_padding_shape(op)
    dims = _ints(op.attributes.get("window_dimensions"))
    for t in inputs:
        if t.rank != len(dims):
            raise _fail(op, "expects window-dimensions size == input rank, but got "
                            f"window-dimensions size: {len(dims)} and input: '{t}' with "
                            f"rank = {t.rank}.")
    _verify_window(op, dims)
    _verify_reducer(op, inputs, types[n:])


# -- while, if, case, get_tuple_element ----------------------------------------------------

def _types(types: Sequence[Type]) -> str:
    return ", ".join(f"'{t}'" for t in types)


def _first_block(op: Operation, index: int):
    if len(op.regions) <= index or not op.regions[index].blocks:
        return None
    return op.regions[index].blocks[0]


@exit_verifier("stablehlo.while")
def verify_while(op: Operation, ctx: VerifyContext) -> None:
    """``verifyWhileOp``: operands, both regions' arguments and the body's results agree;
    the condition returns one ``tensor<i1>``."""
    cond, body = _first_block(op, 0), _first_block(op, 1)
    if cond is None or body is None:
        return
    operands = op.operand_types
    if not _compatible_types(operands, cond.arg_types):
        raise _fail(op, "expect operands to be compatible with condition block arguments "
                        f"but got {_types(operands)} vs {_types(cond.arg_types)}")
    if not _compatible_types(operands, body.arg_types):
        raise _fail(op, "expect operands to be compatible with body block arguments but got "
                        f"{_types(operands)} vs {_types(body.arg_types)}")
    if body.last_op is None:
        raise _fail(op, "The while body-region expected to have a terminator")
    returned = body.last_op.operand_types
    if not _compatible_types(operands, returned):
        raise _fail(op, "expect operands to be compatible with body block return types but "
                        f"got {_types(operands)} vs {_types(returned)}")
    cond_returned = cond.last_op.operand_types if cond.last_op is not None else []
    if len(cond_returned) != 1:
        raise _fail(op, "expect condition body returns a single value but got "
                        f"{len(cond_returned)}")
    t = cond_returned[0]
    if not (isinstance(t, RankedTensorType) and t.rank == 0 and t.element_type == I1):
        raise _fail(op, f"expect condition block return a zero-ranked tensor of i1 but got '{t}'")


@exit_verifier("stablehlo.if", "stablehlo.case")
def verify_conditional(op: Operation, ctx: VerifyContext) -> None:
    """``inferConditionalOp``: a scalar predicate or index, branches without arguments
    returning compatible types."""
    types = op.operand_types
    if len(types) != 1 or not _ranked(types):
        return
    element, what = (I1, "bool") if op.name == "stablehlo.if" else (I32, "32-bit signless "
                                                                          "integer")
    if types[0].element_type != element:  # the ODS operand constraint
        raise op_error(op, f"operand #0 must be ranked tensor of {what} values, but got "
                           f"'{types[0]}'")
    if types[0].rank != 0:
        raise _fail(op, f"operand should be rank 0 tensor but got rank {types[0].rank}")
    if not op.regions:
        raise _fail(op, "expect at least one branch")
    blocks = [_first_block(op, i) for i in range(len(op.regions))]
    if any(b is None or b.last_op is None for b in blocks):
        return
    first = blocks[0].last_op.operand_types
    for i, block in enumerate(blocks):
        if block.arg_types:
            raise _fail(op, f"branch {i} must have 0 arguments, but found "
                            f"{len(block.arg_types)}")
        returned = block.last_op.operand_types
        if not _compatible_types(first, returned):
            raise _fail(op, f"branch 0 and branch {i} have mismatched return types: "
                            f"{_types(first)} vs {_types(returned)}")
    verify_inferred_result_types(op, list(first), _compatible_types)


@op_verifier("stablehlo.get_tuple_element")
def verify_get_tuple_element(op: Operation, ctx: VerifyContext) -> None:
    """``inferGetTupleElementOp``: the index names an element of the tuple."""
    types = op.operand_types
    index = _int(op.attributes.get("index"))
    if index is not None and index < 0:
        raise op_error(op, "attribute 'index' failed to satisfy constraint: 32-bit signless "
                           "integer attribute whose value is non-negative")
    if len(types) != 1 or not isinstance(types[0], TupleType) or index is None:
        return
    size = len(types[0].types)
    if index >= size:
        raise _fail(op, f"index {index} is out of bounds of operand with size {size}")
    if op.num_results == 1 and op.result_types[0] != types[0].types[index]:
        verify_inferred_result_types(op, [types[0].types[index]], lambda a, b: a == b)


# -- gather ---------------------------------------------------------------------------------

def _verify_gather_dims(op: Operation, operand: RankedTensorType, indices: RankedTensorType,
                        dn: GatherDimensionNumbers, slice_sizes: Sequence[int]) -> None:
    """``verifyGather``, in upstream's order."""
    offset, collapsed = dn.offset_dims, dn.collapsed_slice_dims
    obatch, start_map, ivd = dn.operand_batching_dims, dn.start_index_map, dn.index_vector_dim
    implied = len(offset) + len(collapsed) + len(obatch)
    if operand.rank != implied:
        raise _fail(op, f"offset_dims size ({len(offset)}) plus collapse_slice_dims size "
                        f"({len(collapsed)}) plus operand_batching_dims size ({len(obatch)}) "
                        f"is not equal to operand rank ({operand.rank})")
    _check_dim_in_bounds(op, ivd, indices.rank, "index_vector_dim", "rank-of('start_indices')")
    size = 1 if ivd == indices.rank else indices.shape[ivd]
    if size is not None and size != len(start_map):
        raise _fail(op, f"start_index_map size ({len(start_map)}) is not equal to size of "
                        f"index dimension ({ivd}) of start_indices ({size})")
    if not _sorted(offset):
        raise _fail(op, f"expects offset_dims to be sorted, got: [{_list(offset)}]")
    if not _unique(offset):
        raise _fail(op, f"expects offset_dims to not repeat, got: [{_list(offset)}]")
    _check_distinct(op, collapsed, obatch, "collapsed_slice_dims", "operand_batching_dims")
    if not _sorted(collapsed):
        raise _fail(op, f"expects collapsed_slice_dims to be sorted, got: [{_list(collapsed)}]")
    _check_in_bounds(op, collapsed, operand.rank, "collapsed_slice_dims", "rank-of('operand')")
    if not _sorted(obatch):
        raise _fail(op, f"expects operand_batching_dims to be sorted, got: [{_list(obatch)}]")
    _check_in_bounds(op, obatch, operand.rank, "operand_batching_dims", "rank-of('operand')")
    _verify_gather_batching(op, operand, indices, dn, slice_sizes)


def _verify_gather_batching(op: Operation, operand: RankedTensorType,
                            indices: RankedTensorType, dn: GatherDimensionNumbers,
                            slice_sizes: Sequence[int]) -> None:
    """The rest of ``verifyGather``: batching dims, start_index_map, slice_sizes."""
    obatch, ibatch, start_map = (dn.operand_batching_dims, dn.start_indices_batching_dims,
                                 dn.start_index_map)
    ivd = dn.index_vector_dim
    if not _unique(ibatch):
        raise _fail(op, f"expects start_indices_batching_dims to not repeat, got: "
                        f"[{_list(ibatch)}]")
    _check_in_bounds(op, ibatch, indices.rank, "start_indices_batching_dims",
                     "rank-of('start_indices')")
    if ivd in ibatch:
        raise _fail(op, f"expects start_indices_batching_dims not to include "
                        f"index_vector_dim {ivd}")
    if len(obatch) != len(ibatch):
        raise _fail(op, "operand_batching_dims and start_indices_batching_dims should have "
                        "the same size")
    for i, (od, sd) in enumerate(zip(obatch, ibatch)):
        a, b = operand.shape[od], indices.shape[sd]
        if not _compatible_dims(a, b):
            raise _fail(op, f"operand_batching_dims[{i}] and start_indices_batching_dims[{i}] "
                            f"must have compatible sizes, but got {_dim(a)} and {_dim(b)}")
    _check_distinct(op, start_map, obatch, "start_index_map", "operand_batching_dims")
    _check_in_bounds(op, start_map, operand.rank, "start_index_map", "rank-of('operand')")
    if len(slice_sizes) != operand.rank:
        raise _fail(op, f"slice_sizes size ({len(slice_sizes)}) not equal to operand rank "
                        f"({operand.rank})")


def _dim(d) -> str:
    """A dimension size as ``llvm::raw_ostream`` prints ``ShapedType::kDynamic``."""
    return str(-(2 ** 63)) if d is None else str(d)


def _gather_shape(op: Operation, operand: RankedTensorType, indices: RankedTensorType,
                  dn: GatherDimensionNumbers, slice_sizes: Sequence[int]) -> list:
    """``inferGatherOp`` after ``verifyGather``: slice sizes, then the result shape."""
    for name, dims in (("collapsed_slice_dims", dn.collapsed_slice_dims),
                       ("operand_batching_dims", dn.operand_batching_dims)):
        for dim in dims:
            if slice_sizes[dim] > 1:
                raise _fail(op, f"Expects that for each dim in {name}, slice_sizes[dim] "
                                f"should be <= 1, but got {slice_sizes[dim]}")
    for i, size in enumerate(slice_sizes):
        bound = operand.shape[i]
        if size < 0 or (bound is not None and size > bound):
            raise _fail(op, f"slice size ({size}) is out of bounds for operand dimension "
                            f"({_dim(bound)}) at index {i}")
    ivd = dn.index_vector_dim
    indices_shape = list(indices.shape) + ([1] if ivd == indices.rank else [])
    rank = len(dn.offset_dims) + len(indices_shape) - 1
    _check_in_bounds(op, dn.offset_dims, rank, "offset_dims", "implied-result-rank")
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window = [s for i, s in enumerate(slice_sizes) if i not in dropped]
    batch = [d for i, d in enumerate(indices_shape) if i != ivd]
    shape = []
    for i in range(rank):
        if i in dn.offset_dims:
            shape.append(window[dn.offset_dims.index(i)])
        else:
            shape.append(batch.pop(0))
    return shape


@op_verifier("stablehlo.gather")
def verify_gather(op: Operation, ctx: VerifyContext) -> None:
    """``inferGatherOp``: the dimension numbers, slice sizes and the result type."""
    dn = op.attributes.get("dimension_numbers")
    types = op.operand_types
    if not isinstance(dn, GatherDimensionNumbers) or len(types) != 2 or not _ranked(types):
        return
    operand, indices = types
    slice_sizes = _ints(op.attributes.get("slice_sizes"))
    _verify_gather_dims(op, operand, indices, dn, slice_sizes)
    shape = _gather_shape(op, operand, indices, dn, slice_sizes)
    inferred = [RankedTensorType(tuple(shape), operand.element_type)]
    verify_inferred_result_types(op, inferred, _compatible_types)


# -- scatter --------------------------------------------------------------------------------

def _verify_scatter_dims(op: Operation, operand: RankedTensorType, indices_shape: list,
                         update: RankedTensorType, dn: ScatterDimensionNumbers) -> None:
    """``validateScatterDimensionNumbers``, in upstream's order."""
    uwd, iwd = dn.update_window_dims, dn.inserted_window_dims
    ibd = dn.input_batching_dims
    window = len(uwd) + len(iwd) + len(ibd)
    if operand.rank != window:
        raise _fail(op, "Expects rank-of operand to match size-of('update_window_dims') + "
                        "size-of('inserted_window_dims') + size-of('input_batching_dims') "
                        f"i.e. {window} but got {operand.rank}.")
    if not _sorted(uwd):
        raise _fail(op, f"Expects update_window_dims to be sorted; got: [{_list(uwd)}].")
    if not _unique(uwd):
        raise _fail(op, f"Expects update_window_dims to not repeat; got: [{_list(uwd)}].")
    _check_in_bounds(op, uwd, update.rank, "update_window_dims", "rank-of('updates')")
    _check_distinct(op, iwd, ibd, "inserted_window_dims", "input_batching_dims")
    if not _sorted(iwd):
        raise _fail(op, f"Expects inserted_window_dims to be sorted; got: [{_list(iwd)}].")
    _check_in_bounds(op, iwd, operand.rank, "inserted_window_dims", "rank-of('operand')")
    if not _sorted(ibd):
        raise _fail(op, f"Expects input_batching_dims to be sorted; got: [{_list(ibd)}].")
    _check_in_bounds(op, ibd, operand.rank, "input_batching_dims", "rank-of('operand')")
    _verify_scatter_batching(op, operand, indices_shape, dn)


def _verify_scatter_batching(op: Operation, operand: RankedTensorType, indices_shape: list,
                             dn: ScatterDimensionNumbers) -> None:
    """The rest of ``validateScatterDimensionNumbers``: batching dims and
    scatter_dims_to_operand_dims."""
    ibd, sibd, sdod = (dn.input_batching_dims, dn.scatter_indices_batching_dims,
                       dn.scatter_dims_to_operand_dims)
    ivd = dn.index_vector_dim
    if not _unique(sibd):
        raise _fail(op, "Expects scatter_indices_batching_dims to not repeat; got: "
                        f"[{_list(sibd)}].")
    _check_in_bounds(op, sibd, len(indices_shape), "scatter_indices_batching_dims",
                     "rank-of('scatter_indices')")
    if ivd in sibd:
        raise _fail(op, "expects scatter_indices_batching_dims not to include "
                        f"index_vector_dim {ivd}.")
    if len(ibd) != len(sibd):
        raise _fail(op, "input_batching_dims and scatter_indices_batching_dims should have "
                        "the same size.")
    for i, (a, b) in enumerate(zip(ibd, sibd)):
        x, y = operand.shape[a], indices_shape[b]
        if not _compatible_dims(x, y):
            raise _fail(op, f"input_batching_dims[{i}] and scatter_indices_batching_dims[{i}] "
                            f"must have compatible sizes, but got {_dim(x)} and {_dim(y)}.")
    bound = indices_shape[ivd]
    if bound is not None and len(sdod) != bound:
        raise _fail(op, f"Scatter op has {len(sdod)} elements in scatter_dims_to_operand_dims "
                        f"and the bound of dimension index_vector_dim={ivd} of "
                        f"scatter_indices is {bound}. These two numbers must be equal.")
    _check_distinct(op, sdod, ibd, "scatter_dims_to_operand_dims", "input_batching_dims")
    _check_in_bounds(op, sdod, operand.rank, "scatter_dims_to_operand_dims",
                     "rank-of('operand')")


@op_verifier("stablehlo.scatter")
def verify_scatter(op: Operation, ctx: VerifyContext) -> None:
    """``verifyScatterOp``: compatible inputs and updates, index_vector_dim in range, the
    update computation, update ranks, then the dimension numbers."""
    dn = op.attributes.get("scatter_dimension_numbers")
    types = op.operand_types
    if not isinstance(dn, ScatterDimensionNumbers) or len(types) % 2 == 0 \
            or len(types) < 3 or not _ranked(types):
        return
    n = len(types) // 2
    inputs, indices, updates = types[:n], types[n], types[n + 1:]
    if any(not _compatible_shape(inputs[0].shape, t.shape) for t in inputs):
        raise _fail(op, "Not all inputs have compatible shapes.")
    if any(not _compatible_shape(updates[0].shape, t.shape) for t in updates):
        raise _fail(op, "Not all updates have compatible shapes.")
    ivd = dn.index_vector_dim
    _check_dim_in_bounds(op, ivd, indices.rank, "index_vector_dim",
                         "rank-of('scatter_indices')")
    _verify_reducer(op, inputs, [RankedTensorType((), u.element_type) for u in updates])
    indices_shape = list(indices.shape) + ([1] if ivd == indices.rank else [])
    expected = len(indices_shape) - 1 + len(dn.update_window_dims)
    for update in updates:
        if update.rank != expected:
            raise _fail(op, f"expects updates tensor must be of rank {expected} ( == "
                            "rank-of('scatter_indices') - 1 + size-of('update_window_dims'), "
                            "where 'scatter_indices' is expanded by a trailing 1 dimension "
                            "if 'index_vector_dim' == rank-of('scatter_indices')), but got "
                            f"{update.rank}.")
    for operand, update in zip(inputs, updates):
        _verify_scatter_dims(op, operand, indices_shape, update, dn)


# -- sort -----------------------------------------------------------------------------------

@op_verifier("stablehlo.sort")
def verify_sort(op: Operation, ctx: VerifyContext) -> None:
    """``verifySortOp``: the dimension in range and the comparator's signature."""
    types = op.operand_types
    if not types or not _ranked(types):
        return
    rank = types[0].rank
    dim = _int(op.attributes.get("dimension"), -1)
    if not -rank <= dim < rank:
        raise _fail(op, f"dimension attribute value must be in range [-{rank}, {rank}), "
                        f"but found {dim}")
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    args = block.arg_types
    if len(args) != 2 * len(types):
        raise _fail(op, f"comparator block should have {2 * len(types)} arguments")
    for index, t in enumerate(types):
        scalar = RankedTensorType((), t.element_type)
        for i in (2 * index, 2 * index + 1):
            if args[i] != scalar:
                raise _fail(op, f"comparator block argument #{i} should be of type {scalar} "
                                f"but got {args[i]}")
