// priorities.mlir without its priorities: both wishes are equal, and the first operand's wins.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%activation: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>},
                %weight: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"x", ?}]>})
    -> tensor<8x8xi32> {
  %sum = stablehlo.add %activation, %weight : tensor<8x8xi32>
  %out = stablehlo.negate %sum : tensor<8x8xi32>
  return %out : tensor<8x8xi32>
}
