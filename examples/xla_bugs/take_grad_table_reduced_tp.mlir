module @jit_loss attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["dp"=2, "tp"=4]> {stablehlo.mesh = {axes = [{name = "dp", size = 2 : i64}, {name = "tp", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<2x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}]>}, %arg2: tensor<2x16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp"}, {}, {}]>}) -> (tensor<32x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"tp"}>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<2x16xi32>, tensor<2x16xi32>) -> tensor<2x16xi1>
    %c_0 = stablehlo.constant dense<32> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<2x16xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<2x16xi1>, tensor<2x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<2x16xi32>) -> tensor<2x16x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 8>}> : (tensor<32x8xf32>, tensor<2x16x1xi32>) -> tensor<2x16x8xf32>
    %7 = sdy.sharding_constraint %6 <@mesh, [{"dp"}, {}, {}]> : tensor<2x16x8xf32>
    %8 = stablehlo.multiply %7, %arg2 : tensor<2x16x8xf32>
    %9 = sdy.sharding_constraint %8 <@mesh, [{"dp"}, {}, {}]> : tensor<2x16x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x16x8xf32>, tensor<f32>) -> tensor<f32>
    %11 = sdy.sharding_constraint %10 <@mesh, []> : tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = sdy.sharding_constraint %cst_1 <@mesh, []> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<2x16x8xf32>
    %14 = sdy.sharding_constraint %13 <@mesh, [{"dp"}, {}, {}]> : tensor<2x16x8xf32>
    %15 = stablehlo.multiply %14, %arg2 : tensor<2x16x8xf32>
    %16 = sdy.sharding_constraint %15 <@mesh, [{"dp"}, {}, {}]> : tensor<2x16x8xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<32x8xf32>
    %18 = "stablehlo.scatter"(%17, %5, %16) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %20 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %20 : tensor<f32>
    }) : (tensor<32x8xf32>, tensor<2x16x1xi32>, tensor<2x16x8xf32>) -> tensor<32x8xf32>
    %19 = sdy.sharding_constraint %18 <@mesh, [{}, {}], unreduced={"tp"}> : tensor<32x8xf32>
    return %19 : tensor<32x8xf32>
  }
}
