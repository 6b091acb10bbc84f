"""``stablehlo.reverse`` sharded along a reversed dimension (upstream
``export/resolve_permutation_factors.cc``: ``handleReverseOp``).

Reversing a sharded dimension locally leaves shard ``i`` where shard ``n-1-i`` belongs: the
result is sharded on a copy of the mesh whose device order is reversed along those axes
(``@<mesh>_reversed``), and an ``sdy.reshard`` back to the original sharding moves the data.
An indivisible dimension is first padded at the high edge and halo-shifted right so the
padding sits at the low edge, where reversing puts it back at the high edge.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import StringAttr
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import unique_symbol_name
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.partition.export.resolve_permutation_factors import emit
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.geometry import (
    padded_dim_size,
    reversed_device_ids,
)
from shardy_ref.partition.export.resolve_permutation_factors.halo import halo_right_shift


def _mesh_symbol(state: State, mesh: Mesh, base: str, location) -> str:
    """Upstream ``getOrCreateMesh``: an existing mesh symbol with this value, else a new
    ``sdy.mesh`` at the top of the module under a free name derived from ``base``."""
    name = state.mesh_names.get(mesh)
    if name is not None:
        return name
    name = unique_symbol_name(base, state.table.symbols)
    op = Operation("sdy.mesh", [], [], {"sym_name": StringAttr(name), "mesh": mesh},
                   location=location)
    block = state.module.regions[0].blocks[0]
    first = block.first_op
    if first is None:
        block.append(op)
    else:
        block.insert_before(first, op)
    state.table.symbols[name] = op
    state.mesh_names[mesh] = name
    return name


@dataclass(frozen=True, slots=True)
class ReverseOpInfo:
    """Upstream ``ReverseOpInfo``: the axes sharding reversed dimensions (whose device
    order is reversed), the names of those sharding indivisible ones (made manual), and
    the operand shape with indivisible dimensions padded."""
    axes_to_reverse: list[AxisRef]
    manual_axes: set[str]
    padded_shape: list[int]


def get_reverse_op_info(op: Operation, in_sharding: TensorSharding,
                        mesh: Mesh) -> ReverseOpInfo | None:
    """Upstream ``getReverseOpInfo``; None if no reversed dimension is sharded."""
    dims = set(op.attributes["dimensions"].value)
    shape = op.operands[0].type.shape
    axes_to_reverse, manual, padded = [], set(), list(shape)
    for dim, dim_sharding in enumerate(in_sharding.dim_shardings):
        count = dim_sharding.sharded_size(mesh)
        if dim not in dims or count <= 1:
            continue
        axes_to_reverse += dim_sharding.axes
        if shape[dim] % count:
            manual.update(a.name for a in dim_sharding.axes)
            padded[dim] = padded_dim_size(shape[dim], count)
    if not axes_to_reverse:
        return None
    for dim, dim_sharding in enumerate(in_sharding.dim_shardings):
        # Manual axes are whole mesh axes: a dim sharded by another part of one (not
        # reversed, so left alone upstream, which then builds an invalid manual
        # computation) must be divisible too.
        if any(a.name in manual for a in dim_sharding.axes):
            padded[dim] = padded_dim_size(shape[dim], dim_sharding.sharded_size(mesh))
    return ReverseOpInfo(axes_to_reverse, manual, padded)


def handle_reverse(op: Operation, state: State) -> bool:
    """Upstream ``handleReverseOp``."""
    operand = op.operands[0]
    in_sharding = get_sharding(operand)
    out_sharding = get_sharding(op.results[0])
    if in_sharding is None or in_sharding.is_fully_replicated or \
            not isinstance(in_sharding.mesh_or_ref, str):
        return in_sharding is None or in_sharding.is_fully_replicated
    mesh = mesh_or_lookup(state.table, in_sharding.mesh_or_ref)
    if mesh is None or mesh.is_maximal:
        return True
    info = get_reverse_op_info(op, in_sharding, mesh)
    if info is None:
        return True
    dims = set(op.attributes["dimensions"].value)
    shape = operand.type.shape
    axes_to_reverse, manual, padded = info.axes_to_reverse, info.manual_axes, info.padded_shape
    value: Value = operand
    if manual:
        b = Builder(op)
        value = emit.pad_high_to_shape(b, operand, padded, in_sharding)
        shifts = {d: padded[d] - shape[d] for d in range(len(shape))
                  if d in dims and padded[d] > shape[d]}
        value = halo_right_shift(b, value, in_sharding, mesh, manual, shifts, state)
    reversed_mesh = Mesh(mesh.axes, reversed_device_ids(mesh, axes_to_reverse))
    name = _mesh_symbol(state, reversed_mesh, f"{in_sharding.mesh_or_ref}_reversed",
                        op.location)
    result = op.results[0]
    op.set_operand(0, value)
    set_sharding(result, in_sharding.replace(mesh_or_ref=name))
    if manual:
        result.type = value.type
    back = reshard(result, out_sharding or TensorSharding.fully_closed(
        in_sharding.mesh_or_ref, len(shape)), op.next_op)
    final = back.results[0]
    if manual:
        final = emit.slice_high_to_shape(Builder(back.next_op), final, operand.type,
                                         in_sharding)
    result.replace_uses_with_if(final, lambda use: use.owner is not back)
    return True
