# ruff: noqa: E501  (expected texts are MLIR's own lines and messages)
"""Verification of StableHLO's elementwise and shape ops (``verify/stablehlo_elementwise_shape.py``):
each case is one op in a function with fixed arguments and the first error upstream reports
for it, as jaxlib 0.10.2's MLIR prints it (checked against the oracle by the
``oracle``-marked test); the ``VALID`` ops, one or more per op, verify."""
from __future__ import annotations

import re

import pytest

from shardy_ref.ir.diagnostics import ParseError, VerifyError
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module

ARGS = ("%a: tensor<4xf32>, %b: tensor<2x4xf32>, %c: tensor<3xf32>, %i: tensor<4xi32>, "
        "%j: tensor<4xi64>, %p: tensor<4xi1>, %s: tensor<f32>, %k: tensor<i32>, "
        "%d: tensor<?x4xf32>, %z: tensor<4xcomplex<f32>>, %q: tensor<i1>, "
        "%e: tensor<?x4xf32, #stablehlo.bounds<3, ?>>, %bb: tensor<2x5xf32>, "
        "%kk: tensor<i64>, %h: tensor<4xf64>, %w: tensor<4xui32>")

VALID = [
    '%0 = "stablehlo.real"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "stablehlo.convert"(%a) : (tensor<4xf32>) -> tensor<4xi32>',
    '%0 = "stablehlo.add"(%d, %b) : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>',
    '%0 = "stablehlo.slice"(%d) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 9, 1>, strides = array<i64: 1, 1>} : (tensor<?x4xf32>) -> tensor<9x1xf32>',
    '%0 = "stablehlo.convert"(%z) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>',
    '%0 = "stablehlo.not"(%w) : (tensor<4xui32>) -> tensor<4xui32>',
    '%0 = stablehlo.add %a, %a : tensor<4xf32>',
    '%0 = stablehlo.add %d, %b : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>',
    '%0 = stablehlo.subtract %i, %i : tensor<4xi32>',
    '%0 = stablehlo.multiply %p, %p : tensor<4xi1>',
    '%0 = stablehlo.divide %a, %a : tensor<4xf32>',
    '%0 = stablehlo.remainder %i, %i : tensor<4xi32>',
    '%0 = stablehlo.maximum %a, %a : tensor<4xf32>',
    '%0 = stablehlo.minimum %a, %a : tensor<4xf32>',
    '%0 = stablehlo.power %a, %a : tensor<4xf32>',
    '%0 = stablehlo.atan2 %a, %a : tensor<4xf32>',
    '%0 = stablehlo.and %p, %p : tensor<4xi1>',
    '%0 = stablehlo.or %i, %i : tensor<4xi32>',
    '%0 = stablehlo.xor %i, %i : tensor<4xi32>',
    '%0 = stablehlo.shift_left %i, %i : tensor<4xi32>',
    '%0 = stablehlo.shift_right_arithmetic %i, %i : tensor<4xi32>',
    '%0 = stablehlo.shift_right_logical %i, %i : tensor<4xi32>',
    '%0 = stablehlo.abs %a : tensor<4xf32>',
    '%0 = stablehlo.abs %z : (tensor<4xcomplex<f32>>) -> tensor<4xf32>',
    '%0 = stablehlo.negate %i : tensor<4xi32>',
    '%0 = stablehlo.exponential %a : tensor<4xf32>',
    '%0 = stablehlo.log %a : tensor<4xf32>',
    '%0 = stablehlo.sqrt %z : tensor<4xcomplex<f32>>',
    '%0 = stablehlo.rsqrt %a : tensor<4xf32>',
    '%0 = stablehlo.tanh %a : tensor<4xf32>',
    '%0 = stablehlo.logistic %a : tensor<4xf32>',
    '%0 = stablehlo.sine %a : tensor<4xf32>',
    '%0 = stablehlo.cosine %a : tensor<4xf32>',
    '%0 = stablehlo.floor %a : tensor<4xf32>',
    '%0 = stablehlo.ceil %a : tensor<4xf32>',
    '%0 = stablehlo.round_nearest_afz %a : tensor<4xf32>',
    '%0 = stablehlo.round_nearest_even %a : tensor<4xf32>',
    '%0 = stablehlo.sign %i : tensor<4xi32>',
    '%0 = stablehlo.not %p : tensor<4xi1>',
    '%0 = stablehlo.popcnt %i : tensor<4xi32>',
    '%0 = stablehlo.count_leading_zeros %i : tensor<4xi32>',
    '%0 = stablehlo.is_finite %a : (tensor<4xf32>) -> tensor<4xi1>',
    '%0 = stablehlo.real %z : (tensor<4xcomplex<f32>>) -> tensor<4xf32>',
    '%0 = stablehlo.imag %z : (tensor<4xcomplex<f32>>) -> tensor<4xf32>',
    '%0 = stablehlo.real %a : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = stablehlo.complex %a, %a : tensor<4xcomplex<f32>>',
    '%0 = stablehlo.compare LT, %a, %a, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>',
    '%0 = stablehlo.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>',
    '%0 = stablehlo.select %q, %a, %a : tensor<i1>, tensor<4xf32>',
    '%0 = stablehlo.clamp %s, %a, %s : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>',
    '%0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi32>',
    '%0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4xi32>',
    '%0 = stablehlo.bitcast_convert %a : (tensor<4xf32>) -> tensor<4x2xi16>',
    '%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>',
    '%0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x4xf32>',
    '%0 = stablehlo.reshape %b : (tensor<2x4xf32>) -> tensor<8xf32>',
    '%0 = stablehlo.transpose %b, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>',
    '%0 = stablehlo.concatenate %a, %c, dim = 0 : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>',
    '%0 = stablehlo.concatenate %d, %b, dim = 0 : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>',
    '%0 = stablehlo.pad %a, %s, low = [1], high = [2], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<10xf32>',
    '%0 = stablehlo.slice %b [0:2, 1:4:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>',
    '%0 = stablehlo.dynamic_slice %b, %k, %k, sizes = [1, 2] : (tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>',
    '%0 = stablehlo.dynamic_update_slice %a, %c, %k : (tensor<4xf32>, tensor<3xf32>, tensor<i32>) -> tensor<4xf32>',
    '%0 = stablehlo.iota dim = 0 : tensor<4xf32>',
    '%0 = stablehlo.reverse %b, dims = [1, 0] : tensor<2x4xf32>',
    '%0 = stablehlo.get_dimension_size %b, dim = 1 : (tensor<2x4xf32>) -> tensor<i32>',
    '%0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<4xf32>',
    '%0 = stablehlo.transpose %e, dims = [1, 0] : (tensor<?x4xf32, #stablehlo.bounds<3, ?>>) -> tensor<4x?xf32, #stablehlo.bounds<?, 3>>',
]

CASES = [
    ('%0 = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>',
     "'stablehlo.add' op requires the same shape for all operands and results"),
    ('%0 = "stablehlo.add"(%a, %i) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
     'op requires the same element type for all operands and results'),
    ('%0 = "stablehlo.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.add' op expected 2 operands, but found 1"),
    ('%0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<3xf32>',
     "'stablehlo.add' op requires the same shape for all operands and results"),
    ('%0 = "stablehlo.and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.and' op operand #0 must be ranked tensor of bool or 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.abs"(%p) : (tensor<4xi1>) -> tensor<4xi1>',
     "'stablehlo.abs' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit signless integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<4xi1>'"),
    ('%0 = "stablehlo.sqrt"(%i) : (tensor<4xi32>) -> tensor<4xi32>',
     "'stablehlo.sqrt' op operand #0 must be ranked tensor of 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<4xi32>'"),
    ('%0 = "stablehlo.negate"(%a) : (tensor<4xf32>) -> tensor<3xf32>',
     "'stablehlo.negate' op requires compatible types for all operands and results"),
    ('%0 = "stablehlo.is_finite"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.is_finite' op result #0 must be ranked tensor of bool values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<3xi1>',
     "'stablehlo.compare' op all non-scalar operands/results must have the same shape and base type"),
    ('%0 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xi1>',
     "'stablehlo.compare' op all non-scalar operands/results must have the same shape and base type"),
    ('%0 = "stablehlo.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>',
     'requires compatible types for non-predicate operands'),
    ('%0 = "stablehlo.select"(%p, %c, %c) : (tensor<4xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>',
     'requires the same shape for all operands'),
    ('%0 = "stablehlo.clamp"(%c, %a, %s) : (tensor<3xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>',
     'min shape [3] is not scalar and is not compatible to operand shape [4]'),
    ('%0 = "stablehlo.convert"(%a) : (tensor<4xf32>) -> tensor<3xi32>',
     "'stablehlo.convert' op requires the same shape for all operands and results"),
    ('%0 = "stablehlo.bitcast_convert"(%a) : (tensor<4xf32>) -> tensor<4xi64>',
     'rank of smaller element type (1) should be 1 more than rank of larger element type (1), but 1 != 1 + 1.'),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<4xf32>) -> tensor<2x4xf32>',
     'broadcast_dimensions size (2) does not match operand rank (1)'),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 5>} : (tensor<4xf32>) -> tensor<2x4xf32>',
     'broadcast_dimensions contains invalid value 5 for result with rank 2'),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<2x4xf32>',
     'size of operand dimension 0 (4) is not equal to 1 or size of result dimension 0 (2)'),
    ('%0 = "stablehlo.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>',
     'broadcast_dimensions should not have duplicates'),
    ('%0 = "stablehlo.transpose"(%b) {permutation = array<i64: 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>',
     'TransposeOp operand rank 2 does not match permutation size 1'),
    ('%0 = "stablehlo.transpose"(%b) {permutation = array<i64: 0, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>',
     'attribute permutation must be a permutation of [0, 1] but got 0, 0'),
    ('%0 = "stablehlo.transpose"(%b) {permutation = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>',
     "'stablehlo.transpose' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'"),
    ('%0 = "stablehlo.concatenate"(%a, %c) {dimension = 1 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>',
     'dimension 1 is out-of-bounds for input rank 1'),
    ('%0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<7xf32>',
     'operands (0) and (1) do not match rank'),
    ('%0 = "stablehlo.concatenate"(%s, %s) {dimension = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>',
     'rank-0 values cannot be concatenated'),
    ('%0 = "stablehlo.concatenate"(%a, %c) {dimension = 0 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<8xf32>',
     "'stablehlo.concatenate' op inferred type(s) 'tensor<7xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'"),
    ('%0 = "stablehlo.concatenate"(%a, %c) {dimension = -1 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<7xf32>',
     "'stablehlo.concatenate' op attribute 'dimension' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative"),
    ('%0 = "stablehlo.pad"(%a, %s) {edge_padding_low = array<i64: 1, 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>',
     "'stablehlo.pad' op failed to verify that all of {edge_padding_low, edge_padding_high, interior_padding} have same size"),
    ('%0 = "stablehlo.pad"(%a, %s) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1, 2>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>',
     "'stablehlo.pad' op failed to verify that all of {edge_padding_low, edge_padding_high, interior_padding} have same size"),
    ('%0 = "stablehlo.pad"(%a, %s) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: -1>} : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>',
     'Interior padding cannot be negative: -1'),
    ('%0 = "stablehlo.pad"(%a, %s) {edge_padding_low = array<i64: -5>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<6xf32>',
     'Padding result in negative size for dimension 0'),
    ('%0 = "stablehlo.pad"(%a, %s) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>',
     "'stablehlo.pad' op inferred type(s) 'tensor<6xf32>' are incompatible with return type(s) of operation 'tensor<7xf32>'"),
    ('%0 = "stablehlo.pad"(%a, %a) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<6xf32>',
     "'stablehlo.pad' op operand #1 must be 0D tensor of 4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit integer or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>',
     "'stablehlo.slice' op failed to verify that all of {start_indices, limit_indices, strides} have same size"),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 1, 2>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>',
     "'stablehlo.slice' op failed to verify that all of {start_indices, limit_indices, strides} have same size"),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: -1>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>',
     'negative start index -1 in dimension 0'),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>',
     'limit index 5 is larger than dimension size 4 in dimension 0'),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 2>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>',
     'start index 2 is larger than limit index 1 in dimension 0'),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 0>} : (tensor<4xf32>) -> tensor<1xf32>',
     'stride must be positive but got 0 in dimension 0'),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 3>, strides = array<i64: 2>} : (tensor<4xf32>) -> tensor<1xf32>',
     "'stablehlo.slice' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<1xf32>'"),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k, %k) {slice_sizes = array<i64: 1>} : (tensor<4xf32>, tensor<i32>, tensor<i32>) -> tensor<1xf32>',
     'has mismatched number of slice sizes (1) and number of start indices (2)'),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k, %k) {slice_sizes = array<i64: 1, 1>} : (tensor<4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>',
     'has mismatched number of start indices (2) and the rank of operand (1)'),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k) {slice_sizes = array<i64: -1>} : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>',
     'has negative size index to dynamic slice: -1'),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k) {slice_sizes = array<i64: 5>} : (tensor<4xf32>, tensor<i32>) -> tensor<5xf32>',
     'has slice size 5 greater than dimension size 4 in dimension 0 of operand'),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k) {slice_sizes = array<i64: 2>} : (tensor<4xf32>, tensor<i32>) -> tensor<3xf32>',
     "'stablehlo.dynamic_slice' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'"),
    ('%0 = "stablehlo.dynamic_slice"(%a, %a) {slice_sizes = array<i64: 2>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32>',
     "'stablehlo.dynamic_slice' op operand #1 must be variadic of 0D tensor of 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.dynamic_update_slice"(%a, %b, %k) : (tensor<4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<4xf32>',
     'update rank does not match operand rank: 2 vs 1.'),
    ('%0 = "stablehlo.dynamic_update_slice"(%a, %c, %k, %k) : (tensor<4xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>) -> tensor<4xf32>',
     'expects number of start_indices to match operand rank: 2 vs 1.'),
    ('%0 = "stablehlo.dynamic_update_slice"(%c, %a, %k) : (tensor<3xf32>, tensor<4xf32>, tensor<i32>) -> tensor<3xf32>',
     'expects size at dimension 0 of update to be in range [0, 3]. Got: 4.'),
    ('%0 = "stablehlo.dynamic_update_slice"(%a, %c, %k) : (tensor<4xf32>, tensor<3xf32>, tensor<i32>) -> tensor<3xf32>',
     "'stablehlo.dynamic_update_slice' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'"),
    ('%0 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4xf32>',
     'iota dimension cannot go beyond the output rank.'),
    ('%0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<f32>',
     'does not support scalars.'),
    ('%0 = "stablehlo.iota"() {iota_dimension = -1 : i64} : () -> tensor<4xf32>',
     "'stablehlo.iota' op attribute 'iota_dimension' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative"),
    ('%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>',
     'all dimensions should be between [0, 1). Got dimension: 1.'),
    ('%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0, 0>} : (tensor<4xf32>) -> tensor<4xf32>',
     'dimensions should be unique. Got: 0, 0'),
    ('%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>',
     'all dimensions should be non-negative. Got dimension: -1.'),
    ('%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<3xf32>',
     "'stablehlo.reverse' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'"),
    ('%0 = "stablehlo.get_dimension_size"(%a) {dimension = 1 : i64} : (tensor<4xf32>) -> tensor<i32>',
     'requires dimension attribute in range [0, 1); found (1)'),
    ('%0 = "stablehlo.get_dimension_size"(%a) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<i64>',
     "'stablehlo.get_dimension_size' op result #0 must be ranked tensor of 32-bit signless integer values, but got 'tensor<i64>'"),
    ('%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 0 : i32, mantissa_bits = 2 : i32} : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.reduce_precision' op attribute 'exponent_bits' failed to satisfy constraint: 32-bit signless integer attribute whose value is positive"),
    ('%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 2 : i32, mantissa_bits = -1 : i32} : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.reduce_precision' op attribute 'mantissa_bits' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative"),
    ('%0 = "stablehlo.complex"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.complex' op result #0 must be ranked tensor of complex type with 32/64-bit float elements values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.shift_left"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.shift_left' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.popcnt"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.popcnt' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.not"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.not' op operand #0 must be ranked tensor of bool or 2/4/8/16/32/64-bit integer values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.concatenate"() {dimension = 0 : i64} : () -> tensor<7xf32>',
     "'stablehlo.concatenate' op expected 1 or more operands, but found 0"),
    ('%0 = "stablehlo.concatenate"(%a, %i) {dimension = 0 : i64} : (tensor<4xf32>, tensor<4xi32>) -> tensor<8xf32>',
     "'stablehlo.concatenate' op requires the same element type for all operands and results"),
    ('%0 = "stablehlo.concatenate"(%a, %z) {dimension = 0 : i64} : (tensor<4xf32>, tensor<*xf32>) -> tensor<8xf32>',
     "use of value '%z' expects different type than prior uses: 'tensor<*xf32>' vs 'tensor<4xcomplex<f32>>'"),
    ('%0 = "stablehlo.concatenate"(%b, %b) {dimension = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x5xf32>',
     "'stablehlo.concatenate' op inferred type(s) 'tensor<4x4xf32>' are incompatible with return type(s) of operation 'tensor<4x5xf32>'"),
    ('%0 = "stablehlo.concatenate"(%b, %bb) {dimension = 0 : i64} : (tensor<2x4xf32>, tensor<2x5xf32>) -> tensor<4x4xf32>',
     'shapes of operand (0) and (1) are not compatible at non-concat index 1: (2, 4) != (2, 5)'),
    ('%0 = "stablehlo.transpose"(%b) : (tensor<2x4xf32>) -> tensor<4x2xf32>',
     "'stablehlo.transpose' op requires attribute 'permutation'"),
    ('%0 = "stablehlo.transpose"(%b) {permutation = array<i32: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>',
     "'stablehlo.transpose' op attribute 'permutation' failed to satisfy constraint: i64 dense array attribute"),
    ('%0 = "stablehlo.transpose"(%b) {permutation = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf64>',
     "'stablehlo.transpose' op requires compatible element types for all operands and results"),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<?x4xf32>',
     "'stablehlo.broadcast_in_dim' op result #0 must be statically shaped or single bounded dimension tensor of 4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit integer or complex type with 32/64-bit float elements or per-tensor integer quantized or per-axis integer quantized values, but got 'tensor<?x4xf32>'"),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: -1>} : (tensor<4xf32>) -> tensor<2x4xf32>',
     'broadcast_dimensions contains invalid value -1 for result with rank 2'),
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xi32>',
     "'stablehlo.broadcast_in_dim' op requires compatible element types for all operands and results"),
    ('%0 = "stablehlo.reshape"(%a) : (tensor<4xf32>) -> tensor<?xf32>',
     "'stablehlo.reshape' op result #0 must be statically shaped or single bounded dimension tensor of 4/6/8/16/32/64-bit float or bool or 2/4/8/16/32/64-bit integer or complex type with 32/64-bit float elements or per-tensor integer quantized or per-axis integer quantized values, but got 'tensor<?xf32>'"),
    ('%0 = "stablehlo.reshape"(%a) : (tensor<4xf32>) -> tensor<4xi32>',
     "'stablehlo.reshape' op requires compatible element types for all operands and results"),
    ('%0 = stablehlo.reshape %b : (tensor<2x4xf32>) -> tensor<3x2xf32>',
     "number of output elements (6) doesn't match expected number of elements (8)"),
    ('%0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<?xf32>',
     "'stablehlo.iota' op result #0 must be statically shaped tensor of 2/4/8/16/32/64-bit integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<?xf32>'"),
    ('%0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi1>',
     "'stablehlo.iota' op result #0 must be statically shaped tensor of 2/4/8/16/32/64-bit integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<4xi1>'"),
    ('%0 = "stablehlo.iota"() {iota_dimension = 0 : i32} : () -> tensor<4xf32>',
     "'stablehlo.iota' op attribute 'iota_dimension' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative"),
    ('%0 = "stablehlo.iota"() : () -> tensor<4xf32>',
     "'stablehlo.iota' op requires attribute 'iota_dimension'"),
    ('%0 = "stablehlo.get_dimension_size"(%a) {dimension = -1 : i64} : (tensor<4xf32>) -> tensor<i32>',
     "'stablehlo.get_dimension_size' op attribute 'dimension' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative"),
    ('%0 = "stablehlo.get_dimension_size"(%a) {dimension = 0 : i64} : (tensor<4xf32>) -> tensor<1xi32>',
     "'stablehlo.get_dimension_size' op inferred type(s) 'tensor<i32>' are incompatible with return type(s) of operation 'tensor<1xi32>'"),
    ('%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xi32>',
     "'stablehlo.reverse' op requires the same element type for all operands and results"),
    ('%0 = "stablehlo.select"(%a, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "'stablehlo.select' op operand #0 must be ranked tensor of bool values, but got 'tensor<4xf32>'"),
    ('%0 = "stablehlo.select"(%p, %a, %a) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<3xf32>',
     "'stablehlo.select' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'"),
    ('%0 = "stablehlo.select"(%p, %a, %i) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
     'requires compatible types for non-predicate operands'),
    ('%0 = "stablehlo.clamp"(%s, %a, %s) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<3xf32>',
     "'stablehlo.clamp' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'"),
    ('%0 = "stablehlo.clamp"(%s, %a, %c) : (tensor<f32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>',
     'max shape [3] is not scalar and is not compatible to operand shape [4]'),
    ('%0 = "stablehlo.clamp"(%k, %a, %s) : (tensor<i32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>',
     "'stablehlo.clamp' op requires compatible element types for all operands and results"),
    ('%0 = "stablehlo.compare"(%a, %i) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>',
     "'stablehlo.compare' op requires compatible element types for all operands"),
    ('%0 = "stablehlo.compare"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>',
     "'stablehlo.compare' op requires attribute 'comparison_direction'"),
    ('%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>',
     "'stablehlo.compare' op result #0 must be ranked tensor of bool values, but got 'tensor<4xi32>'"),
    ('%0 = "stablehlo.dynamic_slice"(%b, %k, %kk) {slice_sizes = array<i64: 1, 1>} : (tensor<2x4xf32>, tensor<i32>, tensor<i64>) -> tensor<1x1xf32>',
     'start indices must have same element type'),
    ('%0 = "stablehlo.dynamic_slice"(%a, %k) {slice_sizes = array<i64: 2>} : (tensor<4xf32>, tensor<i32>) -> tensor<2xi32>',
     "'stablehlo.dynamic_slice' op failed to verify that all of {operand, result} have same element type"),
    ('%0 = "stablehlo.dynamic_slice"(%a) {slice_sizes = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>',
     'has mismatched number of slice sizes (1) and number of start indices (0)'),
    ('%0 = "stablehlo.dynamic_update_slice"(%a, %i, %k) : (tensor<4xf32>, tensor<4xi32>, tensor<i32>) -> tensor<4xf32>',
     "'stablehlo.dynamic_update_slice' op failed to verify that all of {operand, update, result} have same element type"),
    ('%0 = "stablehlo.dynamic_update_slice"(%b, %b, %k, %kk) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i64>) -> tensor<2x4xf32>',
     'start indices must have same element type'),
    ('%0 = "stablehlo.pad"(%a, %k) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<i32>) -> tensor<6xf32>',
     "'stablehlo.pad' op requires the same element type for all operands and results"),
    ('%0 = "stablehlo.pad"(%b, %s) {edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 0>} : (tensor<2x4xf32>, tensor<f32>) -> tensor<6xf32>',
     'edge_padding_low length (1) must match operand rank (2)'),
    ('%0 = "stablehlo.slice"(%b) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<1xf32>',
     'the number of elements in start_indices (1) does not match the rank of the operand (2)'),
    ('%0 = "stablehlo.bitcast_convert"(%a) : (tensor<4xf32>) -> tensor<4x3xi16>',
     "requires compatible bit widths. Got: 'tensor<4xf32>' and 'tensor<4x3xi16>', but 16 * 3 != 32."),
    ('%0 = "stablehlo.bitcast_convert"(%a) : (tensor<4xf32>) -> tensor<3xi32>',
     "operand and result shapes must match except for the innermost dimension of the shape with the smaller element type. Got: 'tensor<4xf32>' and 'tensor<3xi32>'."),
    ('%0 = "stablehlo.bitcast_convert"(%a) : (tensor<4xf32>) -> tensor<3x2xi16>',
     "operand and result shapes must match except for the innermost dimension of the shape with the smaller element type. Got: 'tensor<4xf32>' and 'tensor<3x2xi16>'."),
    ('%0 = "stablehlo.bitcast_convert"(%b) : (tensor<2x4xf32>) -> tensor<3xi64>',
     "requires compatible bit widths. Got: 'tensor<2x4xf32>' and 'tensor<3xi64>', but 32 * 4 != 64."),
    ('%0 = "stablehlo.abs"(%z) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>',
     "'stablehlo.abs' op result #0 must be ranked tensor of 2/4/8/16/32/64-bit signless integer or 4/6/8/16/32/64-bit float or per-tensor integer quantized values, but got 'tensor<4xcomplex<f32>>'"),
    ('%0 = "stablehlo.abs"(%z) : (tensor<4xcomplex<f32>>) -> tensor<4xf64>',
     "'stablehlo.abs' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf64>'"),
    ('%0 = "stablehlo.real"(%z) : (tensor<4xcomplex<f32>>) -> tensor<4xf64>',
     "'stablehlo.real' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf64>'"),
    ('%0 = "stablehlo.is_finite"(%a) : (tensor<4xf32>) -> tensor<3xi1>',
     "'stablehlo.is_finite' op all non-scalar operands/results must have the same shape and base type"),
    ('%0 = "stablehlo.complex"(%a, %c) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xcomplex<f32>>',
     "'stablehlo.complex' op requires the same shape for all operands and results"),
    ('%0 = "stablehlo.complex"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f64>>',
     "'stablehlo.complex' op inferred type(s) 'tensor<4xcomplex<f32>>' are incompatible with return type(s) of operation 'tensor<4xcomplex<f64>>'"),
    ('%0 = "stablehlo.complex"(%h, %a) : (tensor<4xf64>, tensor<4xf32>) -> tensor<4xcomplex<f32>>',
     "'stablehlo.complex' op requires the same element type for all operands"),
    ('%0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)',
     'operation defines 2 results but was provided 1 to bind'),
    ('%0 = "stablehlo.add"(%z, %a) : (tensor<*xf32>, tensor<4xf32>) -> tensor<4xf32>',
     "use of value '%z' expects different type than prior uses: 'tensor<*xf32>' vs 'tensor<4xcomplex<f32>>'"),
    ('%0 = "stablehlo.multiply"(%a, %c) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>',
     "'stablehlo.multiply' op requires compatible types for all operands and results"),
    ('%0 = "stablehlo.multiply"(%a, %i) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
     "'stablehlo.multiply' op requires compatible types for all operands and results"),
    ('%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 2 : i32, mantissa_bits = 2 : i32} : (tensor<4xf32>) -> tensor<3xf32>',
     "'stablehlo.reduce_precision' op all non-scalar operands/results must have the same shape and base type"),
    ('%0 = "stablehlo.reduce_precision"(%i) {exponent_bits = 2 : i32, mantissa_bits = 2 : i32} : (tensor<4xi32>) -> tensor<4xi32>',
     "'stablehlo.reduce_precision' op operand #0 must be ranked tensor of 4/6/8/16/32/64-bit float or per-tensor integer quantized values, but got 'tensor<4xi32>'"),
    ('%0 = "stablehlo.sign"(%w) : (tensor<4xui32>) -> tensor<4xui32>',
     "'stablehlo.sign' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit signless integer or 4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized values, but got 'tensor<4xui32>'"),
    ('%0 = "stablehlo.exponential"(%a) : (tensor<4xf32>) -> tensor<4xf64>',
     "'stablehlo.exponential' op requires compatible types for all operands and results"),
    ('%0 = "stablehlo.floor"(%z) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>',
     "'stablehlo.floor' op operand #0 must be ranked tensor of 4/6/8/16/32/64-bit float or per-tensor integer quantized values, but got 'tensor<4xcomplex<f32>>'"),
    ('%0 = "stablehlo.count_leading_zeros"(%i) : (tensor<4xi32>) -> tensor<4xi64>',
     "'stablehlo.count_leading_zeros' op requires compatible types for all operands and results"),
    ('%0 = stablehlo.bitcast_convert %b : (tensor<2x4xf32>) -> tensor<2xi64>',
     "requires compatible bit widths. Got: 'tensor<2x4xf32>' and 'tensor<2xi64>', but 32 * 4 != 64."),
]


def wrap(op_line: str) -> str:
    return f"func.func @f({ARGS}) {{\n  {op_line}\n  return\n}}\n"


def first_error(text: str) -> str | None:
    try:
        verify_module(parse_module(text, "-"))
    except (VerifyError, ParseError) as e:
        return e.message
    return None


@pytest.mark.parametrize("op_line", VALID, ids=range(len(VALID)))
def test_valid_ops_verify(op_line):
    assert first_error(wrap(op_line)) is None


@pytest.mark.parametrize(("op_line", "message"), CASES, ids=range(len(CASES)))
def test_upstream_message(op_line, message):
    assert first_error(wrap(op_line)) == message


def test_inference_errors_come_in_pairs():
    text = wrap('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = '
                'array<i64: 5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>')
    with pytest.raises(VerifyError) as e:
        verify_module(parse_module(text))
    assert [x.message for x in e.value.others][:1] == \
        ["'stablehlo.slice' op failed to infer returned types"]


def test_out_of_range_dims_are_located_errors():
    """The crash the issue reports: a bad dimension is a verifier error, not an IndexError
    in later code."""
    text = wrap("%0 = stablehlo.transpose %b, dims = [2, 0] : (tensor<2x4xf32>) -> "
                "tensor<4x2xf32>")
    assert first_error(text) == "attribute permutation must be a permutation of [0, 1] but got 2, 0"


def _oracle_first_error(err: str) -> str | None:
    for line in err.splitlines():
        m = re.search(r'error: (?:"-":\d+:\d+: )?(.*)', line)
        if m and "Unable to parse" not in line:
            return m.group(1)
    return None


@pytest.mark.oracle
def test_messages_are_upstreams():
    import corpus

    ops = [op for op, _ in CASES] + VALID
    expected = [m for _, m in CASES] + [None] * len(VALID)
    results = corpus.oracle_print([(wrap(op), False) for op in ops])
    for op, ref, want in zip(ops, results, expected, strict=True):
        got = None if ref["ok"] else _oracle_first_error(ref["err"])
        assert got == want, (op, ref["err"])
