"""Verification of StableHLO's collective ops (all_reduce, all_gather, reduce_scatter,
all_to_all) with upstream's messages: ``hlo::verifyReplicaGroups`` and the dimension checks
of ``verifyAllGatherOp``, ``verifyReduceScatterOp`` and ``inferAllToAllOp``
(``stablehlo/dialect/TypeInference.cpp``); the helpers are those of
:mod:`~shardy_ref.ir.verify.stablehlo_structured`.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import IntegerType, RankedTensorType
from shardy_ref.ir.verify import VerifyContext, op_error, op_verifier
from shardy_ref.ir.verify.stablehlo_structured import (
    _compatible_dims,
    _fail,
    _int,
    _ranked,
    _verify_reducer,
    verify_i64_attrs,
)


def _verify_replica_groups(op: Operation, same_size: bool, group_size: int | None = None) -> None:
    """``verifyReplicaGroups``: a rank-2 table naming each of 0..N-1 once (-1 pads groups
    where they may differ in size), with ``group_size`` columns when given."""
    groups = op.attributes.get("replica_groups")
    if not isinstance(groups, DenseElementsAttr) or not isinstance(groups.type, RankedTensorType):
        return
    shape = groups.type.shape
    if len(shape) != 2:
        raise _fail(op, "replica groups should be a rank 2 tensor")
    if "use_global_device_ids" in op.attributes and shape[0] * shape[1] == 0:
        raise _fail(op, "if `use_global_device_ids` is set, the replica groups cannot be empty")
    ids = groups.values * (shape[0] * shape[1]) if groups.is_splat else groups.values
    seen: set[int] = set()
    for replica in ids:
        if replica == -1 and not same_size:
            continue
        if replica == -1:
            raise _fail(op, "Invalid replica id -1")
        if replica in seen:
            raise _fail(op, f"replica id #{replica} seen more than once")
        seen.add(replica)
    missing = next((i for i in range(len(seen)) if i not in seen), None)
    if missing is not None:
        raise _fail(op, f"replica id #{missing} not seen in replica groups")
    if same_size and group_size is not None and (shape[0] == 0 or shape[1] != group_size):
        raise _fail(op, f"group size of replica_groups must be {group_size}")


@op_verifier("stablehlo.all_reduce")
def verify_all_reduce(op: Operation, ctx: VerifyContext) -> None:
    """``verifyAllReduceOp``: the replica groups (groups may differ in size)."""
    _verify_replica_groups(op, same_size=False)


@op_verifier("stablehlo.all_gather")
def verify_all_gather(op: Operation, ctx: VerifyContext) -> None:
    """The dimension checks of ``verifyAllGatherOp``."""
    attr = op.attributes.get("all_gather_dim")
    dim = _int(attr)
    if dim is None:
        return
    if dim < 0 or getattr(attr, "type", IntegerType(64)) != IntegerType(64):
        raise op_error(op, "attribute 'all_gather_dim' failed to satisfy constraint: 64-bit "
                           "signless integer attribute whose value is non-negative")
    _verify_replica_groups(op, same_size=True)
    for operand, result in zip(op.operand_types, op.result_types):
        if _ranked((operand, result)):
            _verify_gathered(op, dim, operand, result)


def _verify_gathered(op: Operation, dim: int, operand: RankedTensorType,
                     result: RankedTensorType) -> None:
    """``verifyAllGatherOp`` on one operand and its result."""
    if dim >= operand.rank:
        raise _fail(op, "all_gather_dim must be a valid index of operand")
    if operand.shape[dim] == 0:
        raise _fail(op, "dimension size of operand at 'all_gather_dim' cannot be zero")
    if result.rank != operand.rank:
        raise _fail(op, "operand and result must have the same rank")
    for i, (a, b) in enumerate(zip(operand.shape, result.shape)):
        if i != dim and not _compatible_dims(a, b):
            raise _fail(op, "operand and result should have the same shape except for "
                            "the dimension size at 'all_gather_dim'")
    a, b = operand.shape[dim], result.shape[dim]
    if a is not None and b is not None and b % a:
        raise _fail(op, f"result gather dimension has size {b}, expected to be a "
                        f"multiple of operand gather dimension size {a}")


@op_verifier("stablehlo.reduce_scatter")
def verify_reduce_scatter(op: Operation, ctx: VerifyContext) -> None:
    """The reducer and dimension checks of ``verifyReduceScatterOp``."""
    dim = _int(op.attributes.get("scatter_dimension"))
    types = [*op.operand_types, *op.result_types]
    if dim is None or len(types) != 2 or not _ranked(types):
        return
    operand, result = types
    if dim < 0:
        raise op_error(op, "attribute 'scatter_dimension' failed to satisfy constraint: "
                           "64-bit signless integer attribute whose value is non-negative")
    _verify_replica_groups(op, same_size=True)
    _verify_reducer(op, [operand], [RankedTensorType((), operand.element_type)])
    if operand.rank != result.rank:
        raise _fail(op, "operand and result should have same rank")
    if dim >= operand.rank:
        raise _fail(op, "scatter dim should be less than operand/result rank")


@op_verifier("stablehlo.all_to_all")
def verify_all_to_all(op: Operation, ctx: VerifyContext) -> None:
    """The dimension checks of ``inferAllToAllOp``."""
    split = _int(op.attributes.get("split_dimension"))
    concat = _int(op.attributes.get("concat_dimension"))
    count = _int(op.attributes.get("split_count"))
    if split is None or concat is None or count is None:
        return
    verify_i64_attrs(op, (("concat_dimension", "non-negative"), ("split_count", "positive"),
                          ("split_dimension", "non-negative")))
    _verify_replica_groups(op, same_size=True, group_size=count)
    for operand in op.operand_types:
        if not isinstance(operand, RankedTensorType):
            continue
        if split >= operand.rank:
            raise _fail(op, f"AllToAll split_dimension {split} is out-of-bounds for input "
                            f"rank {operand.rank}")
        if concat >= operand.rank:
            raise _fail(op, f"AllToAll concat_dimension {concat} is out-of-bounds for input "
                            f"rank {operand.rank}")
        size = operand.shape[split]
        if size is not None and size % count:
            raise _fail(op, f"split dimension has size {size}, expected to be a multiple of "
                            f"split_count {count}")
