module @jit_transformer_block_64 attributes {mhlo.num_partitions = 64 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=8, "y"=8]> {stablehlo.mesh = {axes = [{name = "x", size = 8 : i64}, {name = "y", size = 8 : i64}]}}
  func.func public @main(%arg0: tensor<8x8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<32x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {}]>}, %arg3: tensor<32x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {}]>}, %arg4: tensor<32x8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}, {}]>}, %arg5: tensor<8x4x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {}]>}, %arg6: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg8: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> (tensor<8x8x32xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<8x8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x8x32xf32>
    %6 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %7 = stablehlo.subtract %arg0, %6 : tensor<8x8x32xf32>
    %8 = stablehlo.multiply %5, %7 : tensor<8x8x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<8x8x1xf32>
    %13 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %14 = stablehlo.subtract %arg0, %13 : tensor<8x8x32xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %16 = stablehlo.add %12, %15 : tensor<8x8x1xf32>
    %17 = stablehlo.sqrt %16 : tensor<8x8x1xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %19 = stablehlo.divide %14, %18 : tensor<8x8x32xf32>
    %20 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %22 = stablehlo.multiply %19, %21 : tensor<8x8x32xf32>
    %23 = stablehlo.dot_general %22, %arg2, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x8x4xf32>) -> tensor<8x8x8x4xf32>
    %24 = stablehlo.dot_general %22, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x8x4xf32>) -> tensor<8x8x8x4xf32>
    %25 = stablehlo.dot_general %22, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x8x4xf32>) -> tensor<8x8x8x4xf32>
    %26 = stablehlo.dot_general %23, %24, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x8x4xf32>, tensor<8x8x8x4xf32>) -> tensor<8x8x8x8xf32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x8x8x8xf32>
    %28 = stablehlo.divide %26, %27 : tensor<8x8x8x8xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_5) applies stablehlo.maximum across dimensions = [3] : (tensor<8x8x8x8xf32>, tensor<f32>) -> tensor<8x8x8xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x8x8xf32>
    %31 = stablehlo.maximum %30, %29 : tensor<8x8x8xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1, 2] : (tensor<8x8x8xf32>) -> tensor<8x8x8x1xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1, 2, 3] : (tensor<8x8x8x1xf32>) -> tensor<8x8x8x8xf32>
    %34 = stablehlo.subtract %28, %33 : tensor<8x8x8x8xf32>
    %35 = stablehlo.exponential %34 : tensor<8x8x8x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_7) applies stablehlo.add across dimensions = [3] : (tensor<8x8x8x8xf32>, tensor<f32>) -> tensor<8x8x8xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0, 1, 2] : (tensor<8x8x8xf32>) -> tensor<8x8x8x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1, 2, 3] : (tensor<8x8x8x1xf32>) -> tensor<8x8x8x8xf32>
    %39 = stablehlo.divide %35, %38 : tensor<8x8x8x8xf32>
    %40 = stablehlo.dot_general %25, %39, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x8x8x4xf32>, tensor<8x8x8x8xf32>) -> tensor<8x8x4x8xf32>
    %41 = stablehlo.transpose %40, dims = [0, 3, 1, 2] : (tensor<8x8x4x8xf32>) -> tensor<8x8x8x4xf32>
    %42 = stablehlo.dot_general %41, %arg5, contracting_dims = [2, 3] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x8x4xf32>, tensor<8x4x32xf32>) -> tensor<8x8x32xf32>
    %43 = stablehlo.add %arg0, %42 : tensor<8x8x32xf32>
    %44 = sdy.sharding_constraint %43 <@mesh, [{"x"}, {}, {}]> : tensor<8x8x32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.reduce(%44 init: %cst_8) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_9 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %48 = stablehlo.divide %46, %47 : tensor<8x8x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %50 = stablehlo.subtract %44, %49 : tensor<8x8x32xf32>
    %51 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %52 = stablehlo.subtract %44, %51 : tensor<8x8x32xf32>
    %53 = stablehlo.multiply %50, %52 : tensor<8x8x32xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_11 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %57 = stablehlo.divide %55, %56 : tensor<8x8x1xf32>
    %58 = stablehlo.broadcast_in_dim %48, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %59 = stablehlo.subtract %44, %58 : tensor<8x8x32xf32>
    %cst_12 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %61 = stablehlo.add %57, %60 : tensor<8x8x1xf32>
    %62 = stablehlo.sqrt %61 : tensor<8x8x1xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %64 = stablehlo.divide %59, %63 : tensor<8x8x32xf32>
    %65 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %66 = stablehlo.broadcast_in_dim %65, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %67 = stablehlo.multiply %64, %66 : tensor<8x8x32xf32>
    %68 = stablehlo.dot_general %67, %arg7, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    %69 = call @relu(%68) : (tensor<8x8x64xf32>) -> tensor<8x8x64xf32>
    %70 = stablehlo.dot_general %69, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<64x32xf32>) -> tensor<8x8x32xf32>
    %71 = stablehlo.add %44, %70 : tensor<8x8x32xf32>
    return %71 : tensor<8x8x32xf32>
  }
  func.func private @relu(%arg0: tensor<8x8x64xf32>) -> tensor<8x8x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x8x64xf32>
    return %1 : tensor<8x8x64xf32>
  }
}
