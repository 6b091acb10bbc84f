"""Pausing Python's cyclic garbage collector around work that allocates many objects that
are not garbage while it runs: the parser (the IR it builds), the pass manager's
verification step (the verifier's memo and the IR snapshot it keeps) and the printer.
Collection passes over such objects find nothing to free, and their cost grows with
everything allocated so far, which made large inputs slower than linear
(``benchmarks/scale.py``, ``benchmarks/parse_print.py``).

The collector is process-wide, so the pause is counted across threads: the last paused
section to end restores what the first one found. Garbage cycles made meanwhile are
collected once it is back.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()  # guards _pause
_pause = {"depth": 0, "was_enabled": False, "promote": False}  # sections in any thread


@contextmanager
def collector_paused(promote: bool = True) -> Iterator[None]:
    """The cyclic GC off while at least one such section runs, in any thread. With
    ``promote`` (read from the outermost section), what was allocated meanwhile is moved to
    the oldest generation when the collector comes back (:func:`_promote_young_objects`);
    the pass manager, which freezes the heap after every pass anyway, does without."""
    with _LOCK:
        if _pause["depth"] == 0:
            _pause["was_enabled"] = gc.isenabled()
            _pause["promote"] = promote
            gc.disable()
        _pause["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _pause["depth"] -= 1
            if _pause["depth"] == 0 and _pause["was_enabled"]:
                if _pause["promote"]:
                    _promote_young_objects()
                gc.enable()


def _promote_young_objects() -> None:
    """Move the objects the section allocated to the oldest GC generation (two O(1) list
    splices), so the young collection that would run as soon as the collector is back does
    not scan them all; full collections still do. A freeze the caller made is left alone
    (https://docs.python.org/3/library/gc.html#gc.freeze); asking whether there is one walks
    every frozen object, which is why the pass manager does not promote."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
