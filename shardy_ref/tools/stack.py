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
INTERRUPT_GRACE = 5.0  # seconds the command's thread gets to stop after Ctrl-C


def run_with_deep_stack(fn: Callable[[], int]) -> int:
    """``fn()`` on a thread with :data:`STACK_BYTES` of stack and a recursion limit of
    :data:`RECURSION_LIMIT`; its exception, if any, is raised here. A ``KeyboardInterrupt``
    (Ctrl-C, which Python delivers to the main thread, waiting here) is raised in that
    thread too before it is raised here: see :func:`_interrupt`."""
    outcome: dict = {}
    done = threading.Event()

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as e:  # handed to the calling thread
            outcome["error"] = e
        finally:
            done.set()

    old_limit, old_size = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))  # before the thread starts
    worker = None
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
        while not done.wait(0.25):  # timed: a Ctrl-C just as the wait starts is not lost
            pass
    except KeyboardInterrupt:  # Ctrl-C: only the main thread hears it
        if worker is not None:
            _interrupt(worker, done)
        raise
    finally:
        sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _interrupt(worker: threading.Thread, done: threading.Event) -> None:
    """Raise ``KeyboardInterrupt`` in ``worker`` and give it :data:`INTERRUPT_GRACE`
    seconds to unwind, so that the command stops where it is: its ``finally`` blocks run
    (a half-written output's temporary file is removed, child processes are stopped) and it
    does not go on to replace an output file after the interrupt was reported. A thread
    inside a long C call (a NumPy kernel) sees it when the call returns; a second Ctrl-C
    stops waiting. Where Python cannot raise it (in a weakref callback, as imports run
    them) it is dropped, not printed, and raised again. (``done`` is set as ``worker``
    ends: Python 3.11's ``Thread.join``, once interrupted, takes the thread for ended.)"""
    import ctypes
    import time

    if worker.ident is None:
        return
    dropped = threading.Event()
    report_unraisable = sys.unraisablehook

    def drop_ours(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            dropped.set()
        else:
            report_unraisable(unraisable)

    sys.unraisablehook = drop_ours
    deadline = time.monotonic() + INTERRUPT_GRACE
    dropped.set()
    try:
        while not done.is_set() and time.monotonic() < deadline:
            if dropped.is_set():
                dropped.clear()
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(worker.ident), ctypes.py_object(KeyboardInterrupt))
            done.wait(0.05)
    finally:
        sys.unraisablehook = report_unraisable
