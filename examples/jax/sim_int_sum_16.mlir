module @jit_int_sum_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<32x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<i32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<32x16xi32>
    %c = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<32x16xi32>
    %2 = stablehlo.subtract %0, %1 : tensor<32x16xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.reduce(%2 init: %c_0) applies stablehlo.add across dimensions = [0] : (tensor<32x16xi32>, tensor<i32>) -> tensor<16xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.reduce(%2 init: %c_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<32x16xi32>, tensor<i32>) -> tensor<i32>
    return %3, %4 : tensor<16xi32>, tensor<i32>
  }
}
