// Sharding representation's sub-axes motivation: 8 elements over 4 devices, reshaped to 2x4.
sdy.mesh @mesh_x = <["x"=4]>

func.func @main(%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh_x, [{"x"}]>}) -> tensor<2x4xi32> {
  %0 = stablehlo.reshape %arg0 : (tensor<8xi32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}
