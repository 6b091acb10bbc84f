"""The whole-op shortcut of the fused loop (shardy_ref/parser/op_shortcut.py) changes
nothing but speed: with it and without it, every text gives the same ops, locations,
operand bindings, diagnostics and errors."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.parser import op_shortcut, reader
from shardy_ref.parser.printer import print_module
from shardy_ref.testing.programs import programs

ROOT = Path(__file__).resolve().parents[2]
MLIR_FILES = sorted(p for d in ("examples", "docs", "tests") for p in (ROOT / d).rglob("*.mlir"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import parse_print  # noqa: E402  (the benchmark's module of transformer-like layers)


def _outcome(text: str, shortcuts: bool, unregistered: bool = False) -> str:
    """The module printed with locations, every op's position, and the diagnostics of
    ``text``; or its error."""
    diagnostics: list = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(reader, "SHORTCUTS", shortcuts)
        try:
            module = reader.parse_module(text, "in.mlir", diagnostics=diagnostics,
                                         allow_unregistered=unregistered)
        except Exception as e:
            return f"{type(e).__name__}: {e}"
    positions = [f"{op.name}@{op.location}" for op in module.walk()]
    return "\n".join([print_module(module, debug_info=True), print_module(module, generic=True),
                      *positions, *map(str, diagnostics)])


def _read_by_shortcut(text: str, monkeypatch) -> int:
    """How many ops of ``text`` the shortcut read."""
    read = op_shortcut.OpShortcut.read
    count = 0

    def counting(self, *args):
        nonlocal count
        phrase = read(self, *args)
        count += phrase is not None
        return phrase
    with monkeypatch.context() as m:
        m.setattr(op_shortcut.OpShortcut, "read", counting)
        reader.parse_module(text)
    return count


def test_benchmark_layers_are_read_by_the_shortcut_and_parse_identically(monkeypatch):
    text, _ = parse_print.generate(200)
    layers = text.count("func.func")
    # per layer: 2 dot_general, 8 other ops of the shared shape and 2 constants
    assert _read_by_shortcut(text, monkeypatch) >= 14 * (layers - 1)
    assert _outcome(text, True) == _outcome(text, False)


def test_repository_mlir_files_parse_identically(monkeypatch):
    read = 0
    for path in MLIR_FILES:
        text = path.read_text()
        for chunk in [text, *text.split("// -----")] if "// -----" in text else [text]:
            assert _outcome(chunk, True, True) == _outcome(chunk, False, True), path
            read += _read_by_shortcut(chunk, monkeypatch) if "stablehlo." in chunk else 0
    assert read > 100


EDGE_CASES = [
    # errors raised while building: the loop raises them, or an earlier syntax error
    "func.func @f() {\n  %0 = stablehlo.add %y, %y : tensor<f32>\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a : tensor<f32>\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<f32>\n  $\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a : tensor<f32>\n  $\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0#1 = stablehlo.add %a, %a : tensor<f32>\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.nonsense %a, %a : tensor<f32>\n}\n",
    "func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.transpose %a, dims = [99999999999999"
    "999999] : (tensor<2xf32>) -> tensor<2xf32>\n}\n",
    "func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.transpose %a, permutation = [0] : "
    "(tensor<2xf32>) -> tensor<2xf32>\n}\n",
    "func.func @f() {\n  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n}\n",
    "func.func @f() {\n  %0 = stablehlo.constant dense<0.0> : tensor<f32>, tensor<f32>\n}\n",
    # what could still belong to the op: a location, more types, an attr-dict
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<f32> loc(\"x\":1:2)"
    "\n  return\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<f32> // c\n"
    "  loc(#l)\n  return\n}\n#l = loc(\"y\":3:4)\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<f32>, tensor<f32>\n}\n",
    "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a {x = 1} : tensor<f32>\n}\n",
    # names that are other terminals where the op name stands, and odd clause keys
    "func.func @f(%a: tensor<2xf32>, %i: tensor<f32>) {\n  %0 = stablehlo.reduce %a, %i : "
    "tensor<f32>\n}\n",
    "func.func @f(%a: tensor<2x3xf32>) {\n  %0 = stablehlo.transpose %a, x = [1, 0] : "
    "(tensor<2x3xf32>) -> tensor<3x2xf32>\n}\n",
    "func.func @f(%a: tensor<2x3xf32>) {\n  %0 = stablehlo.transpose %a, dims = [1, 0] x [] :"
    " (tensor<2x3xf32>) -> tensor<3x2xf32>\n}\n",
    "func.func @f(%a: tensor<2x3xf32>) {\n  %0 = stablehlo.transpose %a, dims = [] : "
    "(tensor<2x3xf32>) -> tensor<3x2xf32>\n}\n",
    "func.func @f(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %a : () -> tensor<2xf32>\n}\n",
    "func.func @f(%a: tensor<2xf32>) {\n  %0 = func.call %a, %a : tensor<2xf32>\n}\n",
    "%0 = stablehlo.constant dense<1> : tensor<i32>\n",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_give_the_same_outcome(text):
    assert _outcome(text, True) == _outcome(text, False)


@settings(max_examples=25, deadline=None)
@given(programs(max_ops=12, sharding_groups=True, manual_computations=True,
                control_flow=True, calls=True, priorities=True, ops=True))
def test_random_programs_parse_identically(text):
    assert _outcome(text, True) == _outcome(text, False)


def _broken(text: str, rng: random.Random) -> str:
    """``text`` with one character deleted, doubled or replaced (in an op line, mostly)."""
    starts = [i for i in range(len(text)) if text.startswith("%", i)] or [0]
    i = min(rng.choice(starts) + rng.randrange(40), len(text) - 1)
    return rng.choice((text[:i] + text[i + 1:], text[:i] + text[i] + text[i:],
                       text[:i] + rng.choice("%@#<>{}()[]:,=x-\"/ \n0") + text[i + 1:]))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_broken_op_lines_give_the_same_errors(seed):
    rng = random.Random(seed)
    text, _ = parse_print.generate(40)
    for _ in range(3):
        broken = _broken(text, rng)
        assert _outcome(broken, True) == _outcome(broken, False)
