"""Enumerate the chunks of the conformance corpus and ask the oracle to print them.

Shared by ``tools/print_fidelity.py`` and the ``oracle``-marked tests. Chunking follows
``run_conformance.py`` (imported from ``../shared``, never copied): ``// -----`` splits
when a RUN line has ``-split-input-file``; executable tests are cut into their
``//--- name`` parts, which is how upstream feeds them to ``sdy_opt``.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARDY_REF_SHARED", ROOT.parent / "shared"))
CONFORMANCE = SHARED / "conformance"
CORPUS = CONFORMANCE / "corpus"
ORACLE_VENV = Path(os.environ.get("SHARDY_ORACLE_VENV",
                                  Path.home() / ".cache" / "shardy-ref-oracle"))
ORACLE_PY = ORACLE_VENV / "bin" / "python"
CACHE = ROOT / ".cache" / "oracle"


@dataclass(frozen=True, slots=True)
class CorpusChunk:
    file: str          # corpus-relative path
    index: int
    start_line: int
    text: str
    unregistered: bool  # the RUN line passes -allow-unregistered-dialect

    @property
    def id(self) -> str:
        return f"{self.file}:{self.index}"


def _run_conformance():
    sys.path.insert(0, str(CONFORMANCE))
    try:
        import run_conformance
    finally:
        sys.path.pop(0)
    return run_conformance


def corpus_chunks(patterns: list[str] | None = None) -> list[CorpusChunk]:
    """Every chunk of every corpus file (or of the files whose path contains a pattern)."""
    rc = _run_conformance()
    out: list[CorpusChunk] = []
    for rel in rc.all_corpus_files(str(CORPUS)):
        if patterns and not any(p in rel for p in patterns):
            continue
        tf = rc.load_test(str(CORPUS), rel)
        unregistered = any("allow-unregistered-dialect" in r for r in tf.runs)
        if tf.executable:
            out.extend(_split_file_parts(tf.abspath, rel, unregistered))
            continue
        for ch in tf.chunks:
            out.append(CorpusChunk(rel, ch.index, ch.start_line, ch.text, unregistered))
    return out


def _split_file_parts(abspath: str, rel: str, unregistered: bool) -> list[CorpusChunk]:
    lines = Path(abspath).read_text(encoding="utf-8").split("\n")
    parts: list[CorpusChunk] = []
    start, body = None, []
    for i, line in enumerate([*lines, "//--- <end>"]):
        if line.startswith("//--- "):
            if start is not None:
                text = "\n".join(body) + "\n"
                parts.append(CorpusChunk(rel, len(parts), start, text, unregistered))
            start, body = i + 2, []
        elif start is not None:
            body.append(line)
    if not parts:
        parts.append(CorpusChunk(rel, 0, 1, "\n".join(lines), unregistered))
    return parts


def oracle_available() -> bool:
    return ORACLE_PY.exists()


def _key(chunk_text: str, unregistered: bool, generic: bool, pipeline: str | None,
         print_flags: dict | None = None) -> str:
    flags = f"{sorted(print_flags.items())}|" if print_flags else ""
    h = hashlib.sha256(f"{unregistered}|{generic}|{pipeline}|{flags}".encode() +
                       chunk_text.encode())
    return h.hexdigest()[:24]


def oracle_print(texts: list[tuple[str, bool]], generic: bool = False,
                 pipeline: str | None = None, print_flags: dict | None = None) -> list[dict]:
    """Oracle results ``{"ok", "out", "err"}`` for ``(text, allow_unregistered)`` pairs, cached.
    ``print_flags``: more keyword arguments of MLIR's ``Operation.get_asm`` (Python API)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    keys = [_key(t, u, generic, pipeline, print_flags) for t, u in texts]
    missing = [(k, t, u) for k, (t, u) in zip(keys, texts) if not (CACHE / f"{k}.json").exists()]
    if missing:
        jobs = [{"id": k, "text": t, "unregistered": u, "generic": generic, "pipeline": pipeline,
                 "print_flags": print_flags or {}}
                for k, t, u in {m[0]: m for m in missing}.values()]
        proc = subprocess.run([str(ORACLE_PY), str(ROOT / "tools" / "oracle_batch.py")],
                              input=json.dumps(jobs), capture_output=True, text=True, check=True)
        for k, res in json.loads(proc.stdout).items():
            (CACHE / f"{k}.json").write_text(json.dumps(res))
    return [json.loads((CACHE / f"{k}.json").read_text()) for k in keys]
