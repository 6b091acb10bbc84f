"""Result types StableHLO and sdy ops infer from their operand types: the
``InferTypeOpInterface::inferReturnTypes`` that upstream's ``padGenericOp`` asks for before
it widens each result to its divisible padded type (``export/pad_for_divisibility.cc``).

Only ops that implement the interface upstream are listed (``StablehloOps.td``,
``sdy/ir/ops.td``); for any other op :func:`infer_result_types` returns None, and the
padded result type alone decides, as upstream. Convolution has no such interface but its
pattern needs the same shape rule (``hlo::inferConvolutionOp``): :func:`conv_shape`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from shardy_ref.ir.opdefs import ops_with_trait
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import ComplexType, IntegerType, RankedTensorType, Type

I1 = IntegerType(1)
I32 = IntegerType(32)

Infer = Callable[[Operation, Sequence[Type]], list[Type] | None]
INFER: dict[str, Infer] = {}


def ints(op: Operation, name: str, default: Sequence[int] = ()) -> tuple[int, ...]:
    """An integer-list attribute (``array<i64: ...>``, ``dense<...>``) as a tuple."""
    attr = op.attributes.get(name)
    if attr is None:
        return tuple(default)
    values = getattr(attr, "value", None)
    if values is None:
        values = attr.values
        if getattr(attr, "is_splat", False):
            values = values * attr.type.num_elements
    return tuple(int(v) for v in values)


def _int(op: Operation, name: str, default: int = 0) -> int:
    attr = op.attributes.get(name)
    return default if attr is None else int(attr.value)


def _ranked(types: Sequence[Type]) -> bool:
    return all(isinstance(t, RankedTensorType) and t.has_static_shape for t in types)


def _shape(t: RankedTensorType, shape) -> RankedTensorType:
    return RankedTensorType(tuple(shape), t.element_type)


def _register(*names: str):
    def wrap(fn: Infer) -> Infer:
        for name in names:
            INFER[f"stablehlo.{name}" if "." not in name else name] = fn
        return fn
    return wrap


def infer_result_types(op: Operation, operand_types: Sequence[Type]) -> list[Type] | None:
    """The types ``op`` would infer from ``operand_types``, or None (no interface, or the
    operands are not statically shaped ranked tensors)."""
    fn = INFER.get(op.name)
    if fn is None or not _ranked([t for t in operand_types
                                  if isinstance(t, RankedTensorType)]):
        return None
    return fn(op, operand_types)


# The element-wise ops with ``HLO_CompatibleOperandsAndResultType``, ``add`` (which infers
# the same without the trait, to allow per-axis quantized operands), and others whose
# inferred result type is their first operand's.
_SAME_AS_FIRST = (*sorted(set(ops_with_trait("Elementwise", "stablehlo"))
                          & set(ops_with_trait("CompatibleOperandsAndResultType"))),
                  "add", "reverse", "dynamic_update_slice", "cholesky", "select_and_scatter",
                  "collective_permute")


@_register(*_SAME_AS_FIRST)
def _same_as_first(op, types):
    return [types[0]]


@_register("optimization_barrier", "sort", "all_reduce", "while",
           *(f"sdy.{n}" for n in ("all_gather", "all_slice", "all_to_all",
                                  "collective_permute", "all_reduce", "reduce_scatter",
                                  "sharded_to_unreduced", "replicated_to_unreduced")))
def _same_as_operands(op, types):
    return list(types)


@_register("clamp", "triangular_solve")
def _same_as_second(op, types):
    return [types[1]]


@_register("select")
def _select(op, types):
    return [types[1]]


@_register("abs", "real", "imag")
def _to_real(op, types):
    t = types[0]
    et = t.element_type
    return [t.replace(element_type=et.element_type) if isinstance(et, ComplexType) else t]


@_register("is_finite", "compare")
def _to_pred(op, types):
    return [types[0].replace(element_type=I1)]


@_register("complex")
def _complex(op, types):
    return [types[0].replace(element_type=ComplexType(types[0].element_type))]


@_register("scatter")
def _scatter(op, types):
    return list(types[:(len(types) - 1) // 2])


@_register("slice")
def _slice(op, types):
    starts, limits = ints(op, "start_indices"), ints(op, "limit_indices")
    strides = ints(op, "strides", [1] * len(starts))
    return [_shape(types[0], (-(-(hi - lo) // st) for lo, hi, st in zip(starts, limits,
                                                                        strides)))]


@_register("pad")
def _pad(op, types):
    low, high = ints(op, "edge_padding_low"), ints(op, "edge_padding_high")
    interior = ints(op, "interior_padding")
    return [_shape(types[0], (n + lo + hi + max(0, n - 1) * i for n, lo, hi, i in zip(
        types[0].shape, low, high, interior)))]


@_register("concatenate")
def _concatenate(op, types):
    dim = _int(op, "dimension")
    shape = list(types[0].shape)
    shape[dim] = sum(t.shape[dim] for t in types)
    return [_shape(types[0], shape)]


@_register("transpose")
def _transpose(op, types):
    return [_shape(types[0], (types[0].shape[p] for p in ints(op, "permutation")))]


@_register("dynamic_slice")
def _dynamic_slice(op, types):
    return [_shape(types[0], ints(op, "slice_sizes"))]


@_register("broadcast")
def _broadcast(op, types):
    return [_shape(types[0], ints(op, "broadcast_sizes") + tuple(types[0].shape))]


@_register("reduce")
def _reduce(op, types):
    half = len(types) // 2
    dims = set(ints(op, "dimensions"))
    shape = [n for d, n in enumerate(types[0].shape) if d not in dims]
    return [RankedTensorType(tuple(shape), t.element_type) for t in types[half:]]


def windowed_size(size: int, window: int, stride: int, base_dilation: int,
                  window_dilation: int, low: int, high: int) -> int:
    """The output size of one windowed dimension (StableHLO ``inferWindowOutputShape``)."""
    dilated = 0 if size == 0 else (size - 1) * base_dilation + 1
    padded = dilated + low + high
    window_extent = 0 if window == 0 else (window - 1) * window_dilation + 1
    return 0 if padded < window_extent else (padded - window_extent) // stride + 1


@_register("reduce_window")
def _reduce_window(op, types):
    half = len(types) // 2
    window = ints(op, "window_dimensions")
    rank = len(window)
    strides = ints(op, "window_strides", [1] * rank)
    base = ints(op, "base_dilations", [1] * rank)
    wdil = ints(op, "window_dilations", [1] * rank)
    pads = ints(op, "padding", [0] * (2 * rank))
    shape = tuple(windowed_size(n, window[d], strides[d], base[d], wdil[d], pads[2 * d],
                                pads[2 * d + 1]) for d, n in enumerate(types[0].shape))
    return [RankedTensorType(shape, t.element_type) for t in types[half:]]


@_register("gather")
def _gather(op, types):
    dims = op.attributes["dimension_numbers"]
    operand, indices = types[0], types[1]
    sizes = ints(op, "slice_sizes")
    dropped = set(dims.collapsed_slice_dims) | set(dims.operand_batching_dims)
    offsets = [n for d, n in enumerate(sizes) if d not in dropped]
    batch = [n for d, n in enumerate(indices.shape) if d != dims.index_vector_dim]
    rank = len(offsets) + len(batch)
    offset_dims = set(dims.offset_dims)
    shape, oi, bi = [], iter(offsets), iter(batch)
    for d in range(rank):
        shape.append(next(oi) if d in offset_dims else next(bi))
    return [_shape(operand, shape)]


def _terminator_types(op):
    block = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
    last = block.last_op if block is not None else None
    return None if last is None else list(last.operand_types)


@_register("if", "case")
def _if(op, types):
    return _terminator_types(op)


def conv_shape(op: Operation, lhs: RankedTensorType, rhs: RankedTensorType) -> tuple[int, ...]:
    """The result shape of ``stablehlo.convolution`` ``op`` on operands of these types."""
    dn = op.attributes["dimension_numbers"]
    spatial = len(dn.input_spatial_dimensions)
    strides = ints(op, "window_strides", [1] * spatial)
    pads = ints(op, "padding", [0] * (2 * spatial))
    lhs_dil = ints(op, "lhs_dilation", [1] * spatial)
    rhs_dil = ints(op, "rhs_dilation", [1] * spatial)
    shape = [0] * (spatial + 2)
    shape[dn.output_batch_dimension] = \
        lhs.shape[dn.input_batch_dimension] // _int(op, "batch_group_count", 1)
    shape[dn.output_feature_dimension] = rhs.shape[dn.kernel_output_feature_dimension]
    for i in range(spatial):
        shape[dn.output_spatial_dimensions[i]] = windowed_size(
            lhs.shape[dn.input_spatial_dimensions[i]], rhs.shape[dn.kernel_spatial_dimensions[i]],
            strides[i], lhs_dil[i], rhs_dil[i], pads[2 * i], pads[2 * i + 1])
    return tuple(shape)
