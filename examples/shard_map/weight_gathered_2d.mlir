// Seed 004 (shard_map JEP 14273), section 5.2 "Another realistic example: 2-D weight-gathered
// layout": matmul_2D_wg_manual. The document's code is illustrative pseudocode that does not
// run (undefined matmul_reducescatter, l2phys, ...; see its note), so this is a
// reconstruction of the manual region from its shape comments, on a mesh x=2, y=2, z=2:
// [batch, maxlen, embed.X] @ [heads.YZ, embed.X, q_wi_per_head] -> (einsum 'bte,hed->bthd')
// -> [batch, maxlen, heads.YZ, q_wi_per_head]{x unreduced} -> (reduce-scatter over x into the
// heads) -> [batch, maxlen, heads.YZX, q_wi_per_head]. With xnorm f32[2,3,8] sharded
// P(None, None, 'x') and q_wi f32[8,8,3] sharded P(('y','z'), 'x', None), each device
// contracts its embed block, then a reduce_scatter over the x-groups [[0,4],[1,5],[2,6],[3,7]]
// sums the partial products and splits the heads; out_specs P(None, None, ('y','z','x'), None)
// gives q_wi f32[2,3,8,3] == np.einsum('bte,hed->bthd', xnorm, q_wi), the document's
// non-manual branch.
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%xnorm: tensor<2x3x8xf32>, %q_wi: tensor<8x8x3xf32>) -> tensor<2x3x8x3xf32> {
  %0 = sdy.manual_computation(%xnorm, %q_wi)
      in_shardings=[<@mesh, [{}, {}, {"x"}]>, <@mesh, [{"y", "z"}, {"x"}, {}]>]
      out_shardings=[<@mesh, [{}, {}, {"y", "z", "x"}, {}]>]
      manual_axes={"x", "y", "z"}
      (%xb: tensor<2x3x4xf32>, %wb: tensor<2x4x3xf32>) {
    %p = stablehlo.dot_general %xb, %wb, contracting_dims = [2] x [1]
         : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x2x3xf32>
    %s = "stablehlo.reduce_scatter"(%p) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
           replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]> : tensor<4x2xi64>,
           scatter_dimension = 2 : i64, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %z = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %z : tensor<f32>
    }) : (tensor<2x3x2x3xf32>) -> tensor<2x3x1x3xf32>
    sdy.return %s : tensor<2x3x1x3xf32>
  } : (tensor<2x3x8xf32>, tensor<8x8x3xf32>) -> tensor<2x3x8x3xf32>
  return %0 : tensor<2x3x8x3xf32>
}
