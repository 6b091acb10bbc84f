"""Upstream ``transforms/common/op_properties.cc``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/common/op_properties.cc):
which ops are element-wise (``isElementwise``) and pure (MLIR's ``isPure``: ``Pure``, or
``NoMemoryEffect`` plus a speculatability rule that holds for the operand types), from the
traits of their op definitions (:mod:`shardy_ref.ir.opdefs`)."""
from __future__ import annotations

from shardy_ref.ir.opdefs import OpDef, op_def
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import RankedTensorType

BITCAST_CONVERT = "stablehlo.bitcast_convert"


BROADCAST_IN_DIM = "stablehlo.broadcast_in_dim"


RESHAPE = "stablehlo.reshape"


SLICE = "stablehlo.slice"


# The associative and commutative ops upstream's ``getCommonSupportedReductionOp``
# (``ir/utils.cc``) accepts as a scatter's update computation; the logical ones only on i1.
REDUCTION_OPS = frozenset(("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                           "stablehlo.minimum"))
LOGICAL_REDUCTION_OPS = frozenset(("stablehlo.and", "stablehlo.or"))


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


# speculatability trait -> whether the op is speculatable
_SPECULATABLE_IF = {
    "SpeculatableIfStaticDimInOutputIsStaticInInput": _static_dims_of_result_static_in_operand,
    "SpeculatableIfAllInputsStatic": _all_operands_static,
}

# ``ConditionallySpeculatable`` ops with their own ``getSpeculatability``
_GET_SPECULATABILITY = {BITCAST_CONVERT: _bitcast_convert_speculatable,
                        RESHAPE: _reshape_speculatable}


def is_pure(op: Operation) -> bool:
    """MLIR ``isPure`` (speculatable and free of memory effects) for the ops this pass asks
    about (the element-wise ones, ``broadcast_in_dim``, ``reshape``, ``slice``: by their
    speculatability); other registered ops without regions are pure iff free of memory
    effects by their op definition (``sdy.sharding_constraint`` is not, it declares no
    memory effects), and unregistered ops never are."""
    rule = _GET_SPECULATABILITY.get(op.name)
    if rule is not None:
        return rule(op)
    d = op_def(op.name)
    if d is None:
        return False
    if _has_elementwise_trait(d) or op.name in (BROADCAST_IN_DIM, SLICE):
        rule = next(rule for trait, rule in _SPECULATABLE_IF.items() if trait in d.traits)
        return rule(op)
    return not op.regions and ("Pure" in d.traits or "NoMemoryEffect" in d.traits)


def _has_elementwise_trait(d: OpDef) -> bool:
    return "Elementwise" in d.traits or "BroadcastingElementwise" in d.traits


def is_elementwise(op: Operation) -> bool:
    """Upstream ``isElementwise`` (``transforms/common/op_properties.cc``)."""
    d = op_def(op.name)
    if d is not None and _has_elementwise_trait(d):
        return True
    if op.name == BITCAST_CONVERT:  # shapes are equal iff bit widths are
        shapes = {getattr(v.type, "shape", None) for v in (op.operands[0], op.results[0])}
        return len(shapes) == 1
    return op.name in _SDY_ELEMENTWISE
