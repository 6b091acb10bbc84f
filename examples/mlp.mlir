// A two-layer MLP with its inputs sharded for data and tensor parallelism.
sdy.mesh @mesh = <["data"=2, "model"=4]>

func.func @mlp(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
               %w1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
               %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<8x32xf32>
  %relu = stablehlo.maximum %h, %zero : tensor<8x32xf32>
  %y = stablehlo.dot_general %relu, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %c = sdy.sharding_constraint %y <@mesh, [{"data"}, {?}]> : tensor<8x16xf32>
  return %c : tensor<8x16xf32>
}
