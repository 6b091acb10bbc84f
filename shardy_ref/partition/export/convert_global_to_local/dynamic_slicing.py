"""Localizers of ``sdy-convert-global-to-local`` for the ops that index at run time:
``dynamic_slice`` and ``dynamic_update_slice``.

Upstream's sharding rule keeps a ``dynamic_update_slice``'s operand (and result) sharded
along the dimensions it updates (a pass-through factor: XLA's SPMD partitioner then updates
each shard under a mask), and upstream's converter has no pattern for the op: a device
runs the global update on its own shard, at the global start index, and writes the wrong
rows (our deviation, see ``tests/known_differences.md``). Here a device writes exactly the
rows of the update that fall into its shard: the update is aligned with the shard (padded
on both sides and cut at the shard's offset relative to the clamped global start) and
selected into the shard under a mask of those rows. See the StableHLO spec,
https://openxla.org/stablehlo/spec#dynamic_update_slice, for the clamping.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, IntegerAttr
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.stablehlo_attrs import StablehloEnum
from shardy_ref.ir.types import I1, I64, RankedTensorType
from shardy_ref.partition.export.convert_global_to_local.op_utils import (
    constant,
    dim_axes,
    op_error,
    tensor,
)
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
)
from shardy_ref.partition.export.lowering import Builder, zero_scalar

SCALAR = RankedTensorType((), I64)


@localizer("stablehlo.dynamic_slice")
def localize_dynamic_slice(state: ConversionState, op: Operation) -> None:
    """Local result types, and ``slice_sizes`` made local too: a dimension sharded alike in
    operand and result is taken whole (its sharding rule maps it to one factor only when the
    slice covers it), so its local size is the local dimension. Upstream keeps the global
    sizes, which no longer fit the local operand (a deviation: the op would be invalid)."""
    localize_generic(state, op)
    local = op.results[0].type.shape
    sizes = list(op.attributes["slice_sizes"])
    operand = op.operands[0].type.shape
    for dim, (size, n) in enumerate(zip(sizes, local, strict=True)):
        if size != n and n != operand[dim]:
            raise op_error(op, f"dimension {dim} is sharded but the dynamic slice takes "
                           f"{size} of its elements, not all")
    op.attributes["slice_sizes"] = DenseArrayAttr(I64, tuple(local))


@localizer("stablehlo.dynamic_update_slice")
def localize_dynamic_update_slice(state: ConversionState, op: Operation) -> None:
    """A local ``dynamic_update_slice`` when no updated dimension of the operand is
    sharded (each device holds whole updated dimensions, so the global start index is its
    own); else the masked update described in the module docstring."""
    operand, update = op.operands[0], op.operands[1]
    sharding = state.sharding(operand)
    global_operand = state.global_type(operand).shape
    global_update = state.global_type(update).shape
    sliced = [d for d, (n, u) in enumerate(zip(global_operand, global_update, strict=True))
              if n != u]
    if not any(dim_axes(sharding, d) for d in sliced):
        localize_generic(state, op)
        return
    for d in sliced:
        if dim_axes(state.sharding(update), d):
            raise op_error(op, f"the update is sharded along dimension {d}, which it "
                           "updates only in part; it must be replicated there")
    mesh = state.mesh(sharding)
    if mesh is None:
        raise op_error(op, "failed to resolve mesh")
    b = state.builder(op)
    local = operand.type
    aligned, mask = update, None
    for d in sliced:
        n, u, s = global_operand[d], global_update[d], local.shape[d]
        start = _clamped_start(b, op.operands[2 + d], n - u)
        axes = dim_axes(sharding, d)
        offset = state.dimension_offset(b, mesh, axes, s) if axes else constant(b, SCALAR, [0])
        shift = b.op("stablehlo.subtract", [offset, start], [SCALAR]).results[0]
        aligned = _align(b, aligned, d, shift, s, u)
        in_update = _rows_in_update(b, local.shape, d, shift, u)
        mask = in_update if mask is None else b.op(
            "stablehlo.and", [mask, in_update], [in_update.type]).results[0]
    state.replace(op, b.op("stablehlo.select", [mask, aligned, operand], [local]).results)


def _clamped_start(b: Builder, index: Value, high: int) -> Value:
    """The start index as i64, clamped into ``[0, high]`` as the op clamps it."""
    if index.type.element_type != I64:
        index = b.op("stablehlo.convert", [index], [SCALAR]).results[0]
    low, top = constant(b, SCALAR, [0]), constant(b, SCALAR, [high])
    return b.op("stablehlo.clamp", [low, index, top], [SCALAR]).results[0]


def _align(b: Builder, update: Value, dim: int, shift: Value, size: int, length: int
           ) -> Value:
    """``update`` cut along ``dim`` to the ``size`` rows of this device's shard: row ``r``
    of the result is update row ``r + shift`` (``shift`` = shard offset - start), where that
    exists. The update is padded by ``size`` on both sides so the cut stays in range
    whenever any of its rows does."""
    t = update.type
    rank = len(t.shape)
    padded_shape = tuple(n + 2 * size if i == dim else n for i, n in enumerate(t.shape))
    zero = constant(b, tensor((), t.element_type), [zero_scalar(t.element_type)])
    padded = b.op("stablehlo.pad", [update, zero], [tensor(padded_shape, t.element_type)], {
        "edge_padding_low": DenseArrayAttr(I64, tuple(size if i == dim else 0
                                                      for i in range(rank))),
        "edge_padding_high": DenseArrayAttr(I64, tuple(size if i == dim else 0
                                                       for i in range(rank))),
        "interior_padding": DenseArrayAttr(I64, (0,) * rank)}).results[0]
    cut = b.op("stablehlo.add", [shift, constant(b, SCALAR, [size])], [SCALAR]).results[0]
    cut = b.op("stablehlo.clamp", [constant(b, SCALAR, [0]), cut,
                                   constant(b, SCALAR, [length + size])], [SCALAR]).results[0]
    starts = [cut if i == dim else constant(b, SCALAR, [0]) for i in range(rank)]
    out_shape = tuple(size if i == dim else n for i, n in enumerate(t.shape))
    return b.op("stablehlo.dynamic_slice", [padded, *starts], [tensor(out_shape,
                                                                       t.element_type)],
                {"slice_sizes": DenseArrayAttr(I64, out_shape)}).results[0]


def _rows_in_update(b: Builder, shape, dim: int, shift: Value, length: int) -> Value:
    """A mask of ``shape``: rows ``r`` along ``dim`` with ``0 <= r + shift < length``."""
    index_type = tensor(shape, I64)
    iota = b.op("stablehlo.iota", types=[index_type],
                attributes={"iota_dimension": IntegerAttr(dim, I64)}).results[0]
    shifts = b.op("stablehlo.broadcast_in_dim", [shift], [index_type],
                  {"broadcast_dimensions": DenseArrayAttr(I64, ())}).results[0]
    rows = b.op("stablehlo.add", [iota, shifts], [index_type]).results[0]
    mask_type = tensor(shape, I1)
    low = b.op("stablehlo.compare", [rows, constant(b, index_type, [0])], [mask_type],
               _direction("GE")).results[0]
    high = b.op("stablehlo.compare", [rows, constant(b, index_type, [length])], [mask_type],
                _direction("LT")).results[0]
    return b.op("stablehlo.and", [low, high], [mask_type]).results[0]


def _direction(name: str) -> dict:
    return {"comparison_direction": StablehloEnum("comparison_direction", name)}
