module @jit_int_matmul attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<16x32xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg1: tensor<32x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<16x16xi32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xi32>, tensor<32x16xi32>) -> tensor<16x16xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %2 = stablehlo.maximum %0, %1 : tensor<16x16xi32>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    %3 = call @remainder(%2, %c_0) : (tensor<16x16xi32>, tensor<i32>) -> tensor<16x16xi32>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %5 = stablehlo.shift_right_arithmetic %0, %4 : tensor<16x16xi32>
    %6 = stablehlo.subtract %3, %5 : tensor<16x16xi32>
    return %6 : tensor<16x16xi32>
  }
  func.func private @remainder(%arg0: tensor<16x16xi32>, %arg1: tensor<i32>) -> tensor<16x16xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<16x16xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<16x16xi1>, tensor<16x16xi1>) -> tensor<16x16xi1>
    %12 = stablehlo.and %11, %6 : tensor<16x16xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %14 = stablehlo.add %4, %13 : tensor<16x16xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<16x16xi1>, tensor<16x16xi32>
    return %15 : tensor<16x16xi32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
