"""Progress of ``shardy-ref fuzz``: a rich progress bar per invariant on a terminal (rich is
imported only then), one plain line per finished invariant otherwise."""
from __future__ import annotations

import importlib.util
import sys
from contextlib import contextmanager


def summary(outcome) -> str:
    """``roundtrip: 100 programs, ok (1.2 s, 83/s)``, with how many were not applicable."""
    rate = outcome.examples / outcome.seconds if outcome.seconds else 0.0
    status = "ok" if outcome.message is None else "FAILED"
    skipped = (f", {outcome.skipped} not applicable (e.g. {outcome.skip_reason})"
               if outcome.skipped else "")
    return (f"{outcome.name}: {outcome.examples} programs{skipped}, {status} "
            f"({outcome.seconds:.1f} s, {rate:.0f}/s)")


class PlainReport:
    def __init__(self, out):
        self.out = out

    def advance(self, name: str) -> None:
        pass

    def finish(self, outcome) -> None:
        self.out.write(summary(outcome) + "\n")
        self.out.flush()


class RichReport:
    def __init__(self, progress, names: list[str], total: int):
        self.progress = progress
        self.total = total
        self.tasks = {n: progress.add_task(n, total=total) for n in names}

    def advance(self, name: str) -> None:
        task = self.tasks[name]
        if self.progress.tasks[task].completed < self.total:  # shrinking runs past the total
            self.progress.advance(task)

    def finish(self, outcome) -> None:
        self.progress.update(self.tasks[outcome.name], completed=self.total,
                             description=summary(outcome))


@contextmanager
def reporter(names: list[str], total: int, out=None):
    """A report with ``advance(name)`` per program and ``finish(outcome)`` per invariant."""
    out = out if out is not None else sys.stdout
    if not out.isatty() or importlib.util.find_spec("rich") is None:
        yield PlainReport(out)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()) as p:
        yield RichReport(p, names, total)
