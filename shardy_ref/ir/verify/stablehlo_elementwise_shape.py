"""Verification of StableHLO's elementwise and shape ops with upstream's messages
(``StablehloOps.td``, ``StablehloOps.cpp``, ``stablehlo/dialect/TypeInference.cpp``).

Checked in MLIR's order: operand/result counts, required attributes and their kinds,
operand and result type constraints (``ranked tensor of ... values``), the traits in
declaration order (``HLO_CompatibleOperandsAndResultType``, ``SameOperandsAndResultShape``,
``Elementwise``, ``AllMatchSameOperatorTrait``...), the op's ``verify()``
(``hlo::verify*Op``: broadcast dims, permutations, reverse dims, iota dimension), then the
result type inference (``hlo::infer*Op``: slice bounds, padding, concatenation, dynamic
slices), whose failures come as two errors, the reason then ``failed to infer returned
types``. The shape checks run before any index is used, so later code (sharding rules,
the interpreter) never indexes out of range. Ops: the elementwise unary/binary/ternary
ops, compare, select, clamp, convert, bitcast_convert, broadcast_in_dim, reshape,
transpose, concatenate, pad, slice, dynamic_slice, dynamic_update_slice, iota, reverse,
get_dimension_size, reduce_precision.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.stablehlo_attrs import StablehloEnum
from shardy_ref.ir.types import (
    I1,
    I32,
    I64,
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    OpaqueType,
    RankedTensorType,
    Type,
)
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier
from shardy_ref.ir.verify.chlo_ops import (
    compatible_dims,
    compatible_element,
    compatible_lists,
    compatible_shapes,
    compatible_types,
    infer_error,
)
from shardy_ref.ir.verify.ods import (
    AttrConstraint,
    verify_attrs,
    verify_inferred_result_types,
    verify_repeating_types,
)

# -- element kinds (stablehlo/dialect/Base.td) ---------------------------------------------


def _float(t) -> bool:
    return isinstance(t, FloatType) and t.name not in ("tf32", "f80", "f128")


def _float32_or_64(t) -> bool:
    return isinstance(t, FloatType) and t.name in ("f32", "f64")


def _complex(t) -> bool:
    return isinstance(t, ComplexType) and _float32_or_64(t.element_type)


def _sint(t) -> bool:
    return isinstance(t, IntegerType) and t.width in (2, 4, 8, 16, 32, 64) and t.is_signless


def _int(t) -> bool:
    return isinstance(t, IntegerType) and t.width in (2, 4, 8, 16, 32, 64) and \
        t.signedness != "signed"


def _pred(t) -> bool:
    return t == I1


def _quant(t) -> bool:
    return isinstance(t, OpaqueType) and t.dialect == "quant"


_KINDS: dict[str, tuple[Callable[[Type], bool], str]] = {
    "F": (_float, "4/6/8/16/32/64-bit float"),
    "F3264": (_float32_or_64, "32/64-bit float"),
    "P": (_pred, "bool"),
    "I": (_int, "2/4/8/16/32/64-bit integer"),
    "SI": (_sint, "2/4/8/16/32/64-bit signless integer"),
    "C": (_complex, "complex type with 32/64-bit float elements"),
    "Q": (_quant, "per-tensor integer quantized"),
    "QA": (_quant, "per-axis integer quantized"),
    "I32": (lambda t: t == I32, "32-bit signless integer"),
    "IDX": (lambda t: isinstance(t, IndexType) or _int(t), "index or 2/4/8/16/32/64-bit integer"),
}


@dataclass(frozen=True, slots=True)
class Tensor:
    """An ODS tensor constraint: element kinds (keys of ``_KINDS``), and the shape it
    requires (``ranked``, ``0D``, ``1D``, ``static``, ``static-1D``,
    ``static-or-bounded``)."""

    kinds: tuple[str, ...]
    shape: str = "ranked"
    variadic: bool = False

    def accepts(self, t: Type) -> bool:
        if not isinstance(t, RankedTensorType):
            return False
        if self.shape == "0D" and t.shape:
            return False
        if self.shape in ("1D", "static-1D") and len(t.shape) != 1:
            return False
        if self.shape == "static-1D" and not t.has_static_shape:
            return False
        if self.shape == "static" and not t.has_static_shape:
            return False
        if self.shape == "static-or-bounded" and not t.has_static_shape and \
                t.encoding is None:
            return False
        return any(_KINDS[k][0](t.element_type) for k in self.kinds)

    @property
    def summary(self) -> str:
        what = {"ranked": "ranked tensor", "0D": "0D tensor", "1D": "1D tensor",
                "static-1D": "statically shaped 1-dimensional tensor",
                "static": "statically shaped tensor",
                "static-or-bounded": "statically shaped or single bounded dimension tensor"}
        text = f"{what[self.shape]} of {' or '.join(_KINDS[k][1] for k in self.kinds)} values"
        return f"variadic of {text}" if self.variadic else text


def T(kinds: str, shape: str = "ranked", variadic: bool = False) -> Tensor:
    """A :class:`Tensor` constraint from space-separated kind keys."""
    return Tensor(tuple(kinds.split()), shape, variadic)


TENSOR = T("F P I C Q")
TENSOR_OR_PER_AXIS = T("F P I C Q QA")
FP_COMPLEX_OR_QUANT = T("F C Q")
INT_FP_COMPLEX_OR_QUANT = T("I F C Q")
FP_OR_QUANT = T("F Q")
PRED_OR_INT = T("P I")
INT = T("I")
PRED = T("P")


# -- traits (messages of MLIR's and StableHLO's op traits) ---------------------------------

def _types(op: Operation) -> list[Type]:
    return [*op.operand_types, *op.result_types]


def _compatible_operands_and_result_type(op: Operation) -> None:
    """``HLO_CompatibleOperandsAndResultType``."""
    types = _types(op)
    if any(not compatible_types(t, types[0]) for t in types):
        raise op_error(op, "requires compatible types for all operands and results")


def _compatible_element_types(op: Operation) -> None:
    """``HLO_CompatibleOperandsAndResultElementType``."""
    types = _types(op)
    if any(not compatible_element(t.element_type, types[0].element_type) for t in types):
        raise op_error(op, "requires compatible element types for all operands and results")


def _same_element_types(op: Operation) -> None:
    """``SameOperandsAndResultElementType``."""
    types = _types(op)
    if any(t.element_type != types[0].element_type for t in types):
        raise op_error(op, "requires the same element type for all operands and results")


def _same_operand_element_types(op: Operation) -> None:
    """``SameOperandsElementType``."""
    types = op.operand_types
    if any(t.element_type != types[0].element_type for t in types):
        raise op_error(op, "requires the same element type for all operands")


def _same_shape(op: Operation) -> None:
    """``SameOperandsAndResultShape``."""
    types = _types(op)
    if any(not compatible_shapes(t, types[0]) for t in types):
        raise op_error(op, "requires the same shape for all operands and results")


def _elementwise(op: Operation) -> None:
    """MLIR's ``Elementwise``: non-scalar operands and results share one shape."""
    types = [t for t in _types(op) if isinstance(t, RankedTensorType)]
    if any(not compatible_shapes(t, types[0]) for t in types):
        raise op_error(op, "all non-scalar operands/results must have the same shape and "
                           "base type")


def _operands_element_type(op: Operation) -> None:
    """``HLO_CompatibleOperandsElementType``."""
    types = op.operand_types
    if any(t.element_type != types[0].element_type for t in types):
        raise op_error(op, "requires compatible element types for all operands")


def _same_sizes(*names: str) -> Callable[[Operation], None]:
    """``AllMatchSameOperatorTrait<[names], "$_self.size()", "size">``."""
    def check(op: Operation) -> None:
        sizes = {len(op.attributes[n].value) for n in names}
        if len(sizes) > 1:
            raise op_error(op, f"failed to verify that all of {{{', '.join(names)}}} have "
                               "same size")
    return check


def _element_types_match(*names: str) -> Callable[[Operation], None]:
    """``AllElementTypesMatch<[names]>`` over the leading operands and the result."""
    def check(op: Operation) -> None:
        types = [*op.operand_types[:len(names) - 1], op.result_types[0]]
        if any(t.element_type != types[0].element_type for t in types):
            raise op_error(op, f"failed to verify that all of {{{', '.join(names)}}} have "
                               "same element type")
    return check


# -- attributes ----------------------------------------------------------------------------

def _i64_array(name: str) -> AttrConstraint:
    return AttrConstraint(name, lambda a: isinstance(a, DenseArrayAttr) and a.element_type == I64,
                          "i64 dense array attribute")


def _int_attr(name: str, width: int, bound: str) -> AttrConstraint:
    low = 1 if bound == "positive" else 0
    return AttrConstraint(
        name, lambda a: isinstance(a, IntegerAttr) and a.type == IntegerType(width)
        and a.value >= low,
        f"{width}-bit signless integer attribute whose value is {bound}")


_COMPARE_ATTRS = (
    AttrConstraint("comparison_direction", lambda a: isinstance(a, StablehloEnum)
                   and a.kind == "comparison_direction", "Which comparison operation to perform."),
    AttrConstraint("compare_type", lambda a: isinstance(a, StablehloEnum)
                   and a.kind == "comparison_type", "Which comparison type to use.", False),
)


def _ints(op: Operation, name: str) -> tuple[int, ...]:
    return tuple(op.attributes[name].value)


def _join(values) -> str:
    return ", ".join(map(str, values))


def _dims(shape) -> str:
    return ", ".join("-9223372036854775808" if d is None else str(d) for d in shape)


def _error(op: Operation, message: str) -> VerifyError:
    """A ``hlo::verify*`` failure: the message at the op, without the op's name."""
    return VerifyError(op.location, message)


# -- verify() of the ops -------------------------------------------------------------------

def _verify_add(op: Operation) -> None:
    types = _types(op)
    if any(_quant(t.element_type) for t in types):
        return
    if any(t.element_type != types[0].element_type for t in types):
        raise _error(op, "op requires the same element type for all operands and results")


def _verify_broadcast_in_dim(op: Operation) -> None:
    operand, result = op.operand_types[0], op.result_types[0]
    dims = _ints(op, "broadcast_dimensions")
    if len(dims) != operand.rank:
        raise _error(op, f"broadcast_dimensions size ({len(dims)}) does not match operand "
                         f"rank ({operand.rank})")
    if len(set(dims)) != len(dims):
        raise _error(op, "broadcast_dimensions should not have duplicates")
    for i, d in enumerate(dims):
        if d < 0 or d >= result.rank:
            raise _error(op, f"broadcast_dimensions contains invalid value {d} for result "
                             f"with rank {result.rank}")
        size = operand.shape[i]
        if size is not None and size != 1 and size != result.shape[d]:
            out = "-9223372036854775808" if result.shape[d] is None else result.shape[d]
            raise _error(op, f"size of operand dimension {i} ({size}) is not equal to 1 or "
                             f"size of result dimension {d} ({out})")


def _verify_reshape(op: Operation) -> None:
    """``hlo::verifyReshapeOp``: static operand and result hold as many elements."""
    operand, result = op.operand_types[0], op.result_types[0]
    if operand.has_static_shape and result.has_static_shape and \
            operand.num_elements != result.num_elements:
        raise _error(op, f"number of output elements ({result.num_elements}) doesn't match "
                         f"expected number of elements ({operand.num_elements})")


def _verify_iota(op: Operation) -> None:
    result = op.result_types[0]
    if result.rank == 0:
        raise _error(op, "does not support scalars.")
    if op.attributes["iota_dimension"].value >= result.rank:
        raise _error(op, "iota dimension cannot go beyond the output rank.")


def _verify_reverse(op: Operation) -> None:
    dims = _ints(op, "dimensions")
    if len(set(dims)) != len(dims):
        raise _error(op, f"dimensions should be unique. Got: {_join(dims)}")
    rank = op.operand_types[0].rank
    for d in dims:
        if d < 0:
            raise _error(op, f"all dimensions should be non-negative. Got dimension: {d}.")
        if d >= rank:
            raise _error(op, f"all dimensions should be between [0, {rank}). Got dimension: "
                             f"{d}.")


def _bit_width(t: Type) -> int | None:
    if isinstance(t, ComplexType):
        inner = _bit_width(t.element_type)
        return None if inner is None else 2 * inner
    return getattr(t, "width", None)


def _verify_bitcast_convert(op: Operation) -> None:
    """``hlo::verifyBitcastConvertOp``: equal widths keep the shape; otherwise the
    narrower side has one more dimension, of the width ratio."""
    operand, result = op.operand_types[0], op.result_types[0]
    in_w, out_w = _bit_width(operand.element_type), _bit_width(result.element_type)
    if in_w is None or out_w is None:
        return
    if in_w == out_w:
        if not compatible_shapes(operand, result):
            raise _error(op, f"operand and result shapes must match except for the innermost "
                             f"dimension of the shape with the smaller element type. Got: "
                             f"'{operand}' and '{result}'.")
        return
    small, large = (operand, result) if in_w < out_w else (result, operand)
    if small.rank != large.rank + 1:
        raise _error(op, f"rank of smaller element type ({small.rank}) should be 1 more than "
                         f"rank of larger element type ({large.rank}), but {small.rank} != "
                         f"{large.rank} + 1.")
    ratio = max(in_w, out_w) // min(in_w, out_w)
    if small.shape[-1] is not None and small.shape[-1] != ratio:
        raise _error(op, f"requires compatible bit widths. Got: '{operand}' and '{result}', but "
                         f"{min(in_w, out_w)} * {small.shape[-1]} != {max(in_w, out_w)}.")
    if not all(map(compatible_dims, small.shape[:-1], large.shape)):
        raise _error(op, f"operand and result shapes must match except for the innermost "
                         f"dimension of the shape with the smaller element type. Got: "
                         f"'{operand}' and '{result}'.")


# -- result type inference (hlo::infer*Op) -------------------------------------------------

def _ranked(shape, element_type: Type) -> RankedTensorType:
    return RankedTensorType(tuple(shape), element_type)


def _infer_same(op: Operation) -> list[Type]:
    return [op.operand_types[0]]


def _infer_with_element(element: Callable[[Type], Type]):
    def infer(op: Operation) -> list[Type]:
        t = op.operand_types[0]
        return [t.replace(element_type=element(t.element_type))]
    return infer


def _real_part(t: Type) -> Type:
    return t.element_type if isinstance(t, ComplexType) else t


def _infer_compare(op: Operation) -> list[Type]:
    return [op.operand_types[0].replace(element_type=I1)]


def _infer_select(op: Operation) -> list[Type]:
    pred, on_true, on_false = op.operand_types
    if not compatible_types(on_true, on_false):
        raise infer_error(op, "requires compatible types for non-predicate operands")
    if pred.rank != 0 and not compatible_shapes(pred, on_true):
        raise infer_error(op, "requires the same shape for all operands")
    return [_most_specific(on_true, on_false)]


def _most_specific(a: RankedTensorType, b: RankedTensorType) -> RankedTensorType:
    return a.replace(shape=tuple(x if x is not None else y for x, y in zip(a.shape, b.shape)))


def _infer_clamp(op: Operation) -> list[Type]:
    low, operand, high = op.operand_types
    for name, t in (("min", low), ("max", high)):
        if t.rank != 0 and not compatible_shapes(t, operand):
            raise infer_error(op, f"{name} shape [{_dims(t.shape)}] is not scalar and is not "
                                  f"compatible to operand shape [{_dims(operand.shape)}]")
    return [operand]


def _infer_transpose(op: Operation) -> list[Type]:
    t = op.operand_types[0]
    perm = _ints(op, "permutation")
    if len(perm) != t.rank:
        raise infer_error(op, f"TransposeOp operand rank {t.rank} does not match permutation "
                              f"size {len(perm)}")
    if sorted(perm) != list(range(t.rank)):
        raise infer_error(op, f"attribute permutation must be a permutation of "
                              f"[{_join(range(t.rank))}] but got {_join(perm)}")
    return [_ranked((t.shape[d] for d in perm), t.element_type)]


def _infer_concatenate(op: Operation) -> list[Type]:
    types = op.operand_types
    if not types:
        return list(op.result_types)
    dim, rank = op.attributes["dimension"].value, types[0].rank
    if rank == 0:
        raise infer_error(op, "rank-0 values cannot be concatenated")
    if dim >= rank:
        raise infer_error(op, f"dimension {dim} is out-of-bounds for input rank {rank}")
    for i, t in enumerate(types):
        if t.rank != rank:
            raise infer_error(op, f"operands (0) and ({i}) do not match rank")
        for d in range(rank):
            if d != dim and not compatible_dims(types[0].shape[d], t.shape[d]):
                raise infer_error(op, f"shapes of operand (0) and ({i}) are not compatible at "
                                      f"non-concat index {d}: ({_dims(types[0].shape)}) != "
                                      f"({_dims(t.shape)})")
    shape = []
    for d in range(rank):
        sizes = [t.shape[d] for t in types]
        if d == dim:
            shape.append(None if None in sizes else sum(sizes))
        else:
            shape.append(next((s for s in sizes if s is not None), None))
    return [_ranked(shape, types[0].element_type)]


def _infer_pad(op: Operation) -> list[Type]:
    t = op.operand_types[0]
    low, high = _ints(op, "edge_padding_low"), _ints(op, "edge_padding_high")
    interior = _ints(op, "interior_padding")
    if len(low) != t.rank:
        raise infer_error(op, f"edge_padding_low length ({len(low)}) must match operand rank "
                              f"({t.rank})")
    shape = []
    for i, size in enumerate(t.shape):
        if interior[i] < 0:
            raise infer_error(op, f"Interior padding cannot be negative: {interior[i]}")
        if size is None:
            shape.append(None)
            continue
        out = size + low[i] + high[i] + max(size - 1, 0) * interior[i]
        if out < 0:
            raise infer_error(op, f"Padding result in negative size for dimension {i}")
        shape.append(out)
    return [_ranked(shape, t.element_type)]


def _infer_slice(op: Operation) -> list[Type]:
    t = op.operand_types[0]
    start, limit = _ints(op, "start_indices"), _ints(op, "limit_indices")
    strides = _ints(op, "strides")
    if len(start) != t.rank:
        raise infer_error(op, f"the number of elements in start_indices ({len(start)}) does "
                              f"not match the rank of the operand ({t.rank})")
    shape = []
    for i in range(t.rank):
        if start[i] < 0:
            raise infer_error(op, f"negative start index {start[i]} in dimension {i}")
        if t.shape[i] is not None and limit[i] > t.shape[i]:
            raise infer_error(op, f"limit index {limit[i]} is larger than dimension size "
                                  f"{t.shape[i]} in dimension {i}")
        if start[i] > limit[i]:
            raise infer_error(op, f"start index {start[i]} is larger than limit index "
                                  f"{limit[i]} in dimension {i}")
        if strides[i] <= 0:
            raise infer_error(op, f"stride must be positive but got {strides[i]} in "
                                  f"dimension {i}")
        shape.append(-(-(limit[i] - start[i]) // strides[i]))
    return [_ranked(shape, t.element_type)]


def _same_index_types(op: Operation, indices: list[Type]) -> None:
    if any(t.element_type != indices[0].element_type for t in indices):
        raise infer_error(op, "start indices must have same element type")


def _infer_dynamic_slice(op: Operation) -> list[Type]:
    t, indices = op.operand_types[0], op.operand_types[1:]
    sizes = _ints(op, "slice_sizes")
    if len(indices) != len(sizes):
        raise infer_error(op, f"has mismatched number of slice sizes ({len(sizes)}) and "
                              f"number of start indices ({len(indices)})")
    if t.rank != len(indices):
        raise infer_error(op, f"has mismatched number of start indices ({len(indices)}) and "
                              f"the rank of operand ({t.rank})")
    _same_index_types(op, indices)
    for i, size in enumerate(sizes):
        if size < 0:
            raise infer_error(op, f"has negative size index to dynamic slice: {size}")
        if t.shape[i] is not None and size > t.shape[i]:
            raise infer_error(op, f"has slice size {size} greater than dimension size "
                                  f"{t.shape[i]} in dimension {i} of operand")
    return [_ranked(sizes, t.element_type)]


def _infer_dynamic_update_slice(op: Operation) -> list[Type]:
    t, update, indices = op.operand_types[0], op.operand_types[1], op.operand_types[2:]
    if update.rank != t.rank:
        raise infer_error(op, f"update rank does not match operand rank: {update.rank} vs "
                              f"{t.rank}.")
    if len(indices) != t.rank:
        raise infer_error(op, f"expects number of start_indices to match operand rank: "
                              f"{len(indices)} vs {t.rank}.")
    if indices:
        _same_index_types(op, indices)
    for i, (size, up) in enumerate(zip(t.shape, update.shape)):
        if up is not None and size is not None and up > size:
            raise infer_error(op, f"expects size at dimension {i} of update to be in range "
                                  f"[0, {size}]. Got: {up}.")
    return [t]


def _infer_get_dimension_size(op: Operation) -> list[Type]:
    t, dim = op.operand_types[0], op.attributes["dimension"].value
    if dim >= t.rank:
        raise infer_error(op, f"requires dimension attribute in range [0, {t.rank}); found "
                              f"({dim})")
    return [RankedTensorType((), I32)]


# -- per-op specs --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Spec:
    """What ODS generates for one op, plus its ``verify()`` and result inference;
    ``operands`` gives one constraint per operand (a variadic one takes the rest)."""

    operands: tuple[Tensor, ...]
    results: tuple[Tensor, ...]
    attrs: tuple[AttrConstraint, ...] = ()
    traits: tuple[Callable[[Operation], None], ...] = ()
    verify: Callable[[Operation], None] | None = None
    infer: Callable[[Operation], list[Type]] | None = None
    min_operands: int | None = None  # of a variadic op, when MLIR asks for more than ODS


_UNARY_TAIL = (_elementwise, _same_shape)
_BINARY_TAIL = (_same_shape, _elementwise)
_COMPAT = _compatible_operands_and_result_type


def _unary(operand: Tensor, result: Tensor | None = None, traits=(_COMPAT,), **kw) -> Spec:
    return Spec((operand,), (result or operand,), traits=(*traits, *_UNARY_TAIL), **kw)


def _binary(operand: Tensor = TENSOR, result: Tensor | None = None, traits=(_COMPAT,),
            **kw) -> Spec:
    return Spec((operand, operand), (result or operand,), traits=(*traits, *_BINARY_TAIL),
                **kw)


SPECS: dict[str, Spec] = {}
for _names, _spec in (
    ("negate", _unary(INT_FP_COMPLEX_OR_QUANT)),
    ("exponential exponential_minus_one log log_plus_one sqrt rsqrt cbrt tanh tan logistic "
     "sine cosine", _unary(FP_COMPLEX_OR_QUANT)),
    ("floor ceil round_nearest_afz round_nearest_even", _unary(FP_OR_QUANT)),
    ("sign", _unary(T("SI F C Q"))),
    ("not", _unary(PRED_OR_INT)),
    ("popcnt count_leading_zeros", _unary(INT)),
    ("abs", _unary(T("SI F C Q"), T("SI F Q"), traits=(),
                   infer=_infer_with_element(_real_part))),
    ("is_finite", _unary(FP_OR_QUANT, PRED, traits=(), infer=_infer_with_element(lambda t: I1))),
    ("real imag", _unary(T("F C"), T("F"), traits=(), infer=_infer_with_element(_real_part))),
    ("convert", _unary(T("F P I C"), traits=(_same_shape,))),
    ("add", _binary(TENSOR_OR_PER_AXIS, traits=(), verify=_verify_add)),
    ("subtract divide remainder power", _binary(INT_FP_COMPLEX_OR_QUANT)),
    ("multiply maximum minimum", _binary()),
    ("atan2", _binary(FP_COMPLEX_OR_QUANT)),
    ("and or xor", _binary(PRED_OR_INT)),
    ("shift_left shift_right_arithmetic shift_right_logical", _binary(INT)),
    ("complex", _binary(T("F3264"), T("C"), traits=(_same_operand_element_types, _same_shape),
                        infer=_infer_with_element(ComplexType))),
):
    for _name in _names.split():
        SPECS[_name] = _spec

SPECS.update({
    "compare": Spec((TENSOR, TENSOR), (PRED,), _COMPARE_ATTRS,
                    (_elementwise, _operands_element_type, _same_shape), infer=_infer_compare),
    "select": Spec((PRED, TENSOR, TENSOR), (TENSOR,), infer=_infer_select),
    "clamp": Spec((TENSOR, TENSOR, TENSOR), (TENSOR,), traits=(_compatible_element_types,),
                  infer=_infer_clamp),
    "bitcast_convert": Spec((TENSOR_OR_PER_AXIS,), (TENSOR_OR_PER_AXIS,),
                            verify=_verify_bitcast_convert),
    "broadcast_in_dim": Spec((TENSOR_OR_PER_AXIS,), (T("F P I C Q QA", "static-or-bounded"),),
                             (_i64_array("broadcast_dimensions"),),
                             (_compatible_element_types,), verify=_verify_broadcast_in_dim),
    "reshape": Spec((TENSOR_OR_PER_AXIS,), (T("F P I C Q QA", "static-or-bounded"),),
                    traits=(_compatible_element_types,), verify=_verify_reshape),
    "transpose": Spec((TENSOR_OR_PER_AXIS,), (TENSOR_OR_PER_AXIS,), (_i64_array("permutation"),),
                      (_compatible_element_types,), infer=_infer_transpose),
    "concatenate": Spec((T("F P I C Q", variadic=True),), (TENSOR,),
                        (_int_attr("dimension", 64, "non-negative"),), (_same_element_types,),
                        infer=_infer_concatenate, min_operands=1),
    "pad": Spec((TENSOR, T("F P I C Q", "0D")), (TENSOR,),
                tuple(map(_i64_array, ("edge_padding_low", "edge_padding_high",
                                       "interior_padding"))),
                (_same_element_types,
                 _same_sizes("edge_padding_low", "edge_padding_high", "interior_padding")),
                infer=_infer_pad),
    "slice": Spec((TENSOR,), (TENSOR,),
                  tuple(map(_i64_array, ("start_indices", "limit_indices", "strides"))),
                  (_same_element_types, _same_sizes("start_indices", "limit_indices", "strides")),
                  infer=_infer_slice),
    "dynamic_slice": Spec((TENSOR, T("I", "0D", variadic=True)), (TENSOR,),
                          (_i64_array("slice_sizes"),),
                          (_element_types_match("operand", "result"),),
                          infer=_infer_dynamic_slice),
    "dynamic_update_slice": Spec((TENSOR, TENSOR, T("I", "0D", variadic=True)), (TENSOR,),
                                 traits=(_element_types_match("operand", "update", "result"),),
                                 infer=_infer_dynamic_update_slice),
    "iota": Spec((), (T("I F C Q", "static"),), (_int_attr("iota_dimension", 64, "non-negative"),),
                 verify=_verify_iota),
    "reverse": Spec((TENSOR,), (TENSOR,), (_i64_array("dimensions"),), (_same_element_types,),
                    _verify_reverse, _infer_same),
    "get_dimension_size": Spec((TENSOR_OR_PER_AXIS,), (T("I32"),),
                               (_int_attr("dimension", 64, "non-negative"),),
                               infer=_infer_get_dimension_size),
    "reduce_precision": Spec((FP_OR_QUANT,), (FP_OR_QUANT,),
                             (_int_attr("exponent_bits", 32, "positive"),
                              _int_attr("mantissa_bits", 32, "non-negative")),
                             (_elementwise, _COMPAT)),
})


# -- the checks ----------------------------------------------------------------------------

def _variadic(spec: Spec) -> bool:
    return bool(spec.operands) and spec.operands[-1].variadic


def _counts(op: Operation, spec: Spec) -> None:
    if op.regions:
        raise op_error(op, "requires zero regions")
    if op.num_results != 1:
        raise op_error(op, "requires one result")
    if op.successors:
        raise op_error(op, "requires zero successors")
    n = len(spec.operands)
    if _variadic(spec):
        least = spec.min_operands if spec.min_operands is not None else n - 1
        if op.num_operands < least:
            raise op_error(op, f"expected {least} or more operands, but found "
                               f"{op.num_operands}")
    elif op.num_operands != n:
        messages = {0: "requires zero operands", 1: "requires a single operand"}
        raise op_error(op, messages.get(n, f"expected {n} operands, but found "
                                           f"{op.num_operands}"))






def verify_stablehlo_op(op: Operation, ctx: VerifyContext) -> None:
    """ODS checks, traits, ``verify()``, then the inferred result type."""
    spec = SPECS[op.name.removeprefix("stablehlo.")]
    _counts(op, spec)
    verify_attrs(op, spec.attrs)
    verify_repeating_types(op, spec.operands, spec.results)
    for trait in spec.traits:
        trait(op)
    if spec.verify is not None:
        spec.verify(op)
    if spec.infer is not None:
        verify_inferred_result_types(op, spec.infer(op), compatible_lists)


op_verifier(*(f"stablehlo.{name}" for name in SPECS))(verify_stablehlo_op)
