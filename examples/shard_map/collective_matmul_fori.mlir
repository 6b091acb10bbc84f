// Seed 004 (shard_map JEP 14273), section 5.1 "A realistic transformer example: collective
// matmul": collective_matmul_allgather_lhs_non_contracting with the loop written as the
// document's commented-out jax.lax.fori_loop(0, axis_size - 1, f, (accum, lhs)) (a
// stablehlo.while; note (d) asks a simulator to support both forms).
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
    %one = stablehlo.constant dense<1> : tensor<i32>
    %last = stablehlo.constant dense<7> : tensor<i32>
    %w:3 = stablehlo.while(%it = %zero, %acc = %accum0, %lhs = %lhs0)
        : tensor<i32>, tensor<16x4xf32>, tensor<2x8xf32>
    cond {
      %more = stablehlo.compare LT, %it, %last, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %more : tensor<i1>
    } do {
      %update = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0]
          : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
      %next = "stablehlo.collective_permute"(%lhs) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          source_target_pairs = dense<[[0, 7], [1, 0], [2, 1], [3, 2], [4, 3], [5, 4], [6, 5], [7, 6]]> : tensor<8x2xi64>}>
          : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %sum = stablehlo.add %index, %it : tensor<i32>
      %mod = stablehlo.remainder %sum, %size : tensor<i32>
      %row = stablehlo.multiply %mod, %chunk : tensor<i32>
      %acc_next = stablehlo.dynamic_update_slice %acc, %update, %row, %zero
          : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
      %it_next = stablehlo.add %it, %one : tensor<i32>
      stablehlo.return %it_next, %acc_next, %next
          : tensor<i32>, tensor<16x4xf32>, tensor<2x8xf32>
    }
    %update_last = stablehlo.dot_general %w#2, %rhs, contracting_dims = [1] x [0]
        : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    %sum_last = stablehlo.add %index, %last : tensor<i32>
    %mod_last = stablehlo.remainder %sum_last, %size : tensor<i32>
    %row_last = stablehlo.multiply %mod_last, %chunk : tensor<i32>
    %accum = stablehlo.dynamic_update_slice %w#1, %update_last, %row_last, %zero
        : (tensor<16x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    sdy.return %accum : tensor<16x4xf32>
  } : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
