"""Differential test: the hand-written cases of the family tests get from upstream's
registry exactly the rules the tests expect (so the expectations are upstream's).

Marker ``oracle``: needs jaxlib's Shardy (``../shared/oracle/setup``); skipped without it.
"""
from __future__ import annotations

import random

import pytest

from . import (
    test_broadcast,
    test_collectives,
    test_custom_call,
    test_dot_conv,
    test_pointwise,
    test_reshape,
)
from .rule_helpers import oracle_rules, our_rules, single_op

CASES = [c for m in (test_pointwise, test_collectives, test_broadcast, test_dot_conv,
                     test_reshape, test_custom_call) for c in m.CASES]


@pytest.mark.oracle
@pytest.mark.parametrize("conservative", [False, True])
def test_expectations_are_upstreams(conservative):
    cases = [c for c in CASES if c.conservative == conservative]
    got = oracle_rules([c.text for c in cases], conservative)
    wrong = [(c.name, rules[-1], c.expected) for c, rules in zip(cases, got, strict=True)
             if rules[-1] != c.expected]
    assert not wrong


def _random_reshapes(n: int, seed: int = 5) -> list[str]:
    """``n`` reshape pairs: the same primes grouped into dimensions two random ways."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        primes = [rng.choice([2, 2, 3, 5, 7]) for _ in range(rng.randint(0, 7))]
        shapes = []
        for _ in range(2):
            rng.shuffle(primes)
            shape, cur = [], 1
            for p in primes:
                cur *= p
                if rng.random() < 0.5:
                    shape.append(cur)
                    cur = 1
            if cur > 1:
                shape.append(cur)
            for _ in range(rng.randint(0, 2)):
                shape.insert(rng.randint(0, len(shape)), 1)
            shapes.append("".join(f"{d}x" for d in shape) + "f32")
        t_in, t_out = (f"tensor<{s}>" for s in shapes)
        texts.append(single_op(f"%0 = stablehlo.reshape %arg0 : ({t_in}) -> {t_out}", [t_in],
                               [t_out]))
    return texts


@pytest.mark.oracle
def test_random_reshapes_match_upstream():
    texts = _random_reshapes(80)
    got = oracle_rules(texts)
    wrong = [(t, ours, theirs) for t, theirs in zip(texts, got, strict=True)
             if (ours := our_rules(t)) != theirs]
    assert not wrong
