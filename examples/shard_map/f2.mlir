// Seed 004 (shard_map JEP 14273), section 3.2 "in_specs": f2, the identity with
// in_specs=P('i','j'), out_specs=P('i','j') on mesh i=4, j=2, applied to
// x_ = np.tile(x, (1, m.shape['j'])) (shape (12,24)), x = np.arange(144).reshape(12, 12)
// (int32, as jnp). Each block is (3,12); f2(x_) == x_ == f1(x).
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x_: tensor<12x24xi32>) -> tensor<12x24xi32> {
  %0 = sdy.manual_computation(%x_)
      in_shardings=[<@mesh, [{"i"}, {"j"}]>]
      out_shardings=[<@mesh, [{"i"}, {"j"}]>]
      manual_axes={"i", "j"}
      (%blk: tensor<3x12xi32>) {
    sdy.return %blk : tensor<3x12xi32>
  } : (tensor<12x24xi32>) -> tensor<12x24xi32>
  return %0 : tensor<12x24xi32>
}
