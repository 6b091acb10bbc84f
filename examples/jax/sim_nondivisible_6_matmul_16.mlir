module @jit_nondivisible_6_matmul_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg2: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<6x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<6x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{"y"}, {"x"}]> : tensor<6x8xf32>
    %4 = stablehlo.tanh %3 : tensor<6x8xf32>
    %5 = stablehlo.dot_general %4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
    return %5 : tensor<6x4xf32>
  }
}
