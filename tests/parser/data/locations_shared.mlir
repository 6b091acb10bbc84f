func.func @main(%arg0: tensor<8xf32> loc("n"("a.py":1:2)), %arg1: tensor<8xf32> loc("shared.py":5:5)) -> tensor<8xf32> {
  %3 = stablehlo.add %arg0, %arg1 : tensor<8xf32> loc("shared.py":5:5)
  %4 = stablehlo.add %3, %arg1 : tensor<8xf32> loc("a.py":1:2)
  %c = stablehlo.constant dense<0> : tensor<i32>
  %5 = "stablehlo.case"(%c) ({
    stablehlo.return %4 : tensor<8xf32>
  }) : (tensor<i32>) -> tensor<8xf32>
  return %5 : tensor<8xf32>
}
