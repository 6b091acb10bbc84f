#loc1 = loc("weights")
module {
  sdy.mesh @mesh = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  sdy.mesh @maximal = <[], device_ids=[3]>
  func.func @main(%act: tensor<8x6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y", ?}, {"x":(2)2}]>} loc("act"),
                  %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], replicated={"y"}, unreduced={"x"}>} loc("bias"))
      -> (tensor<8x6x4xf32> {sdy.sharding = #sdy.sharding<@maximal, []>}, tensor<10x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %h = stablehlo.negate %act {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}]>]>} : tensor<8x6x4xf32> loc(#loc1)
    %c = stablehlo.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} dense<1.0> : tensor<10x3xf32>
    return %h, %c : tensor<8x6x4xf32>, tensor<10x3xf32>
  }
}
