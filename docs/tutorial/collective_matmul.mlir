// shard_map's collective matmul (docs.jax.dev, "shard_map", collective matmul) on 4 devices: each device holds
// 2 rows of A and all of B; it multiplies its rows, passes them to device d-1 (so it
// receives the rows of device d+1) and repeats, writing each product at its rows of C.
// Communication (collective_permute) overlaps with the next multiplication.
sdy.mesh @mesh = <["i"=4]>

func.func @main(%A: tensor<8x4xi32>, %B: tensor<4x2xi32>) -> tensor<8x2xi32> {
  %C = sdy.manual_computation(%A, %B)
      in_shardings=[<@mesh, [{"i"}, {}]>, <@mesh, [{}, {}]>]
      out_shardings=[<@mesh, [{}, {}]>]
      manual_axes={"i"}
      (%lhs0: tensor<2x4xi32>, %rhs: tensor<4x2xi32>) {
    %pid = stablehlo.partition_id : tensor<ui32>
    %index = stablehlo.convert %pid : (tensor<ui32>) -> tensor<i32>
    %size = stablehlo.constant dense<4> : tensor<i32>
    %chunk = stablehlo.constant dense<2> : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %accum0 = stablehlo.constant dense<0> : tensor<8x2xi32>
    %update0 = stablehlo.dot_general %lhs0, %rhs, contracting_dims = [1] x [0] : (tensor<2x4xi32>, tensor<4x2xi32>) -> tensor<2x2xi32>
    %lhs1 = "stablehlo.collective_permute"(%lhs0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 3], [1, 0], [2, 1], [3, 2]]> : tensor<4x2xi64>}> : (tensor<2x4xi32>) -> tensor<2x4xi32>
    %i0 = stablehlo.constant dense<0> : tensor<i32>
    %sum0 = stablehlo.add %index, %i0 : tensor<i32>
    %mod0 = stablehlo.remainder %sum0, %size : tensor<i32>
    %row0 = stablehlo.multiply %mod0, %chunk : tensor<i32>
    %accum1 = stablehlo.dynamic_update_slice %accum0, %update0, %row0, %zero : (tensor<8x2xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<8x2xi32>
    %update1 = stablehlo.dot_general %lhs1, %rhs, contracting_dims = [1] x [0] : (tensor<2x4xi32>, tensor<4x2xi32>) -> tensor<2x2xi32>
    %lhs2 = "stablehlo.collective_permute"(%lhs1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 3], [1, 0], [2, 1], [3, 2]]> : tensor<4x2xi64>}> : (tensor<2x4xi32>) -> tensor<2x4xi32>
    %i1 = stablehlo.constant dense<1> : tensor<i32>
    %sum1 = stablehlo.add %index, %i1 : tensor<i32>
    %mod1 = stablehlo.remainder %sum1, %size : tensor<i32>
    %row1 = stablehlo.multiply %mod1, %chunk : tensor<i32>
    %accum2 = stablehlo.dynamic_update_slice %accum1, %update1, %row1, %zero : (tensor<8x2xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<8x2xi32>
    %update2 = stablehlo.dot_general %lhs2, %rhs, contracting_dims = [1] x [0] : (tensor<2x4xi32>, tensor<4x2xi32>) -> tensor<2x2xi32>
    %lhs3 = "stablehlo.collective_permute"(%lhs2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 3], [1, 0], [2, 1], [3, 2]]> : tensor<4x2xi64>}> : (tensor<2x4xi32>) -> tensor<2x4xi32>
    %i2 = stablehlo.constant dense<2> : tensor<i32>
    %sum2 = stablehlo.add %index, %i2 : tensor<i32>
    %mod2 = stablehlo.remainder %sum2, %size : tensor<i32>
    %row2 = stablehlo.multiply %mod2, %chunk : tensor<i32>
    %accum3 = stablehlo.dynamic_update_slice %accum2, %update2, %row2, %zero : (tensor<8x2xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<8x2xi32>
    %update3 = stablehlo.dot_general %lhs3, %rhs, contracting_dims = [1] x [0] : (tensor<2x4xi32>, tensor<4x2xi32>) -> tensor<2x2xi32>
    %i3 = stablehlo.constant dense<3> : tensor<i32>
    %sum3 = stablehlo.add %index, %i3 : tensor<i32>
    %mod3 = stablehlo.remainder %sum3, %size : tensor<i32>
    %row3 = stablehlo.multiply %mod3, %chunk : tensor<i32>
    %accum4 = stablehlo.dynamic_update_slice %accum3, %update3, %row3, %zero : (tensor<8x2xi32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<8x2xi32>
    sdy.return %accum4 : tensor<8x2xi32>
  } : (tensor<8x4xi32>, tensor<4x2xi32>) -> tensor<8x2xi32>
  return %C : tensor<8x2xi32>
}
