module @jit_scatter_int_histogram_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=8]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<32x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}, %arg1: tensor<16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}, %arg2: tensor<16x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<32x8xi32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {"a"}]>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
    %c_0 = stablehlo.constant dense<32> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<16xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<16xi1>, tensor<16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<16xi32>) -> tensor<16x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      %7 = stablehlo.add %arg3, %arg4 : tensor<i32>
      stablehlo.return %7 : tensor<i32>
    }) : (tensor<32x8xi32>, tensor<16x1xi32>, tensor<16x8xi32>) -> tensor<32x8xi32>
    return %6 : tensor<32x8xi32>
  }
}
