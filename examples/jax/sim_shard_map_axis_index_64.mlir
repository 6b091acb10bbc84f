module @jit_shard_map_axis_index_64 attributes {mhlo.num_partitions = 64 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=4, "z"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 4 : i64}, {name = "z", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x32xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", "z"}]>}) -> (tensor<8x2xi32> {jax.result_info = "result"}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y", "z"}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x", "y", "z"} (%arg1: tensor<2x2xi32>) {
      %c = stablehlo.constant dense<16> : tensor<ui32>
      %c_0 = stablehlo.constant dense<4> : tensor<ui32>
      %1 = stablehlo.partition_id : tensor<ui32>
      %2 = stablehlo.divide %1, %c : tensor<ui32>
      %3 = stablehlo.remainder %2, %c_0 : tensor<ui32>
      %4 = stablehlo.convert %3 : (tensor<ui32>) -> tensor<i32>
      %c_1 = stablehlo.constant dense<100> : tensor<i32>
      %5 = stablehlo.multiply %4, %c_1 : tensor<i32>
      %c_2 = stablehlo.constant dense<1> : tensor<ui32>
      %c_3 = stablehlo.constant dense<4> : tensor<ui32>
      %6 = stablehlo.partition_id : tensor<ui32>
      %7 = stablehlo.divide %6, %c_2 : tensor<ui32>
      %8 = stablehlo.remainder %7, %c_3 : tensor<ui32>
      %9 = stablehlo.convert %8 : (tensor<ui32>) -> tensor<i32>
      %10 = stablehlo.add %5, %9 : tensor<i32>
      %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<2x2xi32>
      %12 = stablehlo.add %arg1, %11 : tensor<2x2xi32>
      %13 = "stablehlo.all_reduce"(%12) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31], [32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47], [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]]> : tensor<4x16xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
        %14 = stablehlo.add %arg2, %arg3 : tensor<i32>
        stablehlo.return %14 : tensor<i32>
      }) : (tensor<2x2xi32>) -> tensor<2x2xi32>
      sdy.return %13 : tensor<2x2xi32>
    } : (tensor<8x32xi32>) -> tensor<8x2xi32>
    return %0 : tensor<8x2xi32>
  }
}
