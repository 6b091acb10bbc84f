"""The package and its docs cite only what a reader of the published project can follow:
upstream's public pages (https://openxla.org/shardy/..., https://openxla.org/stablehlo/spec),
upstream files at the pinned commits (openxla/shardy a0277a83e7f8, openxla/stablehlo
3c9301c116f9), or files of this repository. Not the design digests the project was written
from, which do not ship ("spec 000".."spec 004", "seed 00N", "algorithms.md", "003 §2.1"),
nor paths outside the repository ("../shared/STYLE.md", "/work/...").

``../shared/oracle`` and ``../shared/conformance`` are allowed: they name the developer
harness the test suite and tools/ use (``SHARDY_REF_SHARED``, default ``../shared``), not a
document a citation points at.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

UNPUBLISHED = re.compile(
    r"\b(?:spec|seed)s? 00\d"                           # "spec 002 §9", "Seed 001's"
    r"|\b00[0-4] §"                                      # "(003 §2.1-2.5)"
    r"|algorithms\.md"
    r"|shared/spec"
    r"|\.\./shared(?!/(?:oracle|conformance)\b)"         # "../shared/STYLE.md"
    r"|/work/",
    re.IGNORECASE)

def checked_files() -> list[Path]:
    files = sorted((ROOT / "shardy_ref").rglob("*.py")) + sorted((ROOT / "docs").rglob("*.md"))
    readme = ROOT / "README.md"
    return files + ([readme] if readme.exists() else [])


def unpublished_citations() -> list[str]:
    """``path:line: text`` of every line citing something that does not ship."""
    found = []
    for path in checked_files():
        rel = path.relative_to(ROOT).as_posix()
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNPUBLISHED.search(line):
                found.append(f"{rel}:{lineno}: {line.strip()}")
    return found


def test_pattern_flags_digest_citations_and_allows_harness_paths():
    for text in ("(spec 002 §9)", "spec ``algorithms.md`` §5.3", "(seed 003,", "Seed 001's",
                 "Spec 004 §10.", "(003 §2.1-2.5)", "(``../shared/STYLE.md``)",
                 "``/work/notes``", "../shared/spec/003_dialect_reference.md"):
        assert UNPUBLISHED.search(text), text
    for text in ("https://openxla.org/shardy/sdy_dialect#tensorshardingattr",
                 "`../shared/conformance`", "(`../shared/oracle/setup` builds them)",
                 "random seeds", "--seed 7", "spec 3.1 of StableHLO"):
        assert not UNPUBLISHED.search(text), text


def test_sources_cite_only_published_documents():
    found = unpublished_citations()
    assert not found, (
        "cite upstream's public pages (https://openxla.org/shardy/...), upstream files at "
        "the pinned commit, or files of this repository instead of:\n" + "\n".join(found))
