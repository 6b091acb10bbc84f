"""Reshards around one op so that its operands and results take the shardings a sharding
projection gives them (upstream ``insertExplicitReshards`` in
``export/explicit_reshards_util.cc``), and the two uses the export passes make of it:
replicating some factors of an op, and replicating every value of an op that has no
sharding rule. Shared by ``sdy-insert-explicit-reshards``,
``sdy-resolve-permutation-factors`` and ``sdy-ref-make-partitionable``."""
from __future__ import annotations

from collections.abc import Sequence

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.propagate.sharding_projection import ShardingProjection, UpdateTensorShardings


def common_mesh_name_ignoring_device_ids(shardings: Sequence, table: SymbolTable):
    """Upstream ``getCommonMeshName(..., ignoreDeviceIds=true)``: the mesh name every
    present sharding is bound to, empty meshes aside and device ids ignored (iota device
    ids preferred); None if there is none or they differ."""
    name, mesh = None, None
    for sharding in shardings:
        if sharding is None:
            continue
        other = mesh_or_lookup(table, sharding.mesh_or_ref)
        if mesh is None or mesh.is_empty:
            name, mesh = sharding.mesh_or_ref, other
        elif other.is_empty:
            continue
        elif not other.equals(mesh, ignore_device_ids=True):
            return None
        elif not other.device_ids:
            name, mesh = sharding.mesh_or_ref, other
    return name


def most_common_mesh(shardings: Sequence, default):
    """Upstream ``getMostCommonMesh``: the mesh most of the not fully replicated shardings
    are bound to (on a tie, the first to reach that count), else ``default``."""
    counts: dict = {}
    best, best_count = default, 0
    for sharding in shardings:
        if sharding is None or all(not d.axes for d in sharding.dim_shardings):
            continue
        counts[sharding.mesh_or_ref] = counts.get(sharding.mesh_or_ref, 0) + 1
        if counts[sharding.mesh_or_ref] > best_count:
            best, best_count = sharding.mesh_or_ref, counts[sharding.mesh_or_ref]
    return best


def common_mesh_name(ins: Sequence, outs: Sequence, table: SymbolTable):
    """Upstream ``getCommonMeshName(..., ignoreDeviceIds=true)`` then the most common mesh
    among the shardings that are not fully replicated."""
    name = common_mesh_name_ignoring_device_ids((*ins, *outs), table)
    if name is None:
        return None
    return most_common_mesh((*ins, *outs), name)


def other_device_order(sharding: TensorSharding | None, mesh: Mesh,
                       table: SymbolTable) -> bool:
    """Upstream ``shouldReshardToCommonMesh``."""
    if sharding is None or all(not d.axes for d in sharding.dim_shardings):
        return False
    return mesh_or_lookup(table, sharding.mesh_or_ref).device_ids != mesh.device_ids


def reshard_tensors(op: Operation, in_shardings: Sequence, out_shardings: Sequence,
                    projection: ShardingProjection, update: UpdateTensorShardings,
                    rule: OpShardingRule, mesh_name, mesh: Mesh, table: SymbolTable) -> None:
    """Upstream ``insertExplicitReshards``: operands flagged (or on a mesh with another
    device order) get a reshard to their projected sharding; flagged results are computed
    in it and resharded back to what their users expect."""
    for i, sharding in enumerate(in_shardings):
        if update.update_operands[i] or other_device_order(sharding, mesh, table):
            new = projection.operands[i].to_tensor_sharding(
                rule.operand_mappings[i], rule.factor_sizes, mesh_name, mesh)
            op.set_operand(i, reshard(op.operands[i], new, op).results[0])
    anchor = op.next_op
    for i, sharding in enumerate(out_shardings):
        if update.update_results[i] or other_device_order(sharding, mesh, table):
            new = projection.results[i].to_tensor_sharding(
                rule.result_mappings[i], rule.factor_sizes, mesh_name, mesh)
            reshard_result(op, i, new, anchor)


def reshard_result(op: Operation, index: int, computed: TensorSharding,
                   anchor: Operation) -> None:
    """``op`` computes result ``index`` in ``computed``; an ``sdy.reshard`` before
    ``anchor`` (an op after ``op``) gives its users the sharding they expect (its old one,
    fully closed if it had none)."""
    result = op.results[index]
    target = get_sharding(result) or TensorSharding.fully_closed(computed.mesh_or_ref,
                                                                 tensor_rank(result.type))
    back = reshard(result, target, anchor)
    result.replace_uses_with_if(back.results[0], lambda use, b=back: use.owner is not b)
    set_sharding(result, computed)


def replicate_factors(op: Operation, rule: OpShardingRule, factors: Sequence[int],
                      table: SymbolTable) -> bool:
    """Reshard ``op``'s operands and results so that none of ``factors`` stays sharded
    (upstream ``resolvePermutationFactorsViaReplication``); whether anything changed."""
    in_shardings = [get_sharding(v) for v in op.operands]
    out_shardings = [get_sharding(v) for v in op.results]
    mesh_name = common_mesh_name(in_shardings, out_shardings, table)
    if mesh_name is None:
        return False
    mesh = mesh_or_lookup(table, mesh_name)
    if mesh is None or mesh.is_maximal:
        return False
    projection = ShardingProjection.build(in_shardings, out_shardings, rule, mesh,
                                          closed_if_missing=True)
    update = UpdateTensorShardings.empty(op.num_operands, op.num_results)
    for factor in factors:
        update |= projection.update_sharding(factor, [], [])
    if not update.any():
        return False
    reshard_tensors(op, in_shardings, out_shardings, projection, update, rule, mesh_name,
                    mesh, table)
    return True


def without_dim_axes(sharding: TensorSharding, dims: Sequence[int] | None = None
                     ) -> TensorSharding:
    """``sharding`` with no axes on ``dims`` (default: every dimension), closed there;
    replicated and unreduced axes kept."""
    return sharding.replace(dim_shardings=tuple(
        DimensionSharding((), True) if dims is None or d in dims else dim
        for d, dim in enumerate(sharding.dim_shardings)))


def is_dim_sharded(sharding: TensorSharding | None) -> bool:
    return sharding is not None and any(d.axes for d in sharding.dim_shardings)


def replicate_all(op: Operation) -> bool:
    """Reshard every operand of ``op`` sharded along a dimension to replicated, and compute
    every such result replicated and reshard it back after: the op then runs on whole
    values on every device, whatever it computes. Whether anything changed."""
    changed = False
    for i, value in enumerate(list(op.operands)):
        sharding = get_sharding(value)
        if is_dim_sharded(sharding):
            op.set_operand(i, reshard(value, without_dim_axes(sharding), op).results[0])
            changed = True
    anchor = op.next_op
    for i, result in enumerate(op.results):
        sharding = get_sharding(result)
        if is_dim_sharded(sharding):
            reshard_result(op, i, without_dim_axes(sharding), anchor)
            changed = True
    return changed
