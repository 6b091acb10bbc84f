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


# -- debug locations ---------------------------------------------------------------------
# MLIR's location attributes (https://mlir.llvm.org/docs/Dialects/Builtin/#location-attributes),
# kept on ops and block arguments only so ``--mlir-print-debuginfo`` can print them back.
# Diagnostics keep using ``Location`` (where the op sits in the text being parsed).


@dataclass(frozen=True, slots=True)
class UnknownLoc:
    """``loc(unknown)``."""

    def children(self) -> tuple:
        return ()

    def format(self, ref) -> str:
        return "unknown"


@dataclass(frozen=True, slots=True)
class FileLineColLoc:
    """``loc("file":line:col)``."""

    file: str
    line: int
    col: int

    def children(self) -> tuple:
        return ()

    def format(self, ref) -> str:
        return f"{_quote(self.file)}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class NameLoc:
    """``loc("name")`` or ``loc("name"(child))``."""

    name: str
    child: object = None

    def children(self) -> tuple:
        return () if self.child is None else (self.child,)

    def format(self, ref) -> str:
        return _quote(self.name) + ("" if self.child is None else f"({ref(self.child)})")


@dataclass(frozen=True, slots=True)
class CallSiteLoc:
    """``loc(callsite(callee at caller))``."""

    callee: object
    caller: object

    def children(self) -> tuple:
        return (self.callee, self.caller)

    def format(self, ref) -> str:
        return f"callsite({ref(self.callee)} at {ref(self.caller)})"


@dataclass(frozen=True, slots=True)
class FusedLoc:
    """``loc(fused[a, b])`` or ``loc(fused<metadata>[a, b])``; ``metadata`` is its text."""

    locations: tuple
    metadata: str | None = None

    def children(self) -> tuple:
        return self.locations

    def format(self, ref) -> str:
        meta = "" if self.metadata is None else f"<{self.metadata}>"
        return f"fused{meta}[" + ", ".join(ref(c) for c in self.locations) + "]"


def _quote(s: str) -> str:
    from shardy_ref.ir.builtin_attrs import quote_string
    return quote_string(s)


def inline_location(loc) -> str:
    """The body of ``loc(...)`` with every nested location written out in full."""
    return loc.format(inline_location)


def debug_location_of(loc: Location):
    """The location MLIR's parser gives an op or argument written at ``loc``."""
    if not loc.is_known:
        return UnknownLoc()
    return FileLineColLoc(loc.file, loc.line, loc.col)
