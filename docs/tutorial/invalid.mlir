sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @rank(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
  return
}
// -----
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @unknown_axis(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"w"}]>}) {
  return
}
// -----
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @twice(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"x"}]>}) {
  return
}
// -----
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @replicated_order(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], replicated={"y", "x"}>}) {
  return
}
// -----
sdy.mesh @mesh = <["x"=2, "y"=8]>
func.func @overlap(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)4}, {"y":(2)4}]>}) {
  return
}
// -----
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @mergeable(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y":(1)2, "y":(2)2}]>}) {
  return
}
