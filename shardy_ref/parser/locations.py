"""Parse the body of a ``loc(...)`` into a debug location (MLIR's location attribute syntax,
https://mlir.llvm.org/docs/Dialects/Builtin/#location-attributes).

The grammar reads a ``loc(...)`` as one token; this small recursive-descent reader splits
it, so ``#loc`` aliases can be resolved after the whole file (they are usually defined at
its end).
"""
from __future__ import annotations

import re

from shardy_ref.ir.location import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc, UnknownLoc
from shardy_ref.parser import literals as lit

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<int>\d+)|(?P<alias>#[\w$.-]+)'
                    r"|(?P<word>[A-Za-z_]\w*)|(?P<punct>[()\[\],:<>]))")


class LocationSyntaxError(Exception):
    """A malformed location; ``offset`` counts characters into the ``loc(...)`` text."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset


class _Reader:
    def __init__(self, text: str, alias):
        self.text = text
        self.pos = 0
        self.alias = alias  # "#name" -> location, raising KeyError when undefined

    def peek(self):
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            return None, None, self.pos
        return m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)

    def take(self):
        kind, value, start = self.peek()
        if kind is None:
            raise LocationSyntaxError(self.pos, "expected location instance")
        self.pos = _TOKEN.match(self.text, self.pos).end()
        return kind, value, start

    def expect(self, punct: str) -> None:
        _, value, start = self.peek()
        if value != punct:
            raise LocationSyntaxError(start, f"expected '{punct}' in location")
        self.take()

    def location(self):
        kind, value, start = self.take()
        if kind == "str":
            return self._string_location(lit.unquote(value))
        if kind == "alias":
            try:
                return self.alias(value)
            except KeyError:
                raise LocationSyntaxError(
                    start, f"undefined symbol alias id '{value[1:]}'") from None
        if value == "unknown":
            return UnknownLoc()
        if value == "callsite":
            self.expect("(")
            callee = self.location()
            kind, value, start = self.take()
            if value != "at":
                raise LocationSyntaxError(start, "expected 'at' in callsite location")
            caller = self.location()
            self.expect(")")
            return CallSiteLoc(callee, caller)
        if value == "fused":
            return self._fused()
        raise LocationSyntaxError(start, "expected location instance")

    def _string_location(self, name: str):
        value = self.peek()[1]
        if value == ":":
            self.take()
            line = self._integer("line")
            self.expect(":")
            return FileLineColLoc(name, line, self._integer("column"))
        if value == "(":
            self.take()
            child = self.location()
            self.expect(")")
            return NameLoc(name, child)
        return NameLoc(name)

    def _integer(self, what: str) -> int:
        kind, value, start = self.take()
        if kind != "int":
            raise LocationSyntaxError(start, f"expected integer {what} number in location")
        return int(value)

    def _fused(self):
        metadata = None
        if self.peek()[1] == "<":
            start = self.take()[2] + 1
            depth, i = 1, start
            while i < len(self.text) and depth:
                depth += {"<": 1, ">": -1}.get(self.text[i], 0)
                i += 1
            if depth:
                raise LocationSyntaxError(start, "expected '>' after fused location metadata")
            metadata = self.text[start:i - 1]
            self.pos = i
        self.expect("[")
        locations = [self.location()]
        while self.peek()[1] == ",":
            self.take()
            locations.append(self.location())
        self.expect("]")
        return FusedLoc(tuple(locations), metadata)


def parse_location(text: str, alias):
    """The location written as ``loc(...)`` in ``text``; ``alias("#name")`` resolves aliases."""
    reader = _Reader(text, alias)
    reader.pos = text.index("(") + 1
    loc = reader.location()
    reader.expect(")")
    if reader.pos != len(text):
        raise LocationSyntaxError(reader.pos, "unexpected text after location")
    return loc
