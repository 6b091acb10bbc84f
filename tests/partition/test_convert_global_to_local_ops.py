# ruff: noqa: E501  (the inputs are MLIR lines, kept whole to stay readable)
"""``sdy-convert-global-to-local`` on StableHLO ops whose local form is more than local
types (iota, pad, slice, gather, scatter, contractions, windows): each device's result is
its piece of what the unpartitioned program computes, and what the lowering cannot do
locally is a located error."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run, run_spmd
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.types import FloatType, IntegerType
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.partition.export.convert_global_to_local.gather_scatter import _identity
from shardy_ref.partition.export.convert_global_to_local.state import shard_index
from shardy_ref.pass_manager import PassContext, PassManager, PipelineElement, make_pass

MESH = Mesh((MeshAxis("x", 2), MeshAxis("y", 4)))
MESH_TEXT = 'sdy.mesh @mesh = <["x"=2, "y"=4]>'
AXES = [(), ("x",), ("y",), ("x", "y"), ("y", "x")]


def _convert(text: str) -> str:
    module = parse_module(MESH_TEXT + "\n" + text)
    verify_module(module)
    pass_ = make_pass("sdy-convert-global-to-local", "")
    PassManager([PipelineElement(pass_=pass_)], verify=verify_module).run(module, PassContext())
    return print_module(module)


def _count(axes) -> int:
    return int(np.prod([MESH.axis_size(a) for a in axes])) if axes else 1


def _block(shape, dims_axes, device):
    """The index of ``device``'s piece of a ``shape`` tensor sharded by ``dims_axes``."""
    out = []
    for size, axes in zip(shape, dims_axes):
        n = size // _count(axes)
        start = shard_index(device, MESH, [AxisRef(a) for a in axes]) * n
        out.append(slice(start, start + n))
    return tuple(out)


def _dims(dims_axes) -> str:
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}"
                           for axes in dims_axes) + "]"


def _sharding(dims_axes) -> str:
    return f"{{sdy.sharding = #sdy.sharding<@mesh, {_dims(dims_axes)}>}}"


def _per_value(dims_axes) -> str:
    return f"{{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {_dims(dims_axes)}>]>}}"


def _type(shape, element="i32") -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{element}>"


def _check_pieces(text, args, in_axes, out_axes):
    """Run ``text`` whole and, converted, on the 8 devices; each device must hold its piece
    (under ``out_axes``) of the whole result."""
    whole = run(MESH_TEXT + "\n" + text, *args)[0]
    local = _convert(text)
    per_device = [[a[_block(a.shape, axes, d)] for a, axes in zip(args, in_axes)]
                  for d in range(MESH.total_size)]
    for d, results in enumerate(run_spmd(local, per_device)):
        np.testing.assert_array_equal(results[0], whole[_block(whole.shape, out_axes, d)])
    return local


# -- iota, pad, slice ----------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(st.sampled_from(AXES), st.sampled_from(AXES), st.integers(0, 1))
def test_iota_gives_each_device_its_global_indices(axes0, axes1, dim):
    assume(not set(axes0) & set(axes1))
    shape = (8, 16)
    text = f"""func.func @main() -> ({_type(shape)} {_sharding([axes0, axes1])}) {{
  %0 = stablehlo.iota dim = {dim} {_per_value([axes0, axes1])} : {_type(shape)}
  return %0 : {_type(shape)}
}}"""
    _check_pieces(text, [], [], [axes0, axes1])


def _pad_is_local(size, n, low, interior, out_size):
    """Every input element that lands in the output lands in the output shard of the same
    index as its input shard (so no device needs another's data)."""
    s_in, s_out = size // n, out_size // n
    for j in range(size):
        pos = low + j * (interior + 1)
        if 0 <= pos < out_size and pos // s_out != j // s_in:
            return False
    return True


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.sampled_from(AXES[1:]), st.integers(-3, 4), st.integers(-1, 1), st.integers(0, 2),
       st.sampled_from([8, 16]))
def test_pad_gives_each_device_its_piece(axes, low, extra, interior, size):
    n = _count(axes)
    base = size + low + (size - 1) * interior
    high = (-base) % n + n * extra  # makes the padded size divisible by the device count
    out_size = base + high
    assume(out_size > 0)
    assume(_pad_is_local(size, n, low, interior, out_size))
    shape, out_shape = (size, 3), (out_size, 6)
    text = f"""func.func @main(%arg0: {_type(shape)} {_sharding([axes, ()])}) -> ({_type(out_shape)} {_sharding([axes, ()])}) {{
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [{low}, 1], high = [{high}, 0], interior = [{interior}, 1] {_per_value([axes, ()])} : ({_type(shape)}, tensor<i32>) -> {_type(out_shape)}
  return %0 : {_type(out_shape)}
}}"""
    x = np.arange(size * 3, dtype=np.int32).reshape(shape) + 1
    _check_pieces(text, [x], [[axes, ()]], [axes, ()])


def test_non_uniform_pad_slices_each_device_window_from_a_common_pad():
    text = f"""func.func @main(%arg0: tensor<16x4xi32> {_sharding([("x",), ()])}) -> (tensor<50x4xi32> {_sharding([("x",), ()])}) {{
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %0 = stablehlo.pad %arg0, %c, low = [2, 0], high = [2, 0], interior = [2, 0] {_per_value([("x",), ()])} : (tensor<16x4xi32>, tensor<i32>) -> tensor<50x4xi32>
  return %0 : tensor<50x4xi32>
}}"""
    x = np.arange(64, dtype=np.int32).reshape(16, 4)
    local = _check_pieces(text, [x], [[("x",), ()]], [("x",), ()])
    assert "stablehlo.dynamic_slice" in local and "tensor<25x4xi32>" in local


@pytest.mark.parametrize(("bounds", "shape", "out_shape", "axes"), [
    ("[0:16:2, 2:6]", (16, 8), (8, 4), [("y",), ()]),
    ("[0:16, 1:7:3]", (16, 8), (16, 2), [("x", "y"), ()]),
    ("[0:12, 0:8]", (16, 8), (12, 8), [(), ("x",)]),
])
def test_slice_of_whole_sharded_dimensions_is_local(bounds, shape, out_shape, axes):
    text = f"""func.func @main(%arg0: {_type(shape)} {_sharding(axes)}) -> ({_type(out_shape)} {_sharding(axes)}) {{
  %0 = stablehlo.slice %arg0 {bounds} {_per_value(axes)} : ({_type(shape)}) -> {_type(out_shape)}
  return %0 : {_type(out_shape)}
}}"""
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    _check_pieces(text, [x], [axes], axes)


# -- gather and scatter ---------------------------------------------------------------------

GATHER = """func.func @main(%arg0: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<5x2xi64>) -> tensor<5x1x8xi32> {
  %0 = "stablehlo.gather"(%arg0, %arg1) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 8>, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"y"}]>]>
  } : (tensor<8x8xi32>, tensor<5x2xi64>) -> tensor<5x1x8xi32>
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}, {"y"}]> : tensor<5x1x8xi32>
  %2 = sdy.all_gather [{}, {}, {"y"}] %1 out_sharding=<@mesh, [{}, {}, {}]> : tensor<5x1x8xi32>
  return %2 : tensor<5x1x8xi32>
}"""


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 11), st.integers(-3, 3)), min_size=5, max_size=5))
def test_gather_on_a_sharded_collapsed_dim_masks_then_sums(indices):
    # Rows come from the device holding them (out-of-range rows clamp first, as globally);
    # columns are sliced whole along the "y"-sharded dimension.
    x = np.arange(64, dtype=np.int32).reshape(8, 8) * 3 + 1
    idx = np.array(indices, dtype=np.int64)
    _check_pieces(GATHER, [x, idx], [[("x",), ("y",)], [(), ()]], [(), (), ()])


def test_gather_of_a_trivial_dim_not_indexed_keeps_the_device_at_offset_zero():
    text = """func.func @main(%arg0: tensor<8x10xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, %arg1: tensor<3xi64>) -> tensor<3x1xi32> {
  %0 = "stablehlo.gather"(%arg0, %arg1) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [1], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 1>
  } : (tensor<8x10xi32>, tensor<3xi64>) -> tensor<3x1xi32>
  %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<3x1xi32>
  return %1 : tensor<3x1xi32>
}"""
    x = np.arange(80, dtype=np.int32).reshape(8, 10) + 5
    _check_pieces(text, [x, np.array([0, 9, 4], dtype=np.int64)], [[("y",), ()], [()]],
                  [(), ()])


SCATTER_BODY = """({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.OP %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  })"""


@pytest.mark.parametrize(("reduction", "kind"), [("add", ""), ("maximum", "max "),
                                               ("minimum", "min ")])
def test_scatter_of_updates_split_over_devices_counts_the_operand_once(reduction, kind):
    text = f"""func.func @main(%arg0: tensor<4x3xi32>, %arg1: tensor<8x1xi64> {_sharding([("x", "y"), ()])}, %arg2: tensor<8x3xi32> {_sharding([("x", "y"), ()])}) -> tensor<4x3xi32> {{
  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) {SCATTER_BODY.replace("OP", reduction)} {{
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>
  }} : (tensor<4x3xi32>, tensor<8x1xi64>, tensor<8x3xi32>) -> tensor<4x3xi32>
  %1 = sdy.all_reduce {kind}{{"x", "y"}} %0 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<4x3xi32>
  return %1 : tensor<4x3xi32>
}}"""
    rng = np.random.default_rng(3)
    x = rng.integers(-9, 9, (4, 3), dtype=np.int32)
    idx = rng.integers(0, 4, (8, 1), dtype=np.int64)
    upd = rng.integers(-9, 9, (8, 3), dtype=np.int32)
    _check_pieces(text, [x, idx, upd], [[(), ()], [("x", "y"), ()], [("x", "y"), ()]],
                  [(), ()])


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-2, 9), min_size=6, max_size=6))
def test_scatter_into_a_sharded_indexed_dim_uses_local_indices(rows):
    # Each device applies the updates whose rows it holds; other rows fall out of its shard.
    text = f"""func.func @main(%arg0: tensor<8x3xi32> {_sharding([("y",), ()])}, %arg1: tensor<6x1xi64>, %arg2: tensor<6x3xi32>) -> (tensor<8x3xi32> {_sharding([("y",), ()])}) {{
  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) {SCATTER_BODY.replace("OP", "add")} {{
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
    sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"y"}}, {{}}]>]>
  }} : (tensor<8x3xi32>, tensor<6x1xi64>, tensor<6x3xi32>) -> tensor<8x3xi32>
  return %0 : tensor<8x3xi32>
}}"""
    x = np.arange(24, dtype=np.int32).reshape(8, 3)
    idx = np.array(rows, dtype=np.int64).reshape(6, 1)
    upd = np.arange(18, dtype=np.int32).reshape(6, 3) * 10
    _check_pieces(text, [x, idx, upd], [[("y",), ()], [(), ()], [(), ()]], [("y",), ()])


def test_scatter_identities_are_neutral_for_their_reduction():
    i32, ui8, f32 = IntegerType(32), IntegerType(8, "unsigned"), FloatType("f32")
    assert _identity("stablehlo.add", f32) == 0.0
    assert _identity("stablehlo.multiply", i32) == 1
    assert _identity("stablehlo.maximum", i32) == -(2 ** 31)
    assert _identity("stablehlo.minimum", i32) == 2 ** 31 - 1
    # the infinities where the type has them (a max-scatter into -inf stays -inf)
    assert _identity("stablehlo.maximum", f32) == -np.inf
    assert _identity("stablehlo.minimum", FloatType("f8E4M3FN")) == 448.0
    assert _identity("stablehlo.and", IntegerType(1)) is True
    # upstream takes the signed extremes' bits, also for unsigned types
    assert _identity("stablehlo.maximum", ui8) == 128


# -- contractions and windows ------------------------------------------------------------------

def test_dot_general_with_sharded_contracting_dims_sums_partials():
    text = """func.func @main(%arg0: tensor<4x8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}, %arg1: tensor<4x8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}) -> (tensor<4x8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {}]>}) {
  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}]>]>} : (tensor<4x8x8xi32>, tensor<4x8x8xi32>) -> tensor<4x8x8xi32>
  %1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}, {}]> : tensor<4x8x8xi32>
  return %1 : tensor<4x8x8xi32>
}"""
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-5, 5, (4, 8, 8), dtype=np.int32) for _ in range(2))
    _check_pieces(text, [a, b], [[("x",), (), ("y",)], [("x",), ("y",), ()]], [("x",), (), ()])


def test_convolution_group_counts_shrink_with_their_sharding():
    text = """func.func @main(%arg0: tensor<2x6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x"}]>}, %arg1: tensor<3x2x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x"}]>}) -> (tensor<2x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"x"}]>}) {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}]>]>} : (tensor<2x6x4xf32>, tensor<3x2x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}"""
    rng = np.random.default_rng(7)
    x = rng.integers(-4, 4, (2, 6, 4)).astype(np.float32)
    w = rng.integers(-4, 4, (3, 2, 8)).astype(np.float32)
    local = _check_pieces(text, [x, w], [[(), (), ("x",)], [(), (), ("x",)]], [(), (), ("x",)])
    assert "feature_group_count = 1 : i64" in local and "sdy.sharding_per_value" not in local


def test_reduce_window_on_a_pass_through_dim_is_local():
    text = """func.func @main(%arg0: tensor<8x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = "stablehlo.reduce_window"(%arg0, %c) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x16xi32>, tensor<i32>) -> tensor<8x8xi32>
  return %0 : tensor<8x8xi32>
}"""
    x = np.arange(128, dtype=np.int32).reshape(8, 16)
    _check_pieces(text, [x], [[("x",), ("y",)]], [("x",), ("y",)])


# -- what needs communication is rejected --------------------------------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ("""func.func @f(%arg0: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.concatenate %arg0, %arg0, dim = 0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}""", "'stablehlo.concatenate' op dimension 0 is sharded but the concatenation is on this dimension."),
    ("""func.func @f(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.concatenate %arg0, dim = 0 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}""", r"dimension 1 has mismatched sharding axes \(\[axis_ref\"x\"\] vs \[\]\)"),
    ("""func.func @f(%arg0: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.slice %arg0 [2:10, 0:4] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}, {}]>]>} : (tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}""", "dimension 0 is sharded but the slice is not a full slice and requires device communication."),
    ("""func.func @f(%arg0: tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %c: tensor<i32>) -> tensor<4xi32> {
  %0 = stablehlo.pad %arg0, %c, low = [1], high = [-1], interior = [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>]>} : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}""", "dimension 0 is sharded but the pad moves data between shards"),
    ("""func.func @f(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot %arg0, %arg1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", "Expected sharded contracting dot to have one user and the user is an sdy.all_reduce."),
    ("""func.func @f(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %c: tensor<f32>) -> tensor<8x8xf32> {
  %0 = "stablehlo.reduce_window"(%arg0, %c) <{window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""", "In op stablehlo.reduce_window dimension 1 is sharded but is not a pass-through dimension."),
])
def test_ops_needing_communication_are_located_errors(text, message):
    with pytest.raises(PassError, match=message) as e:
        _convert(text)
    assert e.value.location.line == 3
