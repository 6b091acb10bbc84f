"""Mutants of the corpus's chunks through the whole path, drawn by hypothesis (issue 15):
every mutant ends as a located error or a clean run; never a traceback, a hang, printed
text that does not parse back, or a partitioned program that computes other values.
CI profile 2,000 mutants; ``HYPOTHESIS_PROFILE=long``: 100,000."""
from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from tests.fuzz_pipeline import BAD, pick_and_mutate, run_one
from tests.profiles import examples

sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
pytestmark = pytest.mark.skipif(not CORPUS.exists(), reason="../shared/conformance is absent")


class _Draws:
    """``randint``/``choice`` answered by hypothesis draws, so failures shrink."""

    def __init__(self, data):
        self.data = data

    def randint(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def choice(self, seq):
        return seq[self.randint(0, len(seq) - 1)]


@pytest.mark.slow
@settings(max_examples=examples(2000, 100_000), database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_mutants_end_in_a_located_error_or_run_cleanly(data):
    text = pick_and_mutate(_Draws(data))
    outcome = run_one(text)
    assert outcome.kind not in BAD, f"{outcome.kind}: {outcome.detail}\n{text}"
