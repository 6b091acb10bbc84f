// Seed 004 (shard_map JEP 14273), section 11 "extra oracles from the upstream notebook"
// (section 9.2 semantics): ppermute(x_block, 'i', perm=[(0, 1), (1, 0)]) on a 1-D mesh of 2
// with in_specs=P('i'), out_specs=P('i'), on x = arange(8) (int32): the two devices swap
// their blocks, so the result is [4,5,6,7,0,1,2,3].
sdy.mesh @mesh = <["i"=2]>
func.func @main(%x: tensor<8xi32>) -> tensor<8xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}]>]
      out_shardings=[<@mesh, [{"i"}]>]
      manual_axes={"i"}
      (%blk: tensor<4xi32>) {
    %p = "stablehlo.collective_permute"(%blk) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}>
         : (tensor<4xi32>) -> tensor<4xi32>
    sdy.return %p : tensor<4xi32>
  } : (tensor<8xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
