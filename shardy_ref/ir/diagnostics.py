"""Diagnostics and the project's exception types, each carrying a source location.

Messages use upstream's wording so that upstream ``expected-error`` lines match; the
command line prints them as ``file:line:col: error: message`` (mlir-opt's format).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.location import UNKNOWN_LOC, Location


@dataclass(slots=True)
class Diagnostic:
    """One error/warning/remark, with attached notes (``expected-note`` targets)."""

    severity: str  # "error" | "warning" | "remark" | "note"
    location: Location
    message: str
    notes: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        return _printable(f"{self.location}: {self.severity}: {self.message}")

    def render(self, source_lines: list[str] | None = None) -> str:
        """The diagnostic and its notes as mlir-opt writes them to stderr: each message,
        then (given the source) the line it points at and a caret under the column."""
        out = []
        for d in (self, *self.notes):
            out.append(str(d))
            loc = d.location
            if source_lines is not None and loc.is_known and 0 < loc.line <= len(source_lines):
                text = source_lines[loc.line - 1].expandtabs(8)
                out.append(text)
                out.append(" " * (loc.col - 1) + "^")
        return _printable("\n".join(out))


def _printable(text: str) -> str:
    """Bytes of the input that are not UTF-8 (read as lone surrogates) shown as U+FFFD, as
    a terminal shows them, rather than as ``\\udcXX`` escapes."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class ShardyRefError(Exception):
    """Base of the errors this project reports about its input; never a Python bug."""

    severity = "error"
    exit_status = 1  # a command line's exit status when this error ends it

    def __init__(self, location: Location | None, message: str,
                 notes: list[Diagnostic] | None = None):
        super().__init__(message)
        self.location = location if location is not None else UNKNOWN_LOC
        self.message = message
        self.notes = notes or []

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic("error", self.location, self.message, list(self.notes))

    def __str__(self) -> str:
        return _printable(f"{self.location}: error: {self.message}")


class ParseError(ShardyRefError):
    """Malformed input text."""


class VerifyError(ShardyRefError):
    """Well-formed text describing invalid IR (a verifier rule is broken)."""


class PassError(ShardyRefError):
    """A pass cannot handle its input (unsupported construct, bad option, ...)."""


class EntryFunctionError(ShardyRefError):
    """The module has no function to run or show under the name asked for (or it is a
    declaration, with no body to run)."""


class ToolError(ShardyRefError):
    """A problem with a command's own inputs (files, flags), not with the module: no
    location, printed after the command's name (``shardy-ref run: error: ...``)."""

    def __init__(self, message: str):
        super().__init__(None, message)

    def __str__(self) -> str:
        return _printable(self.message)


class UsageError(ToolError):
    """A command line the tool cannot make sense of (an unknown flag, a bad value); exit
    status 2 as argparse's, unless the command says otherwise."""

    exit_status = 2
