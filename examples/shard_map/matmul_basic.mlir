// Seed 004 (shard_map JEP 14273), section 2 "TL;DR examples": matmul_basic, with the
// hand-written form of section 10. Mesh i=4, j=2; a = arange(8*16).reshape(8,16) sharded
// P('i','j'), b = arange(16*32).reshape(16,32) sharded P('j', None). Each device multiplies
// its a-block f32[2,8] by its b-block f32[8,32] and psums the partial f32[2,32] over 'j'
// (replica groups [[0,1],[2,3],[4,5],[6,7]]); out_specs P('i', None) gives c == a @ b.
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %0 = sdy.manual_computation(%a, %b)
      in_shardings=[<@mesh, [{"i"}, {"j"}]>, <@mesh, [{"j"}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {}]>]
      manual_axes={"i", "j"}
      (%ab: tensor<2x8xf32>, %bb: tensor<8x32xf32>) {
    %p = stablehlo.dot_general %ab, %bb, contracting_dims = [1] x [0]
         : (tensor<2x8xf32>, tensor<8x32xf32>) -> tensor<2x32xf32>
    %s = "stablehlo.all_reduce"(%p) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>,
           use_global_device_ids}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %z = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %z : tensor<f32>
    }) : (tensor<2x32xf32>) -> tensor<2x32xf32>
    sdy.return %s : tensor<2x32xf32>
  } : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
