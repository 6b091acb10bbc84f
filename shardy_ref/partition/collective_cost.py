"""What each sdy collective costs: bytes a device sends, computed from the tensor's shape,
element type and the axes involved (for the ``explain`` of a later issue; semantics of
each collective in https://openxla.org/shardy/sdy_dialect#operations).

The model is the usual bandwidth-optimal one on a group of ``n`` devices (the product of
the sizes of the axes the collective works over), with ``S`` the bytes of one device's
*input* shard:

* ``all_slice``: 0 (each device keeps a slice of what it has);
* ``all_gather``: ``(n - 1) * S`` (a device sends its shard to the ``n - 1`` others'
  results, as a ring does in ``n - 1`` steps);
* ``all_to_all``: ``(n - 1) / n * S`` (all but its own chunk leaves the device);
* ``collective_permute``: ``S`` (the whole shard moves), 0 if nothing moves;
* ``all_reduce``: ``2 * (n - 1) / n * S`` (ring reduce-scatter then all-gather);
* ``reduce_scatter``: ``(n - 1) / n * S``.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType

COLLECTIVES = frozenset({"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
                         "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter"})


@dataclass(frozen=True, slots=True)
class CollectiveCost:
    """Bytes one device sends for one collective, and the group size it talks to."""

    op_name: str
    group_size: int
    bytes_per_device: int


def element_bytes(element_type) -> float:
    """Bytes per element (sub-byte types count fractionally; i1 as one byte)."""
    if isinstance(element_type, ComplexType):
        return 2 * element_bytes(element_type.element_type)
    width = getattr(element_type, "width", None)
    if isinstance(element_type, IntegerType | FloatType) and width is not None:
        return 1 if width == 1 else width / 8
    return 4


def local_elements(shape, sharding: TensorSharding | None, mesh: Mesh) -> int:
    """Elements of one device's shard (dimensions rounded up, as padding does)."""
    n = 1
    for i, size in enumerate(shape):
        shards = 1
        if sharding is not None:
            for axis in sharding.dim_shardings[i].axes:
                shards *= axis.size(mesh)
        n *= -(-size // shards)
    return n


def _group(axes: list[AxisRef], mesh: Mesh) -> int:
    n = 1
    for axis in axes:
        n *= axis.size(mesh)
    return n


def _axes_of(op: Operation) -> list[AxisRef]:
    """The axes the collective communicates over."""
    if op.name in ("sdy.all_gather", "sdy.all_slice", "sdy.reduce_scatter"):
        key = {"sdy.all_gather": "gathering_axes", "sdy.all_slice": "slicing_axes",
               "sdy.reduce_scatter": "reduce_scatter_axes"}[op.name]
        return [a for axes in op.attributes[key] for a in axes]
    if op.name == "sdy.all_to_all":
        return [a for param in op.attributes["params"] for a in param.axes]
    if op.name == "sdy.all_reduce":
        return list(op.attributes["reduction_axes"])
    return []


def collective_cost(op: Operation, input_sharding: TensorSharding | None,
                    mesh: Mesh) -> CollectiveCost:
    """The cost of ``op`` (an sdy collective) whose operand is sharded ``input_sharding``."""
    if op.name not in COLLECTIVES:
        raise ValueError(f"not an sdy collective: {op.name}")
    t = op.operands[0].type
    shard = local_elements(t.shape, input_sharding, mesh) * element_bytes(t.element_type)
    n = _group(_axes_of(op), mesh)
    if op.name == "sdy.all_slice":
        moved = 0
    elif op.name == "sdy.all_gather":
        moved = (n - 1) * shard
    elif op.name in ("sdy.all_to_all", "sdy.reduce_scatter"):
        moved = (n - 1) / n * shard
    elif op.name == "sdy.all_reduce":
        moved = 2 * (n - 1) / n * shard
    else:  # collective_permute: the shard moves unless the sharding is unchanged
        out = op.attributes["out_sharding"]
        same = input_sharding is not None and all(
            a.axes == b.axes for a, b in zip(input_sharding.dim_shardings, out.dim_shardings)) \
            and input_sharding.mesh_or_ref == out.mesh_or_ref
        moved, n = (0, 1) if same else (shard, mesh.total_size)
    return CollectiveCost(op.name, n, round(moved))
