module @jit_transformer_block attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<2x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<32x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>}, %arg3: tensor<32x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>}, %arg4: tensor<32x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>}, %arg5: tensor<4x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}, %arg6: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg8: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<2x8x32xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<2x8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x8x32xf32>
    %6 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %7 = stablehlo.subtract %arg0, %6 : tensor<2x8x32xf32>
    %8 = stablehlo.multiply %5, %7 : tensor<2x8x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<2x8x1xf32>
    %13 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %14 = stablehlo.subtract %arg0, %13 : tensor<2x8x32xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %16 = stablehlo.add %12, %15 : tensor<2x8x1xf32>
    %17 = stablehlo.sqrt %16 : tensor<2x8x1xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %19 = stablehlo.divide %14, %18 : tensor<2x8x32xf32>
    %20 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %22 = stablehlo.multiply %19, %21 : tensor<2x8x32xf32>
    %23 = stablehlo.dot_general %22, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x4x8xf32>) -> tensor<2x8x4x8xf32>
    %24 = stablehlo.dot_general %22, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x4x8xf32>) -> tensor<2x8x4x8xf32>
    %25 = stablehlo.dot_general %22, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x4x8xf32>) -> tensor<2x8x4x8xf32>
    %26 = stablehlo.dot_general %23, %24, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %cst_4 = stablehlo.constant dense<2.82842708> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x4x8x8xf32>
    %28 = stablehlo.divide %26, %27 : tensor<2x4x8x8xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x4x8xf32>
    %31 = stablehlo.maximum %30, %29 : tensor<2x4x8xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1, 2] : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1, 2, 3] : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %34 = stablehlo.subtract %28, %33 : tensor<2x4x8x8xf32>
    %35 = stablehlo.exponential %34 : tensor<2x4x8x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_7) applies stablehlo.add across dimensions = [3] : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0, 1, 2] : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1, 2, 3] : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %39 = stablehlo.divide %35, %38 : tensor<2x4x8x8xf32>
    %40 = stablehlo.dot_general %25, %39, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %41 = stablehlo.transpose %40, dims = [0, 3, 1, 2] : (tensor<2x4x8x8xf32>) -> tensor<2x8x4x8xf32>
    %42 = stablehlo.dot_general %41, %arg5, contracting_dims = [2, 3] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<2x8x4x8xf32>, tensor<4x8x32xf32>) -> tensor<2x8x32xf32>
    %43 = stablehlo.add %arg0, %42 : tensor<2x8x32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.reduce(%43 init: %cst_8) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %45 = stablehlo.broadcast_in_dim %44, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_9 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %47 = stablehlo.divide %45, %46 : tensor<2x8x1xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %49 = stablehlo.subtract %43, %48 : tensor<2x8x32xf32>
    %50 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %51 = stablehlo.subtract %43, %50 : tensor<2x8x32xf32>
    %52 = stablehlo.multiply %49, %51 : tensor<2x8x32xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_11 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %56 = stablehlo.divide %54, %55 : tensor<2x8x1xf32>
    %57 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %58 = stablehlo.subtract %43, %57 : tensor<2x8x32xf32>
    %cst_12 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %60 = stablehlo.add %56, %59 : tensor<2x8x1xf32>
    %61 = stablehlo.sqrt %60 : tensor<2x8x1xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %63 = stablehlo.divide %58, %62 : tensor<2x8x32xf32>
    %64 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %66 = stablehlo.multiply %63, %65 : tensor<2x8x32xf32>
    %67 = stablehlo.dot_general %66, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
    %68 = stablehlo.multiply %67, %67 : tensor<2x8x64xf32>
    %69 = stablehlo.multiply %68, %67 : tensor<2x8x64xf32>
    %cst_13 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %71 = stablehlo.multiply %70, %69 : tensor<2x8x64xf32>
    %72 = stablehlo.add %67, %71 : tensor<2x8x64xf32>
    %cst_14 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %74 = stablehlo.multiply %73, %72 : tensor<2x8x64xf32>
    %75 = stablehlo.tanh %74 : tensor<2x8x64xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %77 = stablehlo.add %76, %75 : tensor<2x8x64xf32>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %79 = stablehlo.multiply %78, %77 : tensor<2x8x64xf32>
    %80 = stablehlo.multiply %67, %79 : tensor<2x8x64xf32>
    %81 = stablehlo.dot_general %80, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
    %82 = stablehlo.add %43, %81 : tensor<2x8x32xf32>
    return %82 : tensor<2x8x32xf32>
  }
}
