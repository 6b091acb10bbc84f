// A sharding constraint on an intermediate value, and a propagation barrier that stops
// the sharding from flowing back into the input.
sdy.mesh @mesh = <["x"=4]>

func.func @main(%arg0: tensor<8x8xi32>) -> (tensor<8x8xi32>, tensor<8x8xi32>) {
  %0 = stablehlo.abs %arg0 : tensor<8x8xi32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<8x8xi32>
  %2 = sdy.propagation_barrier %arg0 allowed_direction=NONE : tensor<8x8xi32>
  %3 = stablehlo.negate %2 : tensor<8x8xi32>
  %4 = sdy.sharding_constraint %3 <@mesh, [{"x"}, {}]> : tensor<8x8xi32>
  return %1, %4 : tensor<8x8xi32>, tensor<8x8xi32>
}
