"""Verifier cases (being written)."""
from tests.ir.verify_cases import RuleCase  # noqa: F401

CASES: dict = {}
