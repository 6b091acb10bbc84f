"""``shardy_ref.testing.shrink``: greedy steps that keep a module valid and failing."""
from __future__ import annotations

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.testing.programs import random_program
from shardy_ref.testing.shrink import shrink


def _ops(text: str) -> list[str]:
    return [op.name for op in parse_module(text, "t.mlir").walk()]


def test_shrink_keeps_what_fails_and_drops_the_rest():
    text = next(t for t in map(random_program, range(100))
                if "stablehlo.multiply" in t and "sdy.sharding_constraint" in t
                and "sdy.sharding =" in t)
    small = shrink(text, lambda t: "stablehlo.multiply" in t)
    verify_module(parse_module(small, "small.mlir"))
    assert "stablehlo.multiply" in small
    assert "sdy.sharding_constraint" not in small and "sdy.sharding =" not in small
    assert len(_ops(small)) < len(_ops(text))


def test_shrink_returns_the_input_when_nothing_smaller_fails():
    text = random_program(1)
    assert shrink(text, lambda t: t == text) == text


def test_shrink_stops_after_max_checks():
    calls = []
    shrink(random_program(2), lambda t: calls.append(t) or True, max_checks=3)
    assert len(calls) == 3
