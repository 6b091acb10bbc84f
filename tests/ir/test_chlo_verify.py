# ruff: noqa: E501  (expected texts are MLIR's own lines and messages)
"""Verification of CHLO ops: each case is one op in a function with fixed arguments and
the first error upstream reports for it (``None``: valid), as jaxlib 0.10.2's MLIR prints
them (checked against the oracle by the ``oracle``-marked test)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from tests.ir.message_cases import first_error

ARGS = ("%a: tensor<4xf32>, %b: tensor<2x4xf32>, %c: tensor<3xf32>, %i: tensor<4xi32>, "
        "%j: tensor<4xi64>, %p: tensor<4xi1>, %s: tensor<f32>, %l: tensor<2x11x5xf32>, "
        "%r: tensor<3x2x5x7xf32>, %g: tensor<2x3xi64>")

CASES = [
    ('%0 = "chlo.erf"(%i) : (tensor<4xi32>) -> tensor<4xi32>',
     "'chlo.erf' op operand #0 must be tensor of 4/6/8/16/32/64-bit float values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.erf"(%a) : (tensor<4xf32>) -> tensor<5xf32>',
     "'chlo.erf' op requires compatible types for all operands and results"),
    ('%0 = "chlo.erf"(%a) : (tensor<4xf32>) -> tensor<4xf64>',
     "'chlo.erf' op requires compatible types for all operands and results"),
    ('%0 = "chlo.acos"(%i) : (tensor<4xi32>) -> tensor<4xi32>',
     "'chlo.acos' op operand #0 must be tensor of 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.is_inf"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.is_inf' op result #0 must be tensor of bool values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.is_inf"(%a) : (tensor<4xf32>) -> tensor<5xi1>',
     "'chlo.is_inf' op all non-scalar operands/results must have the same shape and base type"),
    ('%0 = "chlo.is_inf"(%i) : (tensor<4xi32>) -> tensor<4xi1>',
     "'chlo.is_inf' op operand #0 must be tensor of 4/6/8/16/32/64-bit float values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.square"(%i) : (tensor<4xi32>) -> tensor<4xi32>',
     "'chlo.square' op operand #0 must be tensor of 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.conj"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     None),
    ('%0 = "chlo._asin_acos_kernel"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'chlo._asin_acos_kernel' op operand #0 must be tensor of complex type with 32/64-bit float elements values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.mulhi"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.mulhi' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.mulhi"(%i, %j) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>',
     "'chlo.mulhi' op requires compatible types for all operands and results"),
    ('%0 = "chlo.next_after"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>',
     "'chlo.next_after' op operand #0 must be tensor of 4/6/8/16/32/64-bit float values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.zeta"(%a, %b) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>',
     "'chlo.zeta' op requires compatible types for all operands and results"),
    ('%0 = "chlo.broadcast_add"(%a, %b) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>',
     "'chlo.broadcast_add' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<3x4xf32>'"),
    ('%0 = "chlo.broadcast_add"(%a, %c) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>',
     None),
    ('%0 = "chlo.broadcast_add"(%a, %i) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
     "'chlo.broadcast_add' op requires compatible element types for all operands and results"),
    ('%0 = "chlo.broadcast_add"(%a, %b) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>',
     None),
    ('%0 = "chlo.broadcast_add"(%a, %b) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>',
     None),
    ('%0 = "chlo.broadcast_add"(%a, %b) {broadcast_dimensions = array<i64: 5>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>',
     None),
    ('%0 = "chlo.broadcast_add"(%a, %b) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf64>',
     "'chlo.broadcast_add' op requires compatible element types for all operands and results"),
    ('%0 = "chlo.broadcast_and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.broadcast_and' op operand #0 must be tensor of bool or 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.broadcast_zeta"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>',
     "'chlo.broadcast_zeta' op operand #0 must be tensor of 4/6/8/16/32/64-bit float values, but got 'tensor<4xi32>'"),
    ('%0 = "chlo.broadcast_complex"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.broadcast_complex' op result #0 must be tensor of complex type with 32/64-bit float elements values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.broadcast_compare"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>',
     "'chlo.broadcast_compare' op requires attribute 'comparison_direction'"),
    ('%0 = "chlo.broadcast_compare"(%a, %a) {comparison_direction = #chlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.broadcast_compare' op result #0 must be tensor of bool values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.broadcast_select"(%a, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.broadcast_select' op operand #0 must be ranked tensor of bool values, but got 'tensor<4xf32>'"),
    ('%0 = "chlo.broadcast_select"(%p, %a, %i) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
     'mismatched operand types'),
    ('%0 = "chlo.broadcast_select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>',
     "'chlo.broadcast_select' op inferred type(s) 'tensor<2x4xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'"),
    ('%0 = "chlo.constant_like"(%a) {value = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>',
     "'chlo.constant_like' op value's type doesn't match element return type"),
    ('%0 = "chlo.constant_like"(%a) {value = 1.0 : f32} : (tensor<4xf32>) -> tensor<5xf32>',
     "'chlo.constant_like' op requires the same shape for all operands and results"),
    ('%0 = "chlo.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf64>',
     "'chlo.constant' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf64>'"),
    ('%0:2 = "chlo.top_k"(%a) {k = 5 : i64} : (tensor<4xf32>) -> (tensor<5xf32>, tensor<5xi32>)',
     "operand's last dimension must be at least 5"),
    ('%0:2 = "chlo.top_k"(%s) {k = 1 : i64} : (tensor<f32>) -> (tensor<1xf32>, tensor<1xi32>)',
     "operand's rank must be at least 1"),
    ('%0:2 = "chlo.top_k"(%a) {k = 2 : i64} : (tensor<4xf32>) -> (tensor<3xf32>, tensor<2xi32>)',
     "'chlo.top_k' op inferred type(s) 'tensor<2xf32>', 'tensor<2xi32>' are incompatible with return type(s) of operation 'tensor<3xf32>', 'tensor<2xi32>'"),
    ('%0:2 = "chlo.top_k"(%a) {k = -1 : i64} : (tensor<4xf32>) -> (tensor<3xf32>, tensor<2xi32>)',
     "'chlo.top_k' op inferred type(s) 'tensor<-1xf32>', 'tensor<-1xi32>' are incompatible with return type(s) of operation 'tensor<3xf32>', 'tensor<2xi32>'"),
    ('%0:2 = "chlo.top_k"(%a) {k = 2 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi64>)',
     "'chlo.top_k' op inferred type(s) 'tensor<2xf32>', 'tensor<2xi32>' are incompatible with return type(s) of operation 'tensor<2xf32>', 'tensor<2xi64>'"),
    ('%0:2 = "chlo.top_k"(%a) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi32>)',
     "'chlo.top_k' op requires attribute 'k'"),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x8xf32>',
     "inferred shape '[2, 11, 7]' is incompatible with return type of operation 'tensor<2x11x8xf32>'"),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'There must be exactly one ragged dimension in the lhs.'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [3], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'Expects lhs_ragged_dim to be in range [0, lhs_rank) i.e. [0, 3). got: 3.'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = []>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'There must be exactly one group dimension in the rhs when the lhs ragged dimension is non-contracting.'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'contracting dimension sizes must match for lhs/rhs'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [1]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'has duplicated dimension from rhs_group_dimensions and rhs_batching_dimensions: 1'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [7]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'Expects rhs_group_dim to be in range [0, rhs_rank) i.e. [0, 4). got: 7.'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [2], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>, precision_config = [#chlo<precision DEFAULT>, #chlo<precision HIGH>, #chlo<precision HIGH>]} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     'expects precision config to be empty or have <= 2 elements, got 3'),
    ('%0 = "chlo.ragged_dot"(%l, %r, %g) : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<2x3xi64>) -> tensor<2x11x7xf32>',
     "'chlo.ragged_dot' op requires attribute 'ragged_dot_dimension_numbers'"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=1 { ^bb0(%x: tensor<f32>, %y: tensor<f32>): stablehlo.return %x, %y : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op scan dimension of operand 0 is out of bounds"),
    ('%0:2 = chlo.scan(%a, %c) inits(%s) dimension=0 { ^bb0(%x: tensor<f32>, %z: tensor<f32>, %y: tensor<f32>): stablehlo.return %x, %y : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op invalid scan dimension size of operand 1"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=0 { ^bb0(%x: tensor<f32>): stablehlo.return %x, %x : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op expects 2 arguments in the body, but got 1"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=0 { ^bb0(%x: tensor<f32>, %y: tensor<i32>): stablehlo.return %x, %x : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op operand and body argument 1 are incompatible"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=0 { ^bb0(%x: tensor<f32>, %y: tensor<f32>): stablehlo.return %x, %x : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<5xf32>, tensor<f32>)',
     "'chlo.scan' op inferred type(s) 'tensor<4xf32>', 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<5xf32>', 'tensor<f32>'"),
    ('%0 = chlo.scan() inits(%s) dimension=0 { ^bb0(%y: tensor<f32>): stablehlo.return %y : tensor<f32> } : (tensor<f32>) -> (tensor<f32>)',
     "'chlo.scan' op at least one of inputs or outputs must be present"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=0 { ^bb0(%x: tensor<f32>, %y: tensor<f32>): stablehlo.return %x : tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<4xf32>', 'tensor<f32>'"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=0 attributes {scan_dim_size = 3 : i64} { ^bb0(%x: tensor<f32>, %y: tensor<f32>): stablehlo.return %x, %y : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op invalid scan dimension size of operand 0"),
    ('%0:2 = chlo.scan(%a) inits(%s) dimension=-1 { ^bb0(%x: tensor<f32>, %y: tensor<f32>): stablehlo.return %x, %y : tensor<f32>, tensor<f32> } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)',
     "'chlo.scan' op attribute 'dimension' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative"),
]

# ragged_dot's group_sizes of other shapes: (type, first error)
GROUP_SIZES = [
    ("tensor<2x4xi64>", "rhs group dimension is expected to have size=4, got 3"),
    ("tensor<3x3xi64>", "group_sizes is expected to have shape [2, 3], got [3, 3]"),
    ("tensor<2x2x3xi64>", "expected group_sizes to have rank 2, got 3"),
    ("tensor<2x3xf32>", "'chlo.ragged_dot' op operand #2 must be ranked tensor of "
                        "2/4/8/16/32/64-bit integer values, but got 'tensor<2x3xf32>'"),
    ("tensor<3xi64>", None),
]

_RAGGED = ('%0 = "chlo.ragged_dot"(%l, %r, %g) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<'
           "lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], "
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], "
           "lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>}} : (tensor<2x11x5xf32>, "
           "tensor<3x2x5x7xf32>, {gt}) -> tensor<2x11x7xf32>")


def wrap(op_line: str, args: str = ARGS) -> str:
    return f"func.func @f({args}) {{\n  {op_line}\n  return\n}}\n"


@pytest.mark.parametrize(("op_line", "message"), CASES, ids=range(len(CASES)))
def test_upstream_message(op_line, message):
    assert first_error(wrap(op_line)) == message


@pytest.mark.parametrize(("group_type", "message"), GROUP_SIZES)
def test_group_sizes_shapes(group_type, message):
    args = f"%l: tensor<2x11x5xf32>, %r: tensor<3x2x5x7xf32>, %g: {group_type}"
    assert first_error(wrap(_RAGGED.format(gt=group_type), args)) == message


def test_inference_errors_come_in_pairs():
    text = wrap('%0 = "chlo.broadcast_add"(%a, %b) : (tensor<4xf32>, tensor<2x4xf32>) -> '
                "tensor<3x4xf32>")
    with pytest.raises(VerifyError) as e:
        verify_module(parse_module(text))
    assert [x.message for x in e.value.others][:1] == \
        ["'chlo.broadcast_add' op failed to infer returned types"]


def test_valid_programs_verify():
    from tests.parser.test_chlo_syntax import ALL_OPS

    verify_module(parse_module(ALL_OPS))


@pytest.mark.oracle
def test_messages_are_upstreams():
    import corpus

    texts = [wrap(op) for op, _ in CASES]
    texts += [wrap(_RAGGED.format(gt=t), f"%l: tensor<2x11x5xf32>, %r: tensor<3x2x5x7xf32>, "
                                         f"%g: {t}") for t, _ in GROUP_SIZES]
    expected = [m for _, m in CASES] + [m for _, m in GROUP_SIZES]
    for text, ref, want in zip(texts, corpus.oracle_print([(t, False) for t in texts]),
                               expected, strict=True):
        if want is None:
            assert ref["ok"], ref["err"]
        else:
            assert not ref["ok"] and want in ref["err"], (text, ref["err"])
