"""The sharding projection (``shardy_ref/propagate/sharding_projection.py``,
``algorithms.md`` §5.5): our cases for building factor shardings (sub-axis splitting,
overflow axes, minor-most factors) and a round-trip property."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.propagate.sharding_projection import (
    FactorSharding,
    PrefixStatus,
    ShardingProjection,
    axis_list_prefix_status,
    distribute_axes_across_factors,
)
from shardy_ref.testing.strategies import meshes, tensor_shardings
from tests.profiles import examples

MESH = Mesh((MeshAxis("x", 4), MeshAxis("y", 2)))
X, Y = AxisRef("x"), AxisRef("y")


def one_dim_rule(*factor_sizes: int) -> OpShardingRule:
    """``([ij...])->([i, j, ...])``: one operand dim made of all factors, one result dim each."""
    factors = tuple(range(len(factor_sizes)))
    return OpShardingRule(tuple(factor_sizes), (TensorMapping((DimMapping(factors),)),),
                          (TensorMapping(tuple(DimMapping((f,)) for f in factors)),))


def sharding(*dims, closed=True) -> TensorSharding:
    return TensorSharding("mesh", tuple(DimensionSharding(tuple(d), closed) for d in dims))


def test_an_axis_is_split_between_a_major_and_a_minor_factor():
    p = ShardingProjection.build([sharding([X, Y])], [None], one_dim_rule(2, 4), MESH)
    factors = p.operands[0].factor_index_to_sharding
    assert factors[0].axis_refs == [AxisRef.sub("x", 1, 2)]
    assert factors[1].axis_refs == [AxisRef.sub("x", 2, 2), Y]
    assert not factors[0].is_minor_most and factors[1].is_minor_most
    assert p.operands[0].to_tensor_sharding(one_dim_rule(2, 4).operand_mappings[0],
                                            (2, 4), "mesh", MESH) == sharding([X, Y])


def test_an_axis_coprime_with_a_major_factor_becomes_overflow():
    p = ShardingProjection.build([sharding([X])], [None], one_dim_rule(3, 4), MESH)
    factors = p.operands[0].factor_index_to_sharding
    assert factors[0].axis_refs == [] and factors[0].overflow_axes == [X]
    assert factors[1].is_closed and factors[1].axis_refs == []
    # the overflow axes come back when projecting back
    back = p.operands[0].to_tensor_sharding(one_dim_rule(3, 4).operand_mappings[0], (3, 4),
                                            "mesh", MESH)
    assert back == sharding([X])


def test_missing_shardings_are_open_unless_closed_if_missing():
    rule = one_dim_rule(2, 4)
    assert not ShardingProjection.build([None], [None], rule, MESH) \
        .results[0].factor_index_to_sharding[0].is_closed
    assert ShardingProjection.build([None], [None], rule, MESH, closed_if_missing=True) \
        .results[0].factor_index_to_sharding[0].is_closed


def test_expansion_only_extends_a_strict_prefix():
    p = ShardingProjection.build([sharding([X], closed=False)], [None], one_dim_rule(16), MESH)
    update = p.expand_sharding(0, [X, Y])
    assert update.update_operands == [True] and update.update_results == [True]
    assert not p.expand_sharding(0, [Y]).any()


def test_axis_list_prefix_status():
    assert axis_list_prefix_status([], []) is PrefixStatus.EQUAL
    assert axis_list_prefix_status([AxisRef.sub("x", 1, 2)], [X, Y]) is \
        PrefixStatus.STRICT_PREFIX
    assert axis_list_prefix_status([Y], [X]) is PrefixStatus.NOT_A_PREFIX


def test_distributing_axes_fills_factors_in_order_and_overflows_the_rest():
    shardings = [FactorSharding(), FactorSharding()]
    distribute_axes_across_factors(shardings, [2, 3], [X, Y], MESH)
    assert shardings[0].axis_refs == [AxisRef.sub("x", 1, 2)]
    assert shardings[1].overflow_axes == [AxisRef.sub("x", 2, 2), Y]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_identity_projection_round_trips_modulo_priorities(data):
    """Projecting a valid sharding on an identity rule (a factor per dimension, sized so
    the axes divide it) and back gives the sharding without its priorities."""
    mesh = data.draw(meshes(min_axes=1, max_axes=3).filter(lambda m: not m.is_maximal))
    sharding_ = data.draw(tensor_shardings(mesh))
    sizes = tuple(max(1, d.sharded_size(mesh)) * data.draw(st.sampled_from((1, 2, 3)))
                  for d in sharding_.dim_shardings)
    rule = OpShardingRule(sizes, (TensorMapping(tuple(DimMapping((i,)) for i in
                                                      range(len(sizes)))),), ())
    p = ShardingProjection.build([sharding_], [], rule, mesh)
    back = p.operands[0].to_tensor_sharding(rule.operand_mappings[0], sizes,
                                            sharding_.mesh_or_ref, mesh)
    assert back == sharding_.replace(dim_shardings=tuple(
        d.replace(priority=None) for d in sharding_.dim_shardings))


@settings(max_examples=examples(80), deadline=None)
@given(st.data())
def test_a_one_factor_dimension_projects_as_the_axis_cursor_would(data):
    """A dimension of one factor takes its axes as they are (with consecutive sub-axes
    merged): the same factor sharding as handing them out through the general cursor."""
    from shardy_ref.propagate.sharding_projection import _build_tensor, _project_dim

    mesh = data.draw(meshes(min_axes=1, max_axes=3).filter(lambda m: not m.is_maximal))
    sharding_ = data.draw(tensor_shardings(mesh))
    sizes = tuple(max(1, d.sharded_size(mesh)) * data.draw(st.sampled_from((1, 2, 3)))
                  for d in sharding_.dim_shardings)
    mapping = TensorMapping(tuple(DimMapping((i,)) for i in range(len(sizes))))
    fast = _build_tensor(mapping, sharding_, sizes, mesh, False)
    general: dict[int, FactorSharding] = {}
    for i, dim in enumerate(sharding_.dim_shardings):
        _project_dim(general, (i,), dim.axes, dim.is_closed, sizes, mesh)
    assert fast.factor_index_to_sharding == general


def test_a_one_factor_dimension_merges_consecutive_sub_axes():
    """``"x":(1)2, "x":(2)2`` along one factor is the whole ``"x"``, as the cursor makes it."""
    from shardy_ref.ir.sdy_axes import SubAxisInfo
    from shardy_ref.propagate.sharding_projection import _build_tensor

    halves = sharding([AxisRef("x", SubAxisInfo(1, 2)), AxisRef("x", SubAxisInfo(2, 2))])
    built = _build_tensor(TensorMapping((DimMapping((0,)),)), halves, (8,), MESH, False)
    assert built.factor_index_to_sharding[0].axis_refs == [X]
