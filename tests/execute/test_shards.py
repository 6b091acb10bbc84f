"""``shardy_ref.execute.shards``: global arrays cut into per-device shards and put back."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import InterpreterError, run_spmd
from shardy_ref.execute.context import ProcessLayout
from shardy_ref.execute.shards import (
    ShardMismatch,
    block_counts,
    block_index,
    device_ids,
    local_shape,
    mesh_shape,
    shard,
    shard_compact,
    unshard,
    unshard_compact,
)
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis, SubAxisInfo
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.sharding_layout import axis_coordinate, mesh_coordinates
from shardy_ref.testing.strategies import axis_pieces, meshes
from tests.profiles import examples

X4Y2 = Mesh((MeshAxis("x", 4), MeshAxis("y", 2)), (7, 6, 5, 4, 3, 2, 1, 0))


def sharding(*dims, replicated=(), unreduced=()) -> TensorSharding:
    return TensorSharding("mesh", tuple(DimensionSharding(tuple(d)) for d in dims),
                          tuple(replicated), tuple(unreduced))


def test_row_major_coordinates_and_sub_axes():
    assert mesh_coordinates(X4Y2, 5) == (2, 1)  # (x, y)
    # "x":(1)2 of an axis of size 4 is the high bit of its coordinate, "x":(2)2 the low one
    assert axis_coordinate(X4Y2, AxisRef("x", SubAxisInfo(2, 2)), (3, 0)) == 1
    assert axis_coordinate(X4Y2, AxisRef("x", SubAxisInfo(1, 2)), (1, 0)) == 0
    assert axis_coordinate(X4Y2, AxisRef("x", SubAxisInfo(1, 2)), (2, 0)) == 1


def test_blocks_follow_axis_order_and_device_ids():
    s = sharding([AxisRef("y"), AxisRef("x", SubAxisInfo(1, 2))], [])
    # position 5: x=2 (sub-axis coordinate 1), y=1 -> block 1*2 + 1 = 3 along dim 0
    assert block_index(s, X4Y2, 2, 5) == (3, 0)
    data = np.arange(16).reshape(8, 2)
    shards = shard(data, s, X4Y2)
    assert device_ids(X4Y2)[5] == 2
    np.testing.assert_array_equal(shards[2], data[6:8])
    np.testing.assert_array_equal(unshard(shards, (8, 2), s, X4Y2), data)


def test_non_divisible_dimension_is_padded_and_trimmed():
    s = sharding([AxisRef("x")])
    mesh = Mesh((MeshAxis("x", 4),))
    assert local_shape((6,), s, mesh) == (2,)
    shards = shard(np.arange(6), s, mesh, pad_value=-1)
    assert shards[3].tolist() == [-1, -1] and shards[2].tolist() == [4, 5]
    assert unshard(shards, (6,), s, mesh).tolist() == list(range(6))


def test_replicas_that_disagree_are_reported():
    s = sharding([AxisRef("x")], [])
    shards = shard(np.arange(16).reshape(8, 2), s, X4Y2)
    shards[1] = shards[1] + 1  # device 1 is the "y" replica of device 0 (positions 6, 7)
    with pytest.raises(ShardMismatch, match=r"devices 1 and 0"):
        unshard(shards, (8, 2), s, X4Y2)
    with pytest.raises(ValueError, match="unreduced"):
        unshard(shards, (8, 2), sharding([], [], unreduced=[AxisRef("x")]), X4Y2)


def test_maximal_mesh_puts_everything_on_its_device():
    mesh = Mesh((), (3,))
    assert list(shard(np.ones((2, 2)), sharding(), mesh)) == [3]


@st.composite
def sharded_arrays(draw):
    mesh = draw(meshes(min_axes=1, max_axes=3).filter(lambda m: m.total_size <= 64))
    pieces = draw(st.permutations(draw(axis_pieces(mesh))))
    rank = draw(st.integers(1, 3))
    dims = [[] for _ in range(rank)]
    for p in pieces:
        d = draw(st.integers(0, rank))
        if d < rank and not (dims[d] and dims[d][-1].can_merge(p)):
            dims[d].append(p)
    s = sharding(*dims)
    shape = tuple(draw(st.integers(1, 9)) for _ in range(rank))
    return mesh, s, np.arange(int(np.prod(shape))).reshape(shape)


@settings(max_examples=examples(100), deadline=None)
@given(sharded_arrays())
def test_unshard_inverts_shard(case):
    mesh, s, data = case
    shards = shard(data, s, mesh, pad_value=-1)
    assert sorted(shards) == sorted(device_ids(mesh))
    assert all(v.shape == local_shape(data.shape, s, mesh) for v in shards.values())
    np.testing.assert_array_equal(unshard(shards, data.shape, s, mesh), data)
    # every element is held by as many devices as its block has replicas
    copies = np.bincount(np.concatenate([v[v >= 0] for v in shards.values()]),
                         minlength=data.size)
    counts = block_counts(s, mesh, data.ndim)
    assert (copies == mesh.total_size // int(np.prod(counts))).all()


@settings(max_examples=examples(100), deadline=None)
@given(sharded_arrays())
def test_compact_shards_are_the_shards_over_the_mesh(case):
    """The simulator's layout: shards over the mesh's axes (size 1 along unused axes, a
    view of the array when nothing is padded and no sub-axis is used) give every device
    the shard ``shard`` gives it, and ``unshard_compact`` puts them back together."""
    mesh, s, data = case
    compact = shard_compact(data, s, mesh, pad_value=-1)
    full = np.broadcast_to(compact, mesh_shape(mesh) + compact.shape[len(mesh.axes):])
    ids = np.array(device_ids(mesh)).reshape(mesh_shape(mesh))
    shards = shard(data, s, mesh, pad_value=-1)
    for at in np.ndindex(*mesh_shape(mesh)):
        np.testing.assert_array_equal(full[at], shards[int(ids[at])])
    used = {ref.name for d in s.dim_shardings for ref in d.axes}
    assert compact.shape[:len(mesh.axes)] == tuple(a.size if a.name in used else 1
                                                   for a in mesh.axes)
    layout = ProcessLayout(ids)
    np.testing.assert_array_equal(unshard_compact(full, layout, data.shape, s, mesh), data)


PER_DEVICE_DOT = """
func.func @main(%x: tensor<4x2xi32>, %w: tensor<2x6xi32>) -> tensor<4x6xi32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
      : (tensor<4x2xi32>, tensor<2x6xi32>) -> tensor<4x6xi32>
  %1 = "stablehlo.all_reduce"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 1,
      type = 1>, replica_groups = dense<[[2, 3], [0, 1]]> : tensor<2x2xi64>,
      use_global_device_ids}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) : (tensor<4x6xi32>) -> tensor<4x6xi32>
  return %1 : tensor<4x6xi32>
}
"""


@pytest.mark.parametrize("vectorize", [True, False])
def test_run_spmd_on_shards_gives_the_global_product(vectorize):
    """A hand-partitioned matmul: x [{"y"}, {"x"}], w [{"x"}, {}] on a 2x2 mesh with permuted
    device ids; the all-reduce over "x" makes every device hold its "y" block of x @ w."""
    mesh = Mesh((MeshAxis("x", 2), MeshAxis("y", 2)), (2, 0, 3, 1))
    x_sharding = sharding([AxisRef("y")], [AxisRef("x")])
    w_sharding = sharding([AxisRef("x")], [])
    out_sharding = sharding([AxisRef("y")], [])
    x = np.arange(32, dtype=np.int32).reshape(8, 4) - 5
    w = np.arange(24, dtype=np.int32).reshape(4, 6) % 7
    xs, ws = shard(x, x_sharding, mesh), shard(w, w_sharding, mesh)
    outs = run_spmd(PER_DEVICE_DOT, [[xs[d], ws[d]] for d in range(4)], vectorize=vectorize)
    np.testing.assert_array_equal(unshard([o[0] for o in outs], (8, 6), out_sharding, mesh),
                                  x @ w)


def test_run_spmd_checks_the_grid():
    with pytest.raises(InterpreterError, match="do not form a grid"):
        run_spmd(PER_DEVICE_DOT, [[np.zeros((4, 2), np.int32), np.zeros((2, 6), np.int32)]] * 3,
                 num_replicas=2)
