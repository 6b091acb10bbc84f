"""Every verifier rule of spec 003 has a passing and a failing example (tests/ir/verify_cases).
"""
from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

from shardy_ref.tools.opt import Chunk, Options, process_chunk
from tests.conftest import SHARED
from tests.ir import verify_cases

SPEC = SHARED / "spec" / "003_dialect_reference.md"


def all_cases() -> dict:
    cases = {}
    for info in pkgutil.iter_modules(verify_cases.__path__):
        module = importlib.import_module(f"tests.ir.verify_cases.{info.name}")
        for rule, case in module.CASES.items():
            assert rule not in cases, f"{rule} defined twice"
            cases[rule] = case
    return cases


def spec_rule_ids() -> set[str]:
    text = SPEC.read_text(encoding="utf-8")
    return set(re.findall(r"^\| ([A-Z0-9]+-[0-9]+[a-z]?) \|", text, flags=re.M))


def _errors(text: str):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(allow_unregistered=True), "t.mlir")
    return out, [d for d in diagnostics if d.severity == "error"]


@pytest.mark.skipif(not SPEC.exists(), reason="../shared/spec is absent")
def test_every_spec_rule_has_cases():
    missing = sorted(spec_rule_ids() - set(all_cases()))
    assert not missing, f"rules of spec 003 without verifier cases: {missing}"


@pytest.mark.parametrize(("rule", "case"), sorted(all_cases().items()))
def test_rule(rule, case):
    out, errors = _errors(case.valid)
    assert out is not None and not errors, f"{rule}: valid example rejected: {errors}"
    out, errors = _errors(case.invalid)
    if case.not_enforced is not None:
        assert case.message is None
        assert out is not None and not errors, f"{rule}: upstream accepts this: {errors}"
        return
    assert out is None and errors, f"{rule}: invalid example accepted"
    assert case.message in errors[0].message, f"{rule}: got {errors[0].message!r}"
