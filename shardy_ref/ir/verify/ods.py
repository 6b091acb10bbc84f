"""MLIR's ODS-generated op checks, as data: what ``mlir-tblgen`` derives from an op
definition (``.td``) to verify an op, with MLIR's messages.

An :class:`OdsSpec` lists an op's counts, structural traits, attribute and type
constraints, ``SameOperandsAndResultType`` and ``InferTypeOpInterface``;
:func:`verify_ods` checks them in MLIR's order: the count traits (regions, results,
successors, operands), the structural traits (``SingleBlock``, ``Terminator``), the
generated ``verifyInvariantsImpl`` (required attributes by name, attribute kinds, operand,
result and region constraints), then ``SameOperandsAndResultType``. The op's own
``verify()`` comes next, and after the op's regions :func:`verify_inferred_result_types`
(``InferTypeOpInterface`` verifies with the regions). This module registers no rule; the
dialect modules hold the specs (``sdy_ops.ODS``).

See ``mlir/include/mlir/IR/OpDefinition.h`` and ``mlir/lib/IR/Operation.cpp``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.stablehlo_attrs import StablehloEnum
from shardy_ref.ir.types import (
    IntegerType,
    RankedTensorType,
    TokenType,
    Type,
    UnrankedTensorType,
    VectorType,
)
from shardy_ref.ir.verify import op_error


@dataclass(frozen=True, slots=True)
class TypeConstraint:
    """An ODS type constraint: a predicate and the summary MLIR prints when it fails."""

    accepts: Callable[[Type], bool]
    summary: str


@dataclass(frozen=True, slots=True)
class AttrConstraint:
    """An ODS attribute (property) of an op: its name, whether it is required, its kind."""

    name: str
    accepts: Callable[[object], bool]
    summary: str
    required: bool = True


# MLIR's ShapedType
SHAPED_TYPES = (RankedTensorType, UnrankedTensorType, VectorType)


def _element_type(t: Type) -> Type:
    """MLIR ``getElementTypeOrSelf``."""
    return t.element_type if isinstance(t, SHAPED_TYPES) else t


def _non_token(t: Type) -> bool:
    return not isinstance(_element_type(t), TokenType)


# ODS's AnyShaped, AnyRankedTensor, AnyStaticShapeTensor, with the summaries of the
# oracle's MLIR (jaxlib 0.10.2), which says "non-token"
ANY_SHAPED = TypeConstraint(lambda t: isinstance(t, SHAPED_TYPES) and _non_token(t),
                            "shaped of any non-token type values")
ANY_RANKED_TENSOR = TypeConstraint(lambda t: isinstance(t, RankedTensorType) and _non_token(t),
                                   "ranked tensor of any non-token type values")
ANY_STATIC_SHAPE_TENSOR = TypeConstraint(
    lambda t: isinstance(t, RankedTensorType) and t.has_static_shape and _non_token(t),
    "statically shaped tensor of any non-token type values")


@dataclass(frozen=True, slots=True)
class OdsSpec:
    """What ODS generates to verify one op (``None`` counts are variadic).

    ``infer`` is the op's ``inferReturnTypes`` (for ``InferTypeOpInterface``) and
    ``compatible`` its ``isCompatibleReturnTypes``; ``body_terminator`` names the
    terminator of ``SingleBlockImplicitTerminator``.
    """

    operands: int | None = 1
    results: int | None = 1
    regions: int = 0
    is_terminator: bool = False
    body_terminator: str | None = None
    attrs: tuple[AttrConstraint, ...] = ()
    operand_type: TypeConstraint | None = None
    result_type: TypeConstraint | None = None
    same_operands_and_result_type: bool = False
    infer: Callable[[Operation], list[Type]] | None = None
    compatible: Callable[[list[Type], list[Type]], bool] = lambda a, b: a == b


def _count_error(what: str, expected: int, actual: int) -> str | None:
    """The messages of MLIR's ``ZeroX``/``OneX`` traits (``what`` = operand/result/region)."""
    if actual == expected:
        return None
    if expected == 0:
        return f"requires zero {what}s"
    if what == "operand":
        return "requires a single operand"
    return f"requires one {what}"


def verify_ods(op: Operation, spec: OdsSpec) -> None:
    """The ODS checks MLIR runs when it enters ``op``, in its order, stopping at the
    first failure: counts, structural traits, invariants, ``SameOperandsAndResultType``."""
    for what, expected, actual in (("region", spec.regions, len(op.regions)),
                                   ("result", spec.results, op.num_results)):
        message = None if expected is None else _count_error(what, expected, actual)
        if message:
            raise op_error(op, message)
    if op.successors:
        raise op_error(op, "requires zero successors")
    if spec.operands is not None:
        message = _count_error("operand", spec.operands, op.num_operands)
        if message:
            raise op_error(op, message)
    if spec.body_terminator is not None:
        _verify_single_block(op)
    if spec.is_terminator:
        verify_is_terminator(op)
    _verify_invariants(op, spec)
    if spec.same_operands_and_result_type:
        verify_same_operands_and_result_type(op)


def _verify_single_block(op: Operation) -> None:
    """MLIR's ``SingleBlock`` trait."""
    for i, region in enumerate(op.regions):
        if not region.blocks:
            continue
        if len(region.blocks) != 1:
            raise op_error(op, f"expects region #{i} to have 0 or 1 blocks")
        if len(region.blocks[0]) == 0:
            raise op_error(op, "expects a non-empty block")


def verify_is_terminator(op: Operation) -> None:
    """MLIR's ``Terminator`` trait: the op ends its block."""
    block = op.parent
    if block is None or block.last_op is not op:
        raise op_error(op, "must be the last operation in the parent block")


def _verify_invariants(op: Operation, spec: OdsSpec) -> None:
    """ODS ``verifyInvariantsImpl``: attributes (required ones first, by name), then the
    operand, result and region constraints."""
    attrs = sorted(spec.attrs, key=lambda a: a.name)
    for a in attrs:
        if a.required and a.name not in op.attributes:
            raise op_error(op, f"requires attribute '{a.name}'")
    verify_attr_kinds(op, attrs)
    for what, constraint, types in (("operand", spec.operand_type, op.operand_types),
                                    ("result", spec.result_type, op.result_types)):
        for i, t in enumerate(types if constraint is not None else ()):
            if not constraint.accepts(t):
                raise op_error(op, f"{what} #{i} must be {constraint.summary}, but got '{t}'")
    if spec.body_terminator is not None and len(op.regions[0].blocks) != 1:
        raise op_error(op, "region #0 ('body') failed to verify constraint: region with 1 blocks")


def verify_attrs(op: Operation, attrs: Sequence[AttrConstraint]) -> None:
    """ODS ``verifyInvariantsImpl`` for attributes: required ones (by name), then kinds."""
    ordered = sorted(attrs, key=lambda a: a.name)
    for a in ordered:
        if a.required and a.name not in op.attributes:
            raise op_error(op, f"requires attribute '{a.name}'")
    verify_attr_kinds(op, ordered)


def verify_repeating_types(op: Operation, operands: Sequence, results: Sequence) -> None:
    """Operand then result type constraints, one per position, the last repeating (for the
    variadic tail), as ODS reports the first that fails."""
    for what, constraints, types in (("operand", operands, op.operand_types),
                                     ("result", results, op.result_types)):
        for i, t in enumerate(types):
            c = constraints[min(i, len(constraints) - 1)]
            if not c.accepts(t):
                raise op_error(op, f"{what} #{i} must be {c.summary}, but got '{t}'")


def verify_attr_kinds(op: Operation, attrs: Sequence[AttrConstraint]) -> None:
    for a in attrs:
        value = op.attributes.get(a.name)
        if value is not None and not a.accepts(value):
            raise op_error(op, f"attribute '{a.name}' failed to satisfy constraint: {a.summary}")


# -- counts, attribute kinds and type constraints of StableHLO-style specs -----------------

@dataclass(frozen=True, slots=True)
class Counts:
    """ODS counts: an int is exact, ``None`` variadic, ``-n`` at least ``n``."""

    operands: int | None
    results: int | None = 1
    regions: int = 0


def _count_message(what: str, expected: int | None, actual: int) -> str | None:
    """The messages of MLIR's ``ZeroX``/``OneX``/``NX``/``AtLeastNX`` traits."""
    if expected is None or expected == actual or (expected < 0 and actual >= -expected):
        return None
    if expected < 0:
        return f"expected {-expected} or more {what}s, but found {actual}"
    if expected == 0:
        return f"requires zero {what}s"
    if expected == 1:
        return "requires a single operand" if what == "operand" else f"requires one {what}"
    if what == "operand":
        return f"expected {expected} operands, but found {actual}"
    return f"expected {expected} {what}s"


def verify_counts(op: Operation, counts: Counts) -> None:
    for what, expected, actual in (("region", counts.regions, len(op.regions)),
                                   ("result", counts.results, op.num_results)):
        message = _count_message(what, expected, actual)
        if message:
            raise op_error(op, message)
    if op.successors:
        raise op_error(op, "requires zero successors")
    message = _count_message("operand", counts.operands, op.num_operands)
    if message:
        raise op_error(op, message)


@dataclass(frozen=True, slots=True)
class TokenOr:
    """``HLO_Token``, or (with ``tensor``, a type constraint) ``HLO_TensorOrToken``."""

    tensor: TypeConstraint | None = None
    variadic: bool = False

    def accepts(self, t: Type) -> bool:
        return isinstance(t, TokenType) or (self.tensor is not None and self.tensor.accepts(t))

    @property
    def summary(self) -> str:
        if self.tensor is not None:
            return f"{self.tensor.summary} or token"
        return "variadic of token" if self.variadic else "token"


Where = int | slice  # an operand/result index (negative: from the end), or a variadic run


def verify_types(op: Operation, what: str, constraints: Sequence[tuple[Where, TypeConstraint]],
                 types: Sequence[Type]) -> None:
    """ODS operand or result constraints, in order; each names the indices it covers."""
    n = len(types)
    for where, c in constraints:
        if isinstance(where, slice):
            indices = range(n)[where]
        else:
            indices = [where + n if where < 0 else where]
        for i in indices:
            if 0 <= i < n and not c.accepts(types[i]):
                raise op_error(op, f"{what} #{i} must be {c.summary}, but got '{types[i]}'")


def i64_array(name: str, required: bool = True) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, DenseArrayAttr)
                          and getattr(a.element_type, "width", 0) == 64,
                          "i64 dense array attribute", required)


def i64_attr(name: str, bound: str = "") -> AttrConstraint:
    low = {"non-negative": 0, "positive": 1}.get(bound)
    summary = "64-bit signless integer attribute" + (f" whose value is {bound}" if bound else "")
    return AttrConstraint(name, lambda a: isinstance(a, IntegerAttr) and a.type == IntegerType(64)
                          and (low is None or a.value >= low), summary)


def enum_attr(name: str, kind: str, summary: str) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, StablehloEnum) and a.kind == kind, summary)


def i64_elements(name: str, required: bool = True) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, DenseElementsAttr)
                          and a.element_type == IntegerType(64),
                          "64-bit signless integer elements attribute", required)


def bool_attr(name: str, required: bool = True) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, IntegerAttr)
                          and a.type == IntegerType(1), "bool attribute", required)


def _compatible_shapes(a: Type, b: Type) -> bool:
    """MLIR ``verifyCompatibleShape``: ranks match, and dims match unless one is dynamic."""
    if not isinstance(a, SHAPED_TYPES) or not isinstance(b, SHAPED_TYPES):
        return not isinstance(a, SHAPED_TYPES) and not isinstance(b, SHAPED_TYPES)
    if isinstance(a, UnrankedTensorType) or isinstance(b, UnrankedTensorType):
        return True
    return len(a.shape) == len(b.shape) and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def verify_same_operands_and_result_type(op: Operation) -> None:
    """MLIR's ``SameOperandsAndResultType``: one element type, compatible shapes and the
    same encoding on every operand and result."""
    first = op.result_types[0]
    element_type = _element_type(first)
    encoding = first.encoding if isinstance(first, RankedTensorType) else None
    for t in [*op.result_types[1:], *op.operand_types]:
        if _element_type(t) != element_type or not _compatible_shapes(t, first):
            raise op_error(op, "requires the same type for all operands and results")
        if encoding is not None and isinstance(t, RankedTensorType) and t.encoding != encoding:
            raise op_error(op, "requires the same encoding for all operands and results")


def _type_list(types: Sequence[Type]) -> str:
    return ", ".join(f"'{t}'" for t in types)


def verify_inferred_result_types(op: Operation, inferred: list[Type],
                                 compatible: Callable[[list[Type], list[Type]], bool]) -> None:
    """``InferTypeOpInterface``: MLIR reports two errors, the mismatch then
    ``failed to infer returned types``."""
    results = op.result_types
    if compatible(inferred, results):
        return
    first = op_error(op, f"inferred type(s) {_type_list(inferred)} are incompatible with "
                         f"return type(s) of operation {_type_list(results)}")
    raise ErrorGroup(first, [op_error(op, "failed to infer returned types")])


class ErrorGroup(VerifyError):
    """A VerifyError followed by more errors that the same check emits (MLIR keeps going
    within ``verifyInferredResultTypes``); the verifier's later errors follow them."""

    def __init__(self, first: VerifyError, more: list[VerifyError]):
        super().__init__(first.location, first.message, first.notes)
        self._more = list(more)
        self._later: list[VerifyError] = []

    @property
    def others(self) -> list[VerifyError]:
        return [*self._more, *self._later]

    @others.setter
    def others(self, errors) -> None:
        self._later = list(errors)
