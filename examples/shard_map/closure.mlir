// Seed 004 (shard_map JEP 14273), section 3.3 "out_specs", the closure example: the body
// `lambda: x` closes over x = jnp.array([[3.]]), which is the same as passing x with in_specs
// P(None, None) (as JAX lowers closed-over constants). On mesh i=4, j=2, out_specs
// P('i','j') / P('i', None) / P(None, None) give jnp.tile(x, (4, 2)) / jnp.tile(x, (4, 1)) /
// x: shapes (4,2), (4,1), (1,1), all 3.0. One manual_computation per out_specs.
sdy.mesh @mesh = <["i"=4, "j"=2]>
func.func @main(%x: tensor<1x1xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>, tensor<1x1xf32>) {
  %0 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {"j"}]>]
      manual_axes={"i", "j"}
      (%c: tensor<1x1xf32>) {
    sdy.return %c : tensor<1x1xf32>
  } : (tensor<1x1xf32>) -> tensor<4x2xf32>
  %1 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{}, {}]>]
      out_shardings=[<@mesh, [{"i"}, {}]>]
      manual_axes={"i", "j"}
      (%c: tensor<1x1xf32>) {
    sdy.return %c : tensor<1x1xf32>
  } : (tensor<1x1xf32>) -> tensor<4x1xf32>
  %2 = sdy.manual_computation(%x)
      in_shardings=[<@mesh, [{}, {}]>]
      out_shardings=[<@mesh, [{}, {}]>]
      manual_axes={"i", "j"}
      (%c: tensor<1x1xf32>) {
    sdy.return %c : tensor<1x1xf32>
  } : (tensor<1x1xf32>) -> tensor<1x1xf32>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<4x1xf32>, tensor<1x1xf32>
}
