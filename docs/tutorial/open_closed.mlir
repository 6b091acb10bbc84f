// Open and closed dimensions, and explicit replication, under propagation.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%open: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}]>},
                %closed: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                %no_y: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}], replicated={"y"}>})
    -> (tensor<8x8xi32>, tensor<8x8xi32>) {
  %sum = stablehlo.add %open, %closed : tensor<8x8xi32>
  %prod = stablehlo.multiply %sum, %no_y : tensor<8x8xi32>
  return %sum, %prod : tensor<8x8xi32>, tensor<8x8xi32>
}
