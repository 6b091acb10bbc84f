module @jit_conv2d_16 attributes {mhlo.num_partitions = 16 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x9x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}, %arg1: tensor<3x3x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {"y"}]>}) -> (tensor<4x4x6x8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x9x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<4x4x6x8xf32>
    return %0 : tensor<4x4x6x8xf32>
  }
}
