// Four devices [0, 1, 2, 3] reshaped to [[0, 1], [2, 3]]: a mesh with axes "x" and "y".
// The same 2x2 tensor [[a, b], [c, d]] sharded four ways.
sdy.mesh @mesh_xy = <["x"=2, "y"=2]>

func.func @main(%replicated: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh_xy, [{}, {}]>},
                %rows: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh_xy, [{"x"}, {}]>},
                %cols: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh_xy, [{}, {"y"}]>},
                %both: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh_xy, [{"x"}, {"y"}]>})
    -> tensor<2x2xf32> {
  return %both : tensor<2x2xf32>
}
