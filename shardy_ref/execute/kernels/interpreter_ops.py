"""The ``interpreter`` dialect of StableHLO's reference interpreter
(``stablehlo/reference/InterpreterOps.td``): ``run_parallel``, ``print``, ``probe``."""
from __future__ import annotations

from shardy_ref.execute import spmd
from shardy_ref.execute.printing import format_tensor
from shardy_ref.execute.probes import write_probe
from shardy_ref.execute.registry import kernel


@kernel("interpreter.run_parallel")
def run_parallel(ctx, op, *inputs):
    return spmd.run_parallel(ctx, op, list(inputs))


@kernel("interpreter.print")
def print_(ctx, op, operand):
    """Prints ``%name = `` and the tensor (once per active process when varying)."""
    name = ctx.interp.value_name(op.operands[0])
    for value in _per_process(ctx, operand):
        ctx.interp.write(f"{name} = {format_tensor(value)}\n")


@kernel("interpreter.probe")
def probe(ctx, op, operand):
    for value in _per_process(ctx, operand):
        write_probe(ctx.interp, op.attributes["probe_id"].value, value)
    return operand


def _per_process(ctx, value) -> list:
    """The value each active process holds, in process order: in a vectorized run every
    process prints (and probes) its own copy, as each process of the reference does."""
    if not ctx.batch_shape:
        return [value]
    import numpy as np

    return [value.at(index[:value.batch]) for index in np.ndindex(*ctx.batch_shape)
            if ctx.active is None or ctx.active[index]]
