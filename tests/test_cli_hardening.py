"""Issue 15, command lines: no traceback from any command (internal errors exit 70), ``-o``
never loses the previous output, ``-verify-diagnostics`` on broken ``expected-*`` lines, and
pass-pipeline strings rejected with mlir-opt's words."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.pass_manager import PassContext, PassManager, make_pass, parse_pipeline
from shardy_ref.tools import cli, opt, translate
from shardy_ref.tools.verify_diagnostics import check, collect_expectations

FUNC = textwrap.dedent("""\
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    """)
RUNNABLE = textwrap.dedent("""\
    func.func @main() -> tensor<4xf32> {
      %c = stablehlo.constant dense<1.0> : tensor<4xf32>
      %0 = stablehlo.add %c, %c : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    """)
CHLO = textwrap.dedent("""\
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = chlo.square %arg0 : tensor<4xf32> -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    """)
INTERNAL = re.compile(r"^(?P<loc>\S+): error: internal error in (?P<where>.+?)"
                      r"(?: on '(?P<op>[\w.]+)')?: (?P<exc>.*)$")


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(FUNC)
    return str(path)


@pytest.fixture
def runnable_file(tmp_path):
    path = tmp_path / "run.mlir"
    path.write_text(RUNNABLE)
    return str(path)


@pytest.fixture(autouse=True)
def _no_debug_env(monkeypatch):
    monkeypatch.delenv("SHARDY_REF_DEBUG", raising=False)


def _break_symbol_dce(monkeypatch):
    """Make ``symbol-dce`` fail the way a Python bug does, while looking at the add op."""
    from shardy_ref.transforms.symbol_dce import SymbolDCEPass

    def run(self, module, ctx):
        for op in module.walk():
            if op.name == "stablehlo.add":
                raise IndexError("list index out of range")

    monkeypatch.setattr(SymbolDCEPass, "run", run)


# -- 1. internal errors ------------------------------------------------------------------

def test_internal_error_in_a_pass_names_pass_and_op_and_exits_70(monkeypatch, module_file,
                                                                 capsys):
    _break_symbol_dce(monkeypatch)
    assert opt.main([module_file, "-symbol-dce"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first, second, *rest = err.splitlines()
    m = INTERNAL.match(first)
    assert m, first
    assert m["loc"] == f"{module_file}:2:8" and m["where"] == "symbol-dce"
    assert m["op"] == "stablehlo.add" and m["exc"] == "IndexError: list index out of range"
    assert "report" in second and not rest


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback_instead(monkeypatch, module_file, capsys, how):
    _break_symbol_dce(monkeypatch)
    argv = [module_file, "-symbol-dce"]
    if how == "flag":
        argv.append("-debug")
    else:
        monkeypatch.setenv("SHARDY_REF_DEBUG", "1")
    assert opt.main(argv) == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert "IndexError: list index out of range" in err
    assert "internal error in" not in err


def test_the_library_still_raises_internal_errors(monkeypatch):
    from shardy_ref.parser import parse_module

    _break_symbol_dce(monkeypatch)
    with pytest.raises(IndexError):
        PassManager(parse_pipeline("symbol-dce")).run(parse_module(FUNC), PassContext())


def test_internal_error_while_parsing_points_at_the_chunk(monkeypatch, tmp_path, capsys):
    path = tmp_path / "two.mlir"
    path.write_text(FUNC + "// -----\n" + FUNC)

    def boom(*args, **kwargs):
        raise RuntimeError("parser bug")

    monkeypatch.setattr("shardy_ref.parser.parse_module", boom)
    assert opt.main([str(path), "-split-input-file"]) == 70
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"{path}:1:1: error: internal error in the parser: RuntimeError: parser bug"


def _break_interpreter(monkeypatch):
    """Make the interpreter fail outside a kernel (kernel errors are its own diagnostics)
    after running the add op."""
    from shardy_ref.execute import interpreter

    bind = interpreter._bind

    def broken(ctx, op, out, env):
        if op.name == "stablehlo.add":
            raise ZeroDivisionError("division by zero")
        bind(ctx, op, out, env)

    monkeypatch.setattr(interpreter, "_bind", broken)


def test_translate_internal_error_names_the_op(monkeypatch, runnable_file, capsys):
    _break_interpreter(monkeypatch)
    assert translate.main(["--interpret", runnable_file]) == 70
    first = capsys.readouterr().err.splitlines()[0]
    m = INTERNAL.match(first)
    assert m, first
    assert (m["loc"], m["where"], m["op"], m["exc"]) == (
        f"{runnable_file}:3:8", "the interpreter", "stablehlo.add",
        "ZeroDivisionError: division by zero")


def test_shardy_ref_internal_error(monkeypatch, module_file, capsys):
    from shardy_ref.tools import simulate_cmd

    def boom(*args):
        raise KeyError("lost")

    monkeypatch.setattr(simulate_cmd, "run_command", boom)
    assert cli.main(["run", module_file, "--quiet"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[0] == f"{module_file}: error: internal error in shardy-ref run: " \
                                  "KeyError: 'lost'"
    assert cli.main(["run", module_file, "--quiet", "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err


# -- 2. -o -------------------------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_output_to_a_full_device_is_an_error(module_file, capsys):
    assert opt.main([module_file, "-o", "/dev/full"]) == 1
    assert capsys.readouterr().err == \
        "cannot write output file '/dev/full': No space left on device\n"
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")
    assert not [n for n in os.listdir("/dev") if n.startswith(".full")]


def test_a_failed_write_keeps_the_previous_output(monkeypatch, module_file, tmp_path, capsys):
    target = tmp_path / "out.mlir"
    target.write_text("previous\n")
    os.chmod(target, 0o640)

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    assert opt.main([module_file, "-o", str(target)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert target.read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["in.mlir", "out.mlir"]  # no temporary file left
    monkeypatch.undo()
    assert opt.main([module_file, "-o", str(target)]) == 0
    assert target.read_text().startswith("module {")
    assert os.stat(target).st_mode & 0o777 == 0o640


def test_translate_keeps_the_previous_output_when_a_chunk_crashes(monkeypatch, runnable_file,
                                                                  tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous\n")
    _break_interpreter(monkeypatch)
    assert translate.main(["--interpret", runnable_file, "-o", str(target)]) == 70
    assert target.read_text() == "previous\n"
    monkeypatch.undo()
    assert translate.main(["--interpret", runnable_file, "-o", str(target)]) == 0
    assert target.read_text() == "tensor<4xf32> {\n  [2.000000e+00, 2.000000e+00, 2.000000e+00, " \
                                 "2.000000e+00]\n}\n"


# -- 3. -verify-diagnostics --------------------------------------------------------------

_LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from shardy_ref.tools.verify_diagnostics import check, collect_expectations
print("\\n".join(check([], collect_expectations(sys.stdin.read()), "t.mlir")))
"""


def test_unterminated_regex_block_is_an_error_not_a_hang():
    text = "// expected-error-re {{x{{y}}\n"
    proc = subprocess.run([sys.executable, "-c", _LIMITED], input=text, text=True,
                          capture_output=True, timeout=20)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout == "t.mlir:1:4: error: found start of regex with no end '}}'\n"


def test_invalid_regex_is_an_error_not_an_exception():
    errors = check([], collect_expectations("// expected-error-re {{{{[(}}}}\n"), "t.mlir")
    assert len(errors) == 1
    assert errors[0].startswith("t.mlir:1:4: error: invalid regex: ")


def _diag(line: int, message: str, severity: str = "error"):
    from shardy_ref.ir.diagnostics import Diagnostic
    from shardy_ref.ir.location import Location

    return Diagnostic(severity, Location("t.mlir", line, 1), message)


def test_one_diagnostic_satisfies_one_of_identical_expectations():
    text = "// expected-error@+2 {{boom}}\n// expected-error@+1 {{boom}}\nop\n"
    errors = check([_diag(3, "boom")], collect_expectations(text), "t.mlir")
    assert errors == ['t.mlir:2:4: error: expected error "boom" was not produced']


def test_a_near_miss_leaves_the_expectation_unmatched():
    text = "op // expected-warning {{boom}}\n"
    errors = check([_diag(1, "boom")], collect_expectations(text), "t.mlir")
    assert errors == ["t.mlir:1:7: error: 'error' diagnostic emitted when expecting a 'warning'",
                      't.mlir:1:7: error: expected warning "boom" was not produced']


def test_verify_diagnostics_cli_reports_a_broken_regex(tmp_path, capsys):
    path = tmp_path / "v.mlir"
    path.write_text("// expected-error-re {{{{[(}}}}\n" + FUNC)
    assert opt.main([str(path), "-verify-diagnostics"]) == 1
    assert "invalid regex" in capsys.readouterr().err


# -- 4. pipeline strings -----------------------------------------------------------------

def _pipeline_error(text: str) -> str:
    with pytest.raises(PassError) as info:
        parse_pipeline(text)
    return info.value.message


PARSER = "MLIR Textual PassPipeline Parser"


@pytest.mark.parametrize(("pipeline", "message"), [
    ("builtin.module(sdy-close-shardings{keep=true)",
     f"{PARSER}:1:20: error: missing closing '}}' while processing pass options\n"
     "sdy-close-shardings{keep=true\n                   ^"),
    ("builtin.module(func.func(sdy-insert-explicit-reshards{x))",
     f"{PARSER}:1:39: error: missing closing '}}' while processing pass options\n"
     "func.func(sdy-insert-explicit-reshards{x)\n                                      ^"),
    ("builtin.module(sdy-close-shardings))",
     f"{PARSER}:1:20: error: encountered extra closing ')' creating unbalanced parentheses "
     "while parsing pipeline\nsdy-close-shardings)\n                   ^"),
    ("builtin.module(sdy-close-shardings{}})",
     f"{PARSER}:1:22: error: expected ',' after parsing pipeline\n"
     "sdy-close-shardings{}}\n                     ^"),
    ("builtin.module(sdy-close-shardings{a=1 b}, func.func(x))",
     f"{PARSER}:1:39: error: 'x' does not refer to a registered pass or pass pipeline\n"
     "sdy-close-shardings{a=1 b}, func.func(x)\n                                      ^"),
    ("builtin.module(,)",
     f"{PARSER}:1:1: error: '' does not refer to a registered pass or pass pipeline\n,\n^"),
])
def test_pipeline_syntax_errors_as_mlir_words_them(pipeline, message):
    assert _pipeline_error(pipeline) == message


def test_unbalanced_nested_pipeline():
    assert _pipeline_error("func.func(sdy-insert-explicit-reshards") == \
        f"{PARSER}:1:11: error: encountered unbalanced parentheses while parsing pipeline\n" \
        "func.func(sdy-insert-explicit-reshards\n          ^"


@pytest.mark.parametrize(("pipeline", "message"), [
    ("builtin.module(func.func(sdy-close-shardings))",
     "Can't add pass 'CloseShardingsPass' restricted to 'builtin.module' on a PassManager "
     "intended to run on 'func.func', did you intend to nest?\n"
     "failed to add `sdy-close-shardings` with options ``\n"
     "failed to add `func.func` with options `` to inner pipeline"),
    ("builtin.module(nosuch.op(sdy-insert-explicit-reshards))",
     "Can't add pass 'InsertExplicitReshardsPass' restricted to 'func.func' on a PassManager "
     "intended to run on 'nosuch.op', did you intend to nest?\n"
     "failed to add `sdy-insert-explicit-reshards` with options ``\n"
     "failed to add `nosuch.op` with options `` to inner pipeline"),
    ("builtin.module(sdy-drop-sharding-rules{=})",
     "Can't add pass 'DropShardingRulesPass' restricted to 'func.func' on a PassManager "
     "intended to run on 'builtin.module', did you intend to nest?\n"
     "failed to add `sdy-drop-sharding-rules` with options `=`"),
    ("builtin.module(chlo-legalize-to-stablehlo)",
     "Can't add pass 'ChloLegalizeToStablehloPass' restricted to 'func.func' on a "
     "PassManager intended to run on 'builtin.module', did you intend to nest?\n"
     "failed to add `chlo-legalize-to-stablehlo` with options ``"),
    ("func.func(sdy-insert-explicit-reshards)",
     "can't run 'func.func' pass manager on 'builtin.module' op"),
])
def test_anchors_must_fit_the_pass(pipeline, message):
    with pytest.raises(PassError) as info:
        parse_pipeline(pipeline, anchored=True)
    assert info.value.message == message


def test_any_op_passes_nest_anywhere_and_empty_option_keys_are_skipped():
    """As in MLIR: ``canonicalize`` runs on any op, ``{=}`` has no key and is ignored."""
    assert parse_pipeline("builtin.module(nosuch.op(canonicalize))")[0].op_name == "nosuch.op"
    assert parse_pipeline("builtin.module(sdy-close-shardings{=})")[0].pass_ == \
        make_pass("sdy-close-shardings")
    assert parse_pipeline("builtin.module()") == []


def test_nested_func_pipeline_runs_a_func_pass(tmp_path, capsys):
    path = tmp_path / "chlo.mlir"
    path.write_text(CHLO)
    assert opt.main([str(path), "--pass-pipeline=builtin.module(func.func("
                     "chlo-legalize-to-stablehlo))"]) == 0
    nested = capsys.readouterr().out
    assert "stablehlo.multiply %arg0, %arg0" in nested and "chlo" not in nested
    assert opt.main([str(path), "--chlo-legalize-to-stablehlo"]) == 0
    assert capsys.readouterr().out == nested


@pytest.mark.parametrize("pipeline", ["sdy-close-shardings",
                                      "builtin.module(sdy-close-shardings"])
def test_cli_pipelines_must_be_anchored(module_file, capsys, pipeline):
    assert opt.main([module_file, f"--pass-pipeline={pipeline}"]) == 1
    assert capsys.readouterr().err == (
        f"{module_file}: error: expected pass pipeline to be wrapped with the anchor operation "
        "type, e.g. 'builtin.module(...)'\n")


def test_cli_pipeline_error_names_the_file(module_file, capsys):
    assert opt.main([module_file, "--pass-pipeline=builtin.module(sdy-x{keep=true)"]) == 1
    assert capsys.readouterr().err == (
        f"{module_file}: error: {PARSER}:1:6: error: missing closing '}}' while processing "
        "pass options\nsdy-x{keep=true\n     ^\n")


def test_deeply_nested_pipeline_is_a_clean_error():
    text = "builtin.module(" + "func.func(" * 3000 + "canonicalize" + ")" * 3001
    assert "nested too deeply" in _pipeline_error(text)
