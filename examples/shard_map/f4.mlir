// Seed 004 (shard_map JEP 14273), section 3.3 "out_specs": f4(x_block) = psum(x_block, 'i')
// with in_specs=P('i','j'), out_specs=P(None, 'j') on mesh i=4, j=2, applied to
// x = np.arange(144).reshape(12, 12) (int32, as jnp). Blocks are (3,6); the psum over i
// (groups [[0,2,4,6],[1,3,5,7]]) makes them equal along i: y4 has shape (3,12) and equals
// x.reshape(4, 3, 12).sum(0) (row 0 = [216,220,...,260]).
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x: tensor<12x12xi32>) -> tensor<3x12xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}, {"j"}]>]
      out_shardings=[<@mesh, [{}, {"j"}]>]
      manual_axes={"i", "j"}
      (%blk: tensor<3x6xi32>) {
    %s = "stablehlo.all_reduce"(%blk) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>,
           use_global_device_ids}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %z = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %z : tensor<i32>
    }) : (tensor<3x6xi32>) -> tensor<3x6xi32>
    sdy.return %s : tensor<3x6xi32>
  } : (tensor<12x12xi32>) -> tensor<3x12xi32>
  return %0 : tensor<3x12xi32>
}
