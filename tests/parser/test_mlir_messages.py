"""Parse errors found by the oracle differential (tests/oracle_reject.py) where our message or
location was not MLIR's: each expected (line, col, message) was printed by real MLIR (jaxlib
0.10.2, ``../shared/oracle/sdy_opt``) for the same input."""
from __future__ import annotations

import pytest

from shardy_ref.tools.opt import Chunk, Options, process_chunk

F = "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {{\n{}\n  return %a : tensor<4xf32>\n}}\n"
G = "func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
MESH = 'sdy.mesh @m = <["a"=2, "b"=2]>\n'

CASES = [
    # operand and type counts of custom ops (resolveOperands)
    (F.format("  %0 = call @g() : (tensor<4xf32>) -> tensor<4xf32>"), 2, 16,
     "custom op 'func.call' number of operands and types do not match: got 0 operands and 1 "
     "types"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a, %a : tensor<4xf32>\n}\n",
     2, 10, "custom op 'func.return' number of operands and types do not match: got 2 operands "
     "and 1 types"),
    (F.format("  stablehlo.custom_call @cb(%a, %a) : (tensor<4xf32>) -> ()"), 2, 3,
     "custom op 'stablehlo.custom_call' number of operands and types do not match: got 2 "
     "operands and 1 types"),
    # an empty axis list is no axis list (FieldParser<SmallVector<AxisRefAttr>>)
    (MESH + "func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{}], "
     "unreduced={}>}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n", 2, 83,
     "expected string"),
    (MESH + F.format("  %0 = sdy.sharding_constraint %a <@m, [{}], replicated={}> : "
                     "tensor<4xf32>"), 3, 58,
     "custom op 'sdy.sharding_constraint' expected string"),
    # unknown op names: the default dialect of the enclosing op
    ("foo\n", 1, 1, "custom op 'foo' is unknown (tried 'builtin.foo' as well)"),
    ("module {\n  foo\n}\n", 2, 3, "custom op 'foo' is unknown (tried 'builtin.foo' as well)"),
    (F.format("  %0 = foo %a : tensor<4xf32>"), 2, 8,
     "custom op 'foo' is unknown (tried 'func.foo' as well)"),
    (F.format("  %0 = stablehlo. %a : tensor<4xf32>"), 2, 8,
     "custom op 'stablehlo.' is unknown (tried 'func.stablehlo.' as well)"),
    (F.format("  %0 = foo.bar %a : tensor<4xf32>"), 2, 8,
     "Dialect `foo' not found for custom op 'foo.bar' "),
    (MESH + "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = sdy.manual_computation(%a)"
     " in_shardings=[<@m, [{}]>] out_shardings=[<@m, [{}]>] manual_axes={} (%b: tensor<4xf32>) "
     "{\n    %1 = foo %b : tensor<4xf32>\n    sdy.return %1 : tensor<4xf32>\n  } : "
     "(tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n", 4, 10,
     "Dialect `' not found for custom op 'foo'  (tried '.foo' as well)"),
    # what MLIR's parser functions expect, just after the previous token
    ("func.func @f(%a: tensor<4xf32>) -> -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
     1, 35, "expected non-function type"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor4xf32> {\n  return %a : tensor<4xf32>\n}\n",
     1, 35, "expected non-function type"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32\n}\n",
     2, 27, "expected '>' in tensor type"),
    (F.format("  %0 = stablehlo.abs %a : tensor 4xf32>"), 2, 33, "expected '<' in tensor type"),
    (F.format("  %0 %1 = stablehlo.abs %a : tensor<4xf32>"), 2, 5, "expected '=' after SSA name"),
    ("func.func @f(%a: tensor<4xf32> {sdy.sharding ? 1}) -> tensor<4xf32> {\n"
     "  return %a : tensor<4xf32>\n}\n", 1, 45, "expected '}' in attribute dictionary"),
    (F.format("  %0 = stablehlo.abs %a {.} : tensor<4xf32>"), 2, 27,
     "expected three consecutive dots for an ellipsis"),
    ("func.func private @baz(: tensor<8x2xi32>) -> tensor<8x2xi32>\n", 1, 24,
     "expected non-function type"),
    (F.format("  %0 = stablehlo.abs %a : tensor< <4xf32>"), 2, 34, "expected non-function type"),
    ("func.func @f(%a: tensor<4xf32>) > tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
     1, 32, "expected operation name in quotes"),
    ("sdy.mesh = <[\"a\"=2]>\n", 1, 10,
     "custom op 'sdy.mesh' expected valid '@'-identifier for symbol name"),
    ("func.func (%a: tensor<4xf32>) {\n  return\n}\n", 1, 11,
     "custom op 'func.func' expected valid '@'-identifier for symbol name"),
    ('sdy.mesh @mesh = ["a"=2]>\n', 1, 17, "expected '<'"),
    (F.format("  %0 = stablehlo.abs %a : (tensor<4xf32>) tensor<4xf32>"), 2, 42,
     "expected '->' in function type"),
    ("func.func @f(%a: tensor<4xf32> {sdy.sharding = = 1}) -> tensor<4xf32> {\n"
     "  return %a : tensor<4xf32>\n}\n", 1, 47, "expected attribute value"),
    (F.format("  %0 = stablehlo. .add %a, %a : tensor<4xf32>"), 2, 20,
     "expected three consecutive dots for an ellipsis"),
    ("func.func @f(\n  %a: tensor<4xf32>\n) -> tensor<4xf32> {\n  %0 = stablehlo %a\n}\n",
     4, 8, "custom op 'stablehlo' is unknown (tried 'func.stablehlo' as well)"),
    ("func.func @f() attributes {x = 2 : complex<f32>} {\n  return\n}\n", 1, 32,
     "integer literal not valid for specified type"),
    # at the end of the input: one character back first
    ('sdy.mesh @mesh = <["x"=2]', 1, 25, "expected '>'"),
]


@pytest.mark.parametrize(("text", "line", "col", "message"), CASES)
def test_first_error_as_mlir(text, line, col, message):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    assert out is None
    d = diagnostics[0]
    assert (d.location.line, d.location.col, d.message) == (line, col, message)


@pytest.mark.oracle
def test_cases_are_the_oracles():
    """The twin: real Shardy prints the same first error line for every case."""
    from tests.oracle_reject import Input, oracle_verdicts

    inputs = [Input(str(i), c[0], False) for i, c in enumerate(CASES)]
    got = [v.first for v in oracle_verdicts(inputs)]
    assert got == [f"{line}:{col}: {message}" for _, line, col, message in CASES]
