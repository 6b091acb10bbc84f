// Seed 004 (shard_map JEP 14273), section 5.1 "A realistic transformer example: collective
// matmul": collective_matmul_allgather_lhs_non_contracting with its Python loop unrolled.
// On a 1-D mesh of 8 devices (upstream: "across 8 devices"), A = arange(M*K).reshape(M, K)
// sharded P('i', None) and B = arange(K*N).reshape(K, N) replicated (P()), with small float32
// sizes M, K, N = 16, 8, 4 (the document's 4096, 2048, 1024 overflow int32; see its note).
// Each device multiplies its current A chunk f32[2,8] by B, passes the chunk to device
// d-1 (ppermute perm=[(j, (j-1) % n)], so device d receives from d+1) and writes the product at
// rows ((axis_index + i) % n) * chunk_size of accum; the last chunk is computed without the
// ppermute. Every device ends with the whole C = A @ B, returned with out_specs=P() (the
// document's program needs check_vma=False in today's JAX).
sdy.mesh @mesh = <["i"=8]>
func.func @main(%A: tensor<16x8xf32>, %B: tensor<8x4xf32>) -> tensor<16x4xf32> {
  %0 = sdy.manual_computation(%A, %B)
      in_shardings=[<@mesh, [{"i"}, {}]>, <@mesh, [{}, {}]>]
      out_shardings=[<@mesh, [{}, {}]>]
      manual_axes={"i"}
      (%lhs0: tensor<2x8xf32>, %rhs: tensor<8x4xf32>) {
    // axis_index('i'): the device id on this 1-D mesh; axis_size('i') = psum(1, 'i') = 8
    %pid = stablehlo.partition_id : tensor<ui32>
    %index = stablehlo.convert %pid : (tensor<ui32>) -> tensor<i32>
    %size = stablehlo.constant dense<8> : tensor<i32>
    %chunk = stablehlo.constant dense<2> : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %accum0 = stablehlo.constant dense<0.0> : tensor<16x4xf32>
    %i0 = stablehlo.constant dense<0> : tensor<i32>
    %update0 = stablehlo.dot_general %lhs0, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs1 = "stablehlo.collective_permute"(%lhs0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum0 = stablehlo.add %index, %i0 : tensor<i32>
    %mod0 = stablehlo.remainder %sum0, %size : tensor<i32>
    %row0 = stablehlo.multiply %mod0, %chunk : tensor<i32>
    %accum1 = stablehlo.dynamic_update_slice %accum0, %update0, %row0, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i1 = stablehlo.constant dense<1> : tensor<i32>
    %update1 = stablehlo.dot_general %lhs1, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs2 = "stablehlo.collective_permute"(%lhs1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum1 = stablehlo.add %index, %i1 : tensor<i32>
    %mod1 = stablehlo.remainder %sum1, %size : tensor<i32>
    %row1 = stablehlo.multiply %mod1, %chunk : tensor<i32>
    %accum2 = stablehlo.dynamic_update_slice %accum1, %update1, %row1, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i2 = stablehlo.constant dense<2> : tensor<i32>
    %update2 = stablehlo.dot_general %lhs2, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs3 = "stablehlo.collective_permute"(%lhs2) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum2 = stablehlo.add %index, %i2 : tensor<i32>
    %mod2 = stablehlo.remainder %sum2, %size : tensor<i32>
    %row2 = stablehlo.multiply %mod2, %chunk : tensor<i32>
    %accum3 = stablehlo.dynamic_update_slice %accum2, %update2, %row2, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i3 = stablehlo.constant dense<3> : tensor<i32>
    %update3 = stablehlo.dot_general %lhs3, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs4 = "stablehlo.collective_permute"(%lhs3) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum3 = stablehlo.add %index, %i3 : tensor<i32>
    %mod3 = stablehlo.remainder %sum3, %size : tensor<i32>
    %row3 = stablehlo.multiply %mod3, %chunk : tensor<i32>
    %accum4 = stablehlo.dynamic_update_slice %accum3, %update3, %row3, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i4 = stablehlo.constant dense<4> : tensor<i32>
    %update4 = stablehlo.dot_general %lhs4, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs5 = "stablehlo.collective_permute"(%lhs4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum4 = stablehlo.add %index, %i4 : tensor<i32>
    %mod4 = stablehlo.remainder %sum4, %size : tensor<i32>
    %row4 = stablehlo.multiply %mod4, %chunk : tensor<i32>
    %accum5 = stablehlo.dynamic_update_slice %accum4, %update4, %row4, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i5 = stablehlo.constant dense<5> : tensor<i32>
    %update5 = stablehlo.dot_general %lhs5, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs6 = "stablehlo.collective_permute"(%lhs5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum5 = stablehlo.add %index, %i5 : tensor<i32>
    %mod5 = stablehlo.remainder %sum5, %size : tensor<i32>
    %row5 = stablehlo.multiply %mod5, %chunk : tensor<i32>
    %accum6 = stablehlo.dynamic_update_slice %accum5, %update5, %row5, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i6 = stablehlo.constant dense<6> : tensor<i32>
    %update6 = stablehlo.dot_general %lhs6, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %lhs7 = "stablehlo.collective_permute"(%lhs6) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
        : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum6 = stablehlo.add %index, %i6 : tensor<i32>
    %mod6 = stablehlo.remainder %sum6, %size : tensor<i32>
    %row6 = stablehlo.multiply %mod6, %chunk : tensor<i32>
    %accum7 = stablehlo.dynamic_update_slice %accum6, %update6, %row6, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    %i7 = stablehlo.constant dense<7> : tensor<i32>
    %update7 = stablehlo.dot_general %lhs7, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %sum7 = stablehlo.add %index, %i7 : tensor<i32>
    %mod7 = stablehlo.remainder %sum7, %size : tensor<i32>
    %row7 = stablehlo.multiply %mod7, %chunk : tensor<i32>
    %accum8 = stablehlo.dynamic_update_slice %accum7, %update7, %row7, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    sdy.return %accum8 : tensor<16x4xf32>
  } : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
