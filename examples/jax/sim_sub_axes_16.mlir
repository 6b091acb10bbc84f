module @jit_sub_axes_reshape_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=8]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}, %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<16x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<16x32xf32>) -> tensor<2x8x32xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x8xf32>) -> tensor<2x8x8xf32>
    %2 = stablehlo.tanh %1 : tensor<2x8x8xf32>
    %3 = stablehlo.reshape %2 : (tensor<2x8x8xf32>) -> tensor<16x8xf32>
    return %3 : tensor<16x8xf32>
  }
}
