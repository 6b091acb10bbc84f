"""Dynamic-shape kernels: ``dynamic_iota``, ``dynamic_broadcast_in_dim``,
``dynamic_reshape``, ``dynamic_pad``, ``dynamic_gather``, ``real_dynamic_slice``,
``set_dimension_size`` (StableHLO spec, sections of the same names; the last two are
MHLO-inherited ops the reference interpreter does not run).

The reference interpreter refines a dynamically shaped program from its actual inputs
before running it; here each kernel reads its shape operands (small 1-D integer tensors)
at run time and computes a static result type from the actual shape
(:func:`~shardy_ref.execute.batching.result_type`), then does what its static counterpart
does. A result's shape must be the same for every process of a vectorized run: shape
operands that vary but agree are read once; ones that really differ per process
(``real_dynamic_slice`` or ``dynamic_pad`` offsets with equal sizes) run per process.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import wide
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.gather_scatter import gather_data
from shardy_ref.execute.kernels.shape import (
    attr_int,
    attr_ints,
    broadcast_data,
    iota_array,
    lead,
    reshape_data,
)
from shardy_ref.execute.kernels.slicing import pad_data, slice_data
from shardy_ref.execute.registry import kernel, per_process
from shardy_ref.execute.values import Tensor


def shape_values(x: Tensor) -> tuple[int, ...] | None:
    """The integers of a 1-D (or scalar) shape operand, or None when processes disagree."""
    if len(x.shape) > 1:
        raise InterpreterError(None, f"a shape operand must be 1-dimensional, got {x.type}")
    data = wide(x.data, x.element_type)
    if x.batch:
        rows = data.reshape(-1, data.size // max(int(np.prod(lead(x))), 1))
        if not (rows == rows[0]).all():
            return None
        data = rows[0]
    return tuple(int(v) for v in data.reshape(-1))


def _sizes(x: Tensor, what: str) -> tuple[int, ...] | None:
    values = shape_values(x)
    if values is not None and any(v < 0 for v in values):
        raise InterpreterError(None, f"{what} {list(values)} has a negative size")
    return values


def _the_same_for_all(what: str, values):
    if values is None:
        raise InterpreterError(None, f"{what} differs between processes, so the result "
                               "shape would too")
    return values


def _check_declared(op, shape) -> None:
    declared = op.results[0].type.shape
    if len(declared) != len(shape) or any(d is not None and d != s
                                          for d, s in zip(declared, shape, strict=True)):
        raise InterpreterError(None, f"run-time shape {list(shape)} does not match the "
                               f"result type {op.results[0].type}")


def _per_process_or_fail(fn, ctx, op, *operands):
    """Run ``fn`` per process (its shape operands then uniform); the results must agree in
    shape to form one varying value."""
    try:
        return per_process(fn)(ctx, op, *operands)
    except ValueError as e:
        raise InterpreterError(None, f"'{op.name}' gives results of different shapes on "
                               f"different processes: {e}") from e


@kernel("stablehlo.dynamic_iota")
def dynamic_iota(ctx, op, output_shape: Tensor) -> Tensor:
    shape = _the_same_for_all("output_shape", _sizes(output_shape, "output_shape"))
    _check_declared(op, shape)
    et = op.results[0].type.element_type
    data = iota_array(shape, attr_int(op, "iota_dimension"), et)
    return batching.make(op, data, 0)


@kernel("stablehlo.dynamic_broadcast_in_dim")
def dynamic_broadcast_in_dim(ctx, op, operand: Tensor, output_dimensions: Tensor) -> Tensor:
    """``broadcast_in_dim`` into the run-time ``output_dimensions``; the
    ``known_(non)expanding_dimensions`` hints change nothing."""
    shape = _the_same_for_all("output_dimensions",
                              _sizes(output_dimensions, "output_dimensions"))
    _check_declared(op, shape)
    data = broadcast_data(operand, attr_ints(op, "broadcast_dimensions"), shape)
    return batching.make(op, data, operand.batch)


@kernel("stablehlo.dynamic_reshape")
def dynamic_reshape(ctx, op, operand: Tensor, output_shape: Tensor) -> Tensor:
    shape = _the_same_for_all("output_shape", _sizes(output_shape, "output_shape"))
    _check_declared(op, shape)
    return batching.make(op, reshape_data(operand, shape), operand.batch)


@kernel("stablehlo.dynamic_pad")
def dynamic_pad(ctx, op, operand: Tensor, padding_value: Tensor, low: Tensor, high: Tensor,
                interior: Tensor) -> Tensor:
    values = [shape_values(x) for x in (low, high, interior)]
    if None in values:
        return _per_process_or_fail(dynamic_pad, ctx, op, operand, padding_value, low, high,
                                    interior)
    out, nb = pad_data(ctx, operand, padding_value, *values)
    _check_declared(op, out.shape[nb:])
    return batching.make(op, out, nb)


@kernel("stablehlo.dynamic_gather")
def dynamic_gather(ctx, op, operand: Tensor, start_indices: Tensor,
                   slice_sizes: Tensor) -> Tensor:
    sizes = _the_same_for_all("slice_sizes", _sizes(slice_sizes, "slice_sizes"))
    data, nb = gather_data(ctx, op, operand, start_indices, sizes)
    _check_declared(op, data.shape[nb:])
    return batching.make(op, data, nb)


@kernel("stablehlo.real_dynamic_slice")
def real_dynamic_slice(ctx, op, operand: Tensor, start_indices: Tensor,
                       limit_indices: Tensor, strides: Tensor) -> Tensor:
    """``slice`` with run-time start, limit and strides (MHLO semantics: no clamping, an
    out-of-range slice is an error)."""
    values = [shape_values(x) for x in (start_indices, limit_indices, strides)]
    if None in values:
        return _per_process_or_fail(real_dynamic_slice, ctx, op, operand, start_indices,
                                    limit_indices, strides)
    data = slice_data(operand, *values)
    _check_declared(op, data.shape[operand.batch:])
    return batching.make(op, data, operand.batch)


@kernel("stablehlo.set_dimension_size")
def set_dimension_size(ctx, op, operand: Tensor, size: Tensor) -> Tensor:
    """The operand with ``dimension`` cut to ``size`` elements when the result type leaves
    that dimension dynamic; with a static result dimension only XLA's dynamic-size
    metadata would change, which static arrays do not carry, so the operand is returned."""
    dim = attr_int(op, "dimension")
    if not 0 <= dim < len(operand.shape):
        raise InterpreterError(None, f"dimension {dim} out of range for {operand.type}")
    if op.results[0].type.shape[dim] is not None:
        return batching.make(op, operand.data, operand.batch)
    values = _the_same_for_all("size", shape_values(size))
    n = values[0] if len(values) == 1 else -1
    if not 0 <= n <= operand.shape[dim]:
        raise InterpreterError(None, f"size {n} out of range for dimension {dim} of "
                               f"{operand.type}")
    index = (slice(None),) * (operand.batch + dim) + (slice(0, n),)
    return batching.make(op, operand.data[index], operand.batch)
