"""Memos that live while one pass pipeline runs in this thread (the pass manager opens the
scope): for work repeated after each pass, such as the verifier's checks, which may hold
the module's ops without outliving the run. Here rather than in the pass manager so that
the IR layer (the verifier) can use it without importing passes."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_MEMOS: ContextVar[dict[str, dict] | None] = ContextVar("pipeline_memos", default=None)


@contextmanager
def pipeline_memos() -> Iterator[None]:
    """The scope of :func:`pipeline_memo`'s dicts: a pipeline run (or a test)."""
    token = _MEMOS.set({})
    try:
        yield
    finally:
        _MEMOS.reset(token)


def pipeline_memo(name: str) -> dict | None:
    """A dict named ``name`` that lives while the pipeline running in this thread runs
    (None outside one)."""
    memos = _MEMOS.get()
    return None if memos is None else memos.setdefault(name, {})
