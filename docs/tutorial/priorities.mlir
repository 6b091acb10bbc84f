// Two inputs want the same axis "x" on different dimensions of one sum. Priority p0
// propagates before p1, so the weight's wish wins over the activation's.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%activation: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p1, {?}]>},
                %weight: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}p0]>})
    -> tensor<8x8xi32> {
  %sum = stablehlo.add %activation, %weight : tensor<8x8xi32>
  %out = stablehlo.negate %sum : tensor<8x8xi32>
  return %out : tensor<8x8xi32>
}
