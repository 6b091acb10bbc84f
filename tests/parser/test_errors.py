"""Parse errors carry MLIR's message and MLIR's line:col (each expected pair below was
printed by real MLIR, jaxlib 0.10.2, for the same input)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.diagnostics import ParseError, ShardyRefError
from shardy_ref.tools.opt import Chunk, Options, process_chunk

DIMS_CASCADE = ("failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a "
                "`::llvm::ArrayRef<DimensionShardingAttr>`")

# (text, (line, col), message or the messages of a cascade all at (line, col), notes)
CASES = [
    ('func.func @f() {\n  %0 = "t.x"(%1) : (i32) -> i32\n  return\n}\n',
     (2, 14), "use of undeclared SSA value name", []),
    ('func.func @f() {\n  %0 = "t.x"() : () -> i32\n  %0 = "t.x"() : () -> i32\n  return\n}\n',
     (3, 3), "redefinition of SSA value '%0'", [((2, 3), "previously defined here")]),
    ('func.func @f() {\n  %0 = "t.x"() : () -> i32\n  "t.y"(%0) : (f32) -> ()\n  return\n}\n',
     (3, 9), "use of value '%0' expects different type than prior uses: 'f32' vs 'i32'",
     [((2, 3), "prior use here")]),
    ('func.func @f() {\n  %0:2 = "t.x"() : () -> i32\n  return\n}\n',
     (2, 3), "operation defines 1 results but was provided 2 to bind", []),
    ('func.func @f() {\n  %0 = "t.x"() : () -> ()\n  return\n}\n',
     (2, 3), "cannot name an operation with no results", []),
    ('func.func @f() {\n  func.bogus\n}\n', (2, 3), "custom op 'func.bogus' is unknown", []),
    ('func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<2xi32>\n  return\n}\n',
     (2, 27), "inferred shape of elements literal ([3]) does not match type ([2])", []),
    ('func.func @f(%a i32)\n', (1, 16), "expected ':'", []),
    ('func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.add %a, %a : tensor<f32>\n'
     '  return %0 : tensor<f32>\n\n', (3, 26), "expected operation name in quotes", []),
    ('sdy.mesh @m = <["a"=2]>\nfunc.func @f(%a: tensor<8xf32> {sdy.sharding = '
     '#sdy.sharding<@m, [{"a"}p01]>}) {\n  return\n}\n',
     (2, 75), ("priorities with leading zeros are not allowed, got: p01", DIMS_CASCADE), []),
    ('sdy.mesh @m = <["a"=2]>\nfunc.func @f(%a: tensor<8xf32> {sdy.sharding = '
     '#sdy.sharding<@m, [{"a"}phigh]>}) {\n  return\n}\n',
     (2, 77), ("expecting priority in format 'p<number>', got: phigh", DIMS_CASCADE), []),
    ('func.func @f() attributes {a = 128 : si8} {\n  return\n}\n',
     (1, 32), "integer constant out of range for attribute", []),
    ('func.func @f() attributes {a = "\\q"} {\n  return\n}\n',
     (1, 33), "unknown escape in string literal", []),
    ('func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.add %a, %a : tensor<f32>\n'
     '  return %0 : tensor<i32>\n}\n', (3, 10),
     "use of value '%0' expects different type than prior uses: 'tensor<i32>' vs 'tensor<f32>'",
     [((2, 3), "prior use here")]),
    ('func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.foo %a : tensor<f32>\n  return\n}\n',
     (2, 8), "custom op 'stablehlo.foo' is unknown", []),
    ('func.func @f() {\n  return\n}\nfunc.func @f() {\n  return\n}\n',
     (4, 1), "redefinition of symbol named 'f'", [((1, 1), "see existing symbol definition here")]),
    ("func.func @d() {}\n", (1, 16), "custom op 'func.func' expected non-empty function body", []),
    ("func.func @f(%arg0: tensor<8xf32>) -> tensor<8xi32> {\n  return %arg0 : tensor<8xf32>\n}\n",
     (2, 3), "type of return operand 0 ('tensor<8xf32>') doesn't match function result type "
     "('tensor<8xi32>') in function @f", []),
]


@pytest.mark.parametrize(("text", "where", "message", "notes"), CASES)
def test_errors_match_mlir(text, where, message, notes):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(allow_unregistered=True), "t.mlir")
    assert out is None
    errors = [d for d in diagnostics if d.severity == "error"]
    messages = (message,) if isinstance(message, str) else message
    assert [e.message for e in errors] == list(messages)
    assert all((e.location.line, e.location.col) == where for e in errors)
    assert [((n.location.line, n.location.col), n.message) for n in errors[0].notes] == notes


def test_unregistered_dialect_needs_the_flag():
    text = '"foo.bar"() : () -> ()\n'
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    assert out is None
    assert (diagnostics[0].location.line, diagnostics[0].location.col) == (1, 10)
    assert diagnostics[0].message.startswith("operation being parsed with an unregistered dialect")
    out, _ = process_chunk(Chunk(text, 1), Options(allow_unregistered=True), "t.mlir")
    assert out == 'module {\n  "foo.bar"() : () -> ()\n}\n'


def test_chunk_line_offset_is_applied():
    """Errors in a chunk cut from a larger file name the line of the whole file."""
    _, diagnostics = process_chunk(Chunk("func.func @f(%a i32)\n", 41), Options(), "big.mlir")
    assert str(diagnostics[0].location) == "big.mlir:41:16"


def test_parse_errors_are_project_errors():
    assert issubclass(ParseError, ShardyRefError)
