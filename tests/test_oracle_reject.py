"""A sample of the oracle differential (tests/oracle_reject.py): corpus chunks and mutants
that real Shardy rejects must be rejected by us too (issue 15)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.oracle


def test_no_input_the_oracle_rejects_is_accepted():
    from tests.oracle_reject import collect, summary

    rows = collect(50, seed=15, jobs=1, corpus_sample=50, log=lambda m: None)
    missed = [(r.input.id, r.oracle.first) for r in rows
              if r.kind in ("ORACLE REJECTS, WE ACCEPT", "our crash") and not r.skew]
    assert missed == []
    assert summary(rows)["oracle_rejects"] >= 50
