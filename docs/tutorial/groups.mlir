// The Compiler API doc's zeros_like: the output has no data dependency on the input, yet
// should be sharded like it. A sharding group (id 0) ties the two together.
sdy.mesh @mesh_xy = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh_xy, [{"x"}, {"y"}]>}) -> tensor<8x2xi64> {
  sdy.sharding_group %arg0 group_id=0 : tensor<8x2xi64>
  %zeros = stablehlo.constant dense<0> : tensor<8x2xi64>
  sdy.sharding_group %zeros group_id=0 : tensor<8x2xi64>
  return %zeros : tensor<8x2xi64>
}
