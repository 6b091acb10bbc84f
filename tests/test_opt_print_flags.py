"""Issue 28: mlir-opt's printing and parsing flags on shardy-ref-opt:
``--mlir-print-debuginfo``, ``--mlir-print-local-scope``,
``--mlir-elide-elementsattrs-if-larger=N`` and ``--no-implicit-module``. The printed text
is compared with MLIR's own printer in tests/parser/test_print_flags_oracle.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardy_ref.parser import parse_module, print_module
from shardy_ref.tools import opt

DATA = Path(__file__).parent / "parser" / "data"
LOCATION_FILES = sorted(DATA.glob("locations_*.mlir"))
FUNC = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = stablehlo.constant dense<5.0> : tensor<4xf32>
  %0 = stablehlo.add %arg0, %c : tensor<4xf32>
  %1 = stablehlo.add %0, %s : tensor<4xf32> loc("model.py":7:3)
  return %1 : tensor<4xf32>
}
"""


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = opt.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def func_file(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(FUNC)
    return path


@pytest.mark.parametrize("path", LOCATION_FILES, ids=lambda p: p.stem)
def test_debuginfo_output_reparses_to_the_same_locations(path, capsys):
    """Printing with locations, parsing that and printing again changes nothing: every
    location (aliases, inline block-argument ones, the implicit module's) survives."""
    status, out, _ = _run(capsys, path, "--mlir-print-debuginfo")
    assert status == 0
    assert print_module(parse_module(out, "x"), debug_info=True) == out


def test_debuginfo_locates_ops_where_they_were_written(func_file, capsys):
    status, out, _ = _run(capsys, func_file, "--mlir-print-debuginfo")
    assert status == 0
    aliases = dict(re.findall(r"^(#loc\d*) = loc\((.*)\)$", out, re.M))
    add = re.search(r"%1 = stablehlo.add .* loc\((#loc\d*)\)$", out, re.M)[1]
    assert aliases[add] == '"model.py":7:3'  # written explicitly
    cst = re.search(r"%cst = stablehlo.constant .* loc\((#loc\d*)\)$", out, re.M)[1]
    assert aliases[cst] == f'"{func_file}":2:8'  # at the op's name
    assert f'%arg0: tensor<4xf32> loc("{func_file}":1:17)' in out  # block args inline
    assert out.rstrip().endswith(")") and "} loc(#loc)" in out


def test_local_scope_prints_locations_inline(func_file, capsys):
    status, out, _ = _run(capsys, func_file, "--mlir-print-debuginfo",
                          "--mlir-print-local-scope")
    assert status == 0
    assert "#loc" not in out
    assert 'loc("model.py":7:3)' in out and f'}} loc("{func_file}":0:0)' in out


def test_without_debuginfo_no_location_is_printed(func_file, capsys):
    status, out, _ = _run(capsys, func_file, "--mlir-print-local-scope")
    assert status == 0 and "loc(" not in out


def test_elide_large_elements_attrs(func_file, capsys):
    status, out, _ = _run(capsys, func_file, "--mlir-elide-elementsattrs-if-larger=3")
    assert status == 0
    assert "stablehlo.constant dense_resource<__elided__> : tensor<4xf32>" in out
    assert "dense<5.000000e+00>" in out  # a splat is never elided
    status, out, _ = _run(capsys, func_file, "--mlir-elide-elementsattrs-if-larger", "4")
    assert "__elided__" not in out and "dense<[1.000000e+00" in out


@pytest.mark.parametrize("value", ["x", "-1", ""])
def test_elide_needs_an_unsigned_number(func_file, capsys, value):
    status, _, err = _run(capsys, func_file, f"--mlir-elide-elementsattrs-if-larger={value}")
    assert status != 0
    assert f"'{value}' value invalid for uint argument!" in err
    assert "Traceback" not in err


def test_no_implicit_module_keeps_the_top_level_op(func_file, capsys):
    status, out, _ = _run(capsys, func_file, "--no-implicit-module")
    assert status == 0
    assert out.startswith("func.func @main(") and "module" not in out


def test_no_implicit_module_needs_one_top_level_op(tmp_path, capsys):
    path = tmp_path / "two.mlir"
    path.write_text(FUNC + FUNC.replace("@main", "@other"))
    status, out, err = _run(capsys, path, "--no-implicit-module")
    assert status == 1 and out == ""
    assert f"{path}:1:1: error: source must contain a single top-level operation, found: 2" \
        in err


def test_no_implicit_module_and_a_module_pass(func_file, capsys):
    status, _, err = _run(capsys, func_file, "--no-implicit-module", "-symbol-dce")
    assert status == 1
    assert "error: can't run 'builtin.module' pass manager on 'func.func' op" in err


def test_an_explicit_module_is_the_same_either_way(func_file, tmp_path, capsys):
    path = tmp_path / "m.mlir"
    path.write_text("module {\n" + FUNC + "}\n")
    _, with_flag, _ = _run(capsys, path, "--no-implicit-module", "-symbol-dce")
    _, without, _ = _run(capsys, path, "-symbol-dce")
    assert with_flag == without and with_flag.startswith("module {")


def test_ir_dumps_use_the_printing_flags(func_file, capsys):
    status, _, err = _run(capsys, func_file, "-symbol-dce", "--mlir-print-ir-after-all",
                          "--mlir-print-debuginfo", "--mlir-print-local-scope")
    assert status == 0
    assert 'loc("model.py":7:3)' in err


@pytest.mark.parametrize("flag", ["--mlir-print-debuginfo", "--mlir-timing",
                                  "--no-implicit-module"])
def test_boolean_flags_take_llvm_values(func_file, capsys, flag):
    _, plain, _ = _run(capsys, func_file)
    _, off, _ = _run(capsys, func_file, f"{flag}=false")
    assert off == plain
    _, on, _ = _run(capsys, func_file, f"{flag}=1")
    assert on == _run(capsys, func_file, flag)[1] != plain or flag == "--mlir-timing"
    status, _, err = _run(capsys, func_file, f"{flag}=maybe")
    assert status == 1
    assert f"for the {flag} option: 'maybe' value invalid for boolean argument!" in err


def test_a_cycle_of_location_aliases_is_an_error(tmp_path, capsys):
    path = tmp_path / "cycle.mlir"
    path.write_text('#a = loc(#b)\n#b = loc(#a)\nfunc.func @f() {\n  return loc(#a)\n}\n')
    status, out, err = _run(capsys, path, "--mlir-print-debuginfo")
    assert status == 1 and out == ""
    assert "error: undefined symbol alias id" in err
