"""Verification of StableHLO's dynamic-shape ops (dynamic_broadcast_in_dim, dynamic_iota,
dynamic_pad, dynamic_reshape, real_dynamic_slice) and of the ops with computations (map,
select_and_scatter), with upstream's messages (``hlo::verify*Op``/``hlo::infer*Op`` in
``stablehlo/dialect/TypeInference.cpp``). The region checks keep the interpreter's calls
of the computations well-typed; the dynamic-op checks keep indices and ranks in range.
Shape operands are read when they are ``stablehlo.constant``s (MLIR's ``matchInts``).
"""
from __future__ import annotations

from collections.abc import Sequence

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.types import I1, RankedTensorType, Type
from shardy_ref.ir.verify import op_error
from shardy_ref.ir.verify.chlo_ops import infer_error
from shardy_ref.ir.verify.ods import Counts, i64_array, i64_attr
from shardy_ref.ir.verify.stablehlo_elementwise_shape import T
from shardy_ref.ir.verify.stablehlo_misc_ops import (
    STATIC_SHAPE,
    OpSpec,
    compatible_dims,
    compatible_shape,
    constant_ints,
    dims,
    fail,
    ints,
    ranked,
    register,
)
from shardy_ref.ir.verify.stablehlo_structured import (
    _verify_padding_shape,
    _verify_reducer,
    _verify_window,
)

_TENSOR = T("F P I C Q")
_SHAPE = STATIC_SHAPE
_INDICES = T("IDX", "1D")


def _element(t: Type) -> Type:
    return getattr(t, "element_type", t)


def _check_shape_operand(op: Operation, shape: Value, result: Type) -> None:
    """``verifyShapeOperandIsCompatibleWithResultType``: a constant shape operand matches
    the result's shape."""
    values = constant_ints(shape)
    if values is None or not isinstance(result, RankedTensorType):
        return
    if not compatible_shape(values, result.shape):
        raise fail(op, f"output shape [{', '.join(map(str, values))}] is incompatible with "
                       f"return type of operation '{result}'")


def _compatible_elements(op: Operation, operand: Type, result: Type) -> None:
    if _element(operand) != _element(result):
        raise fail(op, f"expects operand and result to have compatible element type. Got: "
                       f"'{operand}' and '{result}'")


# -- dynamic_broadcast_in_dim ---------------------------------------------------------------

def _verify_dynamic_broadcast_in_dim(op: Operation) -> None:
    """``hlo::verifyDynamicBroadcastInDimOp``."""
    operand, result = op.operand_types[0], op.result_types[0]
    if not ranked((operand, result)):
        return
    _compatible_elements(op, operand, result)
    bdims = ints(op.attributes["broadcast_dimensions"])
    if len(bdims) != operand.rank:
        raise fail(op, f"broadcast_dimensions size ({len(bdims)}) does not match operand "
                       f"rank ({operand.rank})")
    if result.rank < operand.rank:
        raise fail(op, f"result rank ({result.rank}) is less than operand rank "
                       f"({operand.rank})")
    if len(set(bdims)) != len(bdims):
        raise fail(op, "broadcast_dimensions should not have duplicates")
    _verify_broadcast_dimensions(op, bdims, operand, result)
    _check_shape_operand(op, op.operands[1], result)
    _verify_expansion_hints(op, operand)
    _verify_output_dimensions(op, bdims, operand)


def _verify_broadcast_dimensions(op: Operation, bdims: Sequence[int],
                                 operand: RankedTensorType, result: RankedTensorType) -> None:
    """Each broadcast dimension is a result dimension whose size fits the operand's."""
    for i, d in enumerate(bdims):
        if not 0 <= d < result.rank:
            raise fail(op, f"broadcast_dimensions contains invalid value {d} for result with "
                           f"rank {result.rank}")
        size, out = operand.shape[i], result.shape[d]
        if size != 1 and not compatible_dims(size, out):
            raise fail(op, f"size of operand dimension {i} ({dims([size])}) is not compatible "
                           f"with size of result dimension {d} ({dims([out])})")


def _verify_output_dimensions(op: Operation, bdims: Sequence[int],
                              operand: RankedTensorType) -> None:
    """A constant ``output_dimensions`` operand: each static operand dimension other than 1
    equals the shape value at its broadcast dimension."""
    shape = constant_ints(op.operands[1])
    if shape is None or not operand.has_static_shape:
        return
    for i, d in enumerate(bdims):
        size = operand.shape[i]
        if size != 1 and d < len(shape) and size != shape[d]:
            raise fail(op, f"size of operand dimension {i} ({size}) is not equal to 1 or "
                           f"value of shape at index {d} ({shape[d]})")


def _verify_expansion_hints(op: Operation, operand: RankedTensorType) -> None:
    hints: list[int] = []
    for name in ("known_expanding_dimensions", "known_nonexpanding_dimensions"):
        hints += ints(op.attributes.get(name)) or ()
    if len(set(hints)) != len(hints):
        raise fail(op, "duplicate expansion hint for at least one operand dimension")
    for i in hints:
        if not 0 <= i < operand.rank:
            raise fail(op, f"hint for expanding dimension {i} does not refer to a valid "
                           "operand dimension")


# -- dynamic_iota, dynamic_pad, dynamic_reshape, real_dynamic_slice -----------------------

def _verify_dynamic_iota(op: Operation) -> None:
    """``hlo::verifyDynamicIotaOp``."""
    result = op.result_types[0]
    if not isinstance(result, RankedTensorType):
        return
    if op.attributes["iota_dimension"].value >= result.rank:
        raise fail(op, "iota dimension cannot go beyond the output rank.")
    _check_shape_operand(op, op.operands[0], result)


def _verify_dynamic_pad(op: Operation) -> None:
    """``hlo::verifyDynamicPadOp``: one padding entry per dimension; constant paddings give
    the result's static sizes."""
    operand, low = op.operand_types[0], op.operand_types[2]
    result = op.result_types[0]
    if not ranked((operand, low, result)):
        return
    if low.shape[0] != operand.rank:
        raise fail(op, f"padding operands size ({dims(low.shape[:1])}) must match operand "
                       f"rank ({operand.rank})")
    interior = constant_ints(op.operands[4])
    if interior is not None and any(i < 0 for i in interior):
        raise fail(op, f"interior_padding must be non-negative, but got {dims(interior)}")
    lows, highs = constant_ints(op.operands[2]), constant_ints(op.operands[3])
    if interior is None or lows is None or highs is None or \
            not operand.has_static_shape or not result.has_static_shape:
        return
    for i, (n, out, lo, hi, inner) in enumerate(zip(operand.shape, result.shape, lows, highs,
                                                    interior)):
        want = n + lo + max(n - 1, 0) * inner + hi
        if out != want:
            raise fail(op, f"expected output dimension at index {i} to equal {want}, but got "
                           f"{out}")


def _verify_dynamic_reshape(op: Operation) -> None:
    """``hlo::verifyDynamicReshapeOp``."""
    operand, shape, result = op.operand_types[0], op.operand_types[1], op.result_types[0]
    if not ranked((operand, shape, result)):
        return
    _compatible_elements(op, operand, result)
    if operand.has_static_shape and result.has_static_shape and \
            operand.num_elements != result.num_elements:
        raise fail(op, f"number of output elements ({result.num_elements}) doesn't match "
                       f"expected number of elements ({operand.num_elements})")
    _check_shape_operand(op, op.operands[1], result)
    if shape.shape[0] != result.rank:
        raise fail(op, "result should have a rank equal to the number of elements in "
                       "output_shape")
    values = constant_ints(op.operands[1])
    if values is not None and operand.has_static_shape:
        count = 1
        for v in values:
            count *= v
        if count != operand.num_elements:
            raise fail(op, f"output_shape is incompatible with input type of operation: "
                           f"input has {operand.num_elements} elements, but output_shape "
                           f"has {count}")


def _verify_real_dynamic_slice(op: Operation) -> None:
    """``hlo::verifyRealDynamicSliceOp``: one start, limit and stride per dimension."""
    operand = op.operand_types[0]
    if not ranked(op.operand_types):
        return
    for name, t in zip(("start_indices", "limit_indices", "strides"), op.operand_types[1:]):
        n = t.shape[0] if t.rank == 1 else None
        if n != operand.rank:
            raise fail(op, f"has mismatched number of operand rank ({operand.rank}) and "
                           f"{name} size ({dims(t.shape[:1])})")


# -- map ------------------------------------------------------------------------------------

def _same_shape(op: Operation) -> None:
    """``SameOperandsAndResultShape``."""
    types = [t for t in (*op.operand_types, *op.result_types)
             if isinstance(t, RankedTensorType)]
    if any(not compatible_shape(t.shape, types[0].shape) for t in types):
        raise op_error(op, "requires the same shape for all operands and results")


def _infer_map(op: Operation) -> list[Type] | None:
    """``hlo::inferMapOp``: a computation on one scalar of each operand returning one
    scalar, applied to every dimension in order."""
    if not op.regions[0].blocks:
        raise infer_error(op, "expect non-empty region")
    block = op.regions[0].blocks[0]
    inputs = op.operand_types
    if not ranked(inputs):
        return None
    out = _map_computation_result(op, block, inputs)
    dimensions = ints(op.attributes["dimensions"])
    if any(d != i for i, d in enumerate(dimensions)):
        raise infer_error(op, f"requires monotonically increasing dimension numbers, but "
                              f"got: {dims(dimensions)}")
    shape: Sequence = ()
    for t in inputs:
        if len(dimensions) != t.rank:
            raise infer_error(op, f"applied to a subset of dimensions currently not "
                                  f"supported: operand dimensions = {t.rank}, requested map "
                                  f"dimensions size = {len(dimensions)}")
        shape = t.shape
    return [RankedTensorType(tuple(shape), out.element_type)]


def _map_computation_result(op: Operation, block, inputs: Sequence[Type]) -> RankedTensorType:
    """The map computation takes one scalar of each operand's element type and returns one
    scalar: that scalar's type."""
    args = block.arg_types
    if len(inputs) != len(args):
        raise infer_error(op, f"expects number of operands to match the arity of map "
                              f"computation, but got: {len(inputs)} and {len(args)}")
    for i, (arg, t) in enumerate(zip(args, inputs)):
        if not isinstance(arg, RankedTensorType) or arg.rank != 0:
            raise infer_error(op, f"computation arguments must be 0-rank tensor, but got: "
                                  f"arg #{i} of type '{arg}'")
        if arg.element_type != _element(t):
            raise infer_error(op, f"element type of operands and computation arguments must "
                                  f"match, but got: '{_element(t)}' and '{arg.element_type}'")
    outputs = block.last_op.operand_types if block.last_op is not None else []
    if len(outputs) != 1:
        raise infer_error(op, f"computation must return single output, but got: "
                              f"{len(outputs)}")
    out = outputs[0]
    if not isinstance(out, RankedTensorType) or out.rank != 0:
        raise infer_error(op, f"computation must return 0-rank tensor, but got: '{out}'")
    return out


# -- select_and_scatter ---------------------------------------------------------------------

def _verify_select(op: Operation, operand: RankedTensorType) -> None:
    """The select region: two scalars of the operand's element type, returning one i1."""
    if not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    args = block.arg_types
    if len(args) != 2:
        raise fail(op, f"expects the select-region to take 2 parameters, but takes "
                       f"{len(args)}")
    expected = RankedTensorType((), operand.element_type)
    for i, arg in enumerate(args):
        if not (isinstance(arg, RankedTensorType) and arg.rank == 0
                and arg.element_type == operand.element_type):
            raise fail(op, f"expects the type of select-region's parameter at index {i} to "
                           f"be '{expected}', but got '{arg}'")
    returned = block.last_op.operand_types if block.last_op is not None else []
    if len(returned) != 1:
        raise fail(op, f"expects select-region to return single value, but got: "
                       f"{len(returned)}")
    t = returned[0]
    if not (isinstance(t, RankedTensorType) and t.element_type == I1 and t.rank == 0):
        raise fail(op, f"expects the return-type of select-region to be tensor<i1>, but "
                       f"got: '{t}'")


def _window_shape(op: Operation, shape: Sequence, window: Sequence[int]) -> list:
    """``inferWindowOutputShape`` without dilations."""
    strides = ints(op.attributes.get("window_strides")) or (1,) * len(window)
    padding = op.attributes.get("padding")
    pads = [(0, 0)] * len(window)
    if isinstance(padding, DenseElementsAttr) and padding.values:
        values = padding.values * (2 * len(window)) if padding.is_splat else padding.values
        pads = list(zip(values[::2], values[1::2]))
    out = []
    for size, w, stride, (lo, hi) in zip(shape, window, strides, pads):
        if size is None:
            out.append(None)
            continue
        bound = lo + size + hi
        out.append(0 if bound <= 0 or w > bound else (bound - w) // stride + 1)
    return out


def _verify_select_and_scatter(op: Operation) -> None:
    """``hlo::verifySelectAndScatterOp``: the select region, the scatter reducer, the
    window, and the source's shape (one element per window)."""
    operand, source, init = op.operand_types
    if not ranked((operand, source, init)):
        return
    _verify_select(op, operand)
    _verify_reducer(op, [RankedTensorType((), source.element_type)], [init], region=1)
    window = ints(op.attributes.get("window_dimensions")) or ()
    if operand.rank != len(window):
        raise fail(op, f"expects window-dimensions size == operand rank, but got "
                       f"window-dimensions size: {len(window)} and operand-type: '{operand}' "
                       f"with rank = {operand.rank}.")
    _verify_padding_shape(op)
    _verify_window(op, window)
    expected = RankedTensorType(tuple(_window_shape(op, operand.shape, window)),
                                operand.element_type)
    if not (compatible_shape(expected.shape, source.shape)
            and source.element_type == operand.element_type):
        raise fail(op, f"expects source-type to be '{expected}', but got'{source}'")


def _infer_select_and_scatter(op: Operation) -> list[Type] | None:
    """``hlo::inferSelectAndScatterOp``: the operand's shape, the scatter's element type."""
    operand = op.operand_types[0]
    block = op.regions[1].blocks[0] if op.regions[1].blocks else None
    returned = block.last_op.operand_types if block is not None and block.last_op is not None \
        else []
    element = _element(returned[0]) if returned else _element(operand)
    return [RankedTensorType(operand.shape, element)] if ranked((operand,)) else None


register({
    "dynamic_broadcast_in_dim": OpSpec(
        Counts(2), (i64_array("broadcast_dimensions"),
                    i64_array("known_expanding_dimensions", False),
                    i64_array("known_nonexpanding_dimensions", False)),
        ((1, _SHAPE),), verify=_verify_dynamic_broadcast_in_dim),
    "dynamic_iota": OpSpec(Counts(1), (i64_attr("iota_dimension", "non-negative"),),
                           ((0, _SHAPE),), verify=_verify_dynamic_iota),
    "dynamic_pad": OpSpec(Counts(5), (), ((0, _TENSOR), (1, T("F P I C Q", "0D")),
                                          (2, _SHAPE), (3, _SHAPE), (4, _SHAPE)),
                          verify=_verify_dynamic_pad),
    "dynamic_reshape": OpSpec(Counts(2), (), ((0, T("F P I C Q QA")), (1, _SHAPE)),
                              ((0, T("F P I C Q QA")),), _verify_dynamic_reshape),
    "real_dynamic_slice": OpSpec(Counts(4), (), ((0, _TENSOR), (slice(1, None), _INDICES)),
                                 ((0, _TENSOR),), _verify_real_dynamic_slice),
    "map": OpSpec(Counts(None, 1, 1), (i64_array("dimensions"),),
                  ((slice(None), T("F P I C Q", variadic=True)),), ((0, _TENSOR),),
                  _same_shape, _infer_map),
    "select_and_scatter": OpSpec(Counts(3, 1, 2), (i64_array("window_dimensions", False),
                                                   i64_array("window_strides", False)),
                                 ((0, _TENSOR), (1, _TENSOR), (2, _TENSOR)), ((0, _TENSOR),),
                                 _verify_select_and_scatter,
                                 infer=_infer_select_and_scatter),
})
