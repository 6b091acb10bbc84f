"""Source locations (``file:line:col``) attached to ops and diagnostics."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Location:
    """A 1-based line and column in a named source buffer."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file or "<unknown>"
        return f"{self.file}:{self.line}:{self.col}"

    @property
    def is_known(self) -> bool:
        return self.line > 0


UNKNOWN_LOC = Location("<unknown>", 0, 0)
