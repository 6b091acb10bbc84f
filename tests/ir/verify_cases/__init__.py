"""Positive and negative cases for every verifier rule of spec 003, by rule ID.

Each area module defines ``CASES: dict[str, RuleCase]``; ``tests/ir/test_verify_rules.py``
runs them all and checks that no rule ID of spec 003 is missing.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleCase:
    """``valid`` verifies; ``invalid`` breaks only this rule and fails with ``message``
    (a substring of upstream's diagnostic, the ``'op' op`` prefix included).

    For a rule of the seed that upstream does not enforce (spec 003 says so), ``message``
    is None, ``not_enforced`` says why, and ``invalid`` (which breaks the seed's wording
    of the rule) must verify, as it does upstream."""

    valid: str
    invalid: str
    message: str | None
    not_enforced: str | None = None
