"""Differential test: for every corpus chunk real Shardy accepts, we print what it prints.

Marker ``oracle``: needs jaxlib's Shardy (``../shared/oracle/setup``); skipped without it.
The same comparison, with a per-chunk report, is ``python tools/print_fidelity.py``.
"""
from __future__ import annotations

import corpus
import print_fidelity
import pytest

THRESHOLD = 0.95  # issue 2: at least 95% of oracle-accepted chunks print identically


@pytest.mark.oracle
@pytest.mark.parametrize("generic", [False, True], ids=["pretty", "generic"])
def test_corpus_prints_like_real_shardy(generic):
    chunks = corpus.corpus_chunks()
    oracle = corpus.oracle_print([(c.text, c.unregistered) for c in chunks], generic=generic)
    accepted = same = 0
    mismatches = []
    for chunk, ref in zip(chunks, oracle):
        if not ref["ok"]:
            continue
        accepted += 1
        ok, out, _ = print_fidelity.ours_in_process(chunk.text, chunk.unregistered, generic)
        if ok and out == ref["out"]:
            same += 1
        else:
            mismatches.append(chunk.id)
    print(f"print fidelity ({'generic' if generic else 'pretty'}): {same}/{accepted} "
          f"= {100 * same / accepted:.1f}%")
    assert accepted > 800
    assert same / accepted >= THRESHOLD, mismatches[:20]
