"""Shortcuts of one propagation step: :meth:`OpBasedDirection.bind` (op-level schedules
asked once per step) and :meth:`OpBasedDirection.along_factors` (all factors at once, the
op-level schedules up to BOTH) give what calling the direction per factor gives, and the
propagator's cache of ops without a rule and its no-change memo
(``Propagator._repeats_no_change``, which skips only steps that would change nothing) and
its fixed-point test (``BasicFactorPropagation.is_fixed_point``, which skips the factor
propagation of a step no direction could change) leave the pipeline's output unchanged."""
from __future__ import annotations

import glob
import os

import pytest

from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.parser.printer import print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline
from shardy_ref.propagate.basic_factor_propagation import BasicFactorPropagation
from shardy_ref.propagate.basic_propagation import Propagator, propagate_any
from shardy_ref.propagate.op_priority_propagation import (
    OP_PROPAGATION_SCHEDULE,
    OpBasedDirection,
    op_based_direction,
)
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILES = sorted(glob.glob(f"{ROOT}/examples/*.mlir") + glob.glob(f"{ROOT}/examples/jax/*.mlir")
               + glob.glob(f"{ROOT}/examples/shard_map/*.mlir"))


def _forward_only(op, factor: int) -> PropagationDirection:
    return PropagationDirection.FORWARD if factor % 2 else PropagationDirection.BOTH


@pytest.mark.parametrize("outer", [propagate_any, _forward_only])
def test_bound_direction_is_the_per_factor_direction(outer):
    checked = 0
    for path in FILES:
        module = parse_module(open(path).read())
        for op in module.walk():
            rule = get_or_create_sharding_rule(op)
            factors = len(rule.factor_sizes) if rule is not None else 2
            for priority in range(len(OP_PROPAGATION_SCHEDULE)):
                direction = op_based_direction(priority, outer)
                bound = direction.bind(op)
                assert [bound(f) for f in range(factors)] == \
                    [direction(op, f) for f in range(factors)], (path, op.name, priority)
                if rule is not None:
                    blocked = rule.blocked_propagation_factors
                    assert direction.along_factors(op, rule) == tuple(
                        PropagationDirection.NONE if f in blocked else direction(op, f)
                        for f in range(factors)), (path, op.name, priority)
                checked += 1
    assert checked > 1000


def _propagated(text: str) -> str:
    module = parse_module(text)
    PassManager(parse_pipeline("sdy-propagation-pipeline"), verify=verify_module).run(
        module, PassContext())
    return print_module(module)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_same_output_without_the_shortcuts(path, monkeypatch):
    text = open(path).read()
    fast = _propagated(text)
    monkeypatch.setattr(Propagator, "_op_direction",
                        lambda self, op: lambda factor: self.direction(op, factor))
    monkeypatch.delattr(OpBasedDirection, "along_factors")
    original = Propagator.propagate_registered_op

    def uncached(self, op):
        self._no_rule.clear()
        return original(self, op)

    monkeypatch.setattr(Propagator, "propagate_registered_op", uncached)
    assert fast == _propagated(text)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_same_output_without_the_no_change_memo(path, monkeypatch):
    text = open(path).read()
    memoised = _propagated(text)
    monkeypatch.setattr(Propagator, "_repeats_no_change", lambda *_: False)
    assert memoised == _propagated(text)
    monkeypatch.setattr(BasicFactorPropagation, "is_fixed_point", lambda *_: False)
    assert memoised == _propagated(text)
