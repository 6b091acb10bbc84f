module @jit_concat_split attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> (tensor<16x48xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x64xf32>
    %1 = stablehlo.slice %0 [0:16, 0:48] : (tensor<16x64xf32>) -> tensor<16x48xf32>
    %2 = stablehlo.tanh %1 : tensor<16x48xf32>
    return %2 : tensor<16x48xf32>
  }
}
