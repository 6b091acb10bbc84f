"""Issue 28, misuse a new user tried: flag values out of range, ``--out`` and ``--inputs``
that are not archives, a differential tool that cannot run, a command whose extra is not
installed, ``print --help``. Each is a located or usage error (exit 1 or 2), never a
traceback or a silent success. Every command against the common misuse cases (missing,
empty, binary or non-UTF-8 input, bad flags and outputs, Ctrl-C, deep nesting):
``tests/test_cli_misuse_table.py``."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from shardy_ref.tools import cli, diff_cmd
from tests.conftest import ROOT

EXAMPLE = str(ROOT / "examples" / "mlp.mlir")


@pytest.mark.parametrize(("command", "flags", "flag"), [
    ("check", ["--seed", "-1"], "--seed"),
    ("check", ["--atol", "nan"], "--atol"),
    ("run", ["--processes", "0"], "--processes"),
    ("fuzz", ["--examples", "0"], "--examples"),
])
def test_a_flag_out_of_range_is_a_usage_error_naming_it(command, flags, flag, capsys):
    argv = [command, *([] if command == "fuzz" else [EXAMPLE]), *flags]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {flag}: expected " in err, err


def test_out_writes_the_very_file_named(tmp_path):
    target = tmp_path / "results"  # no .npz: numpy.savez would have written results.npz
    assert cli.main(["run", EXAMPLE, "--out", str(target), "--quiet"]) == 0
    with np.load(target) as npz:
        assert npz.files == ["out0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_inputs_that_are_not_an_archive_are_a_usage_error(tmp_path, capsys):
    text = tmp_path / "x.txt"
    text.write_text("1 2 3\n")
    with pytest.raises(SystemExit) as e:
        cli.main(["check", EXAMPLE, "--inputs", str(text), "--quiet"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --inputs:" in err and "pickle" not in err


@pytest.mark.parametrize("tool", ["nosuchtool-shardy-ref", "", "/"])
def test_diff_with_a_tool_that_cannot_run_fails_and_compares_nothing(tool, tmp_path, capsys):
    status = diff_cmd.main(["--tool", tool, "--pipeline", "sdy-propagation-pipeline",
                            "--examples", "3", "--save", str(tmp_path), "--quiet"])
    out, err = capsys.readouterr()
    assert status == 2
    assert "--tool: cannot run" in err
    assert "agreement" not in out


def test_diff_stops_when_the_tool_stops_starting(monkeypatch, tmp_path, capsys):
    """A tool found at first that then cannot be started is not counted as disagreeing."""
    def cannot_start(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(diff_cmd.subprocess, "run", cannot_start)
    status = diff_cmd.main(["--tool", sys.executable, "--pipeline", "sdy-propagation-pipeline",
                            "--examples", "2", "--save", str(tmp_path), "--quiet"])
    out, err = capsys.readouterr()
    assert status == 2
    assert "Permission denied" in err and "nothing was compared" in err
    assert "agreement" not in out


def test_a_command_without_its_extra_names_the_extra():
    """In a process of its own, where hypothesis cannot be imported (in this one, removing
    modules would leave other tests with two copies of them)."""
    import subprocess

    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "from shardy_ref.tools import cli\n"
            "sys.exit(cli.main(['fuzz', '--examples', '1']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    assert done.returncode == 1, done.stderr
    assert "pip install 'shardy-ref[testing]'" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_print_help_is_help(capsys):
    assert cli.main(["print", "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: shardy-ref print FILE") and err == ""


@pytest.mark.parametrize("rest", [[], ["a.mlir", "b.mlir"], ["--width"]])
def test_print_without_one_file_is_a_usage_error(rest, capsys):
    assert cli.main(["print", *rest]) == 2
    assert "shardy-ref print: error: expected one FILE" in capsys.readouterr().err


class _Stream:
    def __init__(self, tty: bool):
        self.lines: list[str] = []
        self.tty = tty

    def write(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_progress_ticks_on_a_terminal_and_says_once_elsewhere(tty, monkeypatch):
    import threading

    from shardy_ref.tools.simulate_cmd import Progress

    monkeypatch.setattr(Progress, "EVERY", 0.01)
    stream = _Stream(tty)
    progress = Progress(stream=stream)
    ticked = threading.Event()
    with progress.phase("running"):
        while not tty and not ticked.wait(0.05):
            ticked.set()
        while tty and len(stream.lines) < 2:
            threading.Event().wait(0.01)
    if tty:
        assert all(line.startswith("shardy-ref: running... ") for line in stream.lines)
    else:
        assert stream.lines == ["shardy-ref: running: 0 s\n"]


def test_one_device_is_not_devices(tmp_path, capsys):
    path = tmp_path / "one.mlir"
    path.write_text('sdy.mesh @mesh = <["x"=1]>\nfunc.func @main(%arg0: tensor<4xf32> '
                    '{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {\n'
                    '  %0 = stablehlo.negate %arg0 : tensor<4xf32>\n'
                    '  return %0 : tensor<4xf32>\n}\n')
    assert cli.main(["check", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(1 device)" in out and "(1 devices)" not in out


def test_bytes_that_are_not_utf8_are_shown_as_replacement_characters(tmp_path, capsys):
    path = tmp_path / "g.mlir"
    path.write_bytes(b"func.func @main() {\n  %0 = stablehlo.caf\xe9\xff\n}\n")
    assert cli.main(["check", str(path), "--quiet"]) == 1
    assert cli.main(["print", str(path)]) == 1
    err = capsys.readouterr().err
    assert "\\udc" not in err and "\ufffd" in err
