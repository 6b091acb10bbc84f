"""Sharding groups during propagation: which values must share a sharding, and the
synchronisation of their initial shardings (upstream
``transforms/propagation/sharding_group_map.cc``; see "Sharding Group" in
https://openxla.org/shardy/compiler_api).

Assumes ``sdy-sharding-group-import`` ran: group ids are 0..N-1 and a value is in at most
one group.
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.utils import insert_after_value
from shardy_ref.ir.value_sharding import get_sharding, owning_op, set_sharding, value_location

SHARDING_GROUP = "sdy.sharding_group"
SHARDING_CONSTRAINT = "sdy.sharding_constraint"


def _is_fully_replicated_and_open(sharding: TensorSharding) -> bool:
    """Upstream ``isFullyReplicatedAndOpen``: every dimension open and without axes."""
    return all(not d.axes and not d.is_closed for d in sharding.dim_shardings)


class ShardingGroupMap:
    """Group id -> member values (in walk order) and value -> group id."""

    def __init__(self, module: Operation):
        self.group_values: list[list[Value]] = []
        self.value_group: dict[Value, int] = {}
        for op in module.walk(post_order=True):
            if op.name != SHARDING_GROUP:
                continue
            gid = op.attributes["group_id"].value
            value = op.operands[0]
            while len(self.group_values) <= gid:
                self.group_values.append([])
            known = self.value_group.setdefault(value, gid)
            if known != gid:
                raise PassError(op.location,
                                "Value can only map to one sharding group id after import.")
            self.group_values[gid].append(value)

    def group_members(self, value: Value) -> list[Value]:
        """All members of ``value``'s group (``value`` included), or none."""
        gid = self.value_group.get(value)
        return self.group_values[gid] if gid is not None else []

    def sync_group_member_shardings(self, warn: Callable[[object, str], None]) -> None:
        """Give every member of a group the group's one initial sharding; when members
        disagree, warn (upstream's text) and put an open sharding constraint after every
        member instead, which then stands for the member in the group."""
        for gid, members in enumerate(self.group_values):
            sharding, conflict = self._common_sharding(gid, members, warn)
            if sharding is None:
                continue
            if not conflict:
                for member in members:
                    set_sharding(member, sharding)
                continue
            open_like = TensorSharding.fully_open(sharding.mesh_or_ref, sharding.rank)
            for i, member in enumerate(members):
                constraint = Operation(SHARDING_CONSTRAINT, [member], [member.type],
                                       {"sharding": open_like},
                                       location=value_location(member))
                insert_after_value(member, constraint)
                member.replace_uses_with_if(constraint.result,
                                            lambda use, c=constraint: use.owner is not c)
                del self.value_group[member]
                members[i] = constraint.result
                self.value_group[constraint.result] = gid

    @staticmethod
    def _common_sharding(gid: int, members: list[Value], warn):
        """Upstream ``findCommonSharding``: the one sharding the members that have a
        (not fully open and replicated) sharding agree on, and whether two disagree (then
        the first one found)."""
        if len(members) == 1:
            return get_sharding(members[0]), False
        found: TensorSharding | None = None
        for member in members:
            candidate = get_sharding(member)
            if candidate is None or _is_fully_replicated_and_open(candidate):
                continue
            if found is None:
                found = candidate
            elif candidate != found:
                warn(owning_op(members[0]).location,
                     f"The initial operand shardings on the sharding groups of groupID: {gid} "
                     "do not match. Inserting an open sharding constraint to all constrained "
                     "values. This can be caused when shardings from different values are "
                     "grouped (e.g. from jax.shard_alike) but have separate inconsistent "
                     "sharding constraints on them.")
                return found, True
        return found, False
