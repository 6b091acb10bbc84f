"""Shape kernels: ``iota``, ``broadcast_in_dim``, ``broadcast``, ``reshape``, ``transpose``,
``concatenate``, ``reverse``, ``get_dimension_size`` (StableHLO spec, sections of the same
names).

These ops only move elements, so each is one NumPy call that returns a view where NumPy
gives one for free (transpose, reverse, broadcasts, most reshapes): they are the hot ops of
real programs. A varying operand keeps its ``nb`` leading batch dimensions in front and
every named axis is shifted past them (:func:`~shardy_ref.execute.batching.axes`).
The helpers :func:`ints`, :func:`iota_array`, :func:`broadcast_data` and
:func:`reshape_data` are shared with the dynamic-shape kernels (``dynamic.py``).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import batching
from shardy_ref.execute.dtypes import is_bool, is_complex, is_float, storage_dtype, wrap
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


def ints(attr) -> tuple[int, ...]:
    """The integers of an ``array<i64: ...>`` attribute (or a legacy ``dense<...>``)."""
    if attr is None:
        return ()
    values = attr.value if hasattr(attr, "value") else attr.values
    if isinstance(values, int):
        return (values,)
    if getattr(attr, "is_splat", False):
        values = values * attr.type.num_elements
    return tuple(int(v) for v in values)


def attr_ints(op, name: str) -> tuple[int, ...]:
    return ints(op.attributes.get(name))


def attr_int(op, name: str) -> int:
    return int(op.attributes[name].value)


def lead(x: Tensor) -> tuple[int, ...]:
    """The batch dimensions of ``x``'s array (empty for a uniform value)."""
    return x.data.shape[:x.batch]


# -- iota -----------------------------------------------------------------------------------
def iota_array(shape: tuple[int, ...], dim: int, element_type) -> np.ndarray:
    """``result[i] = convert(i[dim])`` (spec "iota"): integers wrap modulo 2^width, ``i1``
    is ``i != 0``, floats round to nearest even (from an exact float64), complex numbers
    get the value as real part. A read-only broadcast of one ``arange``."""
    if not 0 <= dim < len(shape):
        raise InterpreterError(None, f"iota_dimension {dim} out of range for rank {len(shape)}")
    line = np.arange(shape[dim], dtype=np.int64)
    dtype = storage_dtype(element_type)
    if is_bool(element_type):
        line = line != 0
    elif is_float(element_type) or is_complex(element_type):
        line = line.astype(np.float64).astype(dtype)
    else:
        line = wrap(line, element_type)
    line = line.reshape((-1,) + (1,) * (len(shape) - dim - 1))
    return np.broadcast_to(line, shape)


@kernel("stablehlo.iota")
def iota(ctx, op) -> Tensor:
    t = op.results[0].type
    if not t.has_static_shape:
        raise InterpreterError(None, f"iota needs a static result type, got {t}")
    return Tensor(t, iota_array(t.shape, attr_int(op, "iota_dimension"), t.element_type), 0)


# -- broadcasts -----------------------------------------------------------------------------
def broadcast_data(x: Tensor, dims: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
    """``x`` broadcast into ``shape`` with operand dimension ``i`` at result dimension
    ``dims[i]`` (spec "broadcast_in_dim": a size-1 operand dimension is repeated): a
    transposed, expanded, read-only broadcast view of the operand."""
    nb = x.batch
    rank = len(x.shape)
    if len(dims) != rank or len(set(dims)) != rank or any(not 0 <= d < len(shape)
                                                         for d in dims):
        raise InterpreterError(None, f"broadcast_dimensions {list(dims)} do not map operand "
                               f"{x.type} into rank {len(shape)}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise InterpreterError(None, f"operand dimension {i} of size {x.shape[i]} cannot "
                                   f"broadcast to result dimension {d} of size {shape[d]}")
    data = x.data
    order = sorted(range(rank), key=lambda i: dims[i])
    if order != list(range(rank)):
        data = np.transpose(data, tuple(range(nb)) + batching.axes(nb, order))
    mapped = set(dims)
    missing = [nb + d for d in range(len(shape)) if d not in mapped]
    if missing:
        data = np.expand_dims(data, missing)
    return np.broadcast_to(data, lead(x) + tuple(shape))


def static_result_shape(op, index: int = 0) -> tuple[int, ...]:
    t = op.results[index].type
    if not t.has_static_shape:
        raise InterpreterError(None, f"'{op.name}' needs a static result type here, got {t}")
    return tuple(t.shape)


@kernel("stablehlo.broadcast_in_dim")
def broadcast_in_dim(ctx, op, operand: Tensor) -> Tensor:
    dims = attr_ints(op, "broadcast_dimensions")
    declared = op.results[0].type.shape
    # A dynamic result dimension (an unrefined program) takes the operand's size.
    shape = tuple(operand.shape[dims.index(i)] if d is None and i in dims else d
                  for i, d in enumerate(declared))
    if None in shape:
        raise InterpreterError(None, f"broadcast_in_dim cannot infer {op.results[0].type}")
    return batching.make(op, broadcast_data(operand, dims, shape), operand.batch)


@kernel("stablehlo.broadcast")
def broadcast(ctx, op, operand: Tensor) -> Tensor:
    """The deprecated ``broadcast``: ``broadcast_sizes`` new leading dimensions (the
    reference interpreter refuses it as decomposable; this is its decomposition)."""
    sizes = attr_ints(op, "broadcast_sizes")
    rank = len(operand.shape)
    dims = tuple(range(len(sizes), len(sizes) + rank))
    data = broadcast_data(operand, dims, sizes + tuple(operand.shape))
    return batching.make(op, data, operand.batch)


# -- reshape, transpose, reverse, concatenate -----------------------------------------------
def reshape_data(x: Tensor, shape) -> np.ndarray:
    """``x``'s elements in row-major order laid out in ``shape`` (a view when the operand
    is contiguous); one ``None`` dimension is inferred from the element count."""
    shape = list(shape)
    n = int(np.prod(x.shape, dtype=np.int64))
    if shape.count(None) == 1:
        rest = int(np.prod([d for d in shape if d is not None], dtype=np.int64))
        shape[shape.index(None)] = n // rest if rest else 0
    if None in shape or int(np.prod(shape, dtype=np.int64)) != n:
        raise InterpreterError(None, f"cannot reshape {x.type} ({n} elements) to shape "
                               f"{['?' if d is None else d for d in shape]}")
    return x.data.reshape(lead(x) + tuple(shape))


@kernel("stablehlo.reshape")
def reshape(ctx, op, operand: Tensor) -> Tensor:
    return batching.make(op, reshape_data(operand, op.results[0].type.shape), operand.batch)


@kernel("stablehlo.transpose")
def transpose(ctx, op, operand: Tensor) -> Tensor:
    perm = attr_ints(op, "permutation")
    if sorted(perm) != list(range(len(operand.shape))):
        raise InterpreterError(None, f"permutation {list(perm)} is not a permutation of the "
                               f"dimensions of {operand.type}")
    nb = operand.batch
    data = np.transpose(operand.data, tuple(range(nb)) + batching.axes(nb, perm))
    return batching.make(op, data, nb)


@kernel("stablehlo.reverse")
def reverse(ctx, op, operand: Tensor) -> Tensor:
    dims = attr_ints(op, "dimensions")
    if any(not 0 <= d < len(operand.shape) for d in dims) or len(set(dims)) != len(dims):
        raise InterpreterError(None, f"reverse dimensions {list(dims)} invalid for "
                               f"{operand.type}")
    if not dims:
        return operand
    return batching.make(op, np.flip(operand.data, batching.axes(operand.batch, dims)),
                         operand.batch)


@kernel("stablehlo.concatenate")
def concatenate(ctx, op, *inputs: Tensor) -> Tensor:
    dim = attr_int(op, "dimension")
    if not inputs:
        raise InterpreterError(None, "concatenate needs at least one input")
    rank = len(inputs[0].shape)
    if not 0 <= dim < rank:
        raise InterpreterError(None, f"concatenate dimension {dim} out of range for rank "
                               f"{rank}")
    for x in inputs:
        if len(x.shape) != rank or any(a != b for i, (a, b) in
                                       enumerate(zip(x.shape, inputs[0].shape, strict=True))
                                       if i != dim):
            raise InterpreterError(None, f"cannot concatenate {x.type} with {inputs[0].type} "
                                   f"along dimension {dim}")
    if len(inputs) == 1:
        return batching.make(op, inputs[0].data, inputs[0].batch)
    arrays, nb = batching.unify(ctx, *inputs)
    return batching.make(op, np.concatenate(arrays, axis=nb + dim), nb)


# -- dimension sizes ------------------------------------------------------------------------
@kernel("stablehlo.get_dimension_size")
def get_dimension_size(ctx, op, operand: Tensor) -> Tensor:
    """The run-time size of ``dimension`` converted to the result type (``i32``)."""
    dim = attr_int(op, "dimension")
    if not 0 <= dim < len(operand.shape):
        raise InterpreterError(None, f"dimension {dim} out of range for {operand.type}")
    t = op.results[0].type
    return Tensor(t, wrap(np.array(operand.shape[dim], dtype=np.int64), t.element_type), 0)
