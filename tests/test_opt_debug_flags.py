"""Issue 28: mlir-opt's debugging flags on shardy-ref-opt, written as mlir-opt writes them
(``mlir/lib/Pass/IRPrinting.cpp`` and ``mlir/lib/Support/Timing.cpp``)."""
from __future__ import annotations

import re

import pytest

from shardy_ref.tools import opt

MODULE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
HEADER = re.compile(r"^// -----// IR Dump (Before|After) (\w+)( Failed)? \(([\w-]+)\) "
                    r"\('([\w.]+)' operation(?:: @\w+)?\) //----- //$", re.M)


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    return str(path)


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = opt.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_print_ir_before_and_after_all(module_file, capsys):
    status, out, err = _run(capsys, module_file, "-sdy-basic-propagate", "-symbol-dce",
                            "--mlir-print-ir-before-all", "--mlir-print-ir-after-all")
    assert status == 0
    headers = [(m[0], m[3], m[4]) for m in HEADER.findall(err)]
    assert headers == [("Before", "sdy-basic-propagate", "builtin.module"),
                       ("After", "sdy-basic-propagate", "builtin.module"),
                       ("Before", "symbol-dce", "builtin.module"),
                       ("After", "symbol-dce", "builtin.module")]
    dumps = HEADER.split(err)
    texts = dumps[6::6]  # re.split: the text before, then 5 groups and a dump per header
    assert "sharding_per_value" not in texts[0] and "sharding_per_value" in texts[1]
    assert out.strip() == dumps[-1].strip()  # the last dump is the output


def test_print_ir_after_change_skips_passes_that_changed_nothing(module_file, capsys):
    status, _, err = _run(capsys, module_file, "-sdy-basic-propagate", "-symbol-dce",
                          "--mlir-print-ir-after-change")
    assert status == 0
    assert [m[3] for m in HEADER.findall(err)] == ["sdy-basic-propagate"]


def test_print_ir_after_failure(module_file, capsys, monkeypatch):
    from shardy_ref.ir.diagnostics import PassError
    from shardy_ref.transforms.symbol_dce import SymbolDCEPass

    status, _, err = _run(capsys, module_file, "-symbol-dce", "--mlir-print-ir-after-failure")
    assert status == 0 and "IR Dump" not in err

    def fail(self, op, ctx):
        raise PassError(op.location, "failed on purpose")

    monkeypatch.setattr(SymbolDCEPass, "run", fail)
    status, _, err = _run(capsys, module_file, "-symbol-dce", "--mlir-print-ir-after-failure")
    assert status == 1
    assert [m[:4] for m in HEADER.findall(err)] == \
        [("After", "SymbolDCEPass", " Failed", "symbol-dce")]
    assert "failed on purpose" in err


def test_timing_report_lists_each_pass(module_file, capsys):
    status, _, err = _run(capsys, module_file, "-sdy-basic-propagate", "--mlir-timing")
    assert status == 0
    assert "... Execution time report ..." in err
    assert re.search(r"^  Total Execution Time: \d+\.\d{4} seconds$", err, re.M)
    names = re.findall(r"^ +\d+\.\d{4} \( *\d+\.\d%\)  (.+)$", err, re.M)
    assert names == ["Parser", "Verifier", "BasicPropagationPass", "Output", "Total"]


def test_pass_statistics_and_dump_pass_pipeline(module_file, capsys):
    status, _, err = _run(capsys, module_file, "--pass-pipeline=builtin.module(symbol-dce,"
                          "func.func(sdy-sharding-constraint-to-reshard))",
                          "--mlir-pass-statistics", "--dump-pass-pipeline")
    assert status == 0
    assert err.startswith("Pass Manager with 2 passes:\nbuiltin.module(symbol-dce,"
                          "func.func(sdy-sharding-constraint-to-reshard))\n")
    assert "... Pass statistics report ..." in err and "SymbolDCEPass" in err


def test_dumped_pipeline_parses_back():
    from shardy_ref.pass_manager import parse_pipeline, pipeline_text

    pipeline = pipeline_text(parse_pipeline(
        "builtin.module(sdy-basic-propagate{conservative-propagation=true},"
        "func.func(sdy-sharding-constraint-to-reshard))", anchored=True))
    assert "conservative-propagation=true" in pipeline
    assert pipeline_text(parse_pipeline(pipeline, anchored=True)) == pipeline


def test_verify_roundtrip(module_file, capsys):
    status, out, err = _run(capsys, module_file, "-sdy-basic-propagate", "--verify-roundtrip")
    assert status == 0 and err == "" and "sdy.sharding_per_value" in out
