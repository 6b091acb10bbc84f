"""Faster start-up for Lark's contextual lexer: compile per-state scanners only when hot.

Lark's contextual lexer gives every parser state its own scanner: one regex alternation
of the terminals that state accepts. Compiling those alternations dominates the time to
parse a small module (dozens of states, a few milliseconds each), which matters because
the conformance harness starts ``shardy-ref-opt`` once per test chunk.

:class:`LazyScanner` matches the same way without compiling the alternation at first:
it tries each terminal's own regex in the alternation's order (an alternation matches
with its first alternative that matches, so the result is identical), and builds the
real alternation once the state has been used often enough for it to pay off. Each
terminal's regex is compiled once per process and shared by all states.
"""
from __future__ import annotations

import lark.lexer

HOT_AFTER = 200  # matches served by single regexes before a state compiles its alternation
_single_cache: dict[tuple[str, int], object] = {}


class LazyScanner(lark.lexer.Scanner):
    def __init__(self, terminals, g_regex_flags, re_, use_bytes):
        self.terminals = terminals
        self.g_regex_flags = g_regex_flags
        self.re_ = re_
        self.use_bytes = use_bytes
        self.allowed_types = {t.name for t in terminals}
        self._mres = None
        self._uses = 0
        self._singles = None

    def _single_regexes(self):
        if self._singles is None:
            singles = []
            for t in self.terminals:
                key = (t.pattern.to_regexp(), self.g_regex_flags)
                rx = _single_cache.get(key)
                if rx is None:
                    rx = _single_cache[key] = self.re_.compile(key[0], self.g_regex_flags)
                singles.append((t.name, rx))
            self._singles = singles
        return self._singles

    def match(self, text, pos):
        if self._mres is None:
            self._uses += 1
            if self._uses <= HOT_AFTER or self.use_bytes:
                for name, rx in self._single_regexes():
                    m = rx.match(text.text, pos, text.end)
                    if m:
                        return m.group(0), name
                return None
            self._mres = self._build_mres(self.terminals, len(self.terminals))
        return super().match(text, pos)

    def fullmatch(self, text: str):
        for name, rx in self._single_regexes():
            if rx.fullmatch(text):
                return name
        return None


def install() -> None:
    """Make Lark's lexers build LazyScanners (idempotent)."""
    if lark.lexer.Scanner is not LazyScanner:
        lark.lexer.Scanner = LazyScanner
