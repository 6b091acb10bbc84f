module @jit_top_k attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<16x4xf32> {jax.result_info = "result[0]"}, tensor<16x4xi32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<16x32xf32>
    %values, %indices = chlo.top_k(%0, k = 4) : tensor<16x32xf32> -> (tensor<16x4xf32>, tensor<16x4xi32>)
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x4xf32>
    %2 = stablehlo.multiply %values, %1 : tensor<16x4xf32>
    return %2, %indices : tensor<16x4xf32>, tensor<16x4xi32>
  }
}
