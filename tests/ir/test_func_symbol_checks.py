"""func.func and func.call checks found missing by the oracle differential
(tests/oracle_reject.py): each message and location is real MLIR's (jaxlib 0.10.2)."""
from __future__ import annotations

import pytest

from shardy_ref.tools.opt import Chunk, Options, process_chunk

G = "func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"


def _call(call: str, args: str = "%a: tensor<4xf32>", result: str = "tensor<4xf32>") -> str:
    return (G + f"func.func @f({args}) -> {result} {{\n  {call}\n  return %0 : {result}\n}}\n")


CASES = [
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32>\n", 1, 1,
     "'func.func' op symbol declaration cannot have public visibility"),
    ("func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32> {foo = 1}) {\n"
     "  return %a : tensor<4xf32>\n}\n", 1, 1,
     "'func.func' op results may only have dialect attributes"),
    ("func.func @f(%a: tensor<4xf32> {foo = 1}) -> tensor<4xf32> {\n"
     "  return %a : tensor<4xf32>\n}\n", 1, 1,
     "'func.func' op arguments may only have dialect attributes"),
    (_call("%0 = call @h(%a) : (tensor<4xf32>) -> tensor<4xf32>"), 5, 8,
     "'func.call' op 'h' does not reference a valid function"),
    ('sdy.mesh @h = <["a"=2]>\n' + _call("%0 = call @h(%a) : (tensor<4xf32>) -> tensor<4xf32>"),
     6, 8, "'func.call' op 'h' does not reference a valid function"),
    (_call("%0 = call @g(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>"), 5, 8,
     "'func.call' op incorrect number of operands for callee"),
    (_call("%0 = call @g(%b) : (tensor<2xf32>) -> tensor<4xf32>", "%b: tensor<2xf32>"), 5, 8,
     "'func.call' op operand type mismatch: expected operand type 'tensor<4xf32>', but "
     "provided 'tensor<2xf32>' for operand number 0"),
    (_call("%0:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)")
     .replace("return %0 :", "return %0#0 :"), 5, 10,
     "'func.call' op incorrect number of results for callee"),
    (_call("%0 = call @g(%a) : (tensor<4xf32>) -> tensor<2xf32>", result="tensor<2xf32>"), 5, 8,
     "'func.call' op result type mismatch at index 0"),
]


@pytest.mark.parametrize(("text", "line", "col", "message"), CASES)
def test_func_checks(text, line, col, message):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    assert out is None
    d = diagnostics[0]
    assert (d.location.line, d.location.col, d.message) == (line, col, message)


def test_private_declaration_and_valid_call_accepted():
    text = ("func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32>\n"
            "func.func @f(%a: tensor<4xf32> {sdy.x = 1}) -> tensor<4xf32> {\n"
            "  %0 = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n}\n")
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    assert out is not None and not diagnostics


@pytest.mark.oracle
def test_cases_are_the_oracles():
    """The twin: real Shardy prints the same first error line for every case."""
    from tests.oracle_reject import Input, oracle_verdicts

    inputs = [Input(str(i), c[0], False) for i, c in enumerate(CASES)]
    got = [v.first for v in oracle_verdicts(inputs)]
    assert got == [f"{line}:{col}: {message}" for _, line, col, message in CASES]
