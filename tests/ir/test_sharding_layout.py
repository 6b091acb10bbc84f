"""Which device holds which block: unit examples and the tiling invariants of
:mod:`shardy_ref.ir.sharding_layout`, cross-checked against the simulator's shards."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute.shards import shard
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.sharding_layout import layout
from shardy_ref.testing.strategies import meshes, tensor_shardings
from tests.profiles import examples

MESH = Mesh((MeshAxis("x", 4), MeshAxis("y", 2)))


def _sharding(*dims, replicated=(), unreduced=(), mesh=MESH):
    return TensorSharding(mesh, tuple(DimensionSharding(tuple(d)) for d in dims),
                          tuple(replicated), tuple(unreduced))


def test_one_sharded_dim_is_replicated_along_the_other_axis():
    lay = layout((8, 3), _sharding([AxisRef("x")], []), MESH)
    assert lay.counts == (4, 1) and lay.local_shape == (2, 3) and lay.replication == 2
    assert lay.holders() == {(0, 0): [0, 1], (1, 0): [2, 3], (2, 0): [4, 5], (3, 0): [6, 7]}
    assert lay.blocks[5].ranges == ((4, 6), (0, 3))
    assert lay.unused_axes() == (AxisRef("y"),)


def test_axes_order_within_a_dimension_is_major_to_minor():
    lay = layout((8,), _sharding([AxisRef("y"), AxisRef("x")]), MESH)
    # device at (x, y) holds block y * 4 + x
    assert [b.index[0] for b in lay.blocks] == [0, 4, 1, 5, 2, 6, 3, 7]
    assert lay.replication == 1


def test_sub_axes_split_an_axis_major_and_minor():
    lay = layout((4, 2), _sharding([AxisRef.sub("x", 1, 2)], [AxisRef.sub("x", 2, 2)]),
                 MESH)
    # x = 2 * major + minor: "x":(1)2 is the major half, "x":(2)2 the minor one
    assert {b.device: b.index for b in lay.blocks if b.coords[1] == 0} == {
        0: (0, 0), 2: (0, 1), 4: (1, 0), 6: (1, 1)}
    assert lay.replication == 2 and lay.unused_axes() == (AxisRef("y"),)


def test_the_unused_part_of_a_split_axis_is_a_sub_axis():
    mesh = Mesh((MeshAxis("x", 2), MeshAxis("y", 8), MeshAxis("z", 2)))
    lay = layout((8, 8), _sharding([AxisRef("x")], [AxisRef.sub("y", 2, 2)], mesh=mesh), mesh)
    # "y" = [(1)2, (2)2, (4)2]: only the middle part shards dim 1
    assert lay.unused_axes() == (AxisRef.sub("y", 1, 2), AxisRef.sub("y", 4, 2), AxisRef("z"))
    assert lay.unused_axes(also_used=[AxisRef.sub("y", 4, 2)]) == (
        AxisRef.sub("y", 1, 2), AxisRef("z"))


def test_non_divisible_dimension_pads_the_last_blocks():
    lay = layout((10,), _sharding([AxisRef("x")]), MESH)
    assert lay.local_shape == (3,) and lay.is_padded
    assert [lay.ranges_of((b,)) for b in range(4)] == [((0, 3),), ((3, 6),), ((6, 9),),
                                                     ((9, 10),)]
    assert {b.padding for b in lay.blocks} == {(0,), (2,)}
    short = layout((2,), _sharding([AxisRef("x")]), MESH)  # blocks past the end: empty
    assert short.ranges_of((3,)) == ((2, 2),) and short.blocks[-1].padding == (1,)


def test_device_ids_name_the_devices_of_the_row_major_positions():
    mesh = Mesh((MeshAxis("x", 2), MeshAxis("y", 2)), (3, 1, 2, 0))
    lay = layout((4,), _sharding([AxisRef("y")], mesh=mesh), mesh)
    assert [(b.position, b.device, b.index) for b in lay.blocks] == [
        (0, 3, (0,)), (1, 1, (1,)), (2, 2, (0,)), (3, 0, (1,))]
    assert lay.holders() == {(0,): [3, 2], (1,): [1, 0]}


def test_maximal_mesh_has_one_device_holding_everything():
    mesh = Mesh((), (5,))
    lay = layout((3, 4), TensorSharding("m", ()), mesh)
    assert [(b.device, b.ranges) for b in lay.blocks] == [(5, ((0, 3), (0, 4)))]


def test_unreduced_and_replicated_axes_shard_nothing():
    lay = layout((4,), _sharding([], replicated=[AxisRef("y")], unreduced=[AxisRef("x")]),
                 MESH)
    assert lay.num_blocks == 1 and lay.replication == 8
    assert lay.unused_axes() == (AxisRef("x"), AxisRef("y"))
    assert lay.unused_axes(also_used=[AxisRef("y"), AxisRef("x")]) == ()


@st.composite
def laid_out(draw):
    mesh = draw(meshes(max_devices=32))
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=rank, max_size=rank)))
    sharding = draw(tensor_shardings(mesh, shape, mesh_name=None))
    return shape, sharding, mesh


@settings(max_examples=examples(150))
@given(laid_out())
def test_blocks_tile_the_padded_tensor_replication_times(case):
    shape, sharding, mesh = case
    lay = layout(shape, sharding, mesh)
    padded = tuple(n * c for n, c in zip(lay.local_shape, lay.counts, strict=True))
    cover = np.zeros(padded, dtype=np.int64)
    for b in lay.blocks:
        cover[tuple(slice(i * n, (i + 1) * n) for i, n in
                    zip(b.index, lay.local_shape, strict=True))] += 1
        for (start, stop), pad, n in zip(b.ranges, b.padding, lay.local_shape, strict=True):
            assert 0 <= start <= stop and stop - start + pad == n
    assert (cover == lay.replication).all()
    assert len(lay.blocks) == lay.num_blocks * lay.replication
    assert all(len(ids) == lay.replication for ids in lay.holders().values())
    # each block is replicated along exactly the axes (and sub-axes) no dimension uses
    assert lay.replication == int(np.prod([a.size(mesh) for a in lay.unused_axes()]))


@settings(max_examples=examples(100))
@given(laid_out())
def test_blocks_are_what_the_simulator_shards_hold(case):
    shape, sharding, mesh = case
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) + 1
    shards = shard(array, sharding, mesh, pad_value=0)
    lay = layout(shape, sharding, mesh)
    for b in lay.blocks:
        expected = array[tuple(slice(s, e) for s, e in b.ranges)]
        # shard() returns a rank-0 shard with shape (1,) (np.ascontiguousarray's ndim >= 1)
        piece = shards[b.device].reshape(lay.local_shape)
        assert np.array_equal(piece[tuple(slice(0, e - s) for s, e in b.ranges)], expected)
        assert int(np.count_nonzero(piece)) == expected.size
