"""Shardy ops in a global-view module run on one device (spec 003).

Shardings say where data lives, not what a tensor is: ``sharding_constraint``,
``reshard``, ``data_flow_edge``, ``func_data_flow_edge`` and ``propagation_barrier`` pass
their operand through, ``sharding_group`` does nothing, ``constant`` is a constant (its
kernel is ``control_flow.constant``) and ``named_computation`` runs its body in place.
The sdy collectives (``all_gather``, ``all_slice``, ``all_to_all``,
``collective_permute``, ``all_reduce``, ``reduce_scatter``, ``sharded_to_unreduced``,
``replicated_to_unreduced``) move or combine shards; on the global value they are the
identity: an unreduced tensor's global value is the sum of its partial shards (seed 003,
``TensorShardingAttr``: "we assume the reduction type is sum"), which is what an
``all_reduce`` over those axes yields and what the global program already holds.
``manual_computation`` is written per device and needs the multi-device simulator.
"""
from __future__ import annotations

from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel

_IDENTITY = (
    "sdy.sharding_constraint", "sdy.reshard", "sdy.data_flow_edge", "sdy.func_data_flow_edge",
    "sdy.propagation_barrier", "sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
    "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter",
    "sdy.sharded_to_unreduced", "sdy.replicated_to_unreduced",
)


@kernel(*_IDENTITY)
def identity(ctx, op, operand):
    return operand


@kernel("sdy.sharding_group")
def sharding_group(ctx, op, operand):
    return None


@kernel("sdy.named_computation")
def named_computation(ctx, op, *operands):
    return ctx.run_region(op.regions[0], operands)


@kernel("sdy.manual_computation")
def manual_computation(ctx, op, *operands):
    raise InterpreterError(None, "sdy.manual_computation is written per device: running it "
                           "needs the multi-device simulator, which does not exist yet")
