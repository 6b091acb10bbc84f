"""sdy attributes: their text (as upstream prints it) and the axis algebra of spec 003 §3.3
and algorithms.md §5.1. Expected texts are upstream's (corpus CHECK lines, oracle output)."""
from __future__ import annotations

import pytest

from shardy_ref.ir.sdy_axes import (
    AxisRef,
    AxisRefList,
    ListOfAxisRefLists,
    Mesh,
    MeshAxis,
    mesh_axis_key,
)
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping, factor_symbol
from shardy_ref.ir.sdy_sharding import (
    AllToAllParam,
    AllToAllParamList,
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.parser import parse_attribute

A, B = AxisRef("a"), AxisRef("b")


def sub(name, pre, size):
    return AxisRef.sub(name, pre, size)


@pytest.mark.parametrize(("attr", "text"), [
    (TensorSharding("mesh", (DimensionSharding((A,), False, 1), DimensionSharding())),
     '#sdy.sharding<@mesh, [{"a", ?}p1, {}]>'),
    (TensorSharding("foo", (DimensionSharding((), False), DimensionSharding()),
                    replicated_axes=(A,), unreduced_axes=(B,)),
     '#sdy.sharding<@foo, [{?}, {}], replicated={"a"}, unreduced={"b"}>'),
    (TensorSharding("foo", (), unreduced_axes=(A,), reduction_op=ReductionOp.MAX),
     '#sdy.sharding<@foo, [], unreduced=max{"a"}>'),
    (TensorSharding(Mesh((MeshAxis("x", 2),), (1, 0)), (DimensionSharding((AxisRef("x"),)),)),
     '#sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}]>'),
    (TensorShardingPerValue((TensorSharding("m", (DimensionSharding((sub("a", 2, 2),)),)),)),
     '#sdy.sharding_per_value<[<@m, [{"a":(2)2}]>]>'),
    (TensorShardingPerValue(()), "#sdy.sharding_per_value<[]>"),
    (Mesh((MeshAxis("a", 2), MeshAxis("b", 4))), '#sdy.mesh<["a"=2, "b"=4]>'),
    (Mesh((), (3,)), "#sdy.mesh<[], device_ids=[3]>"),
    (ManualAxes(("x", "z")), '#sdy<manual_axes{"x", "z"}>'),
    (AxisRefList((A, sub("b", 1, 2))), '#sdy<axis_ref_list{"a", "b":(1)2}>'),
    (ListOfAxisRefLists((AxisRefList((A,)), AxisRefList())),
     '#sdy<list_of_axis_ref_lists[{"a"}, {}]>'),
    (AllToAllParamList((AllToAllParam((A,), 0, 1),)), '#sdy<all_to_all_param_list[{"a"}: 0->1]>'),
    (OpShardingRule((8, 16, 8), (TensorMapping((DimMapping((0,)), DimMapping((1,)))),
                                 TensorMapping((DimMapping((1,)), DimMapping((2,))))),
                    (TensorMapping((DimMapping((0,)), DimMapping((2,)))),), reduction_factors=(1,)),
     "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=8} reduction={j}>"),
    (OpShardingRule((), (TensorMapping(),), (TensorMapping(),), is_custom_rule=True),
     "#sdy.op_sharding_rule<([])->([]), custom>"),
])
def test_text_form_round_trips(attr, text):
    assert str(attr) == text
    assert parse_attribute(text) == attr


def test_factor_symbols_continue_after_z():
    assert [factor_symbol(i) for i in (0, 17, 18, 27)] == ["i", "z", "z_1", "z_10"]
    rule = parse_attribute("#sdy.op_sharding_rule<([z_8z_9z_10])->([z_8z_9z_10]) "
                           "{i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1, r=1, s=1, t=1, u=1, "
                           "v=1, w=1, x=1, y=1, z=1, z_1=1, z_2=1, z_3=1, z_4=1, z_5=1, z_6=1, "
                           "z_7=1, z_8=2, z_9=2, z_10=2}>")
    assert rule.operand_mappings[0].dim_mappings[0].factor_indices == (25, 26, 27)


def test_iota_device_ids_are_dropped_like_upstream():
    assert str(parse_attribute('#sdy.mesh<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>')) == \
        '#sdy.mesh<["a"=2, "b"=2]>'
    assert str(parse_attribute('#sdy.mesh<["a"=1], device_ids=[0]>')) == '#sdy.mesh<["a"=1]>'
    assert str(parse_attribute("#sdy.mesh<[], device_ids=[0]>")) == "#sdy.mesh<[], device_ids=[0]>"


def test_unreduced_then_replicated_prints_replicated_first():
    text = '#sdy.sharding<@foo, [{}, {}], unreduced={"b"}, replicated={"a"}>'
    assert str(parse_attribute(text)) == \
        '#sdy.sharding<@foo, [{}, {}], replicated={"a"}, unreduced={"b"}>'


MESH = Mesh((MeshAxis("a", 8), MeshAxis("b", 2)))


@pytest.mark.parametrize(("x", "y", "contains", "overlaps"), [
    (A, sub("a", 2, 2), True, True),
    (sub("a", 2, 2), A, False, True),
    (sub("a", 1, 4), sub("a", 2, 2), True, True),
    (sub("a", 1, 2), sub("a", 2, 2), False, False),
    (sub("a", 1, 4), sub("a", 2, 4), False, True),
    (A, B, False, False),
])
def test_contains_and_overlaps(x, y, contains, overlaps):
    assert x.contains(y) is contains
    assert x.overlaps(y) is overlaps


def test_prefix_suffix_merge_and_overlap():
    assert sub("a", 1, 2).prefix_of(A) and not sub("a", 2, 4).prefix_of(A)
    assert sub("a", 4, 2).suffix_of(A, MESH)
    assert sub("a", 1, 2).can_merge(sub("a", 2, 4))
    assert sub("a", 1, 2).merge(sub("a", 2, 4), MESH) == A  # the whole axis again
    assert sub("a", 1, 2).merge(sub("a", 2, 2), MESH) == sub("a", 1, 4)
    assert sub("a", 1, 4).overlap(sub("a", 2, 4)) == sub("a", 2, 2)
    assert sub("a", 1, 4).prefix_without_overlap(sub("a", 2, 4)) == sub("a", 1, 2)
    assert sub("a", 2, 4).suffix_without_overlap(sub("a", 1, 4), MESH) == sub("a", 4, 2)
    assert not sub("a", 1, 3).can_coexist(sub("a", 2, 2))


def test_mesh_order_of_axis_refs():
    mesh = Mesh((MeshAxis("c", 2), MeshAxis("a", 2), MeshAxis("b", 2)))
    # spec 000 §5: replicated {"a", "c"} on mesh c,a,b is canonically {"c", "a"}
    assert sorted([A, AxisRef("c")], key=mesh_axis_key(mesh)) == [AxisRef("c"), A]
    mesh8 = Mesh((MeshAxis("x", 2), MeshAxis("y", 8), MeshAxis("z", 2)))
    unordered = [sub("y", 4, 2), AxisRef("x"), sub("y", 1, 2)]
    assert sorted(unordered, key=mesh_axis_key(mesh8)) == \
        [AxisRef("x"), sub("y", 1, 2), sub("y", 4, 2)]
