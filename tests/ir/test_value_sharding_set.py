"""set_sharding writes where get_sharding reads (upstream setSharding), and Operation.clone
deep-copies with remapping."""
from shardy_ref.ir.func_attrs import get_arg_attr
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import (
    get_func_result_sharding,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
)
from shardy_ref.parser import parse_module, print_module
from shardy_ref.parser.reader import parse_attribute

TEXT = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%arg0: tensor<8x8xf32>, %arg1: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<8x8xf32>, tensor<8xf32>
  %1 = stablehlo.negate %0#0 : tensor<8x8xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{"x", ?}, {}]>]
      out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg2: tensor<4x8xf32>) {
    sdy.return %arg2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %2, %0#1 : tensor<8x8xf32>, tensor<8xf32>
}
"""


def sharding(text: str) -> TensorSharding:
    return parse_attribute("#sdy.sharding" + text)


def test_set_then_get_on_every_kind_of_owner():
    module = parse_module(TEXT)
    func = next(op for op in module.walk() if op.name == "func.func")
    barrier, negate, manual = [op for op in func.regions[0].blocks[0]][:3]
    s1 = sharding('<@mesh, [{"y"}, {}]>')
    set_sharding(func.regions[0].blocks[0].args[0], s1)
    assert get_arg_attr(func, 0, "sdy.sharding") == s1
    assert get_sharding(func.regions[0].blocks[0].args[0]) == s1
    s2 = sharding('<@mesh, [{"x"}]>')
    set_sharding(barrier.results[1], s2)
    assert get_sharding(barrier.results[1]) == s2
    assert get_sharding(barrier.results[0]) == TensorSharding.fully_open("mesh", 2)
    set_sharding(negate.result, s1)
    assert get_sharding(negate.result) == s1
    body_arg = manual.regions[0].blocks[0].args[0]
    set_sharding(body_arg, sharding('<@mesh, [{"y"}, {?}]>'))
    assert str(manual.attributes["in_shardings"]) == \
        '#sdy.sharding_per_value<[<@mesh, [{"x", "y"}, {?}]>]>'
    assert get_sharding(body_arg) == sharding('<@mesh, [{"y"}, {?}]>')
    set_func_result_sharding(func, 1, s2)
    assert get_func_result_sharding(func, 1) == s2
    assert "res_attrs = [{}, {sdy.sharding" not in print_module(module)
    assert "-> (tensor<8x8xf32>, tensor<8xf32> {sdy.sharding" in print_module(module)
    set_func_result_sharding(func, 1, None)
    assert "res_attrs" not in func.attributes


def test_clone_remaps_operands_and_nested_values():
    module = parse_module(TEXT)
    func = next(op for op in module.walk() if op.name == "func.func")
    block = func.regions[0].blocks[0]
    manual = block.ops[2]
    mapping = {}
    copy = manual.clone(mapping)
    block.insert_after(manual, copy)
    assert copy.operands == manual.operands
    assert mapping[manual.result] is copy.result
    inner_ret = copy.regions[0].blocks[0].last_op
    assert inner_ret.operands[0] is copy.regions[0].blocks[0].args[0]
    assert inner_ret is not manual.regions[0].blocks[0].last_op
    negate = block.ops[1]
    mapping = {negate.operands[0]: block.args[0]}
    n2 = negate.clone(mapping)
    assert n2.operands[0] is block.args[0] and mapping[negate.result] is n2.result
