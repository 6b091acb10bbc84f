module @jit_argmax_int_8 attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<16xi32> {jax.result_info = "result[0]"}, tensor<16x32xi32> {jax.result_info = "result[1]"}) {
    %0 = call @argmax(%arg0) : (tensor<16x32xi32>) -> tensor<16xi32>
    %1 = call @cumsum(%arg0) : (tensor<16x32xi32>) -> tensor<16x32xi32>
    return %0, %1 : tensor<16xi32>, tensor<16x32xi32>
  }
  func.func private @argmax(%arg0: tensor<16x32xi32>) -> tensor<16xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<16x32xi32>
    %c = stablehlo.constant dense<-2147483648> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %c), (%0 init: %c_0) across dimensions = [1] : (tensor<16x32xi32>, tensor<16x32xi32>, tensor<i32>, tensor<i32>) -> (tensor<16xi32>, tensor<16xi32>)
     reducer(%arg1: tensor<i32>, %arg3: tensor<i32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<i32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<i32>, tensor<i32>
    }
    return %1#1 : tensor<16xi32>
  }
  func.func private @cumsum(%arg0: tensor<16x32xi32>) -> tensor<16x32xi32> {
    %0 = call @cumsum_0(%arg0) : (tensor<16x32xi32>) -> tensor<16x32xi32>
    return %0 : tensor<16x32xi32>
  }
  func.func private @cumsum_0(%arg0: tensor<16x32xi32>) -> tensor<16x32xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<i32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[15, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 16, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<i32>
      stablehlo.return %2 : tensor<i32>
    }) : (tensor<16x32xi32>, tensor<i32>) -> tensor<16x32xi32>
    return %1 : tensor<16x32xi32>
  }
}
