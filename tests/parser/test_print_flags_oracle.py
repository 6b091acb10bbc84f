"""Differential test of mlir-opt's printing flags: ``--mlir-print-debuginfo`` (``#loc``
aliases), with ``--mlir-print-local-scope`` (locations inline) and
``--mlir-elide-elementsattrs-if-larger``, against MLIR's own printer (jaxlib's Python API,
``Operation.get_asm``) over the corpus chunks real Shardy accepts.

Marker ``oracle``: needs jaxlib (``../shared/oracle/setup``); skipped without it. Every
third chunk, to keep the suite's time down.
"""
from __future__ import annotations

from pathlib import Path

import corpus
import pytest

from shardy_ref.parser import parse_module, print_module

MODES = {
    "debuginfo": ({"enable_debug_info": True}, {"debug_info": True}),
    "local-scope": ({"enable_debug_info": True, "use_local_scope": True},
                    {"debug_info": True, "local_scope": True}),
    "elide-4": ({"large_elements_limit": 4}, {"elide_elements_larger_than": 4}),
}


@pytest.mark.oracle
@pytest.mark.parametrize("mode", list(MODES))
def test_printing_flags_print_like_mlir(mode):
    theirs_flags, ours_flags = MODES[mode]
    chunks = corpus.corpus_chunks()[::3]
    oracle = corpus.oracle_print([(c.text, c.unregistered) for c in chunks],
                                 print_flags=theirs_flags)
    accepted, mismatches = 0, []
    for chunk, ref in zip(chunks, oracle):
        if not ref["ok"]:
            continue
        accepted += 1
        try:  # MLIR's Python API names the buffer "-"
            module = parse_module(chunk.text, "-", allow_unregistered=chunk.unregistered)
            ours = print_module(module, **ours_flags)
        except Exception as e:
            ours = f"error: {e}"
        # without aliases MLIR's get_asm ends without a newline; mlir-opt then writes one
        if ours.rstrip("\n") != ref["out"].rstrip("\n"):
            mismatches.append(chunk.id)
    print(f"{mode}: {accepted - len(mismatches)}/{accepted} print as MLIR does")
    assert accepted > 250
    assert not mismatches, mismatches[:20]


DATA = Path(__file__).parent / "data"
LOCATION_FILES = sorted(DATA.glob("locations_*.mlir"))


@pytest.mark.oracle
@pytest.mark.parametrize("local_scope", [False, True], ids=["aliases", "local-scope"])
def test_every_kind_of_location_prints_like_mlir(local_scope):
    """Name, call-site, fused and unknown locations, aliases defined after use, locations
    shared by an op and a block argument, region and reducer arguments."""
    texts = [p.read_text() for p in LOCATION_FILES]
    flags = {"enable_debug_info": True, "use_local_scope": local_scope}
    for path, text, ref in zip(LOCATION_FILES, texts,
                               corpus.oracle_print([(t, False) for t in texts],
                                                   print_flags=flags)):
        assert ref["ok"], ref["err"]
        ours = print_module(parse_module(text, "-"), debug_info=True, local_scope=local_scope)
        assert ours.rstrip("\n") == ref["out"].rstrip("\n"), path.name
