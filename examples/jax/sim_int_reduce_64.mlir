module @jit_int_reduce_64 attributes {mhlo.num_partitions = 64 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4, "z"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}, {name = "z", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x64xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<64xi32> {jax.result_info = "result[1]"}, tensor<i32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<16x64xi32>, tensor<i32>) -> tensor<16xi32>
    %c_0 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %1 = stablehlo.reduce(%arg0 init: %c_0) applies stablehlo.maximum across dimensions = [0] : (tensor<16x64xi32>, tensor<i32>) -> tensor<64xi32>
    %c_1 = stablehlo.constant dense<3> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<16x64xi32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<16x64xi32>
    %c_2 = stablehlo.constant dense<1> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<16x64xi32>
    %5 = stablehlo.subtract %3, %4 : tensor<16x64xi32>
    %c_3 = stablehlo.constant dense<2147483647> : tensor<i32>
    %6 = stablehlo.reduce(%5 init: %c_3) applies stablehlo.minimum across dimensions = [0, 1] : (tensor<16x64xi32>, tensor<i32>) -> tensor<i32>
    return %0, %1, %6 : tensor<16xi32>, tensor<64xi32>, tensor<i32>
  }
}
