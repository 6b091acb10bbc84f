"""ODS ``ConfinedAttr<I64Attr, [IntPositive|IntNonNegative]>`` constraints of StableHLO ops
that the oracle differential (tests/oracle_reject.py) found unchecked: an attribute of
another integer type, or out of range. Messages and locations are real MLIR's."""
from __future__ import annotations

import pytest

from shardy_ref.tools.opt import Chunk, Options, process_chunk

CONV = ('func.func @f(%a: tensor<1x4x4x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {\n'
        '  %0 = "stablehlo.convolution"(%a, %k) {batch_group_count = 1 : i64, dimension_numbers = '
        '#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = {}} : '
        '(tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>\n'
        '  return %0 : tensor<1x2x2x4xf32>\n}\n')
A2A = ('func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = "stablehlo.all_to_all"(%a) '
       '<{concat_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>, '
       'split_count = {}, split_dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>\n'
       '  return %0 : tensor<4xf32>\n}\n')
POSITIVE = "failed to satisfy constraint: 64-bit signless integer attribute whose value is positive"

CASES = [
    (CONV.replace("{}", "0 : i64"), 2, 8,
     f"'stablehlo.convolution' op attribute 'feature_group_count' {POSITIVE}"),
    (CONV.replace("{}", "1 : i32"), 2, 8,
     f"'stablehlo.convolution' op attribute 'feature_group_count' {POSITIVE}"),
    (A2A.replace("{}", "1 : i1"), 2, 8,
     f"'stablehlo.all_to_all' op attribute 'split_count' {POSITIVE}"),
]


@pytest.mark.parametrize(("text", "line", "col", "message"), CASES)
def test_i64_attr_constraints(text, line, col, message):
    out, diagnostics = process_chunk(Chunk(text, 1), Options(), "t.mlir")
    assert out is None
    d = diagnostics[0]
    assert (d.location.line, d.location.col, d.message) == (line, col, message)


def test_valid_counts_accepted():
    out, diagnostics = process_chunk(Chunk(CONV.replace("{}", "1 : i64"), 1), Options(), "t.mlir")
    assert out is not None and not diagnostics


@pytest.mark.oracle
def test_cases_are_the_oracles():
    """The twin: real Shardy prints the same first error line for every case."""
    from tests.oracle_reject import Input, oracle_verdicts

    inputs = [Input(str(i), c[0], False) for i, c in enumerate(CASES)]
    got = [v.first for v in oracle_verdicts(inputs)]
    assert got == [f"{line}:{col}: {message}" for _, line, col, message in CASES]
