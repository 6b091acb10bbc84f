// Megatron-style tensor parallelism: the first layer's weight is split by columns, the
// second's by rows, so the hidden activation is never gathered.
sdy.mesh @mesh = <["model"=4]>

func.func @main(%x: tensor<2x8xi32>,
                %w1: tensor<8x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                %w2: tensor<16x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
    -> tensor<2x8xi32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<2x8xi32>, tensor<8x16xi32>) -> tensor<2x16xi32>
  %zero = stablehlo.constant dense<0> : tensor<2x16xi32>
  %relu = stablehlo.maximum %h, %zero : tensor<2x16xi32>
  %y = stablehlo.dot_general %relu, %w2, contracting_dims = [1] x [0] : (tensor<2x16xi32>, tensor<16x8xi32>) -> tensor<2x8xi32>
  return %y : tensor<2x8xi32>
}
