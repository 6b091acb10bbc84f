"""Propagation helpers that import and export passes share: upstream's
``shardy/dialect/sdy/transforms/propagation/utils.{h,cc}``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/propagation/utils.h)."""
from __future__ import annotations

from collections.abc import Sequence

from shardy_ref.ir.constants import DATA_FLOW_EDGE
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.utils import (
    insert_after_value,
    is_equivalent,
    is_static_shaped,
    lookup_data_flow_edge,
)
from shardy_ref.ir.value_sharding import get_sharding, value_location


def add_data_flow_edges(edge_owners: Sequence[Value]) -> None:
    """Upstream ``addDataFlowEdges``: owners are visited last to first so the edges, each
    inserted right after its owner, keep the owners' order."""
    for owner in reversed(edge_owners):
        if not is_static_shaped(owner):
            continue
        sharding = get_sharding(owner)
        edge = Operation(DATA_FLOW_EDGE, [owner], [owner.type],
                         {"sharding": sharding} if sharding is not None else {},
                         location=value_location(owner))
        insert_after_value(owner, edge)
        owner.replace_uses_with_if(edge.results[0], lambda use: use.owner is not edge)


def shardings_from_data_flow_edges(owners: Sequence[Value]) -> list[TensorSharding]:
    """Upstream ``getShardingsFromDataFlowEdges``: the sharding of each owner's edge, fully
    open (on the first edge sharding's mesh) where an owner has none; empty if no edge
    has a sharding."""
    shardings: list[TensorSharding | None] = []
    mesh_or_ref = None
    for owner in owners:
        edge = lookup_data_flow_edge(owner)
        sharding = edge.attributes.get("sharding") if edge is not None else None
        if sharding is not None and mesh_or_ref is None:
            mesh_or_ref = sharding.mesh_or_ref
        shardings.append(sharding)
    if mesh_or_ref is None:
        return []
    return [s if s is not None else TensorSharding.fully_open(mesh_or_ref, tensor_rank(owner.type))
            for s, owner in zip(shardings, owners, strict=True)]


def is_equivalent_or_replicated(a: TensorSharding | None, b: TensorSharding | None) -> bool:
    """The free ``isEquivalent`` of upstream ``propagation/utils.cc``: no sharding is
    equivalent to any fully replicated one (unreduced axes not looked at), else
    ``TensorShardingAttr::isEquivalent``."""
    if a is None:
        return b is None or all(not d.axes for d in b.dim_shardings)
    return is_equivalent(a, b)
