"""Control flow and calls: ``while``, ``if``, ``case``, ``func.call``, ``composite``,
``optimization_barrier``, ``tuple``/``get_tuple_element``, ``constant`` (StableHLO spec,
"Control flow", "Miscellaneous").

With a uniform predicate every process takes the same path and the region runs once.
With a varying one (processes disagree), ``if`` and ``case`` run each taken branch for
all processes with only the processes taking it marked active, and merge per process;
``while`` iterates until no process wants another round, freezing the values of those
that stopped (the way ``jax.vmap`` batches ``cond`` and ``while_loop``).
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.batching import scalar_mask, select
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor, TupleValue, from_dense


def _active(ctx, mask: np.ndarray) -> np.ndarray:
    return mask if ctx.active is None else mask & ctx.active


@kernel("stablehlo.constant", "sdy.constant", "chlo.constant")
def constant(ctx, op) -> Tensor:
    """The value, converted once per op (constants in loop bodies run many times)."""
    cached = ctx.interp.constants.get(op)
    if cached is None:
        cached = ctx.interp.constants[op] = from_dense(op.attributes["value"])
    return cached


@kernel("stablehlo.while")
def while_(ctx, op, *operands):
    cond, body = op.regions
    values = list(operands)
    while True:
        (pred,) = ctx.run_region(cond, values)
        if pred.varying:
            return _masked_while(ctx, cond, body, values, scalar_mask(ctx, pred))
        if not bool(pred.data):
            return values
        values = ctx.run_region(body, values)


def _masked_while(ctx, cond, body, values: list, live: np.ndarray) -> list:
    live = _active(ctx, live)
    while live.any():
        inner = ctx.replace(active=live)
        new = inner.run_region(body, values)
        values = [select(ctx, live, n, o) for n, o in zip(new, values, strict=True)]
        (pred,) = inner.run_region(cond, values)
        live = live & scalar_mask(ctx, pred)
    return values


@kernel("stablehlo.if")
def if_(ctx, op, pred):
    true_branch, false_branch = op.regions
    if not pred.varying:
        return ctx.run_region(true_branch if bool(pred.data) else false_branch, [])
    mask = scalar_mask(ctx, pred)
    return _merge(ctx, [(false_branch, ~mask), (true_branch, mask)])


@kernel("stablehlo.case")
def case(ctx, op, index):
    branches = op.regions
    n = len(branches)
    if not index.varying:
        i = int(index.data)
        return ctx.run_region(branches[i if 0 <= i < n else n - 1], [])
    idx = scalar_mask(ctx, index).astype(np.int64)
    idx = np.where((idx < 0) | (idx >= n), n - 1, idx)  # out of range: the last branch
    return _merge(ctx, [(branches[i], idx == i) for i in range(n)])


def _merge(ctx, taken: list) -> list:
    """Run each branch some active process takes (with only those active) and merge."""
    merged = None
    for region, mask in taken:
        mask = _active(ctx, mask)
        if not mask.any():
            continue
        out = ctx.replace(active=mask).run_region(region, [])
        merged = out if merged is None else [select(ctx, mask, o, m)
                                             for o, m in zip(out, merged, strict=True)]
    if merged is None:  # no process active here: any branch's values will do
        merged = ctx.run_region(taken[-1][0], [])
    return merged


@kernel("func.call")
def call(ctx, op, *args):
    return ctx.call(op.attributes["callee"].root, args, op.location)


@kernel("stablehlo.composite")
def composite(ctx, op, *args):
    """A composite means its decomposition function (StableHLO spec, "composite")."""
    return ctx.call(op.attributes["decomposition"].root, args, op.location)


@kernel("stablehlo.optimization_barrier")
def optimization_barrier(ctx, op, *operands):
    return list(operands)


@kernel("stablehlo.tuple")
def tuple_(ctx, op, *operands):
    return TupleValue(tuple(operands))


@kernel("stablehlo.get_tuple_element")
def get_tuple_element(ctx, op, value):
    index = op.attributes["index"].value
    if not isinstance(value, TupleValue) or not 0 <= index < len(value.elements):
        raise InterpreterError(None, f"get_tuple_element index {index} out of range")
    return value.elements[index]
