"""HLO sharding strings (issue 31): the forms XLA prints, read and laid over devices; the
placement of each device's tile is checked against jax's ``NamedSharding`` (jax marker)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.backends.hlo_sharding import HloShardingError, parse_hlo_sharding


def test_iota_tile_assignment_with_a_transpose_and_replicated_subgroup():
    s = parse_hlo_sharding("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert s.kind == "tiled" and s.tile_shape == (1, 4, 2) and s.subgroups == ("replicated",)
    assert s.devices == (0, 4, 1, 5, 2, 6, 3, 7)
    assert s.local_shape((6, 8)) == (6, 2)
    assert [s.block(d, (6, 8)) for d in (0, 4, 1, 7)] == [
        ((0, 6), (0, 2)), ((0, 6), (0, 2)), ((0, 6), (2, 4)), ((0, 6), (6, 8))]
    assert str(s) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"


def test_explicit_device_list_and_subgroup_kinds():
    s = parse_hlo_sharding("{devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}")
    assert s.devices == (0, 2, 1, 3) and s.subgroups == ("manual",) and s.data_rank == 2
    t = parse_hlo_sharding("{{replicated}, {maximal device=1}, {devices=[2]1,0}}")
    assert [e.kind for e in t.elements] == ["replicated", "maximal", "tiled"]
    assert t.elements[1].device == 1


def test_padding_of_an_uneven_dimension_and_what_each_device_should_hold():
    s = parse_hlo_sharding("{devices=[4]<=[4]}")
    x = np.arange(10, dtype=np.float32)
    shards = s.shard(x, 4, pad_value=-1)
    assert [list(a) for a in shards] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, -1, -1]]
    assert [list(a) for a in s.expected(x, 4)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


def test_maximal_gives_its_device_the_value_and_the_others_nothing_to_compare():
    s = parse_hlo_sharding("{maximal device=2}")
    x = np.ones((2, 2), np.int32)
    assert [e is None for e in s.expected(x, 3)] == [True, True, False]
    assert not s.shard(x, 3)[0].any() and s.shard(x, 3)[2].all()


@pytest.mark.parametrize(("text", "message"), [
    ("{devices=[2,2]<=[8]}", r"8 device\(s\) for a tile assignment"),
    ("{devices=[2]0,1", "expected"),
    ("{tiles=[2]}", "unknown sharding kind"),
    ("{devices=[2]<=[2]T(1)}", "not a permutation"),
    ("{devices=[2]0,1 last_tile_dims={foo}}", "unknown subgroup kind"),
    ("{replicated} x", "after the sharding"),
])
def test_unreadable_strings_say_what_was_wrong(text, message):
    with pytest.raises(HloShardingError, match=message):
        parse_hlo_sharding(text)


def test_a_sharding_that_says_nothing_about_placement_is_refused():
    with pytest.raises(HloShardingError, match="does not say which part"):
        parse_hlo_sharding("{manual}").shard(np.zeros(2), 2)
    with pytest.raises(HloShardingError, match="once each"):
        parse_hlo_sharding("{devices=[2]0,0}").shard(np.zeros(2), 2)


@st.composite
def tiled(draw):
    rank = draw(st.integers(1, 3))
    tiles = [draw(st.sampled_from([1, 2, 3])) for _ in range(rank)]
    replicate = draw(st.sampled_from([1, 2]))
    dims = tiles + ([replicate] if replicate > 1 else [])
    n = math.prod(dims)
    perm = draw(st.permutations(range(n)))
    shape = [draw(st.integers(1, 7)) for _ in range(rank)]
    tail = " last_tile_dim_replicate" if replicate > 1 else ""
    text = f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, perm))}{tail}}}"
    return text, n, shape


@given(tiled())
def test_the_devices_tiles_cover_the_tensor_and_copies_agree(case):
    text, n, shape = case
    s = parse_hlo_sharding(text)
    x = np.arange(math.prod(shape)).reshape(shape)
    covered = np.zeros(shape, dtype=int)
    for d, (local, exp) in enumerate(zip(s.shard(x, n, pad_value=-1), s.expected(x, n),
                                         strict=True)):
        assert local.shape == s.local_shape(shape)
        block = tuple(slice(a, b) for a, b in s.block(d, shape))
        np.testing.assert_array_equal(local[tuple(slice(0, e) for e in exp.shape)], x[block])
        covered[block] += 1
    copies = n // math.prod(s.tile_counts(len(shape)))
    assert (covered == copies).all()
    assert parse_hlo_sharding(str(s)) == s


@pytest.mark.jax
def test_placement_matches_jax_named_sharding():
    jax = pytest.importorskip("jax")
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardy_ref.backends import xla_devices

    devices = np.array(xla_devices(16))
    rng = np.random.default_rng(0)
    checked = 0
    for mesh_shape, names in [((2, 4), "ab"), ((4, 4), "ab"), ((2, 2, 4), "abc"), ((16,), "a")]:
        count = math.prod(mesh_shape)
        for order in (np.arange(count), rng.permutation(count)):
            mesh = Mesh(devices[:count][order].reshape(mesh_shape), tuple(names))
            for spec in [P(), P("a"), P(None, names[-1]), P(tuple(names)), P(names[-1], "a"),
                         P(names[-1], None, "a")]:
                used = [a for part in spec for a in ((part,) if isinstance(part, str)
                                                     else part or ())]
                if len(used) != len(set(used)):
                    continue
                shape = (48, 32, 16)[:max(len(spec), 1)]
                sharding = NamedSharding(mesh, spec)
                ours = parse_hlo_sharding(str(sharding._to_xla_hlo_sharding(len(shape))))
                logical = {d: i for i, d in enumerate(sharding._device_assignment)}
                for device, index in sharding.devices_indices_map(shape).items():
                    want = tuple((sl.start or 0, n if sl.stop is None else sl.stop)
                                 for sl, n in zip(index, shape, strict=True))
                    assert ours.block(logical[device], shape) == want
                checked += 1
    assert checked == 44  # 48 pairs of mesh and spec, less 4 that name an axis twice
    del jax


def test_unreduced_parts_go_to_the_first_of_each_group_and_sum_back():
    from shardy_ref.backends.xla_check import check_output

    s = parse_hlo_sharding("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={unreduced}}")
    assert s.has_unreduced and s.data_rank == 2
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    shards = s.shard(x, 4)
    # tile assignment [[0, 2], [1, 3]]: devices 0 and 2 share tile 0, 1 and 3 tile 1
    assert [s.unreduced_group(d) for d in range(4)] == [(0, 0), (1, 0), (0, 0), (1, 0)]
    np.testing.assert_array_equal(shards[0], x[:2])
    assert not shards[2].any()
    split = [shards[0] - 1, shards[1], shards[2] + 1, shards[3]]
    assert check_output(0, s, split, x, 1e-6, 1e-6).same
    wrong = check_output(0, s, [shards[0], shards[1], shards[2] + 1, shards[3]], x, 1e-6, 1e-6)
    assert not wrong.same and wrong.wrong_devices == (0, 2)
    whole = parse_hlo_sharding("{unreduced}")
    assert check_output(0, whole, [x / 4] * 4, x, 1e-6, 1e-6).same


def test_a_scalar_stays_a_scalar_on_every_device():
    for text in ("{replicated}", "{devices=[2]0,1 last_tile_dim_replicate}",
                 "{maximal device=1}"):
        shards = parse_hlo_sharding(text).shard(np.float32(3), 2)
        assert [a.shape for a in shards] == [(), ()], text
