"""``sdy-sharding-group-import``: validate sharding groups, merge the ones sharing a value
and renumber them ``0..N-1``
(https://openxla.org/shardy/sdy_import_passes#-sdy-sharding-group-import). Upstream
``transforms/import/sharding_group_import.cc``.

Validation: all members of a group have the same innermost enclosing
``sdy.manual_computation`` (or none), and the same shape; the first violation is an error.
Unification: groups that share a value are one group (``llvm::EquivalenceClasses``), and
``sdy.sharding_group`` ops putting a value in a group it is already in are erased.

Renumbering follows the LLVM of upstream's pinned commit rather than the mid-2025 pass
doc's "smallest original id": the
equivalence classes list group ids in first-insertion order (values in first-use order,
each with its groups in op order); a merged class is led by the leader of the class it was
merged into; classes are numbered in the order of their leaders in that list.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.types import I64
from shardy_ref.pass_manager import Pass, register_pass

SHARDING_GROUP = "sdy.sharding_group"
_CROSS_ERROR = "ShardingGroupOps values cannot cross ManualComputationOp boundaries for groupId: "
_SHAPE_ERROR = "ShardingGroupOps values must have the same shape for groupId: "


class EquivalenceClasses:
    """The parts of ``llvm::EquivalenceClasses`` the pass relies on: members iterate in
    insertion order, and ``union(a, b)`` keeps ``a``'s leader."""

    def __init__(self) -> None:
        self._parent: dict[int, int] = {}

    def leader(self, x: int) -> int:
        while self._parent[x] != x:
            x = self._parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        for x in (a, b):
            self._parent.setdefault(x, x)
        leader_a, leader_b = self.leader(a), self.leader(b)
        if leader_a != leader_b:
            self._parent[leader_b] = leader_a

    def leaders(self) -> Iterable[int]:
        return (x for x, parent in self._parent.items() if x == parent)


def group_id(op: Operation) -> int:
    return op.attributes["group_id"].value


def manual_computation_parent(op: Operation) -> Operation | None:
    """``getParentOfType<ManualComputationOp>``."""
    parent = op.parent_op
    while parent is not None and parent.name != "sdy.manual_computation":
        parent = parent.parent_op
    return parent


def tensor_shape(value: Value) -> tuple:
    """``getTensorShape``: the shape of a ranked tensor, else empty."""
    return tuple(getattr(value.type, "shape", None) or ())


def collect_and_validate(module: Operation) -> dict[Value, list[Operation]]:
    """Upstream ``buildShardingGroupMappingAndValidateGroups``: the group ops of each value,
    values in first-use order; raises on the first group that crosses a manual computation
    boundary or mixes shapes."""
    groups_of_value: dict[Value, list[Operation]] = {}
    manual_parent: dict[int, Operation | None] = {}
    shape: dict[int, tuple] = {}
    for op in module.walk():
        if op.name != SHARDING_GROUP:
            continue
        value, gid = op.operands[0], group_id(op)
        groups_of_value.setdefault(value, []).append(op)
        parent = manual_computation_parent(op)
        if manual_parent.setdefault(gid, parent) is not parent:
            raise PassError(op.location, f"{_CROSS_ERROR}{gid}")
        if shape.setdefault(gid, tensor_shape(value)) != tensor_shape(value):
            raise PassError(op.location, f"{_SHAPE_ERROR}{gid}")
    return groups_of_value


def unify_sharding_groups(groups_of_value: dict[Value, list[Operation]]) -> list[list[Operation]]:
    """Upstream ``unifySharingGroups``: merge groups sharing a value, renumber them
    ``0..N-1`` on the ops, and return the ops of each new group."""
    classes = EquivalenceClasses()
    for ops in groups_of_value.values():
        canonical = group_id(ops[0])
        for op in ops:
            classes.union(canonical, group_id(op))
    reindex = {leader: i for i, leader in enumerate(classes.leaders())}
    groups: list[list[Operation]] = [[] for _ in reindex]
    for ops in groups_of_value.values():
        for op in ops:
            new_id = reindex[classes.leader(group_id(op))]
            op.attributes["group_id"] = IntegerAttr(new_id, I64)
            groups[new_id].append(op)
    return groups


def erase_duplicate_groups(groups: list[list[Operation]]) -> None:
    """Upstream ``eraseDuplicateGroups``: keep one op per value in each group."""
    for ops in groups:
        seen: set[Value] = set()
        for op in ops:
            if op.operands[0] in seen:
                op.erase()
            else:
                seen.add(op.operands[0])


@register_pass
@dataclass(frozen=True, slots=True)
class ShardingGroupImportPass(Pass):
    """Canonicalization and validation pass for sharding groups. See
    ``shardy/dialect/sdy/transforms/import/passes.td`` (``ShardingGroupImportPass``)."""

    NAME = "sdy-sharding-group-import"

    def run(self, op: Operation, ctx) -> None:
        groups_of_value = collect_and_validate(op)
        if groups_of_value:
            erase_duplicate_groups(unify_sharding_groups(groups_of_value))
