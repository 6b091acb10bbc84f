"""Helpers shared by the passes that lower a global program to per-device StableHLO
(resolve-single-device-sharding, resolve-permutation-factors, pad-for-divisibility,
convert-global-to-local): an op builder that inserts before an anchor, and the device id."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import I1, ComplexType, FloatType, IntegerType, RankedTensorType, Type
from shardy_ref.transforms.common.op_properties import LOGICAL_REDUCTION_OPS, REDUCTION_OPS

I64 = IntegerType(64)
SCALAR_I64 = RankedTensorType((), I64)


class Builder:
    """Inserts new ops before an anchor, in order, at the anchor's location."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def op(self, name: str, operands=(), types=(), attributes=None, regions=()) -> Operation:
        op = Operation(name, list(operands), list(types), attributes or {}, list(regions),
                       location=self.anchor.location)
        self.anchor.parent.insert_before(self.anchor, op)
        return op


def device_id(b: Builder, replica_count: int, partition_count: int):
    """Upstream ``getDeviceId``: the replica or partition id as a scalar i64."""
    if replica_count != 1 and partition_count != 1:
        raise PassError(b.anchor.location, "Shardy partitioner does not support "
                        "replica_count > 1 && partition_count > 1 yet.")
    name = "stablehlo.replica_id" if replica_count > 1 else "stablehlo.partition_id"
    value = b.op(name, types=[RankedTensorType((), IntegerType(32, "unsigned"))]).results[0]
    return b.op("stablehlo.convert", [value], [SCALAR_I64]).results[0]


def shard_index(device: int, mesh, axes) -> int:
    """Upstream ``getShardIndex`` (export/utils.cc): the index of ``device``'s shard along a
    dimension sharded by ``axes`` (major to minor) of ``mesh`` (an sdy ``Mesh``), honouring
    the mesh's device order."""
    logical = mesh.device_ids.index(device) if mesh.device_ids else device
    names = mesh.axis_names
    index = 0
    for axis in axes:
        size = axis.size(mesh)
        suffix = 1
        for mesh_axis in mesh.axes[names.index(axis.name) + 1:]:
            suffix *= mesh_axis.size
        stride = mesh.axis_size(axis.name) // (axis.pre_size * size)
        index = index * size + (logical // (suffix * stride)) % size
    return index


def zero_scalar(element_type: Type):
    """The Python zero of an element type (False for i1, 0j for complex)."""
    if isinstance(element_type, ComplexType):
        return 0j
    if isinstance(element_type, FloatType):
        return 0.0
    if isinstance(element_type, IntegerType) and element_type.width == 1:
        return False
    return 0


def zero_attr(type_: RankedTensorType) -> DenseElementsAttr:
    """A splat zero of a tensor type, the ``value`` of a ``stablehlo.constant``."""
    return DenseElementsAttr.from_values(type_, [zero_scalar(type_.element_type)])


def common_reduction_op(op: Operation, num_inputs: int) -> str | None:
    """Upstream ``getCommonSupportedReductionOp``: the one associative, commutative op
    (add, multiply, max, min; and/or on i1) every result of the update computation applies
    to its two block arguments, or None."""
    region = op.regions[0] if op.regions else None
    if region is None or not region.blocks:
        return None
    block = region.blocks[0]
    terminator = block.terminator
    if len(block.args) != 2 * num_inputs or terminator is None or \
            terminator.name != "stablehlo.return" or terminator.num_operands != num_inputs:
        return None
    kind = None
    for index, value in enumerate(terminator.operands):
        cur = value.defining_op
        if cur is None or cur.num_operands != 2 or not isinstance(value.type, RankedTensorType):
            return None
        logical = value.type.element_type == I1 and cur.name in LOGICAL_REDUCTION_OPS
        if not logical and cur.name not in REDUCTION_OPS:
            return None
        if kind is not None and kind != cur.name:
            return None
        kind = cur.name
        expected = {block.args[index], block.args[index + num_inputs]}
        if set(cur.operands) != expected or cur.operands[0] is cur.operands[1]:
            return None
    return kind
