"""Shardy ops in a global-view module run on one device (https://openxla.org/shardy/sdy_dialect).

Shardings say where data lives, not what a tensor is: ``sharding_constraint``,
``reshard``, ``data_flow_edge``, ``func_data_flow_edge`` and ``propagation_barrier`` pass
their operand through, ``sharding_group`` does nothing, ``constant`` is a constant (its
kernel is ``control_flow.constant``) and ``named_computation`` runs its body in place.
The sdy collectives (``all_gather``, ``all_slice``, ``all_to_all``,
``collective_permute``, ``all_reduce``, ``reduce_scatter``, ``sharded_to_unreduced``,
``replicated_to_unreduced``) move or combine shards; on the global value they are the
identity: an unreduced tensor's global value is the sum of its partial shards (upstream's
docs of ``TensorShardingAttr`` at https://openxla.org/shardy/sdy_dialect#tensorshardingattr:
"we assume the reduction type is sum"), which is what an ``all_reduce`` over those axes
yields and what the global program already holds.
``manual_computation`` is written per device: its body runs on every device of the mesh at
once, as the multi-device simulator runs a partitioned program.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.context import ProcessGrid, ProcessLayout
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.shards import (
    ShardMismatch,
    device_ids,
    mesh_shape,
    shard_compact,
    unshard_compact,
)
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.sdy_reshard_cse import mesh_of
from shardy_ref.ir.value_sharding import erase_free_axes

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
    """The body is written per device: run it on every device of the mesh at once (the
    simulator's layout), each fed its shards of the operands along the manual axes, and
    put the results back together from the out shardings along the manual axes (devices
    along free axes hold copies, which must agree). See "Manual Computation" in
    https://openxla.org/shardy/compiler_api."""
    manual = tuple(op.attributes["manual_axes"])
    if not manual:  # no manual axis: the body sees the global values
        return ctx.run_region(op.regions[0], operands)
    if ctx.nb or ctx.process is not None:
        raise InterpreterError(None, "sdy.manual_computation inside a per-device program "
                               "(or nested in another): partition the module first "
                               "(sdy-ref-per-device-pipeline)")
    ins = op.attributes["in_shardings"].shardings
    outs = op.attributes["out_shardings"].shardings
    mesh = next((m for m in (mesh_of(s, op) for s in (*ins, *outs)) if m is not None), None)
    if mesh is None or mesh.is_maximal:
        return ctx.run_region(op.regions[0], operands)
    layout = ProcessLayout(np.array(device_ids(mesh)).reshape(mesh_shape(mesh)))
    body = op.regions[0].blocks[0]
    args = []
    for arg, value, sharding in zip(body.args, operands, ins, strict=True):
        if not isinstance(value, Tensor):  # a token: the same on every device
            args.append(value)
            continue
        data = shard_compact(value.data, erase_free_axes(sharding, manual), mesh)
        args.append(Tensor(arg.type, np.broadcast_to(data, layout.shape + data.shape[
            layout.ndim:]), layout.ndim))
    inner = ctx.replace(batch_shape=layout.shape, env={}, active=None, lifting=False,
                        index=None, grid=ProcessGrid(1, layout.ids.size), layout=layout)
    results = inner.run_region(op.regions[0], args)
    out = []
    for result, value, sharding in zip(op.results, results, outs, strict=True):
        if not isinstance(value, Tensor):
            out.append(value)
            continue
        data = value.data if value.batch else \
            np.broadcast_to(value.data, layout.shape + value.data.shape)
        try:
            whole = unshard_compact(data, layout, result.type.shape,
                                    erase_free_axes(sharding, manual), mesh)
        except (ShardMismatch, ValueError) as e:
            raise InterpreterError(None, f"result {result.index} of sdy.manual_computation: "
                                   f"{e}") from e
        out.append(Tensor(result.type, whole, 0))
    return out
