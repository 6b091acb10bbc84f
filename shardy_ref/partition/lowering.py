"""Helpers shared by the passes that lower a global program to per-device StableHLO
(resolve-single-device-sharding, resolve-permutation-factors, pad-for-divisibility,
convert-global-to-local): an op builder that inserts before an anchor, and the device id."""
from __future__ import annotations

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import IntegerType, RankedTensorType

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
