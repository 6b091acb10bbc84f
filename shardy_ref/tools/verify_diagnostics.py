"""``-verify-diagnostics``: compare emitted diagnostics with ``expected-*`` annotations.

Annotations follow MLIR's ``SourceMgrDiagnosticVerifierHandler``:
``// expected-error@+1 {{substring}}`` (also ``@-N``, ``@above``, ``@below``, none = same
line; ``-re`` takes ``{{regex}}`` pieces). A diagnostic matches an annotation of the same
severity on its line whose text is a substring of (or regex-matches) the message; each
diagnostic satisfies one annotation. The check fails on any unexpected diagnostic, any
expectation never produced, and any ``-re`` annotation that is not a valid regex.
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
    pattern: re.Pattern | None = None  # the compiled ``-re`` pattern
    problem: str = ""  # why a ``-re`` annotation is unusable (it then matches nothing)

    def __post_init__(self) -> None:
        if self.is_regex:
            try:
                self.pattern = re.compile(_regex_of(self.text))
            except (re.error, OverflowError) as e:
                self.problem = f"invalid regex: {e}"
            except ValueError as e:  # a "{{" with no "}}"
                self.problem = str(e)

    def matches(self, message: str) -> bool:
        if self.problem:
            return False
        if self.pattern is None:
            return self.text in message
        return self.pattern.search(message) is not None


def _regex_of(text: str) -> str:
    """MLIR's ``ExpectedDiag::computeRegex``: literal text escaped, each ``{{re}}`` block
    a group; raises ValueError for a block without ``}}`` and re.error for a bad block."""
    out, pos = [], 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            out.append(re.escape(text[pos:]))
            return "".join(out)
        end = text.find("}}", start + 2)
        if end < 0:
            raise ValueError("found start of regex with no end '}}'")
        block = text[start + 2:end]
        re.compile(block)
        out.append(re.escape(text[pos:start]))
        out.append("(" + block + ")")
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
    """Error lines (``file:line:col: error: ...``) for every mismatch; empty when all agree.

    As MLIR's verifier: a diagnostic satisfies the first expectation on its line that it
    matches with the same severity (one only; a second identical diagnostic finds the same
    one again), else it is a near miss (last match of another severity) or unexpected; an
    unusable ``-re`` annotation is an error of its own.
    """
    errors = [f"{filename}:{e.annotation_line}:{e.annotation_col}: error: {e.problem}"
              for e in expectations if e.problem]
    for diag in _flatten(diagnostics):
        line = diag.location.line if diag.location.is_known else 0
        near_miss = None
        for e in expectations:
            if e.line != line or not e.matches(diag.message):
                continue
            if e.severity == diag.severity:
                e.matched = True
                break
            near_miss = e
        else:
            if near_miss is not None:
                errors.append(f"{filename}:{near_miss.annotation_line}:"
                              f"{near_miss.annotation_col}: error: '{diag.severity}' "
                              f"diagnostic emitted when expecting a '{near_miss.severity}'")
            else:
                errors.append(f"{diag.location}: error: unexpected {diag.severity}: "
                              f"{diag.message}")
    for e in expectations:
        if not e.matched and not e.problem:
            errors.append(f"{filename}:{e.annotation_line}:{e.annotation_col}: error: "
                          f"expected {e.severity} \"{e.text}\" was not produced")
    return errors


def _flatten(diagnostics):
    for d in diagnostics:
        yield d
        yield from d.notes
