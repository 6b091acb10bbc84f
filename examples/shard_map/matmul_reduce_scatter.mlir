// Seed 004 (shard_map JEP 14273), section 2 "TL;DR examples": matmul_reduce_scatter. Mesh
// i=4, j=2; a = arange(8*16).reshape(8,16) sharded P('i','j'), b = arange(16*32).reshape(16,32)
// sharded P('j', None). Each device computes the partial sum f32[2,32] = a_block @ b_block,
// then psum_scatter(..., 'j', scatter_dimension=1, tiled=True) (a reduce_scatter over the
// j-groups [[0,1],[2,3],[4,5],[6,7]]) leaves device j=k with column block k, f32[2,16];
// out_specs P('i','j') reassembles c f32[8,32] == a @ b.
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %0 = sdy.manual_computation(%a, %b)
      in_shardings=[<@mesh, [{"i"}, {"j"}]>, <@mesh, [{"j"}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {"j"}]>]
      manual_axes={"i", "j"}
      (%ab: tensor<2x8xf32>, %bb: tensor<8x32xf32>) {
    %p = stablehlo.dot_general %ab, %bb, contracting_dims = [1] x [0]
         : (tensor<2x8xf32>, tensor<8x32xf32>) -> tensor<2x32xf32>
    %s = "stablehlo.reduce_scatter"(%p) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>,
           scatter_dimension = 1 : i64, use_global_device_ids}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %z = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %z : tensor<f32>
    }) : (tensor<2x32xf32>) -> tensor<2x16xf32>
    sdy.return %s : tensor<2x16xf32>
  } : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}
