"""Issue 28 defect 10: ODS constraints of StableHLO ops that mutated inputs slipped past
our verifier into the passes (as internal errors): region block counts and token operands.
Messages as upstream's (checked against ../shared/oracle/sdy_opt)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.tools import opt

EMPTY_BRANCH = """func.func @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<4xf32>
  }, {
  }) : (tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
TOKEN_GATHER = (
    "func.func @main(%arg0: !stablehlo.token, %arg1: tensor<2x1xi32>) -> tensor<2x4xf32> {\n"
    '  %0 = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<'
    "offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim "
    "= 1>, slice_sizes = array<i64: 1, 4>} : (!stablehlo.token, tensor<2x1xi32>) -> "
    "tensor<2x4xf32>\n"
    "  return %0 : tensor<2x4xf32>\n}\n")
TOKEN_RESULT = """func.func @main(%arg0: tensor<4xf32>) -> !stablehlo.token {
  %0 = "stablehlo.reshape"(%arg0) : (tensor<4xf32>) -> !stablehlo.token
  return %0 : !stablehlo.token
}
"""
TOKENS_WHERE_ALLOWED = """func.func @main(%arg0: !stablehlo.token) -> !stablehlo.token {
  %0 = stablehlo.after_all %arg0, %arg0 : !stablehlo.token
  %1 = stablehlo.optimization_barrier %0 : !stablehlo.token
  return %1 : !stablehlo.token
}
"""
HLO_TENSOR = ("ranked tensor of 4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit "
              "integer or complex type with 32/64-bit float elements or per-tensor integer "
              "quantized values")


@pytest.mark.parametrize(("text", "where", "message"), [
    (EMPTY_BRANCH, (2, 8), "'stablehlo.case' op region #1 ('branches') failed to verify "
                           "constraint: region with 1 blocks"),
    (TOKEN_GATHER, (2, 8), f"'stablehlo.gather' op operand #0 must be {HLO_TENSOR}, but got "
                           "'!stablehlo.token'"),
    (TOKEN_RESULT, (2, 8), "'stablehlo.reshape' op result #0 must be statically shaped or "
                           "single bounded dimension tensor of 4/6/8/16/32/64-bit float or "
                           "bool or 2/4/8/16/32/64-bit integer or complex type with 32/64-bit "
                           "float elements or per-tensor integer quantized or per-axis integer"
                           " quantized values, but got '!stablehlo.token'"),
])
def test_rejected_with_upstreams_message(text, where, message):
    with pytest.raises(VerifyError) as e:
        verify_module(parse_module(text))
    d = e.value.diagnostic
    assert (d.location.line, d.location.col) == where
    assert d.message == message


def test_tokens_where_the_op_takes_them():
    verify_module(parse_module(TOKENS_WHERE_ALLOWED))


@pytest.mark.parametrize("text", [EMPTY_BRANCH, TOKEN_GATHER])
def test_the_pipeline_reports_them_as_input_errors(text, tmp_path, capsys):
    """They used to crash user-priority propagation and the rule builder (exit 70)."""
    path = tmp_path / "m.mlir"
    path.write_text(text)
    assert opt.main([str(path), "-sdy-propagation-pipeline"]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and f"{path}:2:8: error: " in err
