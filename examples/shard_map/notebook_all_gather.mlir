// Seed 004 (shard_map JEP 14273), section 11 "extra oracles from the upstream notebook"
// (section 9.2 semantics): all_gather(x_block, 'i', tiled=True) on a 1-D mesh of 4 with
// in_specs=P('i'), out_specs=P('i'), on x = [3,9,5,2] (int32). Each device holds one element
// and gathers the whole [3,9,5,2]; out_specs P('i') concatenates the four copies, so the
// result is [3,9,5,2] repeated 4 times (16 elements).
sdy.mesh @mesh = <["i"=4]>
func.func @main(%x: tensor<4xi32>) -> tensor<16xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}]>]
      out_shardings=[<@mesh, [{"i"}]>]
      manual_axes={"i"}
      (%blk: tensor<1xi32>) {
    %g = "stablehlo.all_gather"(%blk) <{all_gather_dim = 0 : i64,
           channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
           use_global_device_ids}> : (tensor<1xi32>) -> tensor<4xi32>
    sdy.return %g : tensor<4xi32>
  } : (tensor<4xi32>) -> tensor<16xi32>
  return %0 : tensor<16xi32>
}
