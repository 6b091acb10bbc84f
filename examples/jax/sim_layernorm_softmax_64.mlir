module @jit_layernorm_softmax_64 attributes {mhlo.num_partitions = 64 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=8, "y"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}, {name = "y", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<16x64xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<16xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %cst_0 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<16x64xf32>
    %6 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %7 = stablehlo.subtract %arg0, %6 : tensor<16x64xf32>
    %8 = stablehlo.multiply %5, %7 : tensor<16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<16x1xf32>
    %13 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %14 = stablehlo.subtract %arg0, %13 : tensor<16x64xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x1xf32>
    %16 = stablehlo.add %12, %15 : tensor<16x1xf32>
    %17 = stablehlo.sqrt %16 : tensor<16x1xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %19 = stablehlo.divide %14, %18 : tensor<16x64xf32>
    %20 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1] : (tensor<1x64xf32>) -> tensor<16x64xf32>
    %22 = stablehlo.multiply %19, %21 : tensor<16x64xf32>
    %cst_4 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %23 = stablehlo.reduce(%22 init: %cst_4) applies stablehlo.maximum across dimensions = [1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<16xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<16xf32>
    %25 = stablehlo.maximum %24, %23 : tensor<16xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %28 = stablehlo.subtract %22, %27 : tensor<16x64xf32>
    %29 = stablehlo.exponential %28 : tensor<16x64xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.reduce(%29 init: %cst_6) applies stablehlo.add across dimensions = [1] : (tensor<16x64xf32>, tensor<f32>) -> tensor<16xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0] : (tensor<16xf32>) -> tensor<16x1xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1] : (tensor<16x1xf32>) -> tensor<16x64xf32>
    %33 = stablehlo.divide %29, %32 : tensor<16x64xf32>
    return %33 : tensor<16x64xf32>
  }
}
