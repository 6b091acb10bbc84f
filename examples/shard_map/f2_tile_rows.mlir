// Seed 004 (shard_map JEP 14273), section 3.2 "in_specs", the alternative tiling named after
// f2: tile along the first axis, x_ = np.tile(x, (2, 1)) (shape (24,12)),
// x = np.arange(144).reshape(12, 12) (int32, as jnp), with in_specs=P(('j','i'), None) and
// the identity body, out_specs=P('i','j') on mesh i=4, j=2. Device (i,j) gets row block
// j*4 + i of size 3, i.e. x[3i:3i+3], the block f1 sees; so the result equals
// f1(x) == np.tile(x, (1, 2)), shape (12,24).
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x_: tensor<24x12xi32>) -> tensor<12x24xi32> {
  %0 = sdy.manual_computation(%x_)
      in_shardings=[<@mesh, [{"j", "i"}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {"j"}]>]
      manual_axes={"i", "j"}
      (%blk: tensor<3x12xi32>) {
    sdy.return %blk : tensor<3x12xi32>
  } : (tensor<24x12xi32>) -> tensor<12x24xi32>
  return %0 : tensor<12x24xi32>
}
