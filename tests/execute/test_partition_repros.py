"""The two programs of issue 27 that real JAX users wrote and ``shardy-ref check`` got
wrong or refused: a ``jax.lax.dynamic_update_slice`` into a row-sharded array whose update
straddles two devices (every device held wrong elements), and a fused projection split in
two halves by a reshape (the SwiGLU / fused-QKV pattern: refused). Both now compute what the
single-device program computes."""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import run, simulate
from shardy_ref.tools.cli import main

DUS = """module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<3x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg2: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) -> tensor<16x4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg2, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<16> : tensor<i32>
    %1 = stablehlo.add %arg2, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg2 : tensor<i1>, tensor<i32>
    %3 = stablehlo.dynamic_update_slice %arg0, %arg1, %2, %c : (tensor<16x4xf32>, tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<16x4xf32>
    return %3 : tensor<16x4xf32>
  }
}
"""  # noqa: E501

SWIGLU = """module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<6x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x6xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>
    %1 = stablehlo.reshape %0 : (tensor<8x16xf32>) -> tensor<8x2x8xf32>
    %2 = stablehlo.slice %1 [0:8, 0:1, 0:8] : (tensor<8x2x8xf32>) -> tensor<8x1x8xf32>
    %3 = stablehlo.reshape %2 : (tensor<8x1x8xf32>) -> tensor<8x8xf32>
    %4 = stablehlo.slice %1 [0:8, 1:2, 0:8] : (tensor<8x2x8xf32>) -> tensor<8x1x8xf32>
    %5 = stablehlo.reshape %4 : (tensor<8x1x8xf32>) -> tensor<8x8xf32>
    %6 = stablehlo.multiply %3, %5 : tensor<8x8xf32>
    return %6 : tensor<8x8xf32>
  }
}
"""  # noqa: E501


def test_dynamic_update_slice_straddling_two_devices(tmp_path, capsys):
    path, inputs = tmp_path / "dus.mlir", tmp_path / "dus.npz"
    path.write_text(DUS)
    x = np.arange(64, dtype=np.float32).reshape(16, 4)
    update = np.full((3, 4), -1, np.float32)
    np.savez(inputs, arg0=x, arg1=update, arg2=np.int32(3))
    assert main(["check", str(path), "--inputs", str(inputs)]) == 0
    assert "OK: the partitioned program computes the same results" in capsys.readouterr().out
    # the program wraps a negative start once (as JAX does), then the op clamps it
    for start, rows in ((3, slice(3, 6)), (-2, slice(13, 16)), (15, slice(13, 16)),
                        (-20, slice(0, 3)), (40, slice(13, 16)), (6, slice(6, 9))):
        want = x.copy()
        want[rows] = -1
        got = simulate(DUS, x, update, np.int32(start))[0]
        assert np.array_equal(got, want), start
        assert np.array_equal(run(DUS, x, update, np.int32(start))[0], want), start


def test_fused_projection_split_by_a_reshape(tmp_path, capsys):
    path = tmp_path / "swiglu.mlir"
    path.write_text(SWIGLU)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "OK: the partitioned program computes the same results" in out
    assert "max abs error 0," in out
