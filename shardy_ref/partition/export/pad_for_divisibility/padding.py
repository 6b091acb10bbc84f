"""Building blocks of ``sdy-pad-for-divisibility`` (upstream
``export/pad_for_divisibility.cc`` and ``getDivisiblePaddedType`` in ``export/utils.cc``):
the divisible padded type of a sharded tensor, the cache of which values are known to be
padded with zeros (or ones), and the ops that pad, mask and trim a value.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr, IntegerAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Value
from shardy_ref.ir.sdy_axes import AxisRefList, ListOfAxisRefLists
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.stablehlo_attrs import StablehloEnum
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType, RankedTensorType, Type
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.partition.export.lowering import I64, Builder

I1 = IntegerType(1)
I32 = IntegerType(32)


class PaddingKind(enum.Enum):
    """Upstream ``PaddingValueKind``: what a value's padding region is known to hold."""

    ZERO = 0
    ONE = 1


DEFAULT_KIND = PaddingKind.ZERO


def padded_type(type_: Type, sharding: TensorSharding | None, table: SymbolTable) -> Type:
    """Upstream ``getDivisiblePaddedType``: ``type_`` with every dimension rounded up to a
    multiple of the number of shards its sharding cuts it into (dynamic ones kept)."""
    if not isinstance(type_, RankedTensorType) or sharding is None:
        return type_
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    if mesh is None or len(sharding.dim_shardings) != len(type_.shape):
        return type_
    shape = []
    for size, dim in zip(type_.shape, sharding.dim_shardings):
        count = dim.sharded_size(mesh)
        if size is not None and count > 1 and size % count:
            size += count - size % count
        shape.append(size)
    shape = tuple(shape)
    return type_ if shape == type_.shape else type_.replace(shape=shape)


def is_legal_type(type_: Type, sharding: TensorSharding | None, table: SymbolTable) -> bool:
    return padded_type(type_, sharding, table) == type_


def is_legal_value(value: Value, table: SymbolTable) -> bool:
    return is_legal_type(value.type, get_sharding(value), table)


class PaddingCache:
    """Upstream ``PaddingCache``: the padding kind of values this pass created, per function.
    Values are registered once, when created (ops are converted in order)."""

    def __init__(self):
        self._kinds: dict[Value, PaddingKind] = {}

    def set(self, value: Value, kind: PaddingKind) -> None:
        if value in self._kinds:
            raise PassError(None, "padding value already set for a value")
        self._kinds[value] = kind

    def get(self, value: Value) -> PaddingKind | None:
        return self._kinds.get(value)


def scalar_constant(b: Builder, element_type: Type, kind: PaddingKind) -> Value:
    """Upstream ``createConstant``: a scalar zero or one of ``element_type``."""
    one = kind is PaddingKind.ONE
    if isinstance(element_type, ComplexType):
        value = 1 + 0j if one else 0j
    elif isinstance(element_type, FloatType):
        value = 1.0 if one else 0.0
    elif isinstance(element_type, IntegerType) and element_type.width == 1:
        value = one
    else:
        value = int(one)
    t = RankedTensorType((), element_type)
    return b.op("stablehlo.constant", types=[t],
                attributes={"value": DenseElementsAttr.from_values(t, [value])}).results[0]


def i64_array(values: Sequence[int]) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(values))


def _maybe_set(value: Value, sharding: TensorSharding | None) -> Value:
    if sharding is not None:
        set_sharding(value, sharding)
    return value


def create_padded_value(b: Builder, table: SymbolTable, padded: RankedTensorType,
                        value: Value, kind: PaddingKind, registered: PaddingKind | None,
                        cache: PaddingCache) -> Value:
    """Upstream ``createPaddedValue``: ``stablehlo.pad`` of ``value`` at the high end up to
    ``padded`` with a zero or one, carrying ``value``'s sharding. A padded dimension that
    is already sharded is gathered first and sliced again after (upstream pads it in place,
    which would move rows between devices: the per-device program would be wrong)."""
    orig = value.type
    sharding = get_sharding(value)
    moving = _sharded_dims(table, sharding, [d for d, (old, new) in
                                             enumerate(zip(orig.shape, padded.shape))
                                             if old != new])
    if moving:  # gather, pad, slice back: the shards' boundaries move
        per_dim, gathered = _gathered(sharding, moving)
        value = b.op("sdy.all_gather", [value], [orig], {
            "gathering_axes": per_dim, "out_sharding": gathered}).results[0]
    pad_value = scalar_constant(b, padded.element_type, kind)
    rank = len(orig.shape)
    pad = b.op("stablehlo.pad", [value, pad_value], [padded], {
        "edge_padding_low": i64_array([0] * rank),
        "edge_padding_high": i64_array(p - o for p, o in zip(padded.shape, orig.shape)),
        "interior_padding": i64_array([0] * rank)}).results[0]
    if moving:
        _maybe_set(pad, gathered)
        pad = b.op("sdy.all_slice", [pad], [padded], {
            "slicing_axes": per_dim, "out_sharding": sharding}).results[0]
    else:
        _maybe_set(pad, sharding)
    if registered is not None:
        cache.set(pad, registered)
    return pad


def _gathered(sharding: TensorSharding, dims: set[int]
              ) -> tuple[ListOfAxisRefLists, TensorSharding]:
    """The per-dimension axes an all_gather of ``dims`` gathers, and the sharding after."""
    per_dim = ListOfAxisRefLists(tuple(AxisRefList(tuple(dim.axes) if d in dims else ())
                                       for d, dim in enumerate(sharding.dim_shardings)))
    gathered = sharding.replace(dim_shardings=tuple(
        dim.replace(axes=()) if d in dims else dim
        for d, dim in enumerate(sharding.dim_shardings)))
    return per_dim, gathered


def _sharded_dims(table: SymbolTable, sharding: TensorSharding | None,
                  dims: Sequence[int]) -> set[int]:
    """The dimensions of ``dims`` that ``sharding`` cuts into more than one shard."""
    if sharding is None or not dims:
        return set()
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    if mesh is None:
        return set()
    return {d for d in dims if sharding.dim_shardings[d].sharded_size(mesh) > 1}


def ensure_padding_with_value(b: Builder, value: Value, orig: RankedTensorType,
                              pad_value: Value, dims: Sequence[int] | None = None) -> Value:
    """Upstream ``ensurePaddingWithValue``: ``value`` with the elements beyond ``orig`` (on
    ``dims``, or every padded dimension) replaced by the scalar ``pad_value``, by an
    iota/compare mask and a select, all carrying ``value``'s sharding."""
    padded = value.type
    if padded == orig:
        return value
    sharding = get_sharding(value)
    iota_type = RankedTensorType(padded.shape, I32)
    scalar_i32 = RankedTensorType((), I32)
    mask = None
    for dim, size in enumerate(orig.shape):
        if size == padded.shape[dim] or (dims is not None and dim not in dims):
            continue
        iota = _maybe_set(b.op("stablehlo.iota", types=[iota_type], attributes={
            "iota_dimension": IntegerAttr(dim, I64)}).results[0], sharding)
        limit = b.op("stablehlo.constant", types=[scalar_i32], attributes={
            "value": DenseElementsAttr.from_values(scalar_i32, [size])}).results[0]
        limits = _maybe_set(b.op("stablehlo.broadcast_in_dim", [limit], [iota_type], {
            "broadcast_dimensions": i64_array(())}).results[0], sharding)
        less = _maybe_set(b.op("stablehlo.compare", [iota, limits],
                               [RankedTensorType(padded.shape, I1)], {
            "comparison_direction": StablehloEnum("comparison_direction", "LT")}).results[0],
            sharding)
        if mask is None:
            mask = less
        else:
            mask = _maybe_set(b.op("stablehlo.and", [mask, less], [mask.type]).results[0],
                              sharding)
    if mask is None:
        return value
    fill = _maybe_set(b.op("stablehlo.broadcast_in_dim", [pad_value], [padded], {
        "broadcast_dimensions": i64_array(())}).results[0], sharding)
    return _maybe_set(b.op("stablehlo.select", [mask, value, fill], [padded]).results[0],
                      sharding)


def ensure_padding_with_kind(b: Builder, value: Value, orig: RankedTensorType,
                             kind: PaddingKind, cache: PaddingCache,
                             dims: Sequence[int] | None = None) -> Value:
    """Upstream ``ensurePaddingWithKind``: as :func:`ensure_padding_with_value` with a zero
    or one, skipped when the cache already knows ``value`` is padded with it."""
    if value.type == orig or cache.get(value) is kind:
        return value
    scalar = scalar_constant(b, value.type.element_type, kind)
    select = ensure_padding_with_value(b, value, orig, scalar, dims)
    if select is not value and dims is None:
        cache.set(select, kind)
    return select


def trim_output_for_dims(b: Builder, table: SymbolTable, result: Value, orig: Type,
                         dims: Sequence[int], out_sharding: TensorSharding | None,
                         kind: PaddingKind | None, cache: PaddingCache) -> Value:
    """Upstream ``trimOutputForDims``: slice ``result`` back to ``orig``'s size on ``dims``."""
    new = result.type
    if not isinstance(orig, RankedTensorType) or not isinstance(new, RankedTensorType):
        return result
    limits = [o if d in dims and n > o else n
              for d, (o, n) in enumerate(zip(orig.shape, new.shape))]
    if tuple(limits) == new.shape:
        return result
    moving = _sharded_dims(table, out_sharding, [d for d, (old, limit) in
                                                 enumerate(zip(new.shape, limits))
                                                 if old != limit])
    if moving:  # gather, slice, slice the shards again: their boundaries move
        per_dim, gathered = _gathered(out_sharding, moving)
        result = b.op("sdy.all_gather", [result], [result.type], {
            "gathering_axes": per_dim, "out_sharding": gathered}).results[0]
    rank = len(limits)
    sliced_type = RankedTensorType(tuple(limits), orig.element_type)
    sliced = b.op("stablehlo.slice", [result], [sliced_type], {
        "start_indices": i64_array([0] * rank), "limit_indices": i64_array(limits),
        "strides": i64_array([1] * rank)}).results[0]
    if moving:
        _maybe_set(sliced, gathered)
        sliced = b.op("sdy.all_slice", [sliced], [sliced_type], {
            "slicing_axes": per_dim, "out_sharding": out_sharding}).results[0]
    else:
        _maybe_set(sliced, out_sharding)
    if kind is not None:
        cache.set(sliced, kind)
    return sliced
