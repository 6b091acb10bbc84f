"""The printer against real MLIR: inputs written for these tests, expected outputs
printed by jaxlib 0.10.2's MLIR (the oracle) for exactly these inputs.

Each case exercises rules that are easy to get subtly wrong: SSA numbering across
sibling regions, op-provided names (``%c``, ``%cst``, ``%iterArg``, ``%output_state``),
conflict suffixes, the two reduce forms, the after_all double space, generic-form unique
ids, attribute and type spellings.
"""
from __future__ import annotations

import pytest

from shardy_ref.parser import parse_module, print_module

NAMING_INPUT = r"""func.func @f(%arg0: tensor<8x16xf32>, %arg1: tensor<4x64x8xf32>) -> (tensor<8x16xf32>, tensor<4x8xf32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %c_0 = stablehlo.constant dense<1> : tensor<i32>
  %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
  %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c) : tensor<8x16xf32>, tensor<i32>
  cond {
    %c_2 = stablehlo.constant dense<32> : tensor<i32>
    %1 = stablehlo.compare LT, %iterArg_1, %c_2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.add %iterArg_1, %c_0 : tensor<i32>
    stablehlo.return %iterArg, %1 : tensor<8x16xf32>, tensor<i32>
  }
  %2 = stablehlo.reduce(%arg1 init: %cst) across dimensions = [1] : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %3 = stablehlo.add %b, %a : tensor<f32>
    stablehlo.return %3 : tensor<f32>
  }
  %4 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = stablehlo.after_all : !stablehlo.token
  %c_3 = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
  %6:2 = stablehlo.rng_bit_generator %c_3, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)
  %7 = "stablehlo.sort"(%arg0) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %8 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %8 : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %7, %4 : tensor<8x16xf32>, tensor<4x8xf32>
}
"""

NAMING_PRETTY = r"""module {
  func.func @f(%arg0: tensor<8x16xf32>, %arg1: tensor<4x64x8xf32>) -> (tensor<8x16xf32>, tensor<4x8xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c) : tensor<8x16xf32>, tensor<i32>
    cond {
      %c_3 = stablehlo.constant dense<32> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg_2, %c_3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %5 = stablehlo.add %iterArg_2, %c_0 : tensor<i32>
      stablehlo.return %iterArg, %5 : tensor<8x16xf32>, tensor<i32>
    }
    %1 = stablehlo.reduce(%arg1 init: %cst) across dimensions = [1] : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
     reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {
      %5 = stablehlo.add %arg3, %arg2 : tensor<f32>
      stablehlo.return %5 : tensor<f32>
    }
    %2 = stablehlo.reduce(%arg1 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %3 = stablehlo.after_all  : !stablehlo.token
    %c_1 = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
    %output_state, %output = stablehlo.rng_bit_generator %c_1, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)
    %4 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %5 = stablehlo.compare GT, %arg2, %arg3 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %4, %2 : tensor<8x16xf32>, tensor<4x8xf32>
  }
}
"""

NAMING_GENERIC = r""""builtin.module"() ({
  "func.func"() <{function_type = (tensor<8x16xf32>, tensor<4x64x8xf32>) -> (tensor<8x16xf32>, tensor<4x8xf32>), sym_name = "f"}> ({
  ^bb0(%arg0: tensor<8x16xf32>, %arg1: tensor<4x64x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3:2 = "stablehlo.while"(%arg0, %0) ({
    ^bb0(%arg10: tensor<8x16xf32>, %arg11: tensor<i32>):
      %14 = "stablehlo.constant"() <{value = dense<32> : tensor<i32>}> : () -> tensor<i32>
      %15 = "stablehlo.compare"(%arg11, %14) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg8: tensor<8x16xf32>, %arg9: tensor<i32>):
      %13 = "stablehlo.add"(%arg9, %1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg8, %13) : (tensor<8x16xf32>, tensor<i32>) -> ()
    }) : (tensor<8x16xf32>, tensor<i32>) -> (tensor<8x16xf32>, tensor<i32>)
    %4 = "stablehlo.reduce"(%arg1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %12 = "stablehlo.add"(%arg7, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%12) : (tensor<f32>) -> ()
    }) : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %5 = "stablehlo.reduce"(%arg1, %2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %11 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%11) : (tensor<f32>) -> ()
    }) : (tensor<4x64x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %6 = "stablehlo.after_all"() : () -> !stablehlo.token
    %7 = "stablehlo.constant"() <{value = dense<[1, 2]> : tensor<2xui64>}> : () -> tensor<2xui64>
    %8:2 = "stablehlo.rng_bit_generator"(%7) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)
    %9 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %10 = "stablehlo.compare"(%arg2, %arg3) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    "func.return"(%9, %5) : (tensor<8x16xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""

TYPES_ATTRS_INPUT = r"""func.func private @types(tensor<?x4xf32>, tensor<*xf32>, tensor<f32>, tensor<0xf32>, complex<f64>, tuple<i32, f32>, !stablehlo.token, index, i1, si8, ui32, bf16, f8E4M3FN, tensor<4xcomplex<f32>>) -> ((i32) -> i32)
func.func @attrs() attributes {a = [1, 2 : i32, 1.5, 2.5 : f32, true, "s", unit, @sym, @a::@b, i32, [], {}], b = {"foo bar" = 1 : i64, x.y = "q\"z\n"}, c = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, d = dense<1.0> : tensor<3xf32>, e = array<i64: 1, 2>, f = array<i64>, g = array<i1: true, false>, h = -0.0 : f32, i = 0x7FC00000 : f32, j = 255 : i8, k = dense<[true, false]> : tensor<2xi1>, l = dense<(1.0, 2.0)> : tensor<complex<f32>>, m = 9 : ui8} {
  return
}
"""

TYPES_ATTRS_OUTPUT = r"""module {
  func.func private @types(tensor<?x4xf32>, tensor<*xf32>, tensor<f32>, tensor<0xf32>, complex<f64>, tuple<i32, f32>, !stablehlo.token, index, i1, si8, ui32, bf16, f8E4M3FN, tensor<4xcomplex<f32>>) -> ((i32) -> i32)
  func.func @attrs() attributes {a = [1, 2 : i32, 1.500000e+00, 2.500000e+00 : f32, true, "s", unit, @sym, @a::@b, i32, [], {}], b = {"foo bar" = 1 : i64, x.y = "q\22z\0A"}, c = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, d = dense<1.000000e+00> : tensor<3xf32>, e = array<i64: 1, 2>, f = array<i64>, g = array<i1: true, false>, h = -0.000000e+00 : f32, i = 0x7FC00000 : f32, j = -1 : i8, k = dense<[true, false]> : tensor<2xi1>, l = dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>, m = 9 : ui8} {
    return
  }
}
"""

# attribute and type aliases are resolved; locations are read and not printed
ALIASES_LOCATIONS = r"""#s = #sdy.sharding<@mesh, [{"a"}]>
!t = tensor<8xf32>
#loc0 = loc("file.py":3:4)
sdy.mesh @mesh = <["a"=2]>
func.func @f(%arg0: !t {sdy.sharding = #s} loc("x.py":1:2), %arg1: tensor<8xf32>) -> !t {
  %0 = stablehlo.add %arg0, %arg1 : !t loc(#loc0)
  return %0 : !t loc(callsite("a"("b.py":1:1) at fused["c.py":2:2, unknown]))
} loc(unknown)
"""

ALIASES_LOCATIONS_OUTPUT = r"""module {
  sdy.mesh @mesh = <["a"=2]>
  func.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
"""

# less common StableHLO ops: every pretty shape of the op table, defaults elided
MANY_OPS = r"""func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xi32>, %arg3: tensor<2xi64>, %arg4: tensor<i32>, %arg5: tensor<f32>, %arg6: tensor<1xi64>, %arg7: !stablehlo.token, %arg8: tensor<4xcomplex<f32>>, %arg9: tensor<4xi1>, %arg10: tensor<i1>) {
  %0 = stablehlo.dynamic_broadcast_in_dim %arg1, %arg3, dims = [1] : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %1 = stablehlo.dynamic_broadcast_in_dim %arg1, %arg3, dims = [1] {known_expanding_dimensions = array<i64>, known_nonexpanding_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %2 = stablehlo.dynamic_iota %arg6, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>
  %3 = stablehlo.set_dimension_size %arg1, %arg4, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
  %4 = stablehlo.rng %arg5, %arg5, %arg6, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  %5 = stablehlo.tuple %arg1, %arg2 : tuple<tensor<4xf32>, tensor<4xi32>>
  %6 = stablehlo.get_tuple_element %5[0] : (tuple<tensor<4xf32>, tensor<4xi32>>) -> tensor<4xf32>
  %7 = stablehlo.broadcast %arg1, sizes = [2] : (tensor<4xf32>) -> tensor<2x4xf32>
  %8 = stablehlo.einsum %arg1, %arg1, config = "i,i->" : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %9 = stablehlo.reduce_precision %arg1, format = e5m10 : tensor<4xf32>
  %10 = stablehlo.is_finite %arg1 : (tensor<4xf32>) -> tensor<4xi1>
  %11 = stablehlo.complex %arg0, %arg1 : tensor<4xcomplex<f32>>
  %12 = stablehlo.abs %arg8 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %13 = stablehlo.real %arg8 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %14 = stablehlo.select %arg9, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>
  %15 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<4xf32>
  %16 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<4xf32>
  %17 = stablehlo.transpose %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4xf32>
  %18 = stablehlo.compare LE, %arg2, %arg2, NOTYPE : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %19 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, HIGHEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %20 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %21 = stablehlo.custom_call @"weird name"(%arg0) {api_version = 3 : i32, has_side_effect = false, called_computations = []} : (tensor<4xf32>) -> tensor<4xf32>
  %22 = stablehlo.optimization_barrier {foo = 1 : i64} %arg0 : tensor<4xf32>
  stablehlo.optimization_barrier()
  %23 = "stablehlo.if"(%arg10) ({
    stablehlo.return %arg5 : tensor<f32>
  }, {
    stablehlo.return %arg5 : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %24 = stablehlo.exponential %arg0 : tensor<4xf32>
  %25 = stablehlo.reverse %arg0, dims = [0] : tensor<4xf32>
  %26 = stablehlo.pad %arg0, %arg5, low = [1], high = [-1], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %27 = stablehlo.slice %arg0 [0:4:2] : (tensor<4xf32>) -> tensor<2xf32>
  %28 = stablehlo.composite "foo.bar" %arg0 {composite_attributes = {x = 1 : i32}, decomposition = @dec} : (tensor<4xf32>) -> tensor<4xf32>
  %30 = stablehlo.constant {foo} dense<1.000000e+00> : tensor<8x16xf32>
  %31 = stablehlo.concatenate %arg0, dim = 0 : (tensor<4xf32>) -> tensor<4xf32>
  return
}
func.func private @dec(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
"""

MANY_OPS_PRETTY = r"""module {
  func.func @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xi32>, %arg3: tensor<2xi64>, %arg4: tensor<i32>, %arg5: tensor<f32>, %arg6: tensor<1xi64>, %arg7: !stablehlo.token, %arg8: tensor<4xcomplex<f32>>, %arg9: tensor<4xi1>, %arg10: tensor<i1>) {
    %0 = stablehlo.dynamic_broadcast_in_dim %arg1, %arg3, dims = [1] : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %1 = stablehlo.dynamic_broadcast_in_dim %arg1, %arg3, dims = [1] {known_expanding_dimensions = array<i64>, known_nonexpanding_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %2 = stablehlo.dynamic_iota %arg6, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>
    %3 = stablehlo.set_dimension_size %arg1, %arg4, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
    %4 = stablehlo.rng %arg5, %arg5, %arg6, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
    %5 = stablehlo.tuple %arg1, %arg2 : tuple<tensor<4xf32>, tensor<4xi32>>
    %6 = stablehlo.get_tuple_element %5[0] : (tuple<tensor<4xf32>, tensor<4xi32>>) -> tensor<4xf32>
    %7 = stablehlo.broadcast %arg1, sizes = [2] : (tensor<4xf32>) -> tensor<2x4xf32>
    %8 = stablehlo.einsum %arg1, %arg1, config = "i,i->" : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %9 = stablehlo.reduce_precision %arg1, format = e5m10 : tensor<4xf32>
    %10 = stablehlo.is_finite %arg1 : (tensor<4xf32>) -> tensor<4xi1>
    %11 = stablehlo.complex %arg0, %arg1 : tensor<4xcomplex<f32>>
    %12 = stablehlo.abs %arg8 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %13 = stablehlo.real %arg8 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %14 = stablehlo.select %arg9, %arg0, %arg1 : tensor<4xi1>, tensor<4xf32>
    %15 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<4xf32>
    %16 = stablehlo.exponential %arg0 : tensor<4xf32>
    %17 = stablehlo.transpose %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4xf32>
    %18 = stablehlo.compare LE, %arg2, %arg2, NOTYPE : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %19 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, HIGHEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %20 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %21 = stablehlo.custom_call @"weird name"(%arg0) {api_version = 3 : i32} : (tensor<4xf32>) -> tensor<4xf32>
    %22 = stablehlo.optimization_barrier {foo = 1 : i64} %arg0 : tensor<4xf32>
    stablehlo.optimization_barrier()
    %23 = "stablehlo.if"(%arg10) ({
      stablehlo.return %arg5 : tensor<f32>
    }, {
      stablehlo.return %arg5 : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    %24 = stablehlo.exponential %arg0 : tensor<4xf32>
    %25 = stablehlo.reverse %arg0, dims = [0] : tensor<4xf32>
    %26 = stablehlo.pad %arg0, %arg5, low = [1], high = [-1], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %27 = stablehlo.slice %arg0 [0:4:2] : (tensor<4xf32>) -> tensor<2xf32>
    %28 = stablehlo.composite "foo.bar" %arg0 {composite_attributes = {x = 1 : i32}, decomposition = @dec} : (tensor<4xf32>) -> tensor<4xf32>
    %cst = stablehlo.constant {foo} dense<1.000000e+00> : tensor<8x16xf32>
    %29 = stablehlo.concatenate %arg0, dim = 0 : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
  func.func private @dec(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
"""

MANY_OPS_GENERIC = r""""builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<2xi64>, tensor<i32>, tensor<f32>, tensor<1xi64>, !stablehlo.token, tensor<4xcomplex<f32>>, tensor<4xi1>, tensor<i1>) -> (), sym_name = "f"}> ({
  ^bb0(%arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xi32>, %arg4: tensor<2xi64>, %arg5: tensor<i32>, %arg6: tensor<f32>, %arg7: tensor<1xi64>, %arg8: !stablehlo.token, %arg9: tensor<4xcomplex<f32>>, %arg10: tensor<4xi1>, %arg11: tensor<i1>):
    %0 = "stablehlo.dynamic_broadcast_in_dim"(%arg2, %arg4) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %1 = "stablehlo.dynamic_broadcast_in_dim"(%arg2, %arg4) <{broadcast_dimensions = array<i64: 1>, known_expanding_dimensions = array<i64>, known_nonexpanding_dimensions = array<i64: 0>}> : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %2 = "stablehlo.dynamic_iota"(%arg7) <{iota_dimension = 0 : i64}> : (tensor<1xi64>) -> tensor<?xf32>
    %3 = "stablehlo.set_dimension_size"(%arg2, %arg5) <{dimension = 0 : i64}> : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>
    %4 = "stablehlo.rng"(%arg6, %arg6, %arg7) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}> : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
    %5 = "stablehlo.tuple"(%arg2, %arg3) : (tensor<4xf32>, tensor<4xi32>) -> tuple<tensor<4xf32>, tensor<4xi32>>
    %6 = "stablehlo.get_tuple_element"(%5) <{index = 0 : i32}> : (tuple<tensor<4xf32>, tensor<4xi32>>) -> tensor<4xf32>
    %7 = "stablehlo.broadcast"(%arg2) <{broadcast_sizes = array<i64: 2>}> : (tensor<4xf32>) -> tensor<2x4xf32>
    %8 = "stablehlo.einsum"(%arg2, %arg2) <{einsum_config = "i,i->"}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %9 = "stablehlo.reduce_precision"(%arg2) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
    %10 = "stablehlo.is_finite"(%arg2) : (tensor<4xf32>) -> tensor<4xi1>
    %11 = "stablehlo.complex"(%arg1, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
    %12 = "stablehlo.abs"(%arg9) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %13 = "stablehlo.real"(%arg9) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %14 = "stablehlo.select"(%arg10, %arg1, %arg2) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %15 = "stablehlo.exponential"(%arg1) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %16 = "stablehlo.exponential"(%arg1) <{result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %17 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>
    %18 = "stablehlo.compare"(%arg3, %arg3) <{compare_type = #stablehlo<comparison_type NOTYPE>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %19 = "stablehlo.dot"(%arg1, %arg2) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %20 = "stablehlo.dot_general"(%arg1, %arg2) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %21 = "stablehlo.custom_call"(%arg1) <{api_version = 3 : i32, call_target_name = "weird name", called_computations = [], has_side_effect = false}> : (tensor<4xf32>) -> tensor<4xf32>
    %22 = "stablehlo.optimization_barrier"(%arg1) {foo = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.optimization_barrier"() : () -> ()
    %23 = "stablehlo.if"(%arg11) ({
      "stablehlo.return"(%arg6) : (tensor<f32>) -> ()
    }, {
      "stablehlo.return"(%arg6) : (tensor<f32>) -> ()
    }) : (tensor<i1>) -> tensor<f32>
    %24 = "stablehlo.exponential"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
    %25 = "stablehlo.reverse"(%arg1) <{dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4xf32>
    %26 = "stablehlo.pad"(%arg1, %arg6) <{edge_padding_high = array<i64: -1>, edge_padding_low = array<i64: 1>, interior_padding = array<i64: 0>}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %27 = "stablehlo.slice"(%arg1) <{limit_indices = array<i64: 4>, start_indices = array<i64: 0>, strides = array<i64: 2>}> : (tensor<4xf32>) -> tensor<2xf32>
    %28 = "stablehlo.composite"(%arg1) <{composite_attributes = {x = 1 : i32}, decomposition = @dec, name = "foo.bar"}> : (tensor<4xf32>) -> tensor<4xf32>
    %29 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<8x16xf32>}> {foo} : () -> tensor<8x16xf32>
    %30 = "stablehlo.concatenate"(%arg1) <{dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "dec", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>):
    "func.return"(%arg0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""

# multi-block regions, successors and predecessor comments (MLIR's own example)
BRANCHES = r""""builtin.module"() ({
  "func.func"() <{function_type = (i1, i32) -> i32, sym_name = "br"}> ({
  ^bb0(%arg0: i1, %arg1: i32):
    "cf.cond_br"(%arg0, %arg1)[^bb1, ^bb2] <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i1, i32) -> ()
  ^bb1(%0: i32):  // 2 preds: ^bb0, ^bb4
    "cf.br"(%0)[^bb3] : (i32) -> ()
  ^bb2:  // pred: ^bb0
    "cf.br"(%arg1)[^bb3] : (i32) -> ()
  ^bb3(%1: i32):  // 2 preds: ^bb1, ^bb2
    "func.return"(%1) : (i32) -> ()
  ^bb4:  // pred: ^bb4
    "t.term"()[^bb1, ^bb4] {x} : () -> ()
  }) : () -> ()
}) : () -> ()
"""


ARITH_CONSTANTS = r"""func.func @f() -> tensor<8xf32> {
  %cst = arith.constant dense<0.0> : tensor<8xf32>
  %c = arith.constant 3 : i32
  %d = arith.constant {a} 7 : index
  %t = arith.constant true
  %f = arith.constant 1.5 : f32
  %g = arith.constant -2 : i64
  return %cst : tensor<8xf32>
}
"""

# arith.constant names its result from the value: %c3_i32, %c7 (index), %true, %cst
ARITH_CONSTANTS_PRETTY = r"""module {
  func.func @f() -> tensor<8xf32> {
    %cst = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %c3_i32 = arith.constant 3 : i32
    %c7 = arith.constant {a} 7 : index
    %true = arith.constant true
    %cst_0 = arith.constant 1.500000e+00 : f32
    %c-2_i64 = arith.constant -2 : i64
    return %cst : tensor<8xf32>
  }
}
"""

ARITH_CONSTANTS_GENERIC = r""""builtin.module"() ({
  "func.func"() <{function_type = () -> tensor<8xf32>, sym_name = "f"}> ({
    %0 = "arith.constant"() <{value = dense<0.000000e+00> : tensor<8xf32>}> : () -> tensor<8xf32>
    %1 = "arith.constant"() <{value = 3 : i32}> : () -> i32
    %2 = "arith.constant"() <{value = 7 : index}> {a} : () -> index
    %3 = "arith.constant"() <{value = true}> : () -> i1
    %4 = "arith.constant"() <{value = 1.500000e+00 : f32}> : () -> f32
    %5 = "arith.constant"() <{value = -2 : i64}> : () -> i64
    "func.return"(%0) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""


@pytest.mark.parametrize(("text", "generic", "expected"), [
    (NAMING_INPUT, False, NAMING_PRETTY),
    (NAMING_INPUT, True, NAMING_GENERIC),
    (NAMING_PRETTY, False, NAMING_PRETTY),
    (NAMING_GENERIC, False, NAMING_PRETTY),
    (NAMING_GENERIC, True, NAMING_GENERIC),
    (TYPES_ATTRS_INPUT, False, TYPES_ATTRS_OUTPUT),
    (BRANCHES, True, BRANCHES),
    (ALIASES_LOCATIONS, False, ALIASES_LOCATIONS_OUTPUT),
    (MANY_OPS, False, MANY_OPS_PRETTY),
    (MANY_OPS, True, MANY_OPS_GENERIC),
    (ARITH_CONSTANTS, False, ARITH_CONSTANTS_PRETTY),
    (ARITH_CONSTANTS, True, ARITH_CONSTANTS_GENERIC),
])
def test_prints_like_mlir(text, generic, expected):
    module = parse_module(text, allow_unregistered=True)  # BRANCHES has cf and t ops
    assert print_module(module, generic=generic) == expected


def _corpus_chunks():
    from tests.conftest import CORPUS
    if not CORPUS.exists():
        return []
    import corpus
    return corpus.corpus_chunks()


@pytest.mark.conformance
def test_printing_is_a_fixed_point_on_the_corpus():
    """print(parse(print(parse(x)))) == print(parse(x)) for every corpus chunk we accept,
    in both forms: the printer writes only what the parser reads back unchanged."""
    from shardy_ref.ir.diagnostics import ShardyRefError

    checked = 0
    for chunk in _corpus_chunks():
        try:
            module = parse_module(chunk.text, allow_unregistered=chunk.unregistered)
        except ShardyRefError:
            continue
        for generic in (False, True):
            once = print_module(module, generic=generic)
            again = parse_module(once, allow_unregistered=chunk.unregistered)
            assert print_module(again, generic=generic) == once, chunk.id
        checked += 1
    assert checked > 1000


def test_declaration_with_named_arguments_prints_without_names():
    """MLIR accepts ``%arg0: T`` in a body-less declaration and drops the names."""
    from shardy_ref.parser import parse_module, print_module
    module = parse_module("func.func private @f(%arg0: tensor<8xi32>) -> tensor<8xi32>\n")
    assert print_module(module) == \
        "module {\n  func.func private @f(tensor<8xi32>) -> tensor<8xi32>\n}\n"
