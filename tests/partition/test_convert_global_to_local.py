# ruff: noqa: E501  (the inputs are MLIR lines, kept whole to stay readable)
"""``sdy-convert-global-to-local``: replica groups and shard offsets agree with each other,
the lowered sdy collectives compute, on every device, that device's piece of the global
result, and inputs the lowering cannot express are rejected with a located error."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.replica_groups import ordered_axis_refs
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.partition.export.convert_global_to_local.replica_groups import replica_groups_v1
from shardy_ref.partition.export.convert_global_to_local.state import shard_index
from shardy_ref.pass_manager import PassContext, PassManager, PipelineElement, make_pass

MESH = Mesh((MeshAxis("x", 2), MeshAxis("y", 4)))
MESH_TEXT = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'


def _convert(text: str, options: str = "") -> str:
    module = parse_module(text)
    verify_module(module)
    pass_ = make_pass("sdy-convert-global-to-local", options)
    PassManager([PipelineElement(pass_=pass_)], verify=verify_module).run(module, PassContext())
    return print_module(module)


# -- replica groups and shard indices ---------------------------------------------------

@st.composite
def _mesh_and_axes(draw):
    sizes = draw(st.lists(st.sampled_from([1, 2, 4]), min_size=1, max_size=3))
    ids = list(range(int(np.prod(sizes))))
    if draw(st.booleans()):
        ids = draw(st.permutations(ids))
    mesh = Mesh(tuple(MeshAxis(n, s) for n, s in zip("abc", sizes)), tuple(ids))
    atoms = []
    for name, size in zip("abc", sizes):
        if size == 4 and draw(st.booleans()):
            atoms += [AxisRef.sub(name, 1, 2), AxisRef.sub(name, 2, 2)]
        else:
            atoms.append(AxisRef(name))
    axes = draw(st.permutations(atoms))
    return mesh, axes[:draw(st.integers(0, len(axes)))]


@settings(max_examples=60, deadline=None)
@given(_mesh_and_axes())
def test_replica_groups_list_devices_by_their_shard_index(case):
    mesh, axes = case
    groups = np.array(replica_groups_v1(axes, mesh).flat_values()).reshape(
        replica_groups_v1(axes, mesh).type.shape)
    assert sorted(groups.reshape(-1).tolist()) == sorted(mesh.device_ids or range(mesh.total_size))
    others = [a for a in ordered_axis_refs(axes, mesh) if a not in axes]
    for row in groups.tolist():
        # position in the group is the index along ``axes``; the other axes agree
        assert [shard_index(d, mesh, axes) for d in row] == list(range(len(row)))
        assert len({shard_index(d, mesh, others) for d in row}) == 1


def test_ordered_axis_refs_split_an_axis_where_sub_axes_cut_it():
    assert ordered_axis_refs([AxisRef.sub("y", 2, 2)], MESH) == [
        AxisRef("x"), AxisRef.sub("y", 1, 2), AxisRef.sub("y", 2, 2)]
    assert ordered_axis_refs([AxisRef("y")], MESH) == [AxisRef("x"), AxisRef("y")]


def test_shard_index_follows_the_mesh_device_order():
    mesh = Mesh((MeshAxis("x", 2), MeshAxis("y", 2)), (3, 2, 1, 0))
    assert [shard_index(d, mesh, [AxisRef("x")]) for d in range(4)] == [1, 1, 0, 0]
    assert [shard_index(d, mesh, [AxisRef("y"), AxisRef("x")]) for d in range(4)] == [3, 1, 2, 0]


# -- lowered collectives compute the global result, piece by piece -------------------------

def _block(shape, dims_axes, device):
    """The index of ``device``'s piece of a ``shape`` tensor sharded by ``dims_axes``."""
    out = []
    for size, axes in zip(shape, dims_axes):
        refs = [AxisRef(a) for a in axes]
        n = int(np.prod([MESH.axis_size(a) for a in axes])) if axes else 1
        start = shard_index(device, MESH, refs) * (size // n)
        out.append(slice(start, start + size // n))
    return tuple(out)


def _dims(dims_axes) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}"
                           for axes in dims_axes) + "]"


def _sharding(dims_axes) -> str:
    return f"#sdy.sharding<@mesh, {_dims(dims_axes)}>"


def _run_per_device(op_text, in_axes, out_axes, per_device_inputs, shape, options=""):
    t = f"tensor<{'x'.join(map(str, shape))}xi32>"
    text = f"""{MESH_TEXT}
func.func @main(%arg0: {t} {{sdy.sharding = {_sharding(in_axes)}}}) -> ({t} {{sdy.sharding = {_sharding(out_axes)}}}) {{
  %0 = {op_text} %arg0 out_sharding=<@mesh, {_dims(out_axes)}> : {t}
  return %0 : {t}
}}"""
    from shardy_ref.execute import run_spmd
    out = _convert(text, options)
    assert "sdy.all" not in out and "sdy.reduce" not in out and "sdy.collective" not in out
    return [r[0] for r in run_spmd(out, [[x] for x in per_device_inputs])]


MOVES = [  # (op text, in sharding, out sharding, options)
    ('sdy.all_gather [{"x"}, {"y"}]', [("x",), ("y",)], [(), ()], ""),
    ('sdy.all_gather [{"x"}, {"y"}]', [("x",), ("y",)], [(), ()], "per-dim-all-gather=true"),
    ('sdy.all_gather [{"y"}, {}]', [("x", "y"), ()], [("x",), ()], ""),
    ('sdy.all_slice [{"y"}, {"x"}]', [(), ()], [("y",), ("x",)], ""),
    ('sdy.all_to_all [{"y"}: 1->0]', [(), ("y",)], [("y",), ()], ""),
    ('sdy.all_to_all [{"x"}: 0->1, {"y"}: 2->3]', [("x",), (), ("y",), ()],
     [(), ("x",), (), ("y",)], ""),
    ('sdy.all_to_all [{"y"}: 1->3, {"x"}: 2->0]', [(), ("y",), ("x",), ()],
     [("x",), (), (), ("y",)], ""),
    ('sdy.collective_permute', [("x", "y"), ()], [("y", "x"), ()], ""),
]


@pytest.mark.parametrize(("op_text", "in_axes", "out_axes", "options"), MOVES)
def test_data_movement_gives_each_device_its_piece(op_text, in_axes, out_axes, options):
    shape = (8, 8) if len(in_axes) == 2 else (4, 4, 4, 4)
    whole = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    n = MESH.total_size
    inputs = [whole[_block(whole.shape, in_axes, d)] for d in range(n)]
    results = _run_per_device(op_text, in_axes, out_axes, inputs, shape, options)
    for d, local in enumerate(results):
        np.testing.assert_array_equal(local, whole[_block(whole.shape, out_axes, d)])


@pytest.mark.parametrize("options", ["", "combine-multi-dimension-reduce-scatter=true"])
@pytest.mark.parametrize(("op_text", "out_axes", "reduce"), [
    ('sdy.reduce_scatter [{"y"}, {"x"}]', [("y",), ("x",)], np.sum),
    ('sdy.reduce_scatter max [{}, {"x", "y"}]', [(), ("x", "y")], np.max),
])
def test_reduce_scatter_reduces_then_keeps_the_devices_piece(op_text, out_axes, reduce, options):
    rng = np.random.default_rng(1)
    inputs = [rng.integers(-50, 50, (8, 8), dtype=np.int32) for _ in range(MESH.total_size)]
    results = _run_per_device(op_text, [(), ()], out_axes, inputs, (8, 8), options)
    total = reduce(np.stack(inputs), axis=0)
    for d, local in enumerate(results):
        np.testing.assert_array_equal(local, total[_block(total.shape, out_axes, d)])


# -- structure and errors -----------------------------------------------------------------

def test_manual_computation_is_inlined_with_local_types():
    out = _convert(MESH_TEXT + """
func.func @f(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}, {}]>] out_shardings=[<@mesh, [{"x", "y"}, {}]>] manual_axes={"x"} (%arg1: tensor<8x8xf32>) {
    %1 = stablehlo.negate %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : tensor<8x8xf32>
    sdy.return %1 : tensor<8x8xf32>
  } : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}""")
    assert "manual_computation" not in out
    assert "stablehlo.negate %arg0" in out and ": tensor<2x8xf32>" in out


def test_channel_ids_continue_after_the_largest_in_use():
    out = _convert(MESH_TEXT + """
func.func @f(%arg0: tensor<8x8xi32>) -> tensor<8x8xi32> {
  %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<8x8xi32>) -> tensor<8x8xi32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xi32>
  return %1 : tensor<8x8xi32>
}""")
    assert "handle = 8, type = 1" in out


def test_non_divisible_dimension_is_a_located_error():
    text = MESH_TEXT + """
func.func @f(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<6x8xf32> {
  return %arg0 : tensor<6x8xf32>
}"""
    with pytest.raises(PassError, match=r"dimension 0 of tensor<6x8xf32> \(size 6\) is not divisible by 4") as e:
        _convert(text)
    assert e.value.location.line == 2


@pytest.mark.parametrize(("text", "options", "message"), [
    ("func.func @f() { return }", "replica-count=2 partition-count=2", "does not support both"),
    (MESH_TEXT + """
func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", "", "failed to legalize operation 'sdy.reshard'"),
])
def test_unsupported_inputs_are_rejected(text, options, message):
    with pytest.raises(PassError, match=message):
        _convert(text, options)


def test_rgv3_replica_groups_name_mesh_axes_unless_a_sub_axis_is_involved():
    text = MESH_TEXT + """
func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.all_reduce {"y"} %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  %1 = sdy.all_reduce {"y":(1)2} %0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}"""
    out = _convert(text, "enable-rgv3=true")
    assert 'replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "y">]>' in out
    assert "replica_groups = dense<[[0, 2], [1, 3], [4, 6], [5, 7]]> : tensor<4x2xi64>" in out
