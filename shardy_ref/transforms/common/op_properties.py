"""Upstream ``transforms/common/op_properties.cc``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/common/op_properties.cc):
which ops are element-wise (``isElementwise``) and pure (MLIR's ``isPure``: ``Pure``, or
``NoMemoryEffect`` plus a speculatability rule that holds for the operand types), from the
traits of ``stablehlo/dialect/StablehloOps.td`` and sdy's ``ir/ops.td``."""
from __future__ import annotations

from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import RankedTensorType

# ``StableHLO_UnaryElementwiseOp`` (and ``reduce_precision``): ``Elementwise``,
# ``NoMemoryEffect``, ``HLO_SpeculatableIfStaticDimInOutputIsStaticInInput``.
_UNARY_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """abs cbrt ceil convert
count_leading_zeros cosine exponential exponential_minus_one floor imag is_finite log
log_plus_one logistic not negate popcnt real round_nearest_afz round_nearest_even rsqrt sign
sine sqrt tan tanh uniform_quantize uniform_dequantize reduce_precision""".split())


# ``StableHLO_BinaryElementwiseOp`` (incl. the bitwise/logical ones) and ``compare``
# (``Elementwise``), ``clamp`` and ``select`` (``HLO_BroadcastingElementwise``): all
# ``NoMemoryEffect`` and ``HLO_SpeculatableIfAllInputsStatic``.
_NARY_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """add atan2 complex divide maximum
minimum multiply power remainder shift_left shift_right_arithmetic shift_right_logical
subtract and or xor compare clamp select""".split())


BITCAST_CONVERT = "stablehlo.bitcast_convert"


BROADCAST_IN_DIM = "stablehlo.broadcast_in_dim"


RESHAPE = "stablehlo.reshape"


SLICE = "stablehlo.slice"


# Ops ``isElementwise`` accepts although they lack the trait (``op_properties.cc``).
_SDY_ELEMENTWISE = frozenset(
    ("sdy.propagation_barrier", "sdy.sharding_constraint", "sdy.reshard"))


def _static_dims_of_result_static_in_operand(op: Operation, rank: int | None = None) -> bool:
    """``SpeculatableIfStaticDimInOutputIsStaticInInput`` (``Base.h``): no result dimension
    is static where operand 0's is dynamic (over the first ``rank`` dimensions)."""
    operand, result = op.operands[0].type, op.results[0].type
    if not isinstance(operand, RankedTensorType) or not isinstance(result, RankedTensorType):
        return False
    n = result.rank if rank is None else rank
    return all(result.shape[i] is None or operand.shape[i] is not None for i in range(n))


def _all_operands_static(op: Operation) -> bool:
    """``SpeculatableIfAllInputsStatic`` (``Base.h``)."""
    return all(isinstance(t, RankedTensorType) and t.has_static_shape
               for t in op.operand_types)


def _bitcast_convert_speculatable(op: Operation) -> bool:
    """``BitcastConvertOp::getSpeculatability``: the static-dimension rule over the
    dimensions operand and result share."""
    operand, result = op.operands[0].type, op.results[0].type
    if not isinstance(operand, RankedTensorType) or not isinstance(result, RankedTensorType):
        return False
    return _static_dims_of_result_static_in_operand(op, min(operand.rank, result.rank))


def _reshape_speculatable(op: Operation) -> bool:
    """``ReshapeOp::getSpeculatability``: the operand has a static shape."""
    t = op.operands[0].type
    return isinstance(t, RankedTensorType) and t.has_static_shape


# op name -> whether the (``NoMemoryEffect``, conditionally speculatable) op is speculatable
_SPECULATABLE = {
    **dict.fromkeys(_UNARY_ELEMENTWISE, _static_dims_of_result_static_in_operand),
    **dict.fromkeys(_NARY_ELEMENTWISE, _all_operands_static),
    BITCAST_CONVERT: _bitcast_convert_speculatable,
    BROADCAST_IN_DIM: _all_operands_static,
    RESHAPE: _reshape_speculatable,
    SLICE: _static_dims_of_result_static_in_operand,
}


def is_pure(op: Operation) -> bool:
    """MLIR ``isPure`` (speculatable and free of memory effects) for the ops this pass asks
    about; other registered ops without regions are pure iff declared ``Pure`` (their op
    definition: ``sdy.sharding_constraint`` is not, it declares no memory effects), and
    unregistered ops never are."""
    rule = _SPECULATABLE.get(op.name)
    if rule is not None:
        return rule(op)
    d = op_def(op.name)
    return d is not None and d.pure and not op.regions


def is_elementwise(op: Operation) -> bool:
    """Upstream ``isElementwise`` (``transforms/common/op_properties.cc``)."""
    if op.name in _UNARY_ELEMENTWISE or op.name in _NARY_ELEMENTWISE:
        return True
    if op.name == BITCAST_CONVERT:  # shapes are equal iff bit widths are
        shapes = {getattr(v.type, "shape", None) for v in (op.operands[0], op.results[0])}
        return len(shapes) == 1
    return op.name in _SDY_ELEMENTWISE
