sdy.mesh @mesh = <["x"=2]>
#l0 = loc("a.py":1:2)
func.func @main(%arg0: tensor<8xf32> loc("argname"), %arg1: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32> loc(#l0)
  %s = stablehlo.constant dense<2.0> : tensor<f32> loc(unknown)
  %r = stablehlo.reduce(%arg0 init: %s) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32> loc("foo"("b.py":3:4))
  %1 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%a: tensor<4xf32> loc("m.py":1:1)) {
    %2 = stablehlo.add %a, %a : tensor<4xf32> loc(callsite("f"("x.py":1:1) at "y.py":2:2))
    sdy.return %2 : tensor<4xf32> loc(fused["a.py":1:2, "q"])
  } : (tensor<8xf32>) -> tensor<8xf32>
  %3 = stablehlo.add %c, %1 : tensor<8xf32> loc(#l0)
  return %r, %3 : tensor<f32>, tensor<8xf32>
}
