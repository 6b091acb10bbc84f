"""``run(module, *arrays)``: the Python entry point of the interpreter."""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import spmd
from shardy_ref.execute.context import Context, ProcessGrid
from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.interpreter import Interpreter
from shardy_ref.execute.values import Tensor, Token, TupleValue
from shardy_ref.ir.types import RankedTensorType, TokenType


def run(module, *arrays, function: str = "main") -> tuple:
    """Run ``function`` of ``module`` (a parsed ``builtin.module`` op, a
    :class:`~shardy_ref.ir.Module`, or MLIR text) on one device with NumPy ``arrays`` as
    its arguments; returns its results as a tuple of NumPy arrays (tokens as None, tuples
    as tuples). Raises :class:`InterpreterError` naming the argument for a wrong count,
    dtype or shape."""
    op = _module_op(module)
    interp = Interpreter(op, plans=_plans_of(op))
    func = interp.entry_function(function)
    types = _argument_types(func, function)
    if len(arrays) != len(types):
        raise InterpreterError(func.location, f"@{function} takes {len(types)} arguments, "
                               f"got {len(arrays)}")
    args = [argument_tensor(function, i, t, a) for i, (t, a) in enumerate(zip(types, arrays,
                                                                        strict=True))]
    return tuple(_to_numpy(v) for v in interp.run_args(func, args))


def run_spmd(module, per_process: list, *, num_replicas: int = 1,
             function: str = "main", vectorize: bool = True) -> list[tuple]:
    """Run ``function`` on every process of a ``num_replicas x num_partitions`` grid, as
    ``interpreter.run_parallel`` with the same program everywhere does: ``per_process[i]``
    is the list of NumPy arguments of process ``i`` (``replica_id * num_partitions +
    partition_id``); returns each process's results as a tuple of NumPy arrays."""
    interp = Interpreter(_module_op(module), vectorize=vectorize)
    func = interp.entry_function(function)
    types = _argument_types(func, function)
    args = []
    for pid, arrays in enumerate(per_process):
        if len(arrays) != len(types):
            raise InterpreterError(func.location, f"@{function} takes {len(types)} arguments, "
                                   f"process {pid} got {len(arrays)}")
        args.append([argument_tensor(function, i, t, a)
                     for i, (t, a) in enumerate(zip(types, arrays, strict=True))])
    results = run_grid(interp, func, args, num_replicas=num_replicas)
    return [tuple(_to_numpy(v) for v in per) for per in results]


def run_grid(interp: Interpreter, func, per_process: list, *, num_replicas: int = 1) -> list:
    """Run ``func`` on every process of a ``num_replicas x (len(per_process) /
    num_replicas)`` grid, process ``i`` on the run-time values ``per_process[i]``; returns
    each process's results (run-time values)."""
    n = len(per_process)
    if n == 0 or n % num_replicas:
        raise InterpreterError(func.location, f"{n} processes do not form a grid of "
                               f"{num_replicas} replica(s)")
    grid = ProcessGrid(num_replicas, n // num_replicas)
    ctx = Context(interp, ())
    with np.errstate(all="ignore"):
        return (spmd.run_vectorized(ctx, grid, func, per_process) if interp.vectorize
                else spmd.run_threads(ctx, grid, [func] * n, per_process, []))


def _argument_types(func, function: str) -> list:
    block = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks else None
    if block is None:
        raise InterpreterError(func.location, f"@{function} has no body to run")
    return [a.type for a in block.args]


_RECENT: list = []  # [module op, its shared plans]: the module run last


def _plans_of(op) -> dict:
    """The block plans kept for ``op`` (the module run last; another module replaces it),
    so that calling :func:`run` again on one module does not plan it again (the
    interpreter checks each kept plan against its block before using it)."""
    if not _RECENT or _RECENT[0] is not op:
        _RECENT[:] = [op, {}]
    return _RECENT[1]


def _module_op(module):
    if isinstance(module, str):
        from shardy_ref.ir.verify import verify_module
        from shardy_ref.parser import parse_module
        op = parse_module(module)
        verify_module(op)
        return op
    return getattr(module, "op", module)


def argument_tensor(function: str, index: int, type_, array):
    """NumPy ``array`` as argument ``index`` of ``function`` of type ``type_``: a uniform
    Tensor (a Token for a token type); an InterpreterError names the argument when the
    dtype or shape does not fit."""
    if isinstance(type_, TokenType):
        return Token()
    if not isinstance(type_, RankedTensorType):
        raise InterpreterError(None, f"argument {index} of @{function} has type {type_}, which "
                               "run() cannot pass")
    dtype = storage_dtype(type_.element_type)
    data = np.asarray(array)
    if data.dtype != dtype:
        if isinstance(array, np.ndarray) or (np.isscalar(array) and isinstance(array, np.generic)):
            raise InterpreterError(None, f"argument {index} of @{function}: expected "
                                   f"{type_.element_type} elements (NumPy {dtype}), "
                                   f"got {data.dtype}")
        data = np.asarray(array, dtype=dtype)
    shape = data.shape
    if len(shape) != len(type_.shape) or any(w is not None and w != g
                                             for w, g in zip(type_.shape, shape, strict=True)):
        raise InterpreterError(None, f"argument {index} of @{function}: expected shape "
                               f"{type_}, got an array of shape {list(shape)}")
    t = type_ if type_.has_static_shape else RankedTensorType(shape, type_.element_type)
    return Tensor(t, data, 0)


def _to_numpy(value):
    if isinstance(value, Token):
        return None
    if isinstance(value, TupleValue):
        return tuple(_to_numpy(e) for e in value.elements)
    return value.data
