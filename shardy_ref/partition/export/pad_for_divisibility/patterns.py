"""The conversion patterns of ``sdy-pad-for-divisibility``, one per op kind (upstream
``export/pad_for_divisibility.cc``): each gets the op and its operands as already converted
(the adaptor) and returns the values replacing the op's results, or None when it does not
apply. Ops without a pattern of their own go through :func:`pad_generic`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType, Type
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding, shardable_value
from shardy_ref.partition.export.lowering import Builder, zero_scalar
from shardy_ref.partition.export.pad_for_divisibility.infer import (
    conv_shape,
    infer_result_types,
    ints,
)
from shardy_ref.partition.export.pad_for_divisibility.padding import (
    DEFAULT_KIND,
    PaddingCache,
    PaddingKind,
    create_padded_value,
    ensure_padding_with_kind,
    ensure_padding_with_value,
    i64_array,
    padded_type,
    trim_output_for_dims,
)


@dataclass(slots=True)
class Rewriter:
    """What patterns share while one function is converted: the symbol table, the
    padding cache (upstream's ``PaddedTypeConverter`` and ``PaddingCache``), and the
    padded loops whose block arguments take their padded types at the end."""

    table: SymbolTable
    cache: PaddingCache = field(default_factory=PaddingCache)
    loops: list[Operation] = field(default_factory=list)

    def padded(self, type_: Type, sharding: TensorSharding | None) -> Type:
        return padded_type(type_, sharding, self.table)


Pattern = Callable[[Rewriter, Operation, list[Value]], list[Value] | None]
PATTERNS: dict[str, Pattern] = {}

# non-StableHLO ops the generic pattern converts too (upstream ``GenericOpPattern``, plus
# ``sdy.collective_permute``: see ``_VALUES_CHECKED`` in ``__init__``)
GENERIC_SDY_OPS = frozenset({"sdy.return", "sdy.all_reduce", "sdy.sharded_to_unreduced",
                             "sdy.replicated_to_unreduced", "sdy.collective_permute"})


# StableHLO, and the CHLO elementwise ops the simulator keeps unlegalized (its special
# functions; upstream never sees CHLO here: XLA legalizes it before partitioning)
PADDED_DIALECTS = frozenset({"stablehlo", "chlo"})


def pattern(name: str):
    def wrap(fn: Pattern) -> Pattern:
        PATTERNS[name] = fn
        return fn
    return wrap


def pattern_for(op: Operation) -> Pattern | None:
    custom = PATTERNS.get(op.name)
    if custom is not None:
        return custom
    if op.dialect in PADDED_DIALECTS or op.name in GENERIC_SDY_OPS:
        return pad_generic
    return None


def _shardable(values: Sequence[Value]) -> list[Value]:
    """Upstream's ``getShardableValue`` of each operand, except for the block arguments
    of a data-flow op: upstream swaps them for the op's own result (their edge owner),
    which inside a ``stablehlo.while`` body is a use of the loop's result in its own body
    and no longer verifies."""
    out = []
    for v in values:
        s = None if isinstance(v, BlockArgument) else shardable_value(v)
        out.append(v if s is None else s)
    return out


def _widest(inferred: Type | None, padded: Type) -> Type:
    """Each dimension the larger of the inferred and the padded size (upstream's
    "reconciled shape"), with the inferred element type."""
    if not isinstance(inferred, RankedTensorType) or not isinstance(padded, RankedTensorType) \
            or len(inferred.shape) != len(padded.shape):
        return padded
    shape = tuple(b if a is None else a if b is None else max(a, b)
                  for a, b in zip(inferred.shape, padded.shape))
    return RankedTensorType(shape, inferred.element_type, inferred.encoding)


def _recreate(op: Operation, operands: Sequence[Value], types: Sequence[Type]) -> Operation:
    """A copy of ``op`` with new operands and result types, taking over its regions,
    inserted before it."""
    new = Operation(op.name, operands, types, dict(op.attributes), (), op.successors,
                    op.location, op.properties)
    for region in op.take_regions():
        new.add_region(region)
    op.parent.insert_before(op, new)
    return new


def _result_types(rw: Rewriter, op: Operation, operands: Sequence[Value]) -> list[Type]:
    inferred = infer_result_types(op, [v.type for v in operands])
    types = []
    for i, result in enumerate(op.results):
        padded = rw.padded(result.type, get_sharding(result))
        types.append(padded if not inferred else _widest(inferred[i], padded))
    return types


def pad_generic(rw: Rewriter, op: Operation, operands: list[Value]) -> list[Value]:
    """Upstream ``padGenericOp``: the same op on the converted operands, each result of its
    inferred type widened to its divisible padded type."""
    operands = _shardable(operands)
    return list(_recreate(op, operands, _result_types(rw, op, operands)).results)


@pattern("stablehlo.while")
def while_op(rw: Rewriter, op: Operation, operands: list[Value]) -> list[Value]:
    """As generic; the block arguments of its regions get the padded types at the end
    (:func:`~shardy_ref.partition.export.pad_for_divisibility.retype_loop_arguments`), once the
    ops inside have been converted against the unpadded ones. Upstream's generic pattern
    leaves them unpadded and the loop no longer verifies."""
    results = pad_generic(rw, op, operands)
    rw.loops.append(results[0].op)
    return results


@pattern("sdy.all_gather")
def all_gather(rw: Rewriter, op: Operation, operands: list[Value]) -> list[Value]:
    """Gather the padded operand, then slice the gathered dimensions back."""
    operands = _shardable(operands)
    new = _recreate(op, operands, _result_types(rw, op, operands))
    b = Builder(op)
    kind = rw.cache.get(operands[0])
    if kind is not None:
        for result in new.results:
            rw.cache.set(result, kind)
    dims = [d for d, axes in enumerate(op.attributes["gathering_axes"]) if len(axes)]
    return [trim_output_for_dims(b, rw.table, result, _trimmed(rw, old), dims, get_sharding(result),
                                 kind, rw.cache) for result, old in zip(new.results, op.results)]


def _trimmed(rw: Rewriter, old: Value) -> Type:
    """The type a gathered dimension is sliced back to. Upstream slices to the original
    size, which on a dimension still sharded by other axes is not divisible again (the
    slice then fails to convert); the padded original type is the same on fully gathered
    dimensions and stays divisible on partially gathered ones."""
    return rw.padded(old.type, get_sharding(old))


def _pad_collective(rw: Rewriter, op: Operation, value: Value, orig: Value,
                    padded: RankedTensorType) -> Operation:
    """Upstream ``padCollectiveOp``: pad the operand up to ``padded`` (with its known
    padding kind when it was padded before, else zero) and redo the collective on it."""
    b = Builder(op)
    kind = rw.cache.get(value)
    padded_before = value.type != orig.type
    if padded != value.type:
        constant_kind = kind if padded_before and kind is not None else DEFAULT_KIND
        registered = DEFAULT_KIND if not padded_before else kind
        value = create_padded_value(b, rw.table, padded, value, constant_kind, registered, rw.cache)
        kind = registered
    new = b.op(op.name, [value], [padded], dict(op.attributes))
    if kind is not None:
        rw.cache.set(new.results[0], kind)
    return new


@pattern("sdy.all_slice")
@pattern("sdy.reduce_scatter")
def slicing_collective(rw: Rewriter, op: Operation, operands: list[Value]):
    """Pad the operand so the out sharding divides it, then slice (or reduce-scatter)."""
    value = operands[0]
    if not isinstance(value.type, RankedTensorType):
        return None
    padded = rw.padded(value.type, op.attributes["out_sharding"])
    return list(_pad_collective(rw, op, value, op.operands[0], padded).results)


@pattern("sdy.all_to_all")
def all_to_all(rw: Rewriter, op: Operation, operands: list[Value]):
    """Pad for the out sharding, exchange, and slice the source dimensions back."""
    value = operands[0]
    if not isinstance(value.type, RankedTensorType):
        return None
    out = op.attributes["out_sharding"]
    kind = rw.cache.get(value)
    new = _pad_collective(rw, op, value, op.operands[0], rw.padded(value.type, out))
    dims = [param.src_dim for param in op.attributes["params"]]
    return [trim_output_for_dims(Builder(op), rw.table, new.results[0], _trimmed(rw, op.results[0]),
                                 dims, out, kind, rw.cache)]


def communication_free_slice_dim(dim: int, op: Operation, sharding: TensorSharding | None,
                                 mesh) -> bool:
    """Upstream ``isCommunicationFreeSliceDim``: every shard of the slice's result lies in
    the same device's shard of its operand."""
    count = sharding.dim_shardings[dim].sharded_size(mesh) \
        if sharding is not None and mesh is not None else 1
    if count <= 1:
        return True
    if ints(op, "start_indices")[dim] != 0 or ints(op, "strides")[dim] != 1:
        return False
    size_in, size_out = op.operands[0].type.shape[dim], op.results[0].type.shape[dim]
    if size_in is None or size_out is None:
        return False
    return -(-size_in // count) == -(-size_out // count)


@pattern("stablehlo.slice")
def slice_op(rw: Rewriter, op: Operation, operands: list[Value]):
    """Extend the slice's limits so its result has the padded shape. Upstream sets every
    limit to start + padded size, which breaks a strided dimension that needs no padding;
    we keep the limit of an unpadded dimension and extend a padded one by whole strides."""
    result = op.results[0]
    sharding = get_sharding(result)
    padded = rw.padded(result.type, sharding)
    if padded == result.type:
        return pad_generic(rw, op, operands)
    starts, limits = ints(op, "start_indices"), ints(op, "limit_indices")
    strides = ints(op, "strides", [1] * len(starts))
    new_limits = [limit if size == old else start + (size - 1) * stride + 1
                  for start, limit, stride, size, old in zip(
                      starts, limits, strides, padded.shape, result.type.shape)]
    operand_sharding = get_sharding(operands[0])
    mesh = mesh_or_lookup(rw.table, sharding.mesh_or_ref)
    for dim, (new, old) in enumerate(zip(new_limits, limits)):
        if new != old and not communication_free_slice_dim(dim, op, operand_sharding, mesh):
            raise PassError(op.location, f"cannot pad 'stablehlo.slice' for divisibility: "
                            f"dimension {dim} needs communication to extend its limit from "
                            f"{old} to {new}")
    new = Builder(op).op("stablehlo.slice", [operands[0]], [padded], {
        "start_indices": op.attributes["start_indices"],
        "limit_indices": i64_array(new_limits),
        "strides": op.attributes.get("strides", i64_array([1] * len(starts)))}).results[0]
    set_sharding(new, sharding)
    return [new]


@pattern("stablehlo.pad")
def pad_op(rw: Rewriter, op: Operation, operands: list[Value]):
    """Re-pad the (padded) operand to the padded result: the high edge padding absorbs the
    difference; when it shrinks, the operand's own padding must hold the padding value."""
    value, pad_value = operands[0], operands[1]
    if not isinstance(value.type, RankedTensorType):
        return None
    result = op.results[0]
    padded = rw.padded(result.type, get_sharding(result))
    low, high = ints(op, "edge_padding_low"), ints(op, "edge_padding_high")
    interior = ints(op, "interior_padding")
    new_high = [out - size - lo - max(0, size - 1) * inner for size, out, lo, inner in zip(
        value.type.shape, padded.shape, low, interior)]
    b = Builder(op)
    if any(new < old for new, old in zip(new_high, high)):
        value = ensure_padding_with_value(b, value, op.operands[0].type, pad_value)
    new = b.op("stablehlo.pad", [value, pad_value], [padded], {
        "edge_padding_low": op.attributes["edge_padding_low"],
        "edge_padding_high": i64_array(new_high),
        "interior_padding": op.attributes["interior_padding"]}).results[0]
    sharding = get_sharding(result)
    if sharding is not None:
        set_sharding(new, sharding)
    return [new]


@pattern("stablehlo.reshape")
def reshape_op(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, but refuse a reshape whose padded operand and result no longer hold the
    same number of elements, e.g. a size-1 dimension sharded only on the operand side (its
    size-1 factor appears in no result, so explicit reshards leave it sharded). Upstream
    has no reshape pattern either: the same op fails StableHLO's reshape verifier after the
    pass; raising that error here keeps us from emitting an invalid op that the later
    global-to-local conversion would make valid, with each device reshaping its own shard."""
    results = pad_generic(rw, op, operands)
    source, result = results[0].defining_op.operands[0].type, results[0].type
    if isinstance(source, RankedTensorType) and isinstance(result, RankedTensorType) \
            and source.has_static_shape and result.has_static_shape \
            and source.num_elements != result.num_elements:
        raise PassError(op.location, f"'stablehlo.reshape' op number of output elements "
                        f"({result.num_elements}) doesn't match expected number of elements "
                        f"({source.num_elements})")
    return results


def _zero_sum(rw: Rewriter, op: Operation, value: Value, init: Value) -> bool:
    """Whether reducing ``value``'s padding leaves the result alone: known-zero padding
    summed from a zero constant."""
    body = list(op.regions[0].blocks[0]) if op.regions and op.regions[0].blocks else []
    const = init.defining_op
    return (rw.cache.get(value) is PaddingKind.ZERO
            and [o.name for o in body] == ["stablehlo.add", "stablehlo.return"]
            and const is not None and const.name == "stablehlo.constant"
            and all(v == 0 for v in const.attributes["value"].values))


@pattern("stablehlo.reduce")
def reduce_op(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, after setting the padding of each reduced, padded dimension to the
    reduction's init value (skipped for known-zero padding summed from zero), so the
    padding adds nothing when the init value is the body's identity, as a reduction that is
    partitioned at all must assume. Upstream has no reduce pattern and reduces whatever the
    padding holds (zeros, or the real rows an extended slice reads in): wrong values."""
    half = len(operands) // 2
    dims = ints(op, "dimensions")
    b = Builder(op)
    masked = list(operands)
    for i, (value, orig, init) in enumerate(zip(operands[:half], op.operands[:half],
                                                operands[half:])):
        padded = [d for d in dims if isinstance(value.type, RankedTensorType)
                  and value.type.shape[d] != orig.type.shape[d]]
        if padded and not _zero_sum(rw, op, value, init):
            masked[i] = ensure_padding_with_value(b, value, orig.type, init, padded)
    return pad_generic(rw, op, masked)


@pattern("stablehlo.concatenate")
def concatenate_op(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, but refuse to concatenate operands padded along the concatenated
    dimension: their padding would land between the operands. Upstream has no pattern
    either: its concatenation is longer than the padded result (the cast back to that then
    fails verification) or, when the lengths agree, silently misplaces the rows."""
    dim = int(op.attributes["dimension"].value)
    for value, orig in zip(operands, op.operands):
        if isinstance(value.type, RankedTensorType) \
                and value.type.shape[dim] != orig.type.shape[dim]:
            raise PassError(op.location, f"cannot pad for divisibility: 'stablehlo.concatenate' "
                            f"operand padded along the concatenated dimension {dim} "
                            f"({orig.type.shape[dim]} -> {value.type.shape[dim]})")
    return pad_generic(rw, op, operands)


@pattern("stablehlo.dot_general")
def dot_general(rw: Rewriter, op: Operation, operands: list[Value]):
    """Zero the padding of the contracting dimensions (unless known zero), then as generic."""
    lhs_orig, rhs_orig = op.operands[0].type, op.operands[1].type
    if not isinstance(lhs_orig, RankedTensorType) or not isinstance(rhs_orig, RankedTensorType):
        return None
    dims = op.attributes["dot_dimension_numbers"]
    b = Builder(op)
    lhs = ensure_padding_with_kind(b, operands[0], lhs_orig, PaddingKind.ZERO, rw.cache,
                                   dims.lhs_contracting_dimensions)
    rhs = ensure_padding_with_kind(b, operands[1], rhs_orig, PaddingKind.ZERO, rw.cache,
                                   dims.rhs_contracting_dimensions)
    return pad_generic(rw, op, [lhs, rhs])


@pattern("stablehlo.convolution")
def convolution(rw: Rewriter, op: Operation, operands: list[Value]):
    """Zero the padding of the input-feature and spatial dimensions, convolve, and slice
    the output spatial dimensions down to the padded result."""
    lhs_orig, rhs_orig = op.operands[0].type, op.operands[1].type
    if not isinstance(lhs_orig, RankedTensorType) or not isinstance(rhs_orig, RankedTensorType):
        return None
    dn = op.attributes["dimension_numbers"]
    b = Builder(op)
    lhs = ensure_padding_with_kind(
        b, operands[0], lhs_orig, PaddingKind.ZERO, rw.cache,
        [dn.input_feature_dimension, *dn.input_spatial_dimensions])
    rhs = ensure_padding_with_kind(
        b, operands[1], rhs_orig, PaddingKind.ZERO, rw.cache,
        [dn.kernel_input_feature_dimension, *dn.kernel_spatial_dimensions])
    inferred = RankedTensorType(conv_shape(op, lhs.type, rhs.type), lhs_orig.element_type)
    result = op.results[0]
    sharding = get_sharding(result)
    padded = rw.padded(result.type, sharding)
    if any(inferred.shape[d] < padded.shape[d] for d in dn.output_spatial_dimensions):
        return None  # spatial sharding must be made divisible by resolve-permutation-factors
    new = b.op(op.name, _shardable([lhs, rhs]), [inferred], dict(op.attributes)).results[0]
    if sharding is not None:
        set_sharding(new, sharding)
    return [trim_output_for_dims(b, rw.table, new, padded, dn.output_spatial_dimensions, sharding,
                                 PaddingKind.ZERO, rw.cache)]


@pattern("stablehlo.dynamic_slice")
def dynamic_slice(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, with the slice size of each padded dimension the slice takes whole
    grown to the padded size (a whole dimension stays whole; its start clamps to 0)."""
    _grow_whole_dims(op, operands[0], "slice_sizes")
    return pad_generic(rw, op, operands)


@pattern("stablehlo.gather")
def gather(rw: Rewriter, op: Operation, operands: list[Value]):
    """As :func:`dynamic_slice`: padded dimensions gathered whole stay whole; and the
    start indices into a padded dimension are clamped to the original size first (the op
    clamps into the padded one, and a start past the end would read the padding)."""
    orig, padded = op.operands[0].type, operands[0].type
    dims = op.attributes["dimension_numbers"]
    sizes = ints(op, "slice_sizes")
    if isinstance(padded, RankedTensorType) and padded != orig and any(
            orig.shape[d] != padded.shape[d] for d in dims.start_index_map):
        limits = [orig.shape[d] - sizes[d] for d in dims.start_index_map]
        operands = [operands[0], clamp_indices(Builder(op), operands[1],
                                               dims.index_vector_dim, limits),
                    *operands[2:]]
    _grow_whole_dims(op, operands[0], "slice_sizes")
    return pad_generic(rw, op, operands)


def clamp_indices(b: Builder, indices: Value, vector_dim: int, limits: list[int]) -> Value:
    """``indices`` clamped componentwise into ``[0, limits[c]]`` (the components lie along
    ``vector_dim``, or there is one when it is the rank); the bound of their shape carries
    the indices' sharding, as the clamp does."""
    t = indices.type
    scalar = RankedTensorType((), t.element_type)
    low = b.op("stablehlo.constant", types=[scalar], attributes={
        "value": DenseElementsAttr.from_values(scalar, [0])}).results[0]
    if vector_dim < len(t.shape):
        vector = RankedTensorType((len(limits),), t.element_type)
        high = b.op("stablehlo.constant", types=[vector], attributes={
            "value": DenseElementsAttr.from_values(vector, limits)}).results[0]
        high = b.op("stablehlo.broadcast_in_dim", [high], [t], {
            "broadcast_dimensions": i64_array((vector_dim,))}).results[0]
        sharding = get_sharding(indices)
        if sharding is not None:
            set_sharding(high, sharding)
    else:
        high = b.op("stablehlo.constant", types=[scalar], attributes={
            "value": DenseElementsAttr.from_values(scalar, limits[:1])}).results[0]
    clamped = b.op("stablehlo.clamp", [low, indices, high], [t]).results[0]
    if get_sharding(indices) is not None:
        set_sharding(clamped, get_sharding(indices))
    return clamped


def _grow_whole_dims(op: Operation, padded: Value, name: str) -> None:
    orig = op.operands[0].type
    if not isinstance(padded.type, RankedTensorType) or padded.type == orig:
        return
    sizes = [new if size == old else size for size, old, new in zip(
        ints(op, name), orig.shape, padded.type.shape, strict=True)]
    op.attributes[name] = i64_array(sizes)


@pattern("stablehlo.dynamic_update_slice")
def dynamic_update_slice(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, after clamping the start index of each padded dimension the update does
    not cover whole into the original ``[0, size - update size]``: the op clamps into the
    padded range, which would let an update past the end land in the padding."""
    orig, update = op.operands[0].type, op.operands[1].type
    value = operands[0]
    if not isinstance(value.type, RankedTensorType) or value.type == orig:
        return pad_generic(rw, op, operands)
    b = Builder(op)
    new = list(operands)
    for d, (old, padded, u) in enumerate(zip(orig.shape, value.type.shape, update.shape)):
        if old != padded and u != old:
            new[2 + d] = clamp_index(b, operands[2 + d], old - u)
    return pad_generic(rw, op, new)


def clamp_index(b: Builder, index: Value, high: int) -> Value:
    """``clamp(0, index, high)`` in the index's own element type."""
    t = index.type
    bounds = [b.op("stablehlo.constant", types=[t], attributes={
        "value": DenseElementsAttr.from_values(t, [v])}).results[0] for v in (0, high)]
    return b.op("stablehlo.clamp", [bounds[0], index, bounds[1]], [t]).results[0]


@pattern("sdy.constant")
@pattern("stablehlo.constant")
def constant(rw: Rewriter, op: Operation, operands: list[Value]):
    """The same constant with its value padded: a splat stays a splat (its padding then
    holds the splat value), other values are padded with zeros at the high end. Upstream
    has no pattern: the constant reaches the global-to-local conversion non-divisible."""
    result = op.results[0]
    sharding = get_sharding(result)
    padded = rw.padded(result.type, sharding)
    attr = op.attributes.get("value")
    if not isinstance(attr, DenseElementsAttr) or not isinstance(padded, RankedTensorType):
        return None
    if attr.is_splat:
        values = attr.values
        kind = PaddingKind.ZERO if values[0] == 0 else PaddingKind.ONE if values[0] == 1 \
            else None
    else:
        data = np.empty(result.type.shape, dtype=object)
        data.reshape(-1)[:] = attr.values
        grown = np.full(padded.shape, zero_scalar(padded.element_type), dtype=object)
        grown[tuple(slice(0, n) for n in result.type.shape)] = data
        values, kind = tuple(grown.reshape(-1)), PaddingKind.ZERO
    new = Builder(op).op(op.name, types=[padded], attributes={
        **op.attributes, "value": DenseElementsAttr.from_values(padded, values)}).results[0]
    if sharding is not None:
        set_sharding(new, sharding)
    if kind is not None:
        rw.cache.set(new, kind)
    return [new]


@pattern("stablehlo.scatter")
def scatter(rw: Rewriter, op: Operation, operands: list[Value]):
    """As generic, after pointing the index vectors in the padding of the indices (rows
    of padded updates) past every operand dimension, so that their updates are dropped:
    upstream scatters them at index 0 (the padding's value), and a max-scatter takes a
    padded zero."""
    n = (len(operands) - 1) // 2
    indices, orig = operands[n], op.operands[n].type
    if isinstance(indices.type, RankedTensorType) and indices.type != orig:
        past = max(d for v in operands[:n] for d in v.type.shape) + 1
        t = RankedTensorType((), indices.type.element_type)
        b = Builder(op)
        value = b.op("stablehlo.constant", types=[t], attributes={
            "value": DenseElementsAttr.from_values(t, [past])}).results[0]
        operands = [*operands[:n], ensure_padding_with_value(b, indices, orig, value),
                    *operands[n + 1:]]
    return pad_generic(rw, op, operands)
