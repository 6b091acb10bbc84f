"""Running programs: a NumPy interpreter of StableHLO (plus the sdy, check and interpreter
dialects), vectorized over the processes of an SPMD program.

``run(module, *arrays, function="main")`` runs one function on one device and returns its
results as NumPy arrays; ``run_spmd(module, per_process_arrays)`` runs it on every process of
a grid, and ``shard``/``unshard`` cut global arrays into the per-device shards an sdy
sharding describes and put results back together. :class:`Interpreter` is the object behind
them (and behind ``shardy-ref-translate --interpret``). Kernels live in
:mod:`shardy_ref.execute.kernels`, one module per op family, registered by op name.
"""
from __future__ import annotations

from shardy_ref.execute.api import run, run_spmd
from shardy_ref.execute.context import Context, ProcessGrid
from shardy_ref.execute.errors import CheckFailure, InterpreterError
from shardy_ref.execute.interpreter import Interpreter
from shardy_ref.execute.registry import KERNELS, kernel, per_process
from shardy_ref.execute.shards import ShardMismatch, local_shape, shard, unshard
from shardy_ref.execute.values import Tensor, Token, TupleValue

__all__ = [
    "KERNELS",
    "CheckFailure",
    "Context",
    "Interpreter",
    "InterpreterError",
    "ProcessGrid",
    "ShardMismatch",
    "SpmdProgram",
    "Tensor",
    "Token",
    "TupleValue",
    "compile_spmd",
    "kernel",
    "local_shape",
    "per_process",
    "run",
    "run_spmd",
    "shard",
    "simulate",
    "unshard",
]

_SIMULATOR = ("SpmdProgram", "compile_spmd", "simulate")


def __getattr__(name: str):
    """The simulator loads on first use (it pulls in the passes; the interpreter alone,
    as ``shardy-ref-translate`` runs it, does not need them)."""
    if name in _SIMULATOR:
        from shardy_ref.execute import simulator
        return getattr(simulator, name)
    raise AttributeError(f"module 'shardy_ref.execute' has no attribute {name!r}")
