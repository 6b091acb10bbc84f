module @jit_reshapes attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<32x32xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<32x32xf32>) -> tensor<8x4x32xf32>
    %1 = stablehlo.transpose %0, dims = [2, 0, 1] : (tensor<8x4x32xf32>) -> tensor<32x8x4xf32>
    %2 = stablehlo.reshape %1 : (tensor<32x8x4xf32>) -> tensor<32x32xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<32x32xf32>
    return %4 : tensor<32x32xf32>
  }
}
