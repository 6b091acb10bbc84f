"""``shardy-ref-opt`` behaves like mlir-opt: flags, chunking, diagnostics, exit status."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from shardy_ref.tools.opt import Options, UsageError, parse_args, run, split_chunks

MODULE = "sdy.mesh @m = <[\"a\"=2]>\n"


def _run(text: str, **kw) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(Options(**kw), stdin=io.StringIO(text), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_parse_args_like_mlir_opt():
    opts = parse_args(["x.mlir", "-split-input-file", "--verify-diagnostics", "-o", "y",
                       "-symbol-dce", "-allow-unregistered-dialect", "--", ])
    assert (opts.input, opts.output, opts.split, opts.verify_diagnostics) == \
        ("x.mlir", "y", True, True)
    assert opts.passes == [("symbol-dce", "")] and opts.allow_unregistered
    assert parse_args(["--pass-pipeline=builtin.module(symbol-dce)"]).pipeline == \
        "builtin.module(symbol-dce)"
    with pytest.raises(UsageError, match="Unknown command line argument '-sdy-no-such-pass'"):
        parse_args(["-sdy-no-such-pass"])


def test_split_input_file_keeps_original_line_numbers():
    chunks = split_chunks("a\n// -----\nb\nc\n// ----- trailing text\nd\n", True)
    assert [(c.text, c.first_line) for c in chunks] == [("a\n", 1), ("b\nc\n", 3), ("d\n", 6)]


def test_outputs_are_joined_by_split_markers():
    status, out, _ = _run(MODULE + "// -----\n" + MODULE, split=True)
    assert status == 0
    assert out == 'module {\n  sdy.mesh @m = <["a"=2]>\n}\n// -----\nmodule {\n  ' \
                  'sdy.mesh @m = <["a"=2]>\n}\n'


def test_a_failing_chunk_fails_the_run_but_others_print():
    status, out, err = _run(MODULE + "// -----\nsdy.mesh @m = <\n", split=True)
    assert status == 1
    assert out == 'module {\n  sdy.mesh @m = <["a"=2]>\n}\n'
    assert err.startswith("<stdin>:3:")


def test_verify_diagnostics_matches_expectations():
    good = "// expected-error @+1 {{custom op 'sdy.bogus' is unknown}}\nsdy.bogus\n"
    assert _run(good, verify_diagnostics=True)[0] == 0
    wrong_text = "// expected-error @+1 {{something else}}\nsdy.bogus\n"
    status, _, err = _run(wrong_text, verify_diagnostics=True)
    assert status == 1
    assert "unexpected error: custom op 'sdy.bogus' is unknown" in err
    assert 'expected error "something else" was not produced' in err
    nothing_expected = MODULE + "// expected-error {{never}}\n"
    assert _run(nothing_expected, verify_diagnostics=True)[0] == 1


def test_verify_diagnostics_offsets_and_notes():
    text = ("func.func @f() {\n  %0 = \"t.x\"() : () -> i32\n"
            "  // expected-note @-1 {{previously defined here}}\n"
            "  // expected-error @below {{redefinition of SSA value '%0'}}\n"
            "  %0 = \"t.x\"() : () -> i32\n  return\n}\n")
    assert _run(text, verify_diagnostics=True, allow_unregistered=True)[0] == 0


def test_generic_form_flag():
    _, out, _ = _run(MODULE, generic=True)
    assert out == '"builtin.module"() ({\n  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2]>, ' \
                  'sym_name = "m"}> : () -> ()\n}) : () -> ()\n'


def test_symbol_dce_pass_from_the_command_line():
    text = ("func.func private @dead() {\n  return\n}\nfunc.func private @used() {\n  return\n}\n"
            "func.func @main() {\n  call @used() : () -> ()\n  return\n}\n")
    for opts in ({"passes": [("symbol-dce", "")]},
                 {"pipeline": "builtin.module(symbol-dce)"}):
        status, out, _ = _run(text, **opts)
        assert status == 0
        assert "@dead" not in out and "@used" in out and "@main" in out


def test_bad_pass_options_are_reported_not_raised():
    status, _, err = _run(MODULE, passes=[("symbol-dce", "bogus=1")])
    assert status == 1 and "symbol-dce: no such option bogus" in err


def test_the_installed_command_runs(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    out = tmp_path / "out.mlir"
    proc = subprocess.run([sys.executable, "-m", "shardy_ref.tools.opt", str(path), "-o",
                           str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == 'module {\n  sdy.mesh @m = <["a"=2]>\n}\n'
    proc = subprocess.run([sys.executable, "-m", "shardy_ref.tools.opt", str(tmp_path / "nope")],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "Could not open input file" in proc.stderr
