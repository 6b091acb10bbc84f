func.func @main(%arg0: tensor<8xf32>, %i: tensor<i32>) -> tensor<f32> {
  %s = stablehlo.constant dense<2.0> : tensor<f32>
  %r = stablehlo.reduce(%arg0 init: %s) across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32> loc("ra"), %b: tensor<f32> loc("rb")) {
     %m0 = stablehlo.multiply %a, %b : tensor<f32>
     %m = stablehlo.add %m0, %b : tensor<f32>
     stablehlo.return %m : tensor<f32>
   }
  %w = stablehlo.while(%it = %i) : tensor<i32>
   cond {
     %c = stablehlo.compare LT, %it, %it : (tensor<i32>, tensor<i32>) -> tensor<i1>
     stablehlo.return %c : tensor<i1>
   } do {
     stablehlo.return %it : tensor<i32>
   }
  return %r : tensor<f32>
}
