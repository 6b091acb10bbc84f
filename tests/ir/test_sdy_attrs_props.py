"""Properties of sdy attributes over random valid values (shardy_ref.testing.strategies)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.ir.sdy_axes import AxisRef, SubAxisInfo
from shardy_ref.ir.sdy_sharding import TensorShardingPerValue
from shardy_ref.parser import parse_attribute
from shardy_ref.testing.strategies import meshes, op_sharding_rules, tensor_shardings


@given(meshes())
def test_mesh_text_round_trips(mesh):
    assert parse_attribute(str(mesh)) == mesh


@given(st.data())
def test_sharding_text_round_trips(data):
    mesh = data.draw(meshes())
    inline = data.draw(st.booleans())
    sharding = data.draw(tensor_shardings(mesh, mesh_name=None if inline else "mesh"))
    assert parse_attribute(str(sharding)) == sharding
    per_value = TensorShardingPerValue((sharding, sharding))
    assert parse_attribute(str(per_value)) == per_value


@given(op_sharding_rules())
def test_op_sharding_rule_text_round_trips(rule):
    assert parse_attribute(str(rule)) == rule


@st.composite
def sub_axes(draw):
    size = draw(st.sampled_from([4, 8, 16, 32]))
    pre = draw(st.sampled_from([p for p in (1, 2, 4, 8, 16) if p < size and size % p == 0]))
    k = draw(st.sampled_from([k for k in (2, 4, 8, 16) if pre * k <= size and size % (pre * k) == 0]
                             or [2]))
    return AxisRef("a", SubAxisInfo(pre, k)), size


@given(sub_axes(), sub_axes())
def test_axis_algebra_laws(x, y):
    (a, _), (b, _) = x, y
    assert a.contains(a) and a.overlaps(a)
    assert a.overlaps(b) == b.overlaps(a)
    if a.contains(b):
        assert a.overlaps(b)
    if a.prefix_of(b):
        assert b.contains(a) and a.pre_size == b.pre_size
    if a.can_merge(b):
        assert not a.overlaps(b)
    assert (a < b) + (b < a) + (a == b) == 1
    overlap = a.overlap(b)
    if overlap is not None:
        assert a.contains(overlap) and b.contains(overlap)
