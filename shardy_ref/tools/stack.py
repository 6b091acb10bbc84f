"""Run a command with room for deeply nested IR.

The parser's name resolution, the printer, the passes' walks and the interpreter recurse
once or a few frames per nested region, so Python's default limit (1000 frames on the
main thread's 8 MiB stack) stops them after a few hundred levels of ``stablehlo.while``
or ``sdy.named_computation``. The command lines run their work on a thread with a large
stack and a matching recursion limit instead; inputs nested deeper than
:data:`shardy_ref.parser.reader.MAX_NESTING` levels are rejected with a located error by
the parser (real MLIR has no limit, but its tools overflow their stack: ``sdy_opt``
crashes on 3000 nested ``stablehlo.case`` ops).
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable

STACK_BYTES = 1 << 30  # virtual; only the pages a deep walk touches are committed
RECURSION_LIMIT = 200_000


def run_with_deep_stack(fn: Callable[[], int]) -> int:
    """``fn()`` on a thread with :data:`STACK_BYTES` of stack and a recursion limit of
    :data:`RECURSION_LIMIT`; its exception, if any, is raised here."""
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as e:  # handed to the calling thread
            outcome["error"] = e

    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))  # before the thread starts
    try:
        try:
            threading.stack_size(STACK_BYTES)
            worker = threading.Thread(target=target, name="shardy-ref-command", daemon=True)
            worker.start()
        except (RuntimeError, ValueError):  # no room for such a stack here
            worker = None
        finally:
            threading.stack_size(old_size)
        if worker is None:
            sys.setrecursionlimit(old_limit)
            return fn()
        worker.join()
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
