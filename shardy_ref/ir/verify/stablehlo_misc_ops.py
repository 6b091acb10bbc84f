"""Verification of the StableHLO ops not covered by the elementwise, structured and
collective modules, with upstream's messages (``StablehloOps.td``, ``StablehloOps.cpp``,
``stablehlo/dialect/TypeInference.cpp``): batch_norm_*, broadcast, cholesky,
triangular_solve, fft, rng, rng_bit_generator, set_dimension_size, collective_permute,
collective_broadcast, constant, tuple, optimization_barrier, the token ops (after_all,
create_token, infeed, outfeed, send, recv) and replica_id/partition_id.

Each op is checked in MLIR's order: the ODS counts (regions, results, operands), required
attributes and their kinds, the operand/result constraints that later code relies on,
the op's ``verify()``, then the inferred result types (``InferTypeOpInterface``), whose
failures come as two errors. The checks keep dimension indices in range and ranks
consistent, so sharding rules and the interpreter never index out of range.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr, FloatAttr
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.stablehlo_attrs import ChannelHandle
from shardy_ref.ir.types import (
    ComplexType,
    FloatType,
    IntegerType,
    RankedTensorType,
    TokenType,
    TupleType,
    Type,
)
from shardy_ref.ir.verify import VerifyContext, exit_verifier, op_error, op_verifier
from shardy_ref.ir.verify.chlo_ops import QUANT_TYPE, infer_error
from shardy_ref.ir.verify.ods import (
    AttrConstraint,
    Counts,
    TokenOr,
    Where,
    bool_attr,
    enum_attr,
    i64_array,
    i64_attr,
    i64_elements,
    verify_attrs,
    verify_counts,
    verify_inferred_result_types,
    verify_types,
)
from shardy_ref.ir.verify.stablehlo_elementwise_shape import T, Tensor
from shardy_ref.ir.verify.stablehlo_structured import _compatible_types

UI32 = IntegerType(32, "unsigned")


def fail(op: Operation, message: str) -> VerifyError:
    """``emitOptionalError(location, ...)``: a message at the op that names no op."""
    return VerifyError(op.location, message)


def ranked(types: Sequence[Type]) -> bool:
    return all(isinstance(t, RankedTensorType) for t in types)


def dims(shape) -> str:
    """An ``ArrayRef<int64_t>`` as ``llvm::raw_ostream`` prints it (dynamic: kDynamic)."""
    return ", ".join("-9223372036854775808" if d is None else str(d) for d in shape)


def compatible_dims(a, b) -> bool:
    return a is None or b is None or a == b


def compatible_shape(a: Sequence, b: Sequence) -> bool:
    return len(a) == len(b) and all(map(compatible_dims, a, b))


def ints(attr) -> tuple[int, ...] | None:
    return tuple(attr.value) if isinstance(attr, DenseArrayAttr) else None


def constant_ints(value: Value) -> list[int] | None:
    """MLIR ``matchInts``: the integers of a ``stablehlo.constant`` operand, else None."""
    owner = value.defining_op
    attr = owner.attributes.get("value") if owner is not None and \
        owner.name == "stablehlo.constant" else None
    if not isinstance(attr, DenseElementsAttr) or \
            not isinstance(attr.element_type, IntegerType):
        return None
    values = [int(v) for v in attr.values]
    if attr.is_splat:
        n = 1
        for d in attr.type.shape:
            n *= d
        values = values[:1] * n
    return values


def verify_inferred(op: Operation, inferred: list[Type]) -> None:
    verify_inferred_result_types(op, inferred, _compatible_types)


F32_ATTR = AttrConstraint("epsilon", lambda a: isinstance(a, FloatAttr)
                          and getattr(a.type, "name", None) == "f32", "32-bit float attribute")
CHANNEL = AttrConstraint("channel_handle", lambda a: isinstance(a, ChannelHandle),
                         "two 64-bit integers 'handle' and 'type'")


@dataclass(frozen=True, slots=True)
class OpSpec:
    """What ODS checks for one op, then its ``verify()`` and its result inference
    (``infer`` runs on leaving the op, after its regions, as MLIR's ``verifyRegions``)."""

    counts: Counts
    attrs: tuple[AttrConstraint, ...] = ()
    operands: tuple[tuple[Where, Tensor | TokenOr], ...] = ()
    results: tuple[tuple[Where, Tensor | TokenOr], ...] = ()
    verify: Callable[[Operation], None] | None = None
    infer: Callable[[Operation], list[Type] | None] | None = None


SPECS: dict[str, OpSpec] = {}


def register(specs: dict[str, OpSpec]) -> None:
    """Register ``specs`` (op names without ``stablehlo.``) with the verifier."""
    SPECS.update(specs)
    names = [f"stablehlo.{name}" for name in specs]
    op_verifier(*names)(verify_entry)
    exit_verifier(*names)(verify_exit)


def verify_entry(op: Operation, ctx: VerifyContext) -> None:
    """ODS counts, attributes and constraints, then ``verify()``."""
    spec = SPECS[op.name.removeprefix("stablehlo.")]
    verify_counts(op, spec.counts)
    verify_attrs(op, spec.attrs)
    verify_types(op, "operand", spec.operands, op.operand_types)
    verify_types(op, "result", spec.results, op.result_types)
    if spec.verify is not None:
        spec.verify(op)


def verify_exit(op: Operation, ctx: VerifyContext) -> None:
    """``InferTypeOpInterface``: the inferred result types against the op's."""
    spec = SPECS[op.name.removeprefix("stablehlo.")]
    if spec.infer is None:
        return
    inferred = spec.infer(op)
    if inferred is not None:
        verify_inferred(op, inferred)


# -- batch norm ------------------------------------------------------------------------------

def element_types(op: Operation) -> list[Type]:
    """MLIR ``getElementTypeOrSelf`` of every operand and result."""
    return [getattr(t, "element_type", t) for t in (*op.operand_types, *op.result_types)]


def _compatible_element_types(op: Operation) -> None:
    """``HLO_CompatibleOperandsAndResultElementType``."""
    types = element_types(op)
    if any(t != types[0] for t in types):
        raise op_error(op, "requires compatible element types for all operands and results")


def _batch_norm(multi: Sequence[int], single: Sequence[int], inference: bool):
    """``hlo::inferBatchNormOp`` (with ``verifyBatchNorm``): the operands at ``multi`` share
    one shape, those at ``single`` are 1-D of the feature dimension's size."""
    def infer(op: Operation) -> list[Type]:
        types = op.operand_types
        many, one = [types[i] for i in multi], [types[i] for i in single]
        if any(not compatible_shape(t.shape, many[0].shape) for t in many):
            raise infer_error(op, "expects multi-dimensional operands to have compatible "
                                  "shapes.")
        if any(not compatible_shape(t.shape, one[0].shape) for t in one):
            raise infer_error(op, "expects single-dimensional operands to have compatible "
                                  "shapes.")
        index, rank = op.attributes["feature_index"].value, many[0].rank
        if index >= rank:
            raise infer_error(op, "expects featureIndex to be smaller than the rank of "
                                  f"multi-dimensional operands; got featureIndex {index}, and "
                                  f"rank {rank}.")
        count, size = many[0].shape[index], one[0].shape[0]
        if not compatible_dims(size, count):
            raise infer_error(op, "expects the size of single-dimensional operands to be "
                                  "compatible with feature count, but the size of "
                                  f"single-dimensional operands is {_dim(size)} and the "
                                  f"feature count is {_dim(count)}.")
        inferred = [many[0]]
        if not inference:
            feature = RankedTensorType((count,), many[0].element_type)
            inferred += [feature, feature]
        return inferred
    return infer


def _dim(d) -> str:
    """StableHLO's ``dimSizeToString``."""
    return "?" if d is None else str(d)


_BN_TENSOR = T("F Q")
_BN_1D = T("F Q", "1D")
_BN_ATTRS = (F32_ATTR, i64_attr("feature_index", "non-negative"))


def _bn_spec(n_operands: int, n_results: int, multi, single, inference: bool) -> OpSpec:
    kinds = {i: (_BN_TENSOR if i in multi else _BN_1D) for i in range(n_operands)}
    results = tuple((i, _BN_TENSOR if i == 0 else _BN_1D) for i in range(n_results))
    return OpSpec(Counts(n_operands, n_results), _BN_ATTRS, tuple(kinds.items()), results,
                  _compatible_element_types, _batch_norm(multi, single, inference))


# -- broadcast, cholesky, triangular_solve, fft ---------------------------------------------

def _infer_broadcast(op: Operation) -> list[Type]:
    """``hlo::inferBroadcastOp``."""
    operand = op.operand_types[0]
    sizes = ints(op.attributes["broadcast_sizes"])
    for size in sizes:
        if size < 0:
            raise infer_error(op, f"Broadcast with negative dimension size {size}")
    return [RankedTensorType((*sizes, *operand.shape), operand.element_type)]


def _same_element_types(op: Operation) -> None:
    """``SameOperandsAndResultElementType``."""
    types = element_types(op)
    if any(t != types[0] for t in types):
        raise op_error(op, "requires the same element type for all operands and results")


def _infer_cholesky(op: Operation) -> list[Type]:
    """``hlo::inferCholeskyOp``: a batch of square matrices."""
    a = op.operand_types[0]
    if a.rank < 2:
        raise infer_error(op, f"argument 'a' must have rank >= 2, got shape {dims(a.shape)}.")
    if not compatible_dims(a.shape[-2], a.shape[-1]):
        raise infer_error(op, f"minor dimensions of 'a' must have equal size, got shape "
                              f"{dims(a.shape)}.")
    return [a]


def _infer_triangular_solve(op: Operation) -> list[Type]:
    """``hlo::inferTriangularSolveOp``."""
    a, b = op.operand_types
    if a.rank < 2:
        raise infer_error(op, f"operand 'a' must have rank >= 2, but got '{a}'")
    if not compatible_dims(a.shape[-2], a.shape[-1]):
        raise infer_error(op, f"two minor dimensions of operand 'a' must be compatible, but "
                              f"got '{a}'")
    if a.rank != b.rank:
        raise infer_error(op, f"operands must have equal rank, but got '{a}' and '{b}'")
    left = getattr(op.attributes.get("left_side"), "value", False)
    if not compatible_dims(a.shape[-1], b.shape[-2 if left else -1]):
        raise infer_error(op, f"shared dimension of operands 'a' and 'b' must be compatible, "
                              f"but got '{a}' and '{b}'")
    if not compatible_shape(a.shape[:-2], b.shape[:-2]):
        raise infer_error(op, f"batch dimensions of the operands must be compatible, but got "
                              f"'{a}' and '{b}'")
    if op.attributes["transpose_a"].value == "TRANSPOSE_INVALID":
        raise infer_error(op, "Invalid transpose option value for triangular solve")
    return [b]


def _infer_fft(op: Operation) -> list[Type]:
    """``hlo::inferFftOp``: element types by FFT kind, then the transformed shape."""
    operand = op.operand_types[0]
    kind = op.attributes["fft_type"].value
    length = ints(op.attributes["fft_length"])
    rank = len(length)
    if not 1 <= rank <= 3:
        raise infer_error(op, f"rank must be between 1 and 3, but got {rank}.")
    element = operand.element_type
    if kind == "RFFT":
        if not (isinstance(element, FloatType) and element.name in ("f32", "f64")):
            raise infer_error(op, f"RFFT requires f32 or f64 input type, but is given "
                                  f"{element}.")
        out_element: Type = ComplexType(element)
    elif not isinstance(element, ComplexType):
        raise infer_error(op, f"FFT/IFFT/IRFFT take a complex tensor as input, but is given "
                              f"'{operand}'.")
    else:
        out_element = element.element_type if kind == "IRFFT" else element
    if operand.rank < rank:
        raise infer_error(op, f"operand rank must not be less than fft rank of {rank} for "
                              f"operand of type '{operand}'.")
    shape = list(operand.shape)
    if kind == "RFFT":
        if not all(map(compatible_dims, shape[-rank:], length)):
            raise infer_error(op, f"RFFT requires innermost dimensions to be compatible with "
                                  f"fft_length. Got: {dims(shape)} but wanted {dims(length)}.")
        if length[-1] != 0:
            shape[-1] = length[-1] // 2 + 1
    if kind == "IRFFT":
        _check_irfft(op, shape, length)
        shape[-1] = length[-1]
    return [RankedTensorType(tuple(shape), out_element)]


def _check_irfft(op: Operation, shape: list, length: Sequence[int]) -> None:
    rank = len(length)
    for size, want in zip(shape[-rank:-1], length):
        if not compatible_dims(size, want):
            raise infer_error(op, f"IRFFT requires non-final dimensions to be compatible with "
                                  f"fft_length. Got: {dims(shape)} but wanted {dims(length)}, "
                                  f"and {_dim(size)} != {want}.")
    last = shape[-1]
    if (not compatible_dims(last, 0) or length[-1] != 0) and \
            not compatible_dims(last, length[-1] // 2 + 1):
        raise infer_error(op, f"IRFFT requires innermost dimension to be compatible with "
                              f"fft_length[-1]/2+1. Got: {dims([last])} but fft_length is "
                              f"{dims(length)}.")


# -- rng, rng_bit_generator, set_dimension_size ---------------------------------------------

def _infer_rng(op: Operation) -> list[Type] | None:
    """``hlo::inferRngOp``: the shape operand's values, or as many dynamic dims."""
    a, b, shape = op.operand_types
    if op.attributes["rng_distribution"].value != "UNIFORM" and not (
            isinstance(a.element_type, FloatType) and isinstance(b.element_type, FloatType)):
        raise infer_error(op, "mu and sigma must be floats")
    if not isinstance(shape, RankedTensorType) or shape.rank != 1:
        return None
    values = constant_ints(op.operands[2])
    sizes = tuple(values) if values is not None else (None,) * (shape.shape[0] or 0)
    return [RankedTensorType(sizes, b.element_type)]


def _verify_rng_bit_generator(op: Operation) -> None:
    """``hlo::verifyRngBitGeneratorOp``."""
    initial, output = op.operand_types[0], op.result_types[0]
    if ranked((initial, output)) and not compatible_shape(initial.shape, output.shape):
        raise fail(op, f"output state shape must be compatible with initial state shape. "
                       f"Got: '{initial}' and '{output}'")


def _infer_set_dimension_size(op: Operation) -> list[Type] | None:
    """``hlo::inferSetDimensionSizeOp``: the dimension in range; it becomes dynamic unless
    the size is a constant equal to its bound (the result keeps the op's bound)."""
    operand, size = op.operand_types
    if size.rank != 0:
        raise infer_error(op, "size operand should be of rank-0")
    dim = op.attributes["dimension"].value
    if dim >= operand.rank:
        raise infer_error(op, f"requires dimension attribute in range [0, {operand.rank}); "
                              f"found ({dim})")
    return None


# -- collectives ----------------------------------------------------------------------------

def _verify_collective_permute(op: Operation) -> None:
    """``hlo::verifyCollectivePermuteOp``: (N, 2) pairs of distinct, non-negative ids."""
    pairs = op.attributes["source_target_pairs"]
    shape = pairs.type.shape
    if len(shape) != 2:
        raise fail(op, f"expect source_target_pairs attribute to be of rank 2, but got rank "
                       f"{len(shape)}")
    if shape[1] != 2:
        raise fail(op, f"expect source_target_pairs attribute of shape (N, 2), but got "
                       f"({dims(shape)})")
    values = pairs.values * (shape[0] * 2) if pairs.is_splat else pairs.values
    seen: tuple[set, set] = (set(), set())
    for i, v in enumerate(values):
        if v < 0:
            raise fail(op, "replica ids in source_target_pairs must be >= 0.")
        if v in seen[i % 2]:
            raise fail(op, f"duplicate {('sources', 'targets')[i % 2]} not allowed.")
        seen[i % 2].add(v)


def _verify_collective_broadcast(op: Operation) -> None:
    """``hlo::verifyCollectiveBroadcastOp``: rank-2 groups of distinct non-negative ids."""
    groups = op.attributes["replica_groups"]
    shape = groups.type.shape
    if len(shape) != 2:
        raise fail(op, f"replica groups should be a rank 2 tensor,but instead it is of rank "
                       f"{len(shape)}")
    n = shape[0] * shape[1]
    values = groups.values * n if groups.is_splat else groups.values
    seen: set[int] = set()
    for v in values:
        if v < 0:
            raise fail(op, f"replica_groups values must be positive, but was given {v}")
        if v in seen:
            raise fail(op, f"replica id #{v} seen more than once")
        seen.add(v)


def _infer_broadcast_results(op: Operation) -> list[Type]:
    """``inferCollectiveBroadcastOp``: the data operands' types (not the dynamic root)."""
    types = list(op.operand_types)
    return types[:-1] if "has_dynamic_root" in op.attributes else types


def _infer_operands(op: Operation) -> list[Type]:
    return list(op.operand_types)


# -- tokens, ids, tuple, optimization_barrier, constant -------------------------------------

def _verify_feed_results(op: Operation, tensors_message: str) -> None:
    """``verifyInfeedOp``/``verifyRecvOp``: tensors, then a token."""
    results = op.result_types
    if not results:
        raise fail(op, f"result is expected to be at least of size 1, but got {len(results)}")
    for t in results[:-1]:
        if not isinstance(t, RankedTensorType):
            raise fail(op, f"{tensors_message}, but got '{t}'")
    if not isinstance(results[-1], TokenType):
        raise fail(op, f"last element of result types is expected to be of token type, but "
                       f"got '{results[-1]}'")


def _verify_infeed(op: Operation) -> None:
    """``hlo::verifyInfeedOp``."""
    _verify_feed_results(op, "all elements of result types, except the last element, are "
                             "expected to be of tensor type")
    layout = op.attributes.get("layout")
    if layout is None:
        return
    entries = getattr(layout, "value", None)
    if not isinstance(entries, (list, tuple)):
        raise fail(op, "layout-attribute expected to be of array-type.")
    expected = op.num_results - 1
    if len(entries) != expected:
        raise fail(op, f"layout-attribute size must be {expected} (which is the number of "
                       f"op-results - 1 (for token result)), but got {len(entries)}")


def _channel_types(op: Operation) -> tuple[bool, int]:
    host = getattr(op.attributes.get("is_host_transfer"), "value", False)
    return bool(host), op.attributes["channel_handle"].type


def _verify_channel(op: Operation, host_kind: int, host_name: str) -> None:
    """``inferSendOp``/``verifyRecvOp``: the channel type against ``is_host_transfer``
    (1: DEVICE_TO_DEVICE, 2: DEVICE_TO_HOST, 3: HOST_TO_DEVICE)."""
    host, kind = _channel_types(op)
    if not host and kind != 1:
        raise fail(op, "channel_type should be DEVICE_TO_DEVICE when is_host_transfer is "
                       "false")
    if host and kind != host_kind:
        raise fail(op, f"channel_type should be {host_name} when is_host_transfer is true")


def _verify_recv(op: Operation) -> None:
    _verify_channel(op, 3, "HOST_TO_DEVICE")
    _verify_feed_results(op, "everything but the last element of result types is expected "
                             "to be of tensor type")


def _infer_send(op: Operation) -> list[Type]:
    try:
        _verify_channel(op, 2, "DEVICE_TO_HOST")
    except VerifyError as e:
        raise infer_error(op, e.message) from None
    return [TokenType()]


def _verify_id_result(op: Operation) -> None:
    t = op.result_types[0]
    if not (isinstance(t, RankedTensorType) and t.element_type == UI32):
        raise op_error(op, f"result #0 must be ranked tensor of 32-bit unsigned integer "
                           f"values, but got '{t}'")


def _verify_optimization_barrier(op: Operation) -> None:
    """``HLO_PairwiseSameOperandAndResultType``."""
    if op.num_operands != op.num_results:
        raise op_error(op, "requires the same number of operands and results")
    for i, (a, b) in enumerate(zip(op.operand_types, op.result_types)):
        if a != b:
            raise op_error(op, f"requires the same type for operand and result at index {i}")


def _infer_constant(op: Operation) -> list[Type] | None:
    """The value's type; a quantized result of the same shape whose storage type is the
    value's element type is compatible too (``ConstantOp::isCompatibleReturnTypes``)."""
    value = op.attributes.get("value")
    if not isinstance(value, DenseElementsAttr):
        return None
    result = op.result_types[0] if op.result_types else None
    if isinstance(result, RankedTensorType) and result.shape == value.type.shape:
        quant = QUANT_TYPE.match(str(result.element_type))
        if quant is not None:
            storage = quant.group(1)
            if storage.startswith("u"):  # quant's u8 is the builtin ui8
                storage = "ui" + storage[1:]
            if str(value.type.element_type) == storage:
                return [result]
    return [value.type]


TOKEN = TokenOr()
T_TOKENS = TokenOr(variadic=True)
STATIC_SHAPE = T("IDX", "static-1D")  # HLO_StaticDimensionTensor
_TOKEN = ((0, TOKEN),)
# outfeed, send: Variadic<HLO_TensorOrPerAxisQuantizedTensor> then HLO_Token
_FEED = ((slice(0, -1), T("F P I C Q QA", variadic=True)), (-1, TOKEN))

_ANY = T("F P I C Q")


def _infer_id(op: Operation) -> list[Type]:
    """``inferReplicaIdOp``/``inferPartitionIdOp``: ``tensor<ui32>``."""
    return [RankedTensorType((), UI32)]


register({
    "batch_norm_inference": _bn_spec(5, 1, (0,), (1, 2, 3, 4), True),
    "batch_norm_training": _bn_spec(3, 3, (0,), (1, 2), False),
    "batch_norm_grad": _bn_spec(5, 3, (0, 4), (1, 2, 3), False),
    "broadcast": OpSpec(Counts(1), (i64_array("broadcast_sizes"),), ((0, _ANY),),
                        ((0, T("F P I C Q QA")),), _same_element_types, _infer_broadcast),
    "cholesky": OpSpec(Counts(1), (bool_attr("lower", False),), ((0, T("F C Q")),),
                       ((0, T("F C Q")),), _compatible_element_types, _infer_cholesky),
    "triangular_solve": OpSpec(
        Counts(2), (bool_attr("left_side"), bool_attr("lower"), bool_attr("unit_diagonal"),
                    enum_attr("transpose_a", "transpose", "Transpose options")),
        ((0, T("F C")), (1, T("F C"))), ((0, T("F C")),), _compatible_element_types,
        _infer_triangular_solve),
    "fft": OpSpec(Counts(1), (enum_attr("fft_type", "fft_type", "XLA fast fourier transform "
                                        "type."), i64_array("fft_length")),
                  ((0, T("F C")),), ((0, T("F C")),), infer=_infer_fft),
    "rng": OpSpec(Counts(3), (enum_attr("rng_distribution", "rng_distribution",
                                        "XLA PRNG distribution to be used."),),
                  ((0, T("P I F", "0D")), (1, T("P I F", "0D")), (2, STATIC_SHAPE)),
                  ((0, T("P I F")),), infer=_infer_rng),
    "rng_bit_generator": OpSpec(Counts(1, 2), (enum_attr("rng_algorithm", "rng_algorithm",
                                                         "XLA PRNG algorithm to be used."),),
                                ((0, T("I F")),), ((0, T("I F")), (1, T("I F", "static"))),
                                _verify_rng_bit_generator),
    "set_dimension_size": OpSpec(Counts(2), (i64_attr("dimension", "non-negative"),),
                                 ((0, _ANY), (1, T("I32"))), ((0, _ANY),),
                                 infer=_infer_set_dimension_size),
    "collective_permute": OpSpec(Counts(1), (i64_elements("source_target_pairs"),),
                                 ((0, _ANY),), ((0, _ANY),), _verify_collective_permute,
                                 _infer_operands),
    # variadic with has_dynamic_root in the StableHLO our interpreter runs (jaxlib's: one)
    "collective_broadcast": OpSpec(Counts(None, None), (i64_elements("replica_groups"),),
                                   verify=_verify_collective_broadcast,
                                   infer=_infer_broadcast_results),
    "constant": OpSpec(Counts(0), infer=_infer_constant),
    "create_token": OpSpec(Counts(0), results=_TOKEN),
    "after_all": OpSpec(Counts(None), (), ((slice(None), T_TOKENS),), _TOKEN),
    "infeed": OpSpec(Counts(1, None), operands=_TOKEN, verify=_verify_infeed),
    "outfeed": OpSpec(Counts(-1), (), _FEED, _TOKEN),
    "send": OpSpec(Counts(-1), (CHANNEL,), _FEED, _TOKEN, infer=_infer_send),
    "recv": OpSpec(Counts(1, None), (CHANNEL,), _TOKEN, verify=_verify_recv),
    "replica_id": OpSpec(Counts(0), verify=_verify_id_result, infer=_infer_id),
    "partition_id": OpSpec(Counts(0), verify=_verify_id_result, infer=_infer_id),
    "tuple": OpSpec(Counts(None), infer=lambda op: [TupleType(tuple(op.operand_types))]),
    "optimization_barrier": OpSpec(Counts(None, None), (),
                                   ((slice(None), TokenOr(T("F P I C Q", variadic=True))),),
                                   verify=_verify_optimization_barrier),
})
