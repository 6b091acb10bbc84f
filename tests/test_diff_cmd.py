"""``shardy-ref diff``: the structural comparison, the shrinker, a fake tool that perturbs
one sharding, and (with the oracle) agreement with real Shardy on random programs."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from shardy_ref.parser import parse_module
from shardy_ref.tools import diff_cmd
from shardy_ref.tools.diff_compare import compare
from shardy_ref.tools.diff_shrink import shrink

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT.parent / "shared" / "oracle" / "sdy_opt"
PIPELINE = "builtin.module(sdy-propagation-pipeline)"

OURS = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) {
  %0 = stablehlo.negate %arg0
      {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<8x8xf32>
  %1 = stablehlo.add %0, %0
      {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {"b"}]>]>} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
"""

# the same shardings: another mesh name, other SSA names, generic form for one op
THEIRS_SAME = """
module {
sdy.mesh @other = <["a"=2, "b"=2]>
func.func @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@other, [{"a"}, {}]>}) {
  %n = "stablehlo.negate"(%x)
      {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"a"}, {}]>]>}
      : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = stablehlo.add %n, %n
      {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"a"}, {"b"}]>]>} : tensor<8x8xf32>
  func.return %s : tensor<8x8xf32>
}
}
"""


def test_same_shardings_printed_differently_agree():
    assert compare(parse_module(OURS), parse_module(THEIRS_SAME)) is None


def test_changed_axis_disagrees_and_names_the_value():
    theirs = THEIRS_SAME.replace('[{"a"}, {"b"}]', '[{"b"}, {"a"}]')
    d = compare(parse_module(OURS), parse_module(theirs))
    assert d is not None
    assert d.where == "@main %1 (result 0 of stablehlo.add)"
    assert d.ours == '#sdy.sharding<mesh<["a"=2, "b"=2]>, [{"a"}, {"b"}]>'
    assert d.theirs == '#sdy.sharding<mesh<["a"=2, "b"=2]>, [{"b"}, {"a"}]>'


def test_other_mesh_axes_disagree():
    theirs = THEIRS_SAME.replace('<["a"=2, "b"=2]>', '<["a"=2, "b"=4]>')
    assert compare(parse_module(OURS), parse_module(theirs)).where == "@main %arg0 (argument 0)"


def test_missing_sharding_and_extra_op_disagree():
    d = compare(parse_module(OURS), parse_module(THEIRS_SAME.replace(
        ' {sdy.sharding = #sdy.sharding_per_value<[<@other, [{"a"}, {"b"}]>]>}', "")))
    assert (d.where, d.theirs) == ("@main %1 (result 0 of stablehlo.add)", "no sharding")
    extra = THEIRS_SAME.replace(
        "  func.return %s", "  %r = sdy.reshard %s <@other, [{}, {}]> : tensor<8x8xf32>\n"
        "  func.return %s")
    d = compare(parse_module(OURS), parse_module(extra))
    assert d.where.startswith("@main op func.return [ours 3 ops, theirs 4]")
    assert (d.ours, d.theirs) == ("op func.return", "op sdy.reshard")


GATHER = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>})
    -> tensor<8x8xf32> {
  %0 = sdy.all_gather [{"a"}, {}] %arg0 out_sharding=<@mesh, [{}, {"b"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_collectives_on_other_axes_disagree():
    theirs = GATHER.replace('[{"a"}, {}] %arg0 out_sharding=<@mesh, [{}, {"b"}]>',
                            '[{}, {"b"}] %arg0 out_sharding=<@mesh, [{"a"}, {}]>')
    d = compare(parse_module(GATHER), parse_module(theirs))
    assert d.where == "@main op sdy.all_gather [ours 2 ops, theirs 2]"
    assert d.ours.endswith('gathering_axes = #sdy<list_of_axis_ref_lists[{"a"}, {}]>}')
    assert d.theirs.endswith('gathering_axes = #sdy<list_of_axis_ref_lists[{}, {"b"}]>}')


BIG = """
sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>},
                %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>},
                %arg2: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<8x8xf32>
  %1 = stablehlo.tanh %0 : tensor<8x8xf32>
  %2 = stablehlo.negate %1 : tensor<8x8xf32>
  %3 = sdy.sharding_constraint %2 <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  %4 = stablehlo.multiply %3, %arg2 : tensor<8x8xf32>
  return %4, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
"""


def _without_tanh_sharding(module) -> None:
    for op in module.walk():
        if op.name == "stablehlo.tanh":
            op.attributes.pop("sdy.sharding", None)


def _disagrees(text: str) -> bool:
    """Ours against a 'tool' that forgets the sharding of every tanh."""
    ours = diff_cmd.run_ours(text, PIPELINE)
    theirs = diff_cmd.run_ours(text, PIPELINE)
    _without_tanh_sharding(theirs.module)
    return diff_cmd.judge(ours, theirs).outcome == "disagree"


def test_shrinker_keeps_the_disagreement():
    assert _disagrees(BIG)
    small = shrink(BIG, lambda texts: next(
        (i for i, t in enumerate(texts) if _disagrees(t)), None))
    assert _disagrees(small)
    module = parse_module(small)
    names = [op.name for op in module.walk()]
    assert "stablehlo.tanh" in names
    for gone in ("stablehlo.negate", "sdy.sharding_constraint", "stablehlo.multiply"):
        assert gone not in names
    assert "%arg2" not in small  # the unused argument is deleted too
    assert small.count("sdy.sharding<") < BIG.count("sdy.sharding<")


FAKE_TOOL = f"""
import io, re, sys
sys.path.insert(0, {str(ROOT)!r})
from shardy_ref.tools.opt import main
out = io.StringIO()
sys.stdout, real = out, sys.stdout
status = main(sys.argv[1:])
sys.stdout = real
for line in out.getvalue().splitlines():
    if "stablehlo.tanh" in line:
        line = re.sub(r" \\{{sdy\\.sharding = #sdy\\.sharding_per_value<\\[.*?\\]>\\}}", "", line)
    print(line)
sys.exit(status)
"""


def test_fake_tool_perturbing_one_sharding_is_detected(tmp_path, capsys):
    script = tmp_path / "fake_sdy_opt.py"
    script.write_text(FAKE_TOOL)
    save = tmp_path / "out"
    status = diff_cmd.main(["--tool", f"{sys.executable} {script}", "--pipeline",
                            "sdy-propagation-pipeline", "--examples", "4", "--seed", "15",
                            "--save", str(save), "--no-shrink", "--quiet",
                            "--min-agreement", "90"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert re.search(r"seed 16: disagree: @main %1 \(result 0 of stablehlo.tanh\): ours "
                     r"#sdy.sharding<mesh<\[\"b\"=2, \"c\"=2\]>, \[\{\"c\", \"b\"\}, \{\}, "
                     r"\{\}\]>, theirs no sharding", out), out
    assert re.search(r"^agree\s+3\s+75.0$", out, re.M), out
    saved = (save / "16.mlir").read_text()
    assert "// pipeline: builtin.module(sdy-propagation-pipeline)" in saved
    assert "//   theirs: no sharding" in saved
    assert (f"// repro: diff <(shardy-ref-opt {save / '16.mlir'} "
            "'--pass-pipeline=builtin.module(sdy-propagation-pipeline)') <(") in saved
    parse_module(saved)  # the header is comments; the program still parses


PICKY_TOOL = f"""
import os, re, sys, tempfile
sys.path.insert(0, {str(ROOT)!r})
from shardy_ref.tools.opt import main
path, *flags = sys.argv[1:]
chunks = re.split(r"^// -----.*$\\n?", open(path).read(), flags=re.M)
kept = [c for c in chunks if "stablehlo.tanh" not in c]
if len(kept) < len(chunks):
    sys.stderr.write("picky: error: I do not do tanh\\n")
fd, kept_path = tempfile.mkstemp(suffix=".mlir")
os.write(fd, "\\n// -----\\n".join(kept).encode())
os.close(fd)
status = main([kept_path, *flags]) if kept else 1
sys.exit(status or int(len(kept) < len(chunks)))
"""


def test_tool_failing_on_one_program_of_a_batch(tmp_path, capsys):
    script = tmp_path / "picky_sdy_opt.py"
    script.write_text(PICKY_TOOL)
    status = diff_cmd.main(["--tool", f"{sys.executable} {script}", "--pipeline",
                            "sdy-propagation-pipeline", "--examples", "4", "--seed", "15",
                            "--save", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert status == 0
    assert "seed 16: theirs-error: picky: error: I do not do tanh" in out, out
    assert re.search(r"^agree\s+3\s+75.0$", out, re.M), out
    assert re.search(r"^theirs-error\s+1\s+25.0$", out, re.M), out


def test_failing_tool_is_theirs_error(tmp_path, capsys):
    status = diff_cmd.main(["--tool", "false", "--pipeline", "sdy-propagation-pipeline",
                            "--examples", "3", "--save", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert status == 0
    assert re.search(r"^theirs-error\s+3\s+100.0$", out, re.M), out
    assert "agreement: 0.0% of 3 programs" in out


def test_bad_usage_exits_1(capsys):
    with pytest.raises(SystemExit) as e:
        diff_cmd.main(["--pipeline", "x"])
    assert e.value.code == 1
    assert capsys.readouterr().err.startswith("shardy-ref diff: ")


@pytest.mark.oracle
def test_oracle_agrees_on_20_random_programs(tmp_path, capsys):
    status = diff_cmd.main(["--tool", str(ORACLE), "--pipeline", "sdy-propagation-pipeline",
                            "--examples", "20", "--save", str(tmp_path), "--quiet",
                            "--min-agreement", "100"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agreement: 100.0% of 20 programs" in out


def test_unknown_feature_exits_1(capsys):
    status = diff_cmd.main(["--tool", "false", "--pipeline", "x", "--features", "groups,gotos"])
    assert status == 1
    assert capsys.readouterr().err == (
        "shardy-ref diff: --features: unknown feature 'gotos' (expected one of groups, "
        "manual, control-flow, calls, priorities, ops or all)\n")


@pytest.mark.oracle
def test_oracle_agrees_on_20_programs_with_every_feature(tmp_path, capsys):
    status = diff_cmd.main(["--tool", str(ORACLE), "--pipeline", "sdy-propagation-pipeline",
                            "--examples", "20", "--save", str(tmp_path), "--quiet",
                            "--features", "all", "--min-agreement", "100"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert re.search(r"^agree\s+20\s+100.0$", out, re.M), out


def test_files_instead_of_random_programs(tmp_path, capsys):
    script = tmp_path / "fake_sdy_opt.py"
    script.write_text(FAKE_TOOL)
    (tmp_path / "big.mlir").write_text(BIG)
    (tmp_path / "same.mlir").write_text(OURS)
    status = diff_cmd.main(["--tool", f"{sys.executable} {script}", "--pipeline",
                            "sdy-propagation-pipeline", "--save", str(tmp_path / "out"),
                            "--no-shrink", "--quiet", str(tmp_path / "big.mlir"),
                            str(tmp_path / "same.mlir")])
    out = capsys.readouterr().out
    assert status == 0
    assert f"{tmp_path / 'big.mlir'}: disagree: @main %1 (result 0 of stablehlo.tanh)" in out
    assert "agreement: 50.0% of 2 programs" in out
    assert (tmp_path / "out" / "big.mlir").read_text().startswith(
        f"// shardy-ref diff: {tmp_path / 'big.mlir'}, disagree\n")


def test_batched_programs_are_modules_named_after_their_index():
    assert diff_cmd._tagged("sdy.mesh @m = <[]>", 2) == \
        "module @shardy_ref_diff_2 {\nsdy.mesh @m = <[]>\n}"
    assert diff_cmd._tagged("// c\nmodule @jit_f attributes {x} {\n}", 1) == \
        "// c\nmodule @shardy_ref_diff_1 attributes {x} {\n}"
    assert diff_cmd._tagged("module{\n}", 0) == "module @shardy_ref_diff_0{\n}"
