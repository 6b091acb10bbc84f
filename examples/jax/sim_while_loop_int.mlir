module @jit_while_loop_int attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> (tensor<16x32xi32> {jax.result_info = "result[0]"}, tensor<i32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<16x32xi32>, tensor<i32>
    cond {
      %c_1 = stablehlo.constant dense<-2147483648> : tensor<i32>
      %1 = stablehlo.reduce(%iterArg init: %c_1) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<16x32xi32>, tensor<i32>) -> tensor<i32>
      %c_2 = stablehlo.constant dense<3> : tensor<i32>
      %2 = stablehlo.compare GT, %1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<2> : tensor<i32>
      %1 = func.call @floor_divide(%iterArg, %c_1) : (tensor<16x32xi32>, tensor<i32>) -> tensor<16x32xi32>
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg_0, %c_2 : tensor<i32>
      stablehlo.return %1, %2 : tensor<16x32xi32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<16x32xi32>, tensor<i32>
  }
  func.func private @floor_divide(%arg0: tensor<16x32xi32>, %arg1: tensor<i32>) -> tensor<16x32xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<16x32xi32>
    %2 = stablehlo.divide %arg0, %1 : tensor<16x32xi32>
    %3 = stablehlo.sign %arg0 : tensor<16x32xi32>
    %4 = stablehlo.sign %0 : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<i32>) -> tensor<16x32xi32>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
    %7 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i32>) -> tensor<16x32xi32>
    %8 = stablehlo.remainder %arg0, %7 : tensor<16x32xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x32xi32>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi1>
    %11 = stablehlo.and %6, %10 : tensor<16x32xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<16x32xi32>
    %13 = stablehlo.subtract %2, %12 : tensor<16x32xi32>
    %14 = call @_where(%11, %13, %2) : (tensor<16x32xi1>, tensor<16x32xi32>, tensor<16x32xi32>) -> tensor<16x32xi32>
    return %14 : tensor<16x32xi32>
  }
  func.func private @_where(%arg0: tensor<16x32xi1>, %arg1: tensor<16x32xi32>, %arg2: tensor<16x32xi32>) -> tensor<16x32xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<16x32xi1>, tensor<16x32xi32>
    return %0 : tensor<16x32xi32>
  }
}
