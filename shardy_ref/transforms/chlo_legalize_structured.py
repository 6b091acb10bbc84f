"""The legalizations of ``chlo.scan``, ``chlo.top_k`` and ``chlo.ragged_dot`` (statically
shaped), for ``chlo-legalize-to-stablehlo`` (:mod:`shardy_ref.transforms.chlo_legalize`),
following upstream's ``ConvertScanOp``, ``ConvertTopKOp`` and ``ConvertRaggedDotOp``
(``ChloLegalizeToStablehlo.cpp``).
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import ArrayAttr, IntegerAttr, bool_attr
from shardy_ref.ir.chlo_attrs import ragged_prefix_dims
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.types import I32, I64, ComplexType, FloatType, RankedTensorType
from shardy_ref.transforms.chlo_legalize import Emitter, i64_array, legalize, static

I64_SCALAR = RankedTensorType((), I64)


def _i64(emit: Emitter, value: int) -> Value:
    return emit.const(value, I64_SCALAR)


def _zero(element_type):
    return complex(0) if isinstance(element_type, ComplexType) else \
        (0.0 if isinstance(element_type, FloatType) else 0)


# -- scan ----------------------------------------------------------------------------------


@legalize("chlo.scan")
def scan(op: Operation, emit: Emitter):
    """``while (i < N)``: slice the inputs at position i (N - 1 - i with ``is_reverse``),
    inline the body on the slices and the carries, write its outputs into the result
    arrays with ``dynamic_update_slice``."""
    n_in, n_carry = op.attributes["operandSegmentSizes"].value
    dim = op.attributes["dimension"].value
    inputs, inits = list(op.operands[:n_in]), list(op.operands[n_in:])
    n_out = op.num_results - n_carry
    if not static(*op.operand_types, *op.result_types):
        return None
    if inputs:
        size = emit.value("stablehlo.get_dimension_size", [inputs[0]],
                          RankedTensorType((), I32), {"dimension": IntegerAttr(dim, I64)})
        size = emit.convert(size, I64)
    else:
        size = _i64(emit, op.result_types[0].shape[dim])
    outputs = []
    for t in op.result_types[:n_out]:
        zero = emit.const(_zero(t.element_type), RankedTensorType((), t.element_type))
        outputs.append(emit.broadcast_in_dim(zero, t, []))
    initial = [_i64(emit, 0), *inits, *outputs]
    types = [v.type for v in initial]
    cond, body = Block(types), Block(types)
    while_op = emit.op("stablehlo.while", initial, types, {}, [Region([cond]), Region([body])])
    c = Emitter(block=cond, location=op.location)
    c.op("stablehlo.return", [c.compare("LT", cond.args[0], size)])
    _scan_body(op, Emitter(block=body, location=op.location), body, inputs, size, dim,
               n_carry, n_out)
    results = while_op.results
    return [*results[1 + n_carry:], *results[1:1 + n_carry]]


def _scan_body(op, emit: Emitter, body: Block, inputs, size: Value, dim: int, n_carry: int,
               n_out: int) -> None:
    index = body.args[0]
    carries = list(body.args[1:1 + n_carry])
    outputs = list(body.args[1 + n_carry:])
    position = index
    reverse = op.attributes.get("is_reverse")
    if reverse is not None and reverse.value:
        last = emit.binary("subtract", size, _i64(emit, 1))
        position = emit.binary("subtract", last, index)
    zero = _i64(emit, 0)
    slices = []
    for x in inputs:
        shape = list(x.type.shape)
        shape[dim] = 1
        starts = [position if d == dim else zero for d in range(len(shape))]
        piece = emit.value("stablehlo.dynamic_slice", [x, *starts],
                           x.type.replace(shape=tuple(shape)),
                           {"slice_sizes": i64_array(shape)})
        slices.append(emit.reshape(piece, shape[:dim] + shape[dim + 1:]))
    scan_block = op.regions[0].blocks[0]
    mapping = dict(zip(scan_block.args, [*slices, *carries], strict=True))
    for nested in scan_block.ops[:-1]:
        emit.block.append(nested.clone(mapping))
    returned = [mapping.get(v, v) for v in scan_block.ops[-1].operands]
    new_outputs = []
    for out, element in zip(outputs, returned[:n_out], strict=True):
        shape = list(out.type.shape)
        shape[dim] = 1
        starts = [position if d == dim else zero for d in range(len(shape))]
        new_outputs.append(emit.value("stablehlo.dynamic_update_slice",
                                      [out, emit.reshape(element, shape), *starts], out.type))
    step = emit.binary("add", index, _i64(emit, 1))
    emit.op("stablehlo.return", [step, *returned[n_out:], *new_outputs])


# -- top_k ---------------------------------------------------------------------------------


@legalize("chlo.top_k")
def top_k(op: Operation, emit: Emitter):
    """``iota`` indices, a (stable) ``sort`` of values and indices with ``GT`` (``TOTALORDER``
    for floats), then the first ``k`` along the last dimension."""
    (x,) = op.operands
    if not static(x.type) or x.type.rank == 0:
        return None
    last = x.type.rank - 1
    k = min(op.attributes["k"].value, x.type.shape[last])
    iota = emit.value("stablehlo.iota", [], x.type.replace(element_type=I32),
                      {"iota_dimension": IntegerAttr(last, I64)})
    scalar = RankedTensorType((), x.type.element_type)
    index_scalar = RankedTensorType((), I32)
    comparator = Block([scalar, scalar, index_scalar, index_scalar])
    c = Emitter(block=comparator, location=op.location)
    float_type = isinstance(x.type.element_type, FloatType)
    c.op("stablehlo.return", [c.compare("GT", comparator.args[0], comparator.args[1],
                                        "TOTALORDER" if float_type else None)])
    stable = op.attributes.get("is_stable")
    sort = emit.op("stablehlo.sort", [x, iota], [x.type, iota.type],
                   {"dimension": IntegerAttr(last, I64),
                    "is_stable": bool_attr(stable is None or bool(stable.value))},
                   [Region([comparator])])
    out = []
    for value, result_type in zip(sort.results, op.result_types, strict=True):
        limits = list(x.type.shape)
        limits[last] = k
        out.append(emit.value("stablehlo.slice", [value], result_type, {
            "start_indices": i64_array([0] * len(limits)), "limit_indices": i64_array(limits),
            "strides": i64_array([1] * len(limits))}))
    return out


# -- ragged_dot ----------------------------------------------------------------------------


def _precision(op) -> ArrayAttr:
    from shardy_ref.ir.stablehlo_attrs import StablehloEnum

    config = op.attributes.get("precision_config")
    names = [p.value for p in config] if config is not None else ["DEFAULT", "DEFAULT"]
    return ArrayAttr(tuple(StablehloEnum("precision", n) for n in names))


def _dot(emit: Emitter, op, lhs: Value, rhs: Value, dims, rhs_removed: int | None,
         result_shape) -> Value:
    """``dot_general`` with the ragged dot's batching and contracting dimensions (rhs
    dimensions after ``rhs_removed`` shifted down)."""
    from shardy_ref.ir.stablehlo_attrs import DotDimensionNumbers

    def rhs_dim(d):
        return d - 1 if rhs_removed is not None and d > rhs_removed else d

    numbers = DotDimensionNumbers(
        lhs_batching_dimensions=tuple(dims.lhs_batching_dimensions),
        rhs_batching_dimensions=tuple(rhs_dim(d) for d in dims.rhs_batching_dimensions),
        lhs_contracting_dimensions=tuple(dims.lhs_contracting_dimensions),
        rhs_contracting_dimensions=tuple(rhs_dim(d) for d in dims.rhs_contracting_dimensions))
    result = RankedTensorType(tuple(result_shape), op.result_types[0].element_type)
    return emit.value("stablehlo.dot_general", [lhs, rhs], result,
                      {"dot_dimension_numbers": numbers, "precision_config": _precision(op)})




def _masked_lhs(emit: Emitter, lhs: Value, sizes: Value, group: int, start: Value,
                prefix: list[int], ragged: int) -> tuple[Value, Value]:
    """``lhs`` with the rows of group ``group`` (along the ragged dimension) kept and the
    others zeroed; returns it and the group's limit (the next group's start)."""
    gs_type = sizes.type
    rank = gs_type.rank
    begin = [0] * rank
    begin[-1] = group
    limit = list(gs_type.shape)
    limit[-1] = group + 1
    piece = emit.value("stablehlo.slice", [sizes], gs_type.replace(shape=(*limit[:-1], 1)),
                       {"start_indices": i64_array(begin), "limit_indices": i64_array(limit),
                        "strides": i64_array([1] * rank)})
    size = emit.reshape(piece, gs_type.shape[:-1])
    if size.type.element_type != I64:
        size = emit.convert(size, I64)
    end = emit.binary("add", start, size)
    mask_type = lhs.type.replace(element_type=I64)
    dims = prefix if rank > 1 else []
    start_b = emit.broadcast_in_dim(start, mask_type, dims)
    end_b = emit.broadcast_in_dim(end, mask_type, dims)
    iota = emit.value("stablehlo.iota", [], mask_type, {"iota_dimension": IntegerAttr(ragged,
                                                                                        I64)})
    mask = emit.binary("and", emit.compare("GE", iota, start_b), emit.compare("LT", iota, end_b))
    zero = emit.const(_zero(lhs.type.element_type), lhs.type)
    return emit.select(mask, lhs, zero), end


@legalize("chlo.ragged_dot")
def ragged_dot(op: Operation, emit: Emitter):
    """Mode 3 (ragged batch dimension): one ``dot_general``. Modes 1 and 2: per group, the
    lhs masked to the group's range; mode 1 sums the dots with the group's rhs slice, mode 2
    concatenates one dot per group in front."""
    lhs, rhs, sizes = op.operands
    dims = op.attributes["ragged_dot_dimension_numbers"]
    if not static(lhs.type, rhs.type, sizes.type, *op.result_types):
        return None
    ragged = dims.lhs_ragged_dimensions[0]
    result_shape = list(op.result_types[0].shape)
    if ragged in dims.lhs_batching_dimensions:
        return [_dot(emit, op, lhs, rhs, dims, None, result_shape)]
    prefix = ragged_prefix_dims(dims, ragged)
    groups = sizes.type.shape[-1]
    start = emit.const(0, RankedTensorType(tuple(sizes.type.shape[:-1]), I64))
    contracting = ragged in dims.lhs_contracting_dimensions
    parts: list[Value] = []
    for g in range(groups):
        masked, start = _masked_lhs(emit, lhs, sizes, g, start, prefix, ragged)
        if contracting:
            dot = _dot(emit, op, masked, rhs, dims, None, result_shape[1:])
            parts.append(emit.reshape(dot, [1, *result_shape[1:]]))
        else:
            parts.append(_dot(emit, op, masked, _rhs_group(emit, rhs, dims, g), dims,
                              dims.rhs_group_dimensions[0], result_shape))
    if contracting:
        return [emit.value("stablehlo.concatenate", parts, op.result_types[0],
                           {"dimension": IntegerAttr(0, I64)})]
    if not parts:
        return [emit.const(_zero(op.result_types[0].element_type), op.result_types[0])]
    total = parts[0]
    for part in parts[1:]:
        total = emit.binary("add", total, part)
    return [total]


def _rhs_group(emit: Emitter, rhs: Value, dims, group: int) -> Value:
    """The rhs slice of group ``group`` with the group dimension dropped."""
    gdim = dims.rhs_group_dimensions[0]
    shape = list(rhs.type.shape)
    begin = [0] * len(shape)
    begin[gdim] = group
    limit = list(shape)
    limit[gdim] = group + 1
    sliced_shape = list(shape)
    sliced_shape[gdim] = 1
    piece = emit.value("stablehlo.slice", [rhs], rhs.type.replace(shape=tuple(sliced_shape)),
                       {"start_indices": i64_array(begin), "limit_indices": i64_array(limit),
                        "strides": i64_array([1] * len(shape))})
    return emit.reshape(piece, shape[:gdim] + shape[gdim + 1:])

