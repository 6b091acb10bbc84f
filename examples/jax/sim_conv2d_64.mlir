module @jit_conv2d_64 attributes {mhlo.num_partitions = 64 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=8, "y"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}, {name = "y", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<8x8x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {"y"}]>}, %arg1: tensor<3x3x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"y"}, {}]>}) -> (tensor<8x8x8x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}, {}]>}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x8x8x8xf32>, tensor<3x3x8x8xf32>) -> tensor<8x8x8x8xf32>
    return %0 : tensor<8x8x8x8xf32>
  }
}
