module @jit_nondivisible_10 attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:10, 0:32] : (tensor<16x32xf32>) -> tensor<10x32xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<10x32xf32>, tensor<32x16xf32>) -> tensor<10x16xf32>
    %2 = stablehlo.tanh %1 : tensor<10x16xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{"model"}, {}]> : tensor<10x16xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10x16xf32>
    %5 = stablehlo.multiply %3, %4 : tensor<10x16xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%5 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<10x16xf32>, tensor<f32>) -> tensor<16xf32>
    return %6 : tensor<16xf32>
  }
}
