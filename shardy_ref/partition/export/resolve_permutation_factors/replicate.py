"""The fallback: replicate sharded permutation factors with explicit reshards (upstream
``export/resolve_permutation_factors.cc``: ``resolvePermutationFactorsViaReplication``,
and ``isCommunicationFreeSliceDim`` / ``isCommunicationFreePadDim`` of
``export/utils.cc`` for the dimensions that need no communication anyway)."""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.partition.export.explicit_reshards_util.factor_reshards import (
    common_mesh_name,
    replicate_factors,
)
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.geometry import ceil_div


def communication_free_slice_dim(dim: int, op: Operation, sharding: TensorSharding,
                                 mesh: Mesh) -> bool:
    """Upstream ``isCommunicationFreeSliceDim``: unsharded, or starting at 0 with unit
    stride and the same shard size before and after."""
    count = sharding.dim_shardings[dim].sharded_size(mesh)
    if count <= 1:
        return True
    if op.attributes["start_indices"].value[dim] != 0 or op.attributes["strides"].value[dim] != 1:
        return False
    size_in, size_out = op.operands[0].type.shape[dim], op.results[0].type.shape[dim]
    if size_in is None or size_out is None:
        return False
    return ceil_div(size_in, count) == ceil_div(size_out, count)


def communication_free_pad_dim(dim: int, op: Operation, sharding: TensorSharding,
                               mesh: Mesh) -> bool:
    """Upstream ``isCommunicationFreePadDim``: unsharded, or no interior padding and each
    output shard reads only its own input shard."""
    count = sharding.dim_shardings[dim].sharded_size(mesh)
    if count <= 1:
        return True
    if op.attributes["interior_padding"].value[dim] != 0:
        return False
    size = op.operands[0].type.shape[dim]
    if size is None:
        return False
    s_in, s_out = ceil_div(size, count), ceil_div(op.results[0].type.shape[dim], count)
    low = op.attributes["edge_padding_low"].value[dim]
    for t in range(count):
        start = t * s_out - low
        first, last = max(0, start), min(size - 1, start + s_out - 1)
        if first <= last and (first // s_in != t or last // s_in != t):
            return False
    return True


def _communication_free(op: Operation, factor: int, sharding: TensorSharding | None,
                        mesh: Mesh) -> bool:
    """Pads and slices keep dims (= factors) that need no communication sharded."""
    if sharding is None:
        return False
    if op.name == "stablehlo.slice":
        return communication_free_slice_dim(factor, op, sharding, mesh)
    if op.name == "stablehlo.pad":
        return communication_free_pad_dim(factor, op, sharding, mesh)
    return False


def replicate_permutation_factors(op: Operation, rule: OpShardingRule, factors: list[int],
                                  state: State) -> None:
    """Reshard operands and results so that none of ``factors`` stays sharded, except the
    pad and slice dimensions that need no communication."""
    first = get_sharding(op.operands[0]) if op.operands else None
    mesh_name = common_mesh_name([get_sharding(v) for v in op.operands],
                                 [get_sharding(v) for v in op.results], state.table)
    mesh = mesh_or_lookup(state.table, mesh_name) if mesh_name is not None else None
    if mesh is None or mesh.is_maximal:
        return
    kept = [f for f in factors if not _communication_free(op, f, first, mesh)]
    replicate_factors(op, rule, kept, state.table)
