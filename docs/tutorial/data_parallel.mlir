// Data parallelism: the batch is split over 4 devices, the weights are whole on each.
sdy.mesh @mesh = <["batch"=4]>

func.func @main(%x: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>},
                %w: tensor<4x2xi32>) -> tensor<8x2xi32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x4xi32>, tensor<4x2xi32>) -> tensor<8x2xi32>
  %relu = stablehlo.maximum %y, %y : tensor<8x2xi32>
  return %relu : tensor<8x2xi32>
}
