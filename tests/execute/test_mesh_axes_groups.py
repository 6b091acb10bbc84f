"""``#stablehlo.replica_group_mesh_axes`` in the interpreter (issue 31): a collective over
mesh axes computes what the same collective over the dense groups of those axes does."""
from __future__ import annotations

import numpy as np
import pytest

from shardy_ref.execute import InterpreterError, run_spmd

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]{ids}>'
PROGRAM = """{mesh}
func.func @main(%a: tensor<2xi32>) -> tensor<{out}xi32> {{
  %0 = "stablehlo.{op}"(%a) <{{{extra}channel_handle = {channel}, replica_groups = {groups},
    use_global_device_ids}}> {region}: (tensor<2xi32>) -> tensor<{out}xi32>
  return %0 : tensor<{out}xi32>
}}
"""
SUM = """({
  ^bb0(%l: tensor<i32>, %r: tensor<i32>):
    %s = stablehlo.add %l, %r : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) """


def _run(op: str, groups: str, ids: str = "") -> list:
    out = {"all_reduce": "2", "all_gather": "{n}"}[op]
    size = 2 if "sub_axis" in groups else (4 if '"y"' in groups else 2)
    if '"x"' in groups and '"y"' in groups:
        size = 8
    text = PROGRAM.format(mesh=MESH.format(ids=ids), op=op, groups=groups,
                          out=out.format(n=2 * size),
                          extra="all_gather_dim = 0 : i64, " if op == "all_gather" else "",
                          region=SUM if op == "all_reduce" else "",
                          channel="#stablehlo.channel_handle<handle = 1, type = 0>")
    inputs = [[np.array([d, 10 * d], np.int32)] for d in range(8)]
    return [r[0] for r in run_spmd(text, inputs)]


def _mesh_axes(*axes: str) -> str:
    refs = ", ".join(f"#stablehlo.axis_ref<name = \"{a}\">" if ":" not in a else
                     f"#stablehlo.axis_ref<name = \"{a[0]}\", sub_axis_info = {a[2:]}>"
                     for a in axes)
    return f"#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [{refs}]>"


def _dense(groups: list[list[int]]) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    return f"dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"


@pytest.mark.parametrize(("axes", "groups", "ids"), [
    (("y",), [[0, 1, 2, 3], [4, 5, 6, 7]], ""),
    (("x",), [[0, 4], [1, 5], [2, 6], [3, 7]], ""),
    (("y", "x"), [[0, 4, 1, 5, 2, 6, 3, 7]], ""),
    (("y:(2)2",), [[0, 1], [2, 3], [4, 5], [6, 7]], ""),
    (("y:(1)2",), [[0, 2], [1, 3], [4, 6], [5, 7]], ""),
    (("y",), [[0, 4, 1, 5], [2, 6, 3, 7]], ", device_ids=[0, 4, 1, 5, 2, 6, 3, 7]"),
])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_mesh_axes_groups_are_the_devices_differing_along_those_axes(op, axes, groups, ids):
    got = _run(op, _mesh_axes(*axes), ids)
    want = _run(op, _dense(groups), ids)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_an_axis_the_mesh_lacks_is_a_located_error():
    with pytest.raises(InterpreterError, match="axis 'z'"):
        _run("all_reduce", _mesh_axes("z"))
