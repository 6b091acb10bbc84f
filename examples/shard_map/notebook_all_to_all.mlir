// Seed 004 (shard_map JEP 14273), section 11 "extra oracles from the upstream notebook"
// (section 9.2 semantics): all_to_all(x_block, 'i', split_axis=0, concat_axis=0, tiled=True)
// on a 1-D mesh of 4 with in_specs=P('i'), out_specs=P('i'), on
// x = [3,1,4,1,5,9,2,6,5,3,5,8,9,7,1,2] (int32). Device k receives piece k of every block, in
// device order (a block transpose), so the result is [3,5,5,9,1,9,3,7,4,2,5,1,1,6,8,2].
sdy.mesh @mesh = <["i"=4]>
func.func @main(%x: tensor<16xi32>) -> tensor<16xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}]>]
      out_shardings=[<@mesh, [{"i"}]>]
      manual_axes={"i"}
      (%blk: tensor<4xi32>) {
    %t = "stablehlo.all_to_all"(%blk) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
           split_count = 4 : i64, split_dimension = 0 : i64}> : (tensor<4xi32>) -> tensor<4xi32>
    sdy.return %t : tensor<4xi32>
  } : (tensor<16xi32>) -> tensor<16xi32>
  return %0 : tensor<16xi32>
}
