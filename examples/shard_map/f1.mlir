// Seed 004 (shard_map JEP 14273), section 3.2 "in_specs": f1, the identity with
// in_specs=P('i', None), out_specs=P('i','j') on mesh i=4, j=2, applied to
// x1 = np.arange(12 * 12).reshape(12, 12) (int32, as jnp). Each block is (3,12) (the input is
// not split over j); the output concatenates the blocks over both axes, so
// f1(x1) == np.tile(x1, (1, 2)), shape (12,24).
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x1: tensor<12x12xi32>) -> tensor<12x24xi32> {
  %0 = sdy.manual_computation(%x1)
      in_shardings=[<@mesh, [{"i"}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {"j"}]>]
      manual_axes={"i", "j"}
      (%blk: tensor<3x12xi32>) {
    sdy.return %blk : tensor<3x12xi32>
  } : (tensor<12x12xi32>) -> tensor<12x24xi32>
  return %0 : tensor<12x24xi32>
}
