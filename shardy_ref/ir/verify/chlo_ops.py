"""Verification of CHLO ops with upstream's messages (``ChloOps.td``, ``ChloOps.cpp``,
``stablehlo/dialect/TypeInference.cpp``), checked in MLIR's order: operand/result/region
counts, required attributes and attribute kinds, operand and result type constraints
(``tensor of 4/6/8/16/32/64-bit float values``), the traits in declaration order
(``HLO_CompatibleOperandsAndResultType``, ``Elementwise``, ``SameOperandsAndResultShape``,
``SameOperandsAndResultElementType``...), result type inference (numpy or
``broadcast_dimensions`` broadcasting, ``top_k``'s shape, ``constant``'s type), then the
op's ``verify()`` (``constant_like``, ``ragged_dot``, ``scan``; ``scan``'s inferred types
after its body, as ``InferTypeOpInterface`` verifies with regions).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import (
    DenseArrayAttr,
    DenseElementsAttr,
    DenseResourceElementsAttr,
    IntegerAttr,
)
from shardy_ref.ir.chlo_attrs import ChloEnum
from shardy_ref.ir.chlo_families import BINARY, BROADCAST_BINARY, UNARY
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import (
    I1,
    I32,
    I64,
    ComplexType,
    FloatType,
    IntegerType,
    RankedTensorType,
    Type,
    UnrankedTensorType,
)
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier
from shardy_ref.ir.verify.ods import (
    AttrConstraint,
    verify_attrs,
    verify_inferred_result_types,
    verify_repeating_types,
)

TENSORS = (RankedTensorType, UnrankedTensorType)


# -- element and type constraints (stablehlo/dialect/Base.td) ------------------------------

def _is_float(t) -> bool:
    return isinstance(t, FloatType) and t.name not in ("tf32", "f80", "f128")


def _is_complex(t) -> bool:
    return isinstance(t, ComplexType) and getattr(t.element_type, "name", "") in ("f32", "f64")


def _is_int(t) -> bool:
    return isinstance(t, IntegerType) and t.width in (2, 4, 8, 16, 32, 64) and \
        t.signedness != "signed"


def _is_pred(t) -> bool:
    return isinstance(t, IntegerType) and t.width == 1 and t.is_signless


def _is_any(t) -> bool:
    from shardy_ref.ir.types import OpaqueType

    quant = isinstance(t, OpaqueType) and t.dialect == "quant"
    return _is_float(t) or _is_pred(t) or _is_int(t) or _is_complex(t) or quant


@dataclass(frozen=True, slots=True)
class TensorOf:
    """ODS ``TensorOf<...>`` / ``RankedTensorOf<...>``: its predicate and summary."""

    element: Callable[[Type], bool]
    what: str
    ranked: bool = False

    def accepts(self, t: Type) -> bool:
        kinds = RankedTensorType if self.ranked else TENSORS
        return isinstance(t, kinds) and self.element(t.element_type)

    @property
    def summary(self) -> str:
        return f"{'ranked tensor' if self.ranked else 'tensor'} of {self.what} values"


_FLOAT = "4/6/8/16/32/64-bit float"
_INT = "2/4/8/16/32/64-bit integer"
_COMPLEX = "complex type with 32/64-bit float elements"
FP = TensorOf(_is_float, _FLOAT)
FP_OR_COMPLEX = TensorOf(lambda t: _is_float(t) or _is_complex(t), f"{_FLOAT} or {_COMPLEX}")
COMPLEX = TensorOf(_is_complex, _COMPLEX)
PRED = TensorOf(_is_pred, "bool")
RANKED_PRED = TensorOf(_is_pred, "bool", ranked=True)
RANKED_INT = TensorOf(_is_int, _INT, ranked=True)
PRED_OR_INT = TensorOf(lambda t: _is_pred(t) or _is_int(t), f"bool or {_INT}")
ANY = TensorOf(_is_any, f"{_FLOAT} or bool or {_INT} or {_COMPLEX} or per-tensor integer "
               "quantized or per-axis integer quantized")


# -- shape helpers -------------------------------------------------------------------------

def compatible_dims(a, b) -> bool:
    return a is None or b is None or a == b


def compatible_shapes(a: Type, b: Type) -> bool:
    """MLIR ``verifyCompatibleShape``: an unranked tensor fits any; else ranks and sizes."""
    if isinstance(a, UnrankedTensorType) or isinstance(b, UnrankedTensorType):
        return True
    return len(a.shape) == len(b.shape) and all(map(compatible_dims, a.shape, b.shape))


QUANT_TYPE = re.compile(r"!quant\.uniform<\s*([iu]\d+)\s*(?:<[^>]*>)?\s*:\s*([A-Za-z0-9]+)")


def compatible_element(a: Type, b: Type) -> bool:
    """StableHLO's ``isCompatibleElementTypeForHloTypeInference``: equal, or two quantized
    types with the same storage and expressed types (scales, zero points and the quantized
    dimension may differ, e.g. across a transpose)."""
    if a == b:
        return True
    qa, qb = QUANT_TYPE.match(str(a)), QUANT_TYPE.match(str(b))
    return qa is not None and qb is not None and qa.groups() == qb.groups()


def compatible_types(a: Type, b: Type) -> bool:
    """``hlo::isCompatibleForHloTypeInference`` for tensors: shapes and element types
    compatible."""
    return compatible_element(a.element_type, b.element_type) and compatible_shapes(a, b)


def broadcast_dims(a, b):
    """``OpTrait::util::getBroadcastedShape`` on one pair of sizes (None: dynamic), or
    False when they cannot broadcast."""
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None or b is None:
        return b if a is None and b is not None else a
    return a if a == b else False


def broadcast_shapes(shapes) -> tuple | None:
    """Numpy broadcasting (prefix padding) of shapes with dynamic sizes, or None."""
    rank = max((len(s) for s in shapes), default=0)
    out: list = [1] * rank
    for shape in shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        for i, d in enumerate(padded):
            merged = broadcast_dims(out[i], d)
            if merged is False:
                return None
            out[i] = merged
    return tuple(out)


def infer_broadcast(lhs: Type, rhs: Type, dims, element_type) -> Type:
    """``getBroadcastTypeWithBroadcastDimensions``: the result type of a broadcasting
    binary op; an unranked tensor (compatible with anything) when it cannot be inferred."""
    unranked = UnrankedTensorType(element_type)
    if not (isinstance(lhs, RankedTensorType) and isinstance(rhs, RankedTensorType)):
        return unranked
    if dims is None:
        shape = broadcast_shapes([lhs.shape, rhs.shape])
        return unranked if shape is None else RankedTensorType(shape, element_type)
    large, small = (lhs, rhs) if len(lhs.shape) > len(rhs.shape) else (rhs, lhs)
    if len(dims) != len(small.shape) or any(d >= len(large.shape) for d in dims):
        return unranked
    out = list(large.shape)
    for i, d in enumerate(dims):
        merged = broadcast_dims(small.shape[i], large.shape[d])
        if merged is False:
            return unranked
        out[d] = merged
    return RankedTensorType(tuple(out), element_type)


# -- traits --------------------------------------------------------------------------------

def _all_types(op: Operation) -> list[Type]:
    return [*op.operand_types, *op.result_types]


def compatible_operands_and_result_type(op: Operation) -> None:
    """``HLO_CompatibleOperandsAndResultType``."""
    types = _all_types(op)
    if any(not compatible_types(t, types[0]) for t in types):
        raise op_error(op, "requires compatible types for all operands and results")


def compatible_element_types(op: Operation) -> None:
    """``HLO_CompatibleOperandsAndResultElementType``."""
    types = _all_types(op)
    if any(t.element_type != types[0].element_type for t in types):
        raise op_error(op, "requires compatible element types for all operands and results")


def same_element_types(op: Operation) -> None:
    """``SameOperandsAndResultElementType``."""
    types = _all_types(op)
    if any(t.element_type != types[0].element_type for t in types):
        raise op_error(op, "requires the same element type for all operands and results")


def elementwise(op: Operation) -> None:
    """MLIR's ``Elementwise``: the same shape and kind of shaped type everywhere."""
    types = _all_types(op)
    if any(type(t) is not type(types[0]) or not compatible_shapes(t, types[0])
           for t in types):
        raise op_error(op, "all non-scalar operands/results must have the same shape and "
                           "base type")


def same_shape(op: Operation) -> None:
    """``SameOperandsAndResultShape``."""
    types = _all_types(op)
    if any(not compatible_shapes(t, types[0]) for t in types):
        raise op_error(op, "requires the same shape for all operands and results")


# -- per-op specs --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ChloSpec:
    """What ODS generates for one CHLO op, plus its ``verify()``; ``operands`` gives one
    constraint per operand (the last one repeats for variadic operands)."""

    operands: tuple
    results: tuple
    attrs: tuple[AttrConstraint, ...] = ()
    traits: tuple[Callable, ...] = ()
    infer: Callable | None = None
    verify: Callable | None = None
    variadic: bool = False
    regions: int = 0


def attr_constraint(name, kind, summary, required=True) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, kind), summary, required)


_BCAST_DIMS = AttrConstraint("broadcast_dimensions", lambda a: isinstance(a, DenseArrayAttr)
                             and a.element_type == I64, "i64 dense array attribute", False)


def _enum(kind: str):
    return lambda a: isinstance(a, ChloEnum) and a.kind == kind


def _infer_binary(element_type: Callable[[Operation], Type] | None = None):
    """``InferBroadcastBinaryOpReturnTypeComponents``."""
    def infer(op: Operation) -> list[Type]:
        lhs, rhs = op.operand_types
        if lhs.element_type != rhs.element_type:
            raise infer_error(op, "mismatched operand types")
        et = element_type(op) if element_type is not None else lhs.element_type
        dims = op.attributes.get("broadcast_dimensions")
        return [infer_broadcast(lhs, rhs, tuple(dims.value) if dims is not None else None, et)]
    return infer


def infer_error(op: Operation, message: str):
    """An inference failure: the message (without the op name), then MLIR's
    ``failed to infer returned types``."""
    from shardy_ref.ir.diagnostics import VerifyError
    from shardy_ref.ir.verify.ods import ErrorGroup

    return ErrorGroup(VerifyError(op.location, message),
                      [op_error(op, "failed to infer returned types")])


def _infer_select(op: Operation) -> list[Type]:
    _, on_true, on_false = op.operand_types
    if on_true.element_type != on_false.element_type:
        raise infer_error(op, "mismatched operand types")
    if not all(isinstance(t, RankedTensorType) for t in op.operand_types):
        return [UnrankedTensorType(on_true.element_type)]
    shape = broadcast_shapes([t.shape for t in op.operand_types])
    return [UnrankedTensorType(on_true.element_type) if shape is None
            else RankedTensorType(shape, on_true.element_type)]


def _infer_top_k(op: Operation) -> list[Type]:
    (t,) = op.operand_types
    k = op.attributes["k"].value
    if not isinstance(t, RankedTensorType):
        return [UnrankedTensorType(t.element_type), UnrankedTensorType(I32)]
    if not t.shape:
        raise infer_error(op, "operand's rank must be at least 1")
    if t.shape[-1] is not None and t.shape[-1] < k:
        raise infer_error(op, f"operand's last dimension must be at least {k}")
    shape = (*t.shape[:-1], k)
    return [RankedTensorType(shape, t.element_type), RankedTensorType(shape, I32)]


def _verify_constant_like(op: Operation) -> None:
    value = op.attributes["value"]
    if getattr(value, "type", None) != op.result_types[0].element_type:
        raise op_error(op, "value's type doesn't match element return type")


def compatible_lists(a: list[Type], b: list[Type]) -> bool:
    return len(a) == len(b) and all(
        (isinstance(x, UnrankedTensorType) and x.element_type == y.element_type)
        or compatible_types(x, y) for x, y in zip(a, b, strict=True))


def _bcast(element=ANY, result=ANY, traits=(same_element_types,), infer=None, attrs=()):
    return ChloSpec((element, element), (result,), (_BCAST_DIMS, *attrs), traits,
                    infer or _infer_binary())


SPECS: dict[str, ChloSpec] = {name: _bcast() for name in BROADCAST_BINARY}
SPECS.update({
    **{f"chlo.broadcast_{n}": _bcast(traits=(compatible_element_types,))
       for n in ("add", "maximum", "minimum")},
    **{f"chlo.broadcast_{n}": _bcast(PRED_OR_INT, traits=()) for n in ("and", "or", "xor")},
    "chlo.broadcast_zeta": _bcast(FP, FP),
    "chlo.broadcast_complex": _bcast(FP, COMPLEX, traits=(),
                                     infer=_infer_binary(lambda op: ComplexType(
                                         op.operand_types[0].element_type))),
    "chlo.broadcast_compare": _bcast(ANY, PRED, traits=(), infer=_infer_binary(lambda op: I1),
                                     attrs=(AttrConstraint(
                                         "comparison_direction", _enum("comparison_direction"),
                                         "Which comparison operation to perform."),
                                         AttrConstraint("compare_type", _enum("comparison_type"),
                                                        "Which comparison type to use.",
                                                        False))),
    "chlo.broadcast_select": ChloSpec((RANKED_PRED, ANY, ANY), (ANY,), infer=_infer_select),
    "chlo.constant": ChloSpec(
        (), (TensorOf(_is_any, "statically shaped tensor", ranked=True),),
        (attr_constraint("value", (DenseElementsAttr, DenseResourceElementsAttr),
                         "constant vector/tensor attribute"),),
        infer=lambda op: [op.attributes["value"].type]),
    "chlo.constant_like": ChloSpec((ANY,), (ANY,), (AttrConstraint(
        "value", lambda a: hasattr(a, "type"), "TypedAttr instance"),), (same_shape,),
        verify=_verify_constant_like),
    "chlo.top_k": ChloSpec((ANY,), (ANY, ANY), (attr_constraint("k", IntegerAttr,
                                                      "64-bit signless integer attribute"),),
                           infer=_infer_top_k),
    "chlo.mulhi": ChloSpec((RANKED_INT, RANKED_INT), (RANKED_INT,),
                           traits=(compatible_operands_and_result_type,)),
})
for _name in BINARY[:3]:
    SPECS[_name] = ChloSpec((FP, FP), (FP,), traits=(compatible_operands_and_result_type,))
for _name in UNARY:
    SPECS[_name] = ChloSpec((FP_OR_COMPLEX,), (FP_OR_COMPLEX,),
                            traits=(compatible_operands_and_result_type, elementwise,
                                    same_shape))
for _name in ("erf", "erfc", "erf_inv", "lgamma", "digamma"):
    SPECS[f"chlo.{_name}"] = ChloSpec((FP,), (FP,), traits=SPECS["chlo.erf"].traits)
SPECS["chlo._asin_acos_kernel"] = ChloSpec((COMPLEX,), (COMPLEX,),
                                           traits=SPECS["chlo.erf"].traits)
for _name in ("is_inf", "is_neg_inf", "is_pos_inf"):
    SPECS[f"chlo.{_name}"] = ChloSpec(
        (FP,), (PRED,), traits=(elementwise, same_shape),
        infer=lambda op: [op.operand_types[0].replace(element_type=I1)])


# -- the checks ----------------------------------------------------------------------------

def _counts(op: Operation, spec: ChloSpec) -> None:
    if spec.variadic:
        _segment_sizes(op)
    if len(op.regions) != spec.regions:
        raise op_error(op, "requires zero regions" if not spec.regions else
                       f"requires {spec.regions} regions")
    n = len(spec.results)
    if op.num_results != n and not spec.variadic:
        raise op_error(op, "requires one result" if n == 1 else
                       f"expected {n} results, but found {op.num_results}")
    if op.successors:
        raise op_error(op, "requires zero successors")
    n = len(spec.operands)
    if op.num_operands != n and not spec.variadic:
        messages = {0: "requires zero operands", 1: "requires a single operand"}
        raise op_error(op, messages.get(n, f"expected {n} operands, but found "
                                           f"{op.num_operands}"))


def _segment_sizes(op: Operation) -> None:
    """``AttrSizedOperandSegments`` / ``AttrSizedResultSegments``."""
    for kind, count in (("operand", op.num_operands), ("result", op.num_results)):
        name = f"{kind}SegmentSizes"
        sizes = op.attributes.get(name)
        if not isinstance(sizes, DenseArrayAttr) or sizes.element_type != I32 or \
                len(sizes.value) != 2:
            raise op_error(op, f"'{name}' attribute for specifying {kind} segments must have "
                               f"2 elements, but got {len(getattr(sizes, 'value', ()))}")
        if sum(sizes.value) != count:
            raise op_error(op, f"{kind} count ({count}) does not match with the total size "
                               f"({sum(sizes.value)}) specified in attribute '{name}'")






def verify_chlo_op(op: Operation, ctx: VerifyContext) -> None:
    """ODS checks, traits, inferred result types, then ``verify()``."""
    spec = SPECS[op.name]
    _counts(op, spec)
    verify_attrs(op, spec.attrs)
    verify_repeating_types(op, spec.operands, spec.results)
    for trait in spec.traits:
        trait(op)
    if spec.infer is not None:
        verify_inferred_result_types(op, spec.infer(op), compatible_lists)
    if spec.verify is not None:
        spec.verify(op)


def _register() -> None:
    from shardy_ref.ir.verify import chlo_structured  # noqa: F401  (ragged_dot, scan specs)

    op_verifier(*SPECS)(verify_chlo_op)


_register()
