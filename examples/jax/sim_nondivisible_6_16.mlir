module @jit_nondivisible_6_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {"x"}]> : tensor<6x8xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<6x8xf32>
    %4 = stablehlo.exponential %3 : tensor<6x8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<6x8xf32>, tensor<f32>) -> tensor<8xf32>
    return %5 : tensor<8xf32>
  }
}
