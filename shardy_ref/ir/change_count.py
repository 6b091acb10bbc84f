"""The IR's change count: a number that every change made through the IR API moves (an
attribute set or removed, an operand set, an op linked or unlinked, a block, region or
block argument added or removed, a value's type set), so the pass manager can tell in
constant time that a pass left the IR alone. MLIR learns that from a pass marking all
analyses preserved; ours declare nothing. Changes of structure are also counted apart,
so that the verifier can skip the rules only structure decides after a pass that only
rewrote attributes (most propagation and export passes). An op's name, properties and
successors are fixed once it is built, as in MLIR, and are not counted.
"""
from __future__ import annotations

import os

# set in the environment (to anything but "" or "0"): whatever is skipped because a count
# or a stamp did not move is checked the long way too (the test suite sets it: a change
# made outside the IR API, or a mutator that does not count, fails the run with IRError)
CROSS_CHECK_ENV = "SHARDY_REF_CROSS_CHECK_CHANGES"


def cross_checking() -> bool:
    """Whether :data:`CROSS_CHECK_ENV` asks for the cross-check ("" and "0" do not)."""
    return os.environ.get(CROSS_CHECK_ENV, "") not in ("", "0")


# one count each for all IR in the process (a change anywhere may be to the checked IR):
# changes of attributes and types, and changes of structure (which ops are where, what
# they use, the blocks, regions and block arguments)
CONTENT = [0]
STRUCTURE = [0]


def change_count() -> int:
    """How many changes were made to any IR so far; equal counts before and after some work
    mean it changed nothing (it may have built IR of its own, not yet inserted)."""
    return CONTENT[0] + STRUCTURE[0]


def structure_count() -> int:
    """How many changes of structure were made to any IR so far: equal counts mean what
    only structure decides (dominance, isolation from above) is as it was."""
    return STRUCTURE[0]


_ABSENT = object()


def touch(op) -> None:
    """Mark ``op`` changed for the checks that read it: its own stamp (``op._stamp``, which
    the verifier compares with the one it last verified) and those of its results' users
    (their checks read the types and constant values of their operands)."""
    op._stamp += 1
    for result in op.results:
        touch_users(result)


def touch_users(value) -> None:
    """Move the stamps of the ops using ``value`` (see :func:`touch`)."""
    for use in value._uses:
        use.owner._stamp += 1


def is_discardable(name: str) -> bool:
    """Whether an attribute named ``name`` is discardable (a dialect's, ``sdy.sharding``):
    only the dialect's own check of it reads it, never the op's other checks nor its
    users' (those read the inherent attributes, e.g. a constant's ``value``)."""
    return "." in name


class Attributes(dict):
    """An op's attribute dictionary: a dict whose every change is counted
    (:func:`change_count`) and stamps its op: a change of a discardable attribute moves
    ``op._dstamp``, any other :func:`touch` es it; reading it costs what reading a dict
    costs."""

    __slots__ = ("_owner",)  # the op it belongs to (None: none)

    def _changed(self, key=None) -> None:
        """Count a change of the attribute ``key`` (None: of some attributes)."""
        CONTENT[0] += 1
        owner = getattr(self, "_owner", None)
        if owner is not None:
            owner._dstamp += 1
            if key is None or not is_discardable(key):
                touch(owner)

    def __setitem__(self, key, value):
        old = dict.get(self, key, _ABSENT)
        if old is not value and (old is _ABSENT or old != value):  # equal: the same IR
            self._changed(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._changed(key)
        dict.__delitem__(self, key)

    def __ior__(self, other):
        self._changed()
        return dict.__ior__(self, other)

    def pop(self, key, *default):
        if key in self:
            self._changed(key)
        return dict.pop(self, key, *default)

    def popitem(self):
        self._changed()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        if key not in self:
            self._changed(key)
        return dict.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        self._changed()
        dict.update(self, *args, **kwargs)

    def clear(self):
        self._changed()
        dict.clear(self)
