// Fully sharded data parallelism: the batch and the weight are both split over "data",
// so each device stores a quarter of the weight and gathers the whole before using it.
sdy.mesh @mesh = <["data"=4]>

func.func @main(%x: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w: tensor<4x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
    -> tensor<8x8xi32> {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x4xi32>, tensor<4x8xi32>) -> tensor<8x8xi32>
  return %y : tensor<8x8xi32>
}
