"""Bytes per device of each sdy collective (``shardy_ref/partition/collective_cost.py``)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.parser import parse_module, parse_type
from shardy_ref.partition.collective_cost import collective_cost, element_bytes

MODULE = """sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {"y"}]> : tensor<8x16xf32>
  %1 = sdy.all_slice [{"x"}, {}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x16xf32>
  %2 = sdy.all_to_all [{"y"}: 1->0] %1 out_sharding=<@mesh, [{"x", "y"}, {}]> : tensor<8x16xf32>
  %3 = sdy.collective_permute %2 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<8x16xf32>
  %4 = sdy.all_reduce {"y"} %3 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}"""

# input shard bytes: %arg0 (8/2)x(16/4) f32 = 64; %0 8x4 f32 = 128; %1 4x4 = 64;
# %2 and %3 (8/8)x16 = 64
EXPECTED = {
    "sdy.all_gather": (2, 64),          # (2 - 1) * 64
    "sdy.all_slice": (2, 0),
    "sdy.all_to_all": (4, 48),          # 3/4 * 64
    "sdy.collective_permute": (8, 64),  # the whole shard moves
    "sdy.all_reduce": (4, 96),          # 2 * 3/4 * 64
}


def test_costs_follow_the_ring_model():
    module = parse_module(MODULE)
    mesh = next(op for op in module.walk() if op.name == "sdy.mesh").attributes["mesh"]
    seen = set()
    for op in module.walk():
        if op.name in EXPECTED:
            cost = collective_cost(op, get_sharding(op.operands[0]), mesh)
            assert (cost.group_size, cost.bytes_per_device) == EXPECTED[op.name], op.name
            seen.add(op.name)
    assert seen == set(EXPECTED)


def test_a_permute_that_moves_nothing_costs_nothing():
    text = MODULE.replace('out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<8x16xf32>\n  %4',
                          'out_sharding=<@mesh, [{"x", "y"}, {}]> : tensor<8x16xf32>\n  %4')
    module = parse_module(text)
    mesh = next(op for op in module.walk() if op.name == "sdy.mesh").attributes["mesh"]
    op = next(op for op in module.walk() if op.name == "sdy.collective_permute")
    assert collective_cost(op, get_sharding(op.operands[0]), mesh).bytes_per_device == 0


@pytest.mark.parametrize(("type_text", "size"), [("f32", 4), ("bf16", 2), ("i1", 1),
                                                 ("complex<f64>", 16), ("f8E4M3FN", 1)])
def test_element_sizes(type_text, size):
    assert element_bytes(parse_type(f"tensor<{type_text}>").element_type) == size
