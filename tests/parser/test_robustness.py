"""Malformed input never crashes the parser: every failure is a located ParseError/VerifyError.

Hypothesis mutates real corpus chunks (delete, duplicate or swap tokens; truncate) and
feeds them through the same path as ``shardy-ref-opt`` (parse, check dialects, verify,
print). Anything other than success or one of our errors with a line number is a bug.
"""
from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardy_ref.tools.opt import Chunk, Options, process_chunk
from tests.conftest import CORPUS

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[\w$.#-]+|@[\w$.-]+|#[\w.]+|![\w.]+|\w+|->|\S')


@cache
def corpus_chunks() -> list[str]:
    """Small chunks of the corpus (``// -----`` pieces), without comment lines."""
    chunks = []
    for path in sorted(CORPUS.rglob("*.mlir")):
        text = path.read_text(encoding="utf-8")
        for piece in re.split(r"^// -----.*$", text, flags=re.M):
            lines = [line for line in piece.split("\n") if not line.lstrip().startswith("//")]
            body = "\n".join(lines).strip()
            if 40 < len(body) < 3000:
                chunks.append(body + "\n")
    return chunks


def _spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


@st.composite
def mutated_chunks(draw) -> str:
    chunks = corpus_chunks()
    text = chunks[draw(st.integers(0, len(chunks) - 1))]
    for _ in range(draw(st.integers(1, 3))):
        spans = _spans(text)
        if not spans:
            break
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate"]))
        i = draw(st.integers(0, len(spans) - 1))
        start, end = spans[i]
        if kind == "delete":
            text = text[:start] + text[end:]
        elif kind == "duplicate":
            text = text[:end] + " " + text[start:end] + text[end:]
        elif kind == "swap":
            j = draw(st.integers(0, len(spans) - 1))
            (a, b), (c, d) = sorted([spans[i], spans[j]])
            if b <= c:
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
        else:
            text = text[:start]
    return text


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/conformance is absent")
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_chunks())
def test_mutated_corpus_chunks_fail_cleanly(text):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(allow_unregistered=True), "fuzz.mlir")
    for d in diagnostics:
        if d.severity == "error":
            assert d.location.line >= 1, f"error without a location: {d}"
    if out is None:
        assert any(d.severity == "error" for d in diagnostics)


def test_process_chunk_reports_our_error_types():
    """process_chunk turns our exceptions into diagnostics; it lets nothing else escape."""
    out, diagnostics = process_chunk(Chunk("func.func @f(", 1), Options(), "x.mlir")
    assert out is None
    assert diagnostics[0].location.line == 1
