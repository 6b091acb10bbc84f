"""``stablehlo.custom_call``: the targets the interpreter knows, by name
(:data:`CUSTOM_CALL_TARGETS`), and the ``check.*`` shims of ``stablehlo-translate``.

JAX's ``@Sharding`` annotation (``jax.lax.with_sharding_constraint`` in GSPMD form) passes
its operand through. Any other target is an error naming it.
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.kernels.check import custom_call_check
from shardy_ref.execute.registry import kernel

CUSTOM_CALL_TARGETS: dict[str, Callable] = {}


def target(*names: str):
    def register(fn):
        for name in names:
            CUSTOM_CALL_TARGETS[name] = fn
        return fn
    return register


@target("Sharding")
def _sharding(ctx, op, *operands):
    return list(operands)


@kernel("stablehlo.custom_call")
def custom_call(ctx, op, *operands):
    name = op.attributes["call_target_name"].value
    fn = CUSTOM_CALL_TARGETS.get(name)
    if fn is not None:
        return fn(ctx, op, *operands)
    if name.startswith("check."):
        out = custom_call_check(ctx, op, operands)
        if out is not None:
            return out
    raise InterpreterError(None, f"Unsupported custom call: @{name}")
