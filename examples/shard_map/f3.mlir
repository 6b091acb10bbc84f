// Seed 004 (shard_map JEP 14273), section 3.3 "out_specs": f3(x_block) = psum(x_block, 'j')
// with in_specs=P('i','j'), out_specs=P('i', None) on mesh i=4, j=2, applied to
// x = np.arange(144).reshape(12, 12) (int32, as jnp). Blocks are (3,6); the psum over j
// (groups [[0,1],[2,3],[4,5],[6,7]]) makes them equal along j, so leaving j out of out_specs
// is safe: y3 has shape (12,6) and equals x[:, :6] + x[:, 6:] (row 0 = [6,8,10,12,14,16]).
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x: tensor<12x12xi32>) -> tensor<12x6xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}, {"j"}]>]
      out_shardings=[<@mesh, [{"i"}, {}]>]
      manual_axes={"i", "j"}
      (%blk: tensor<3x6xi32>) {
    %s = "stablehlo.all_reduce"(%blk) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>,
           use_global_device_ids}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %z = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %z : tensor<i32>
    }) : (tensor<3x6xi32>) -> tensor<3x6xi32>
    sdy.return %s : tensor<3x6xi32>
  } : (tensor<12x12xi32>) -> tensor<12x6xi32>
  return %0 : tensor<12x6xi32>
}
