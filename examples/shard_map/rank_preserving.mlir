// Seed 004 (shard_map JEP 14273), section 3.1 "Rank-reducing vs rank-preserving maps":
// shard_map(f, m, in_specs=P('i'), out_specs=P('i'))(y) ==
// jnp.concatenate([f(y_blk) for y_blk in jnp.split(y, 4)]) on a 1-D mesh of 4 devices, with
// y f32[8,5] (blocks f32[2,5]) and f(y_blk) f32[3,7], so the result is f32[12,7]. The
// document leaves f unspecified; here f(y_blk) = np.pad(2 * y_blk, ((0, 1), (1, 1)),
// constant_values=-1): no collectives, a block of a different shape than its input.
sdy.mesh @mesh = <["i"=4]>
func.func @main(%y: tensor<8x5xf32>) -> tensor<12x7xf32> {
  %0 = sdy.manual_computation(%y)
      in_shardings=[<@mesh, [{"i"}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {}]>]
      manual_axes={"i"}
      (%blk: tensor<2x5xf32>) {
    %two = stablehlo.constant dense<2.0> : tensor<2x5xf32>
    %d = stablehlo.multiply %blk, %two : tensor<2x5xf32>
    %fill = stablehlo.constant dense<-1.0> : tensor<f32>
    %p = stablehlo.pad %d, %fill, low = [0, 1], high = [1, 1], interior = [0, 0]
         : (tensor<2x5xf32>, tensor<f32>) -> tensor<3x7xf32>
    sdy.return %p : tensor<3x7xf32>
  } : (tensor<8x5xf32>) -> tensor<12x7xf32>
  return %0 : tensor<12x7xf32>
}
