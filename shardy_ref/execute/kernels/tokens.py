"""Tokens and host transfers: ``after_all``, ``create_token``, ``infeed``, ``outfeed``,
``send``, ``recv`` (StableHLO spec). Infeed reads the next function of
``run_parallel``'s ``infeed`` list; send/recv need processes running different programs,
so they work in the per-process fallback of ``run_parallel``, through its rendezvous."""
from __future__ import annotations

from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.spmd import channel_id
from shardy_ref.execute.values import Tensor, Token


@kernel("stablehlo.after_all", "stablehlo.create_token")
def after_all(ctx, op, *tokens):
    return Token()


@kernel("stablehlo.outfeed")
def outfeed(ctx, op, *operands):
    return Token()


@kernel("stablehlo.infeed")
def infeed(ctx, op, token):
    queue = getattr(ctx.rendezvous, "infeed", None)
    if not queue:
        raise InterpreterError(None, "infeed: the infeed queue is empty (give "
                               "interpreter.run_parallel an infeed list)")
    with ctx.rendezvous.cond:
        name = queue.popleft()
    values = ctx.call(name, [], op.location)
    return [*values, Token()]


@kernel("stablehlo.send")
def send(ctx, op, *operands):
    if ctx.rendezvous is None:
        raise InterpreterError(None, "send needs processes running different programs "
                               "(interpreter.run_parallel)")
    ctx.rendezvous.send(channel_id(op), [v for v in operands[:-1]])
    return Token()


@kernel("stablehlo.recv")
def recv(ctx, op, token):
    if ctx.rendezvous is None:
        raise InterpreterError(None, "recv needs processes running different programs "
                               "(interpreter.run_parallel)")
    values = ctx.rendezvous.recv(channel_id(op), ctx.process)
    outs = []
    for result, value in zip(op.results[:-1], values, strict=True):
        outs.append(Tensor(result.type, value.data, 0))
    return [*outs, Token()]
