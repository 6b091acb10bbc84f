"""Malformed input never crashes the parser: every failure is a located ParseError/VerifyError.

``corpus_chunks`` are the seeds of the mutation fuzzer (tests/fuzz_pipeline.py,
tests/test_fuzz_pipeline.py), which feeds mutants through the whole ``shardy-ref-opt`` path.
"""
from __future__ import annotations

import re
from functools import cache

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


def test_process_chunk_reports_our_error_types():
    """process_chunk turns our exceptions into diagnostics; it lets nothing else escape."""
    out, diagnostics = process_chunk(Chunk("func.func @f(", 1), Options(), "x.mlir")
    assert out is None
    assert diagnostics[0].location.line == 1
