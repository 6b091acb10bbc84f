"""``shardy-ref explain``: each value's sharding, where its axes came from, and the
collectives partitioning inserts for it (``shardy_ref/tools/explain.py``)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from shardy_ref.tools import explain_cmd
from shardy_ref.tools.explain import explain_module, find_value
from tests.profiles import PROFILE

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# a dot whose contracting dim is sharded along "y", then a constraint on its result
DOT = """\
sdy.mesh @mesh = <["x"=2, "y"=4]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32> loc("matmul")
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"x"}]> : tensor<8x32xf32>
  %2 = stablehlo.negate %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
"""


def run(tmp_path, text: str, *args: str, name: str = "m.mlir") -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    code = explain_cmd.main([str(path), *args], out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def dot():
    return explain_module(DOT, "dot.mlir")


def one(explanation, name: str):
    (report,) = find_value(explanation.values, name)
    return report


def test_user_inputs_keep_their_axes(dot):
    arg0 = one(dot, "arg0")
    assert arg0.sharding == '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'
    assert [(a.axis, a.dim) for a in arg0.axes] == [('"x"', 0), ('"y"', 1)]
    assert all(a.origin == "user input: the sharding given on arg 0" for a in arg0.axes)


def test_an_axis_from_a_constraint_and_the_step_that_moved_it(dot):
    matmul = one(dot, "%0")
    assert matmul.aliases == ('loc("matmul")',)
    assert matmul.sharding == '#sdy.sharding<@mesh, [{}, {"x"}]>'
    (x,) = matmul.axes
    assert (x.axis, x.dim) == ('"x"', 1)
    assert x.origin == ("the sharding constraint sdy.sharding_constraint %1 (dot.mlir:8:8) on "
                        "this value (sdy-apply-sharding-constraints gave it the constraint's "
                        "sharding)")
    assert x.moves == ()
    negate = one(dot, "%2")
    assert negate.axes[0].origin == ("the sharding constraint sdy.sharding_constraint %1 "
                                     "(dot.mlir:8:8)")
    assert negate.axes[0].moves == (
        "step 0 (aggressive, user priority p0, op-priority round 0): stablehlo.negate %2 "
        "(dot.mlir:9:8) moved it along factor j of ([i, j])->([i, j]) from its operand 0 (%1) "
        "to its result 0 (%2)",)
    assert one(dot, "%1").axes[0].origin.startswith("the sharding constraint")
    result = one(dot, "result0").axes[0]
    assert result.origin.startswith("the sharding constraint")
    assert result.moves[1] == (
        "step 1 (aggressive, user priority p0, op-priority round 0): the function's return "
        "moved it from the returned value (%2) to result 0 of @main")


def test_a_sharded_contracting_dim_is_all_reduced(dot):
    (reduce,) = one(dot, "matmul").collectives
    # the dot's result shard is 8x16 f32 = 512 bytes; a ring all-reduce over 4 devices
    # sends 2 * 3/4 of it
    assert reduce.summary == 'all-reduce: partial results are summed over "y"'
    assert (reduce.group_size, reduce.bytes_per_device) == (4, 768)
    assert reduce.consumer == "stablehlo.negate"


def test_operand_reshards_before_the_dot(dot):
    (gather,) = one(dot, "arg0").collectives  # "x" leaves dim 0 of the lhs: 4x4 f32 shards
    assert gather.summary == 'all-gather: every device collects the shards of "x"'
    assert (gather.group_size, gather.bytes_per_device) == (2, 64)
    (slice_,) = one(dot, "arg1").collectives
    assert slice_.summary.startswith("all-slice") and slice_.bytes_per_device == 0
    assert one(dot, "%2").collectives == ()


def test_mlp_example_text(tmp_path):
    code, out, _ = run(tmp_path, (EXAMPLES / "mlp.mlir").read_text(), "--value", "%y")
    assert code == 0
    m = tmp_path / "m.mlir"
    assert out.splitlines() == [
        "@mlp: after sdy-propagation-pipeline (steps by sdy-user-priority-propagate), then "
        "partitioned",
        "",
        "%2 (%y): stablehlo.dot_general : tensor<8x16xf32>",
        '  sharding: #sdy.sharding<@mesh, [{"data"}, {}]>',
        f'  axis "data" on dim 0: from the sharding constraint sdy.sharding_constraint %3 '
        f"({m}:11:8)",
        f"    step 1 (aggressive, user priority p0, op-priority round 0): "
        f"sdy.sharding_constraint %3 ({m}:11:8) moved it along factor i of ([i, j])->([i, j]) "
        "from its result 0 (%3) to its operand 0 (%2)",
        "  partitioning: 1 collective(s), 384 bytes sent per device",
        '    all-reduce: partial results are summed over "model": group of 4, 384 bytes per '
        "device, then func.return",
        '      sdy.all_reduce reduction_axes={"model"} out_sharding=<@mesh, [{"data"}, {}]>',
    ]


def test_mlp_axis_propagated_backwards_from_a_user_input():
    mlp = explain_module((EXAMPLES / "mlp.mlir").read_text(), "mlp.mlir")
    (model,) = one(mlp, "arg2").axes
    assert (model.axis, model.dim) == ('"model"', 0)
    assert model.origin == "user input: the sharding given on arg 1"
    # w1's "model" along the first dot's factor j, through the relu, then the second dot's
    # contracting factor k back to w2, in op-priority rounds 2 and 3
    assert model.moves == (
        "step 2 (aggressive, user priority p0, op-priority round 2): stablehlo.dot_general %0 "
        "(mlp.mlir:7:8) moved it along factor j of ([i, k], [k, j])->([i, j]) from its "
        "operand 1 (arg1) to its result 0 (%0)",
        "step 3 (aggressive, user priority p0, op-priority round 2): stablehlo.maximum %1 "
        "(mlp.mlir:9:11) moved it along factor j of ([i, j], [i, j])->([i, j]) from its "
        "operand 0 (%0) to its result 0 (%1)",
        "step 4 (aggressive, user priority p0, op-priority round 3): stablehlo.dot_general %2 "
        "(mlp.mlir:10:8) moved it along factor k of ([i, k], [k, j])->([i, j]) from its "
        "operand 0 (%1) to its operand 1 (arg2)")
    assert [r.name for r in mlp.values] == ["arg0", "arg1", "arg2", "%0", "%cst", "%1", "%2",
                                            "%3", "result0"]
    # the import splits the constant (a new sdy.constant per use) and the export merges the
    # copies back: the report follows it by its location and shows the sharding it got
    assert one(mlp, "%zero").sharding == '#sdy.sharding<@mesh, [{"data"}, {"model"}]>'
    assert "stablehlo.maximum %1 (mlp.mlir:9:11) moved it" in one(mlp, "%zero").axes[0].moves[-1]
    assert [c.bytes_per_device for c in one(mlp, "result0").collectives] == [384]


def test_while_loop_axes_are_followed_through_the_body(tmp_path):
    """Upstream's edge recording fails on a while loop's data-flow edges; the provenance log
    follows the loop: "model" reaches the loop-carried value %2#0 from arg1 through the
    body's dot, add, call arguments and dynamic_slice."""
    scan = explain_module((EXAMPLES / "jax" / "scan.mlir").read_text(), "scan.mlir")
    loop = one(scan, "%2#0")
    data, model = loop.axes
    assert data.origin == "user input: the sharding given on arg 0"
    assert model.origin == "user input: the sharding given on arg 1"
    assert "the data-flow edge (scan.mlir:9:12) moved it along factor j" in data.moves[0]
    assert "from source 0 (arg0) to the edge's value (%2#0)" in data.moves[0]
    ops = [m.split(": ", 1)[1].split(" (")[0] for m in model.moves]
    assert ops[0] == "the data-flow edge" and "stablehlo.dot_general" in ops
    assert "stablehlo.dynamic_slice" in ops and model.moves[-1].endswith("(%2#0)")


@pytest.mark.parametrize("value", ["matmul", 'loc("matmul")', "%0", "0"])
def test_value_names(tmp_path, value):
    code, out, _ = run(tmp_path, DOT, "--value", value)
    assert code == 0 and "\n%0 (loc(\"matmul\")): stablehlo.dot_general" in out
    assert out.count("sharding:") == 1


def test_unknown_value(tmp_path):
    assert run(tmp_path, DOT, "--value", "%9") == (
        1, "", "shardy-ref explain: no value named %9\n")


def test_bad_input(tmp_path):
    code, out, err = run(tmp_path, DOT.replace("stablehlo.negate", "stablehlo.bogus"))
    assert (code, out) == (1, "")
    assert err == f"{tmp_path / 'm.mlir'}:9:8: error: custom op 'stablehlo.bogus' is unknown\n"


SOME = ["jax/attention.mlir", "jax/sim_shard_map_all_to_all_16.mlir", "shard_map/f1.mlir"]
ALL = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.mlir"))


@pytest.mark.parametrize("name", ALL if PROFILE == "long" else SOME)
def test_examples_every_axis_has_an_origin_and_every_collective_a_cost(name):
    explanation = explain_module((EXAMPLES / name).read_text(), name)
    assert explanation.values
    for report in explanation.values:
        shown = report.sharding.split("[", 1)[-1]
        for story in report.axes:
            assert story.axis in shown
            assert story.origin
        for c in report.collectives:
            assert c.group_size >= 1 and c.bytes_per_device >= 0
            assert c.text.startswith("sdy.")


def test_the_readme_sample_is_the_real_output():
    readme = (EXAMPLES.parent / "README.md").read_text()
    section = readme.split("### Explaining a sharding", 1)[1]
    sample = section.split("```\n", 2)[2].split("```", 1)[0]
    out = io.StringIO()
    assert explain_cmd.main([str(EXAMPLES / "mlp.mlir"), "--value", "%y"], out) == 0
    shown = out.getvalue().replace(str(EXAMPLES / "mlp.mlir"), "examples/mlp.mlir")
    assert shown.split("\n\n", 1)[1] == sample


def test_usage_error(capsys):
    with pytest.raises(SystemExit) as done:
        explain_cmd.main([])
    assert done.value.code == 1
    assert capsys.readouterr().err == ("shardy-ref explain: the following arguments are "
                                       "required: module\n")


def test_partitioning_may_compute_a_value_otherwise():
    mlp = explain_module((EXAMPLES / "jax" / "sim_mlp_64.mlir").read_text(), "mlp64.mlir")
    dot = one(mlp, "%0")
    assert dot.sharding == '#sdy.sharding<@mesh, [{"x"}, {"y"}]>'
    # "x" shards the lhs's contracting dim after the all-to-all of arg0: the dot computes
    # partial sums on [{}, {"y"}], all-reduces them (16x8 f32 shards: 2 * 7/8 * 512 bytes)
    # and slices "x" back
    assert dot.partitioned_as == '#sdy.sharding<@mesh, [{}, {"y"}]>'
    assert [(c.summary, c.bytes_per_device) for c in dot.collectives] == [
        ('all-reduce: partial results are summed over "x"', 896),
        ('all-slice (no communication): each device keeps its slice along "x"', 0)]
    (to_all,) = one(mlp, "arg0").collectives
    assert (to_all.text, to_all.bytes_per_device) == (
        'sdy.all_to_all params=[{"x"}: 0->1] out_sharding=<@mesh, [{}, {"x"}]>', 224)


def test_values_inside_a_manual_computation():
    cm = explain_module((EXAMPLES / "shard_map" / "collective_matmul.mlir").read_text(), "cm")
    (arg0,) = one(cm, "arg0").axes
    assert arg0.origin == ("in_shardings[0] of the manual computation sdy.manual_computation "
                           "%0 (cm:13:8) (sdy-apply-sharding-constraints gave it to this "
                           "operand)")
    lhs1 = one(cm, "%lhs1")
    assert lhs1.op == "stablehlo.collective_permute" and lhs1.collectives == ()
    assert lhs1.note.startswith('inside an sdy.manual_computation (manual axes {"i"})')


CALL = """\
sdy.mesh @mesh = <["x"=2]>
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> tensor<8xf32> {
  %0 = func.call @f(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = stablehlo.abs %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}
"""


def test_a_call_result_is_followed_through_its_named_computation():
    """Propagation sees the call as an ``sdy.named_computation`` (a new op), the export
    makes it a call again: the report still finds the value and its story."""
    call = explain_module(CALL, "call.mlir")
    result = one(call, "%0")
    assert result.op == "func.call"
    assert result.sharding == '#sdy.sharding<@mesh, [{"x"}]>'
    (x,) = result.axes
    assert x.origin == "user input: the sharding given on arg 0"
    assert "stablehlo.negate (call.mlir:3:8) moved it along factor i" in x.moves[1]
    assert x.moves[-1].endswith("to the edge's value (%0)")
    assert one(call, "%1").axes[0].moves[-1].endswith(
        "from its operand 0 (%0) to its result 0 (%1)")
