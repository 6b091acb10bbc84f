"""``-verify-diagnostics``: compare emitted diagnostics with ``expected-*`` annotations.

Annotations follow MLIR's ``SourceMgrDiagnosticVerifierHandler``:
``// expected-error@+1 {{substring}}`` (also ``@-N``, ``@above``, ``@below``, none = same
line; ``-re`` takes ``{{regex}}`` pieces). A diagnostic matches an annotation of the same
severity on its line whose text is a substring of (or regex-matches) the message. The
check fails on any unexpected diagnostic and any expectation never produced.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shardy_ref.ir.diagnostics import Diagnostic

_ANNOTATION = re.compile(r"expected-(error|note|remark|warning)(-re)? *"
                         r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@dataclass(slots=True)
class Expectation:
    severity: str
    is_regex: bool
    line: int          # the line the diagnostic must be on (absolute), 0 for @unknown
    text: str
    annotation_line: int
    annotation_col: int
    matched: bool = False

    def matches(self, message: str) -> bool:
        if not self.is_regex:
            return self.text in message
        return re.search(_regex_of(self.text), message) is not None


def _regex_of(text: str) -> str:
    out, pos = [], 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            out.append(re.escape(text[pos:]))
            return "".join(out)
        end = text.find("}}", start + 2)
        out.append(re.escape(text[pos:start]))
        out.append("(" + text[start + 2:end] + ")")
        pos = end + 2


def collect_expectations(text: str, first_line: int = 1) -> list[Expectation]:
    """The ``expected-*`` annotations of a chunk whose first line is ``first_line``."""
    lines = text.split("\n")
    annotated = [_ANNOTATION.search(line.rstrip()) for line in lines]
    out = []
    for i, m in enumerate(annotated):
        if not m:
            continue
        severity, is_re, _, where, message = m.groups()
        if where is None:
            target = i
        elif where == "above":
            target = i - 1
            while target >= 0 and annotated[target]:
                target -= 1
        elif where == "below":
            target = i + 1
            while target < len(lines) and annotated[target]:
                target += 1
        elif where == "unknown":
            target = None
        else:
            target = i + int(where)
        line = 0 if target is None else target + first_line
        out.append(Expectation(severity, bool(is_re), line, message, i + first_line,
                               m.start() + 1))
    return out


def check(diagnostics: list[Diagnostic], expectations: list[Expectation],
          filename: str) -> list[str]:
    """Error lines (``file:line:col: error: ...``) for every mismatch; empty when all agree."""
    errors = []
    for diag in _flatten(diagnostics):
        line = diag.location.line if diag.location.is_known else 0
        candidates = [e for e in expectations if e.line == line and e.matches(diag.message)]
        exact = [e for e in candidates if e.severity == diag.severity]
        if exact:
            for e in exact:
                e.matched = True
            continue
        if candidates:
            e = candidates[0]
            errors.append(f"{filename}:{e.annotation_line}:{e.annotation_col}: error: "
                          f"'{diag.severity}' diagnostic emitted when expecting a '{e.severity}'")
            e.matched = True
            continue
        errors.append(f"{diag.location}: error: unexpected {diag.severity}: {diag.message}")
    for e in expectations:
        if not e.matched:
            errors.append(f"{filename}:{e.annotation_line}:{e.annotation_col}: error: "
                          f"expected {e.severity} \"{e.text}\" was not produced")
    return errors


def _flatten(diagnostics):
    for d in diagnostics:
        yield d
        yield from d.notes
