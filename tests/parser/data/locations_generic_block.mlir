func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.sort"(%arg0) ({
  ^bb0(%a: tensor<f32> loc("sa"), %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
