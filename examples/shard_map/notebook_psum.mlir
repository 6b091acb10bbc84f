// Seed 004 (shard_map JEP 14273), section 11 "extra oracles from the upstream notebook"
// (section 9.2 semantics): psum on a 1-D mesh of 4 with in_specs=P('i'), out_specs=P(), on
// x = [3,1,4,1,5,9,2,6,5,3,5,8,9,7,1,2] (int32). Each device holds a block of 4; the psum over
// i (one group [[0,1,2,3]]) sums the blocks, and every device returns [22,20,12,17].
sdy.mesh @mesh = <["i"=4]>
func.func @main(%x: tensor<16xi32>) -> tensor<4xi32> {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{"i"}]>]
      out_shardings=[<@mesh, [{}]>]
      manual_axes={"i"}
      (%blk: tensor<4xi32>) {
    %s = "stablehlo.all_reduce"(%blk) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
           use_global_device_ids}> ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %z = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %z : tensor<i32>
    }) : (tensor<4xi32>) -> tensor<4xi32>
    sdy.return %s : tensor<4xi32>
  } : (tensor<16xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
