"""``sdy-pre-order-funcs``: functions move, callers first, to the end of the module.

Upstream's pass is *not* idempotent: functions nobody calls are the call graph's roots,
taken in module order, and pre order reverses them, so a second run flips them back
(:func:`test_not_idempotent_on_several_roots`). The property checked instead is that the
output is a permutation with every caller before its callees.
"""
from __future__ import annotations

import random

import corpus
import pytest
from hypothesis import given, settings

from shardy_ref.ir.call_graph import CALL_OP, callee_name
from shardy_ref.ir.symbols import symbol_name
from shardy_ref.parser import parse_module

from .pass_helpers import run_pipeline
from .strategies_call_graph import call_graph_module, call_graph_modules


def func(name: str, calls=(), private: bool = False) -> str:
    body = "".join(f"  func.call @{c}() : () -> ()\n" for c in calls)
    return f"func.func {'private ' if private else ''}@{name}() {{\n{body}  return\n}}\n"


def order(text: str) -> list[str]:
    module = parse_module(text, "t.mlir")
    return [symbol_name(op) for op in module.regions[0].blocks[0]]


def pre_order(text: str) -> str:
    return run_pipeline(text, "sdy-pre-order-funcs")


def test_callers_before_callees():
    text = func("leaf", private=True) + func("mid", ["leaf"], True) + func("main", ["mid"])
    assert order(pre_order(text)) == ["main", "mid", "leaf"]


def test_meshes_and_declarations_stay_in_front():
    text = (func("b", private=True) + 'sdy.mesh @m = <["x"=2]>\n' + func("main", ["b", "d"])
            + "func.func private @d()\n")
    assert order(pre_order(text)) == ["m", "d", "main", "b"]


def test_callee_shared_by_two_callers_comes_after_both():
    text = func("c", private=True) + func("a", ["c"]) + func("b", ["c"])
    assert order(pre_order(text)) == ["b", "a", "c"]


def test_not_idempotent_on_several_roots():
    once = pre_order(func("a") + func("b"))
    assert order(once) == ["b", "a"]
    assert order(pre_order(once)) == ["a", "b"]


def _callers_first(text: str) -> None:
    """Every defined callee comes after each of its callers (declarations never move)."""
    module = parse_module(text, "t.mlir")
    ops = list(module.regions[0].blocks[0])
    position = {symbol_name(op): i for i, op in enumerate(ops)}
    defined = {symbol_name(op) for op in ops if op.regions and op.regions[0].blocks}
    for op in ops:
        for call in op.walk():
            if call.name == CALL_OP and callee_name(call) in defined:
                assert position[symbol_name(op)] < position[callee_name(call)]


@settings(max_examples=40, deadline=None)
@given(call_graph_modules())
def test_permutation_with_callers_first(text):
    out = pre_order(text)  # verifies after the pass
    assert sorted(order(out), key=str) == sorted(order(text), key=str)
    _callers_first(out)


@pytest.mark.oracle
def test_random_call_graphs_order_like_real_shardy():
    texts = [call_graph_module(random.Random(seed)) for seed in range(40)]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline="builtin.module(sdy-pre-order-funcs)")
    for text, ref in zip(texts, refs):
        assert ref["ok"], ref["err"]
        assert pre_order(text) == ref["out"], text
