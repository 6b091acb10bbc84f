module @jit_conv1d attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<3x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}) -> (tensor<8x32x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {"model"}]>}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<8x32x4xf32>, tensor<3x4x8xf32>) -> tensor<8x32x8xf32>
    %1 = call @relu(%0) : (tensor<8x32x8xf32>) -> tensor<8x32x8xf32>
    return %1 : tensor<8x32x8xf32>
  }
  func.func private @relu(%arg0: tensor<8x32x8xf32>) -> tensor<8x32x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x32x8xf32>
    return %1 : tensor<8x32x8xf32>
  }
}
