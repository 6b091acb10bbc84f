// The pieces of a sharding (openxla.org/shardy/sharding_representation), one argument each.
sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>

func.func @main(
    // dim 0 over "x"; dim 1 over "z" then "y" (major to minor): local shape 2x1
    %major_minor: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"z", "y"}]>},
    // dim 0 closed; dim 1 open ("?"): propagation may add axes after "z"
    %open: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"z", ?}]>},
    // "y" explicitly replicated: nothing may shard this tensor along "y"
    %replicated: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {?}], replicated={"y"}>},
    // "y" of size 4 seen as two sub-axes "y":(1)2 and "y":(2)2: only the minor one shards dim 1
    %sub_axis: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y":(2)2}]>},
    // a partial sum along "z": each "z" group holds addends that still need summing
    %unreduced: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"z"}>},
    // priorities: p0 propagates before p1; the lower the number, the earlier
    %priorities: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p0, {"y", ?}p1]>})
    -> tensor<4x8xf32> {
  return %major_minor : tensor<4x8xf32>
}
