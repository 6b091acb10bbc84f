"""Issue 28's misuse table: every console script (``shardy-ref-opt``,
``shardy-ref-translate`` and each ``shardy-ref`` command) run as a process on what a new
user gets wrong: an input that is missing, a directory, empty, binary, or holding bytes that
are not UTF-8; an unknown flag, a flag value out of range; an output (``-o``, ``--out``,
``--svg``, ``--save``) into a missing directory or onto the wrong kind of file, or replacing
a file while the input is bad; Ctrl-C in the middle of the work; regions nested 3000 deep.

Each cell of :data:`TABLE` is the command line of one case and what it must do: its exit
status (1: an error in the input, located ``file:line:col: error: ...`` or naming the file;
1 or 2: a usage error, as each tool words it; 130: Ctrl-C; 0 only where the input is valid)
and a piece of its message. Every run must also end without a traceback or an internal
error (exit 70), and leave every file it was given as it was, output files included (no
temporary file left beside them). A case that does not apply to a command says why, in the
table. ``run``, ``check`` and ``explain``, which propagate, get 1001 levels instead of
3000 (past Python's default recursion limit of 1000 frames): the greedy rewrite driver
walks up the ancestors of every op it queues, as MLIR's does, so at 3000 levels each takes
45-70 s of CPU. So does ``diff`` (9 s at 3000: it parses the printed module twice more, and
the printer indents each level, as MLIR's does: 45 MB at 3000 levels).
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.nesting_programs import case_nest

BIN = Path(sys.executable).parent


def _script(name: str, module: str) -> list[str]:
    """The console script installed beside this Python, else its module run by it."""
    path = BIN / name
    return [str(path)] if path.exists() else [sys.executable, "-m", module]


OPT = _script("shardy-ref-opt", "shardy_ref.tools.opt")
TRANSLATE = [*_script("shardy-ref-translate", "shardy_ref.tools.translate"), "--interpret"]
SHARDY_REF = _script("shardy-ref", "shardy_ref.tools.cli")

PROGRAM = """\
sdy.mesh @mesh = <["x"=2]>
func.func @main() -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %s = sdy.sharding_constraint %c <@mesh, [{"x"}]> : tensor<8xf32>
  %0 = stablehlo.add %s, %s : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
# MLIR reads bytes: a comment may hold any, and a string literal any but '"' and '\'
NON_UTF8 = (b"// caf\xe9 \xff: not UTF-8\n" +
            PROGRAM.replace("@main() -> tensor<8xf32>",
                            '@main() -> tensor<8xf32> attributes {note = "X\\0A"}')
            .encode().replace(b'"X', b'"caf\xe9'))
DEEP, DEEP_PROPAGATED = 3000, 1001
DEEP_ARGS = "--args=[dense<1> : tensor<i32>, dense<1.0> : tensor<8xf32>]"
SLOW_OPS = 20_000  # parsing them takes seconds: long enough to press Ctrl-C in
PREVIOUS = b"the previous output\n"


def _slow_program() -> str:
    t = "tensor<8xf32>"
    lines = ['sdy.mesh @mesh = <["x"=2]>', f'func.func @main(%arg0: {t} {{sdy.sharding = '
             f'#sdy.sharding<@mesh, [{{"x"}}]>}}) -> {t} {{']
    lines += [f"  %v{k} = stablehlo.add {f'%v{k - 1}' if k else '%arg0'}, %arg0 : {t}"
              for k in range(SLOW_OPS)]
    return "\n".join([*lines, f"  return %v{SLOW_OPS - 1} : {t}", "}", ""])


INPUTS = {  # the files the cases read, written once per test process
    "ok": lambda: PROGRAM.encode(), "empty": lambda: b"", "binary": lambda: bytes(range(256)),
    "non_utf8": lambda: NON_UTF8, "deep": lambda: case_nest(DEEP).encode(),
    "deep1001": lambda: case_nest(DEEP_PROPAGATED).encode(),
    "slow": lambda: _slow_program().encode(),
}


@dataclass(frozen=True)
class Cell:
    """One command line (``{name}`` fields: the inputs, and ``{out}``, an existing file
    holding :data:`PREVIOUS`; ``{dir}``, a directory; ``{missing}``; ``{nodir}``, a path
    in a missing directory; ``{save}``, a directory not made yet) and what it must do."""

    args: tuple[str, ...]
    status: int | tuple[int, ...]
    says: str = ""  # in stderr, or in stdout when it starts with "out:"

    @property
    def statuses(self) -> tuple[int, ...]:
        return self.status if isinstance(self.status, tuple) else (self.status,)


def cell(args: str, status, says: str = "") -> Cell:
    return Cell(tuple(shlex.split(args)), status, says)


CASES = ("missing", "directory", "empty", "binary", "non_utf8", "unknown_flag", "bad_value",
         "out_missing_dir", "out_wrong_kind", "out_kept", "sigint", "depth")
NO_OUTPUT = "writes no file"
NO_NUMBERS = "takes no numeric flag"
SAVE_DIR = "--save DIR makes missing directories"
SAVE_NEW = "--save only adds new files"
LOCATED = "{binary}:1:1: error: unexpected character"
UNKNOWN = "unrecognized arguments: --no-such-flag"
DIFF = [*SHARDY_REF, "diff", "--tool", shlex.join(OPT), "--pipeline", "sdy-close-shardings",
        "--no-shrink", "--quiet", "--save", "{save}"]

PREFIX = {"shardy-ref-opt": OPT, "shardy-ref-translate": TRANSLATE,
          **{f"shardy-ref {c}": [*SHARDY_REF, c]
             for c in ("print", "run", "check", "show", "explain", "fuzz")},
          "shardy-ref diff": DIFF}

# command -> case -> Cell, or why the case does not apply
TABLE: dict[str, dict[str, Cell | str]] = {
    "shardy-ref-opt": {
        "missing": cell("{missing}", 1,
                        "Could not open input file '{missing}': No such file or directory"),
        "directory": cell("{dir}", 1, "Could not open input file '{dir}': Is a directory"),
        "empty": cell("{empty}", 0, "out:module {\n}"),  # as mlir-opt: an empty module
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, 'out:attributes {note = "caf\\E9\\0A"}'),
        "unknown_flag": cell("{ok} --no-such-flag", 1,
                             "Unknown command line argument '--no-such-flag'"),
        "bad_value": cell("{ok} -canonicalize=max-iterations=abc", 1,
                          "{ok}: error: canonicalize: invalid value 'abc'"),
        "out_missing_dir": cell("{ok} -o {nodir}", 1, "cannot open output file '{nodir}': "
                                "No such file or directory"),
        "out_wrong_kind": cell("{ok} -o {dir}", 1,
                               "cannot open output file '{dir}': Is a directory"),
        "out_kept": cell("{binary} -o {out}", 1, LOCATED),
        "sigint": cell("{slow} -sdy-propagation-pipeline -o {out}", 130),
        "depth": cell("{deep}", 0, 'out:"stablehlo.case"'),
    },
    "shardy-ref-translate": {
        "missing": cell("{missing}", 1,
                        "Could not open input file '{missing}': No such file or directory"),
        "directory": cell("{dir}", 1, "Could not open input file '{dir}': Is a directory"),
        "empty": cell("{empty}", 1, "{empty}:1:1: error: module must have entry func"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, "out:tensor<8xf32> {"),
        "unknown_flag": cell("{ok} --no-such-flag", 1,
                             "Unknown command line argument '--no-such-flag'"),
        "bad_value": cell("{ok} --args=garbage", 1, "expectected array attribute"),
        "out_missing_dir": cell("{ok} -o {nodir}", 1, "cannot open output file '{nodir}': "
                                "No such file or directory"),
        "out_wrong_kind": cell("{ok} -o {dir}", 1,
                               "cannot open output file '{dir}': Is a directory"),
        "out_kept": cell("{binary} -o {out}", 1, LOCATED),
        "sigint": Cell(("{slow}", "--args=[dense<1.0> : tensor<8xf32>]", "-o", "{out}"), 130),
        "depth": Cell(("{deep}", DEEP_ARGS), 0, "out:2.000000e+00"),
    },
    "shardy-ref print": {
        "missing": cell("{missing}", 1,
                        "Could not open input file '{missing}': No such file or directory"),
        "directory": cell("{dir}", 1, "Could not open input file '{dir}': Is a directory"),
        "empty": cell("{empty}", 0, "out:module {\n}"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, 'out:attributes {note = "caf\\E9\\0A"}'),
        "unknown_flag": cell("{ok} --no-such-flag", 2, "expected one FILE"),
        "bad_value": NO_NUMBERS, "out_missing_dir": NO_OUTPUT, "out_wrong_kind": NO_OUTPUT,
        "out_kept": NO_OUTPUT,
        "sigint": cell("{slow}", 130),
        "depth": cell("{deep}", 0, 'out:"stablehlo.case"'),
    },
    "shardy-ref run": {
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 1, "{empty}:1:1: error: module must have entry func"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, "out:out0: float32[8]"),
        "unknown_flag": cell("{ok} --no-such-flag", 2, UNKNOWN),
        "bad_value": cell("{ok} --memory-budget inf", 2, "argument --memory-budget: expected"),
        "out_missing_dir": cell("{ok} --out {nodir}", 1,
                                "cannot write {nodir}: No such file or directory"),
        "out_wrong_kind": cell("{ok} --out {dir}", 2, "argument --out: {dir} is a directory"),
        "out_kept": cell("{binary} --out {out}", 1, LOCATED),
        "sigint": cell("{slow} --out {out}", 130),
        "depth": cell("{deep1001} --quiet", 0, "out:out0: float32[8]"),
    },
    "shardy-ref check": {
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 1, "{empty}:1:1: error: module must have entry func"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, "out:OK: the partitioned program computes"),
        "unknown_flag": cell("{ok} --no-such-flag", 2, UNKNOWN),
        "bad_value": cell("{ok} --rtol -1", 2, "argument --rtol: expected"),
        "out_missing_dir": NO_OUTPUT, "out_wrong_kind": NO_OUTPUT, "out_kept": NO_OUTPUT,
        "sigint": cell("{slow}", 130),
        "depth": cell("{deep1001} --quiet", 0, "out:OK: the partitioned program computes"),
    },
    "shardy-ref show": {
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 1, "{empty}:1:1: error: no function @main"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, "out:mesh @mesh"),
        "unknown_flag": cell("{ok} --no-such-flag", 2, UNKNOWN),
        "bad_value": cell("{ok} --width -3", 2, "argument --width: expected"),
        "out_missing_dir": cell("{ok} --svg {nodir}", 1,
                                "cannot write {nodir}: No such file or directory"),
        "out_wrong_kind": cell("{ok} --svg {dir}", 1, "cannot write {dir}: Is a directory"),
        "out_kept": cell("{binary} --svg {out}", 1, LOCATED),
        "sigint": cell("{slow} --svg {out}", 130),
        "depth": cell("{deep}", 0, "out:mesh @mesh"),
    },
    "shardy-ref explain": {
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 1, "{empty}:1:1: error: the module has no function"),
        "binary": cell("{binary}", 1, LOCATED),
        "non_utf8": cell("{non_utf8}", 0, "out:@main: after sdy-propagation-pipeline"),
        "unknown_flag": cell("{ok} --no-such-flag", 1, UNKNOWN),
        "bad_value": NO_NUMBERS, "out_missing_dir": NO_OUTPUT, "out_wrong_kind": NO_OUTPUT,
        "out_kept": NO_OUTPUT,
        "sigint": cell("{slow}", 130),
        "depth": cell("{deep1001}", 0, "out:@main: after sdy-propagation-pipeline"),
    },
    "shardy-ref fuzz": {  # FILEs: the invariants checked on them, not on random programs
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 1, "out:{empty}: propagation_fixpoint: FAILED"),
        "binary": cell("{binary}", 1, "out:{binary}: roundtrip: FAILED: ParseError"),
        "non_utf8": cell("{non_utf8}", 0, "out:{non_utf8}: collective_algebra: ok"),
        "unknown_flag": cell("--no-such-flag", 2, UNKNOWN),
        "bad_value": cell("--jobs -2", 2, "argument --jobs: expected"),
        "out_missing_dir": SAVE_DIR,
        "out_wrong_kind": cell("--save {out}", 2, "argument --save: {out} is not a directory"),
        "out_kept": SAVE_NEW,
        # random programs, two worker processes: Ctrl-C reaches them too, as in a terminal
        "sigint": cell("--examples 1000 --jobs 2 --save {save}", 130),
        "depth": cell("--invariant verifier_sound {deep}", 0,
                      "out:{deep}: verifier_sound: ok"),  # parsed and verified
    },
    "shardy-ref diff": {  # against shardy-ref-opt; a FILE both reject counts as agreeing
        "missing": cell("{missing}", 1, "cannot read {missing}: No such file or directory"),
        "directory": cell("{dir}", 1, "cannot read {dir}: Is a directory"),
        "empty": cell("{empty}", 0, "out:agreement: 100.0% of 1 programs"),
        "binary": cell("{binary}", 0, f"out:{'both-error':<12}  {1:>6}"),
        "non_utf8": cell("{non_utf8}", 0, f"out:{'agree':<12}  {1:>6}"),
        "unknown_flag": cell("{ok} --no-such-flag", 1, UNKNOWN),
        "bad_value": cell("{ok} --examples -1", 1, "argument --examples: expected"),
        "out_missing_dir": SAVE_DIR,
        "out_wrong_kind": cell("{ok} --save {out}", 1,
                               "argument --save: {out} is not a directory"),
        "out_kept": SAVE_NEW,
        "sigint": cell("{slow}", 130),
        "depth": cell("{deep1001}", 0, f"out:{'agree':<12}  {1:>6}"),
    },
}


VALID = ("non_utf8", "depth", "empty")  # an empty file is an empty module, as in mlir-opt


def test_the_table_is_complete():
    """Every command has every case: a command line, or why it does not apply. Only a
    valid input may succeed (and ``diff``, whose status is the agreement, on a file both
    tools reject); no cell expects an internal error."""
    assert set(TABLE) == set(PREFIX)
    for command, row in TABLE.items():
        assert tuple(row) == CASES, command
        for case, entry in row.items():
            if isinstance(entry, Cell):
                assert 70 not in entry.statuses
                assert 0 not in entry.statuses or case in VALID or \
                    (command, case) == ("shardy-ref diff", "binary"), (command, case)


class Inputs:
    """The input files, each written when first asked for, and a directory; shared by the
    cases (of one test process)."""

    def __init__(self, root: Path):
        self.root = root
        (root / "adir").mkdir()

    def __call__(self, name: str) -> Path:
        file = self.root / f"{name}.mlir"
        if not file.exists():
            file.write_bytes(INPUTS[name]())
        return file


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    return Inputs(tmp_path_factory.mktemp("inputs"))


def _fields(text: str, inputs: Inputs, work: Path) -> str:
    """``text`` with its ``{name}`` fields filled in (other braces are MLIR's)."""
    paths = {"dir": inputs.root / "adir", "missing": work / "missing.mlir",
             "nodir": work / "no" / "such" / "out", "out": work / "previous.out",
             "save": work / "saved"}

    def field(m: re.Match) -> str:
        name = m.group(1)
        return str(inputs(name) if name in INPUTS else paths.get(name, m.group(0)))

    return re.sub(r"\{(\w+)\}", field, text)


def _snapshot(*roots: Path) -> dict:
    """Every file under ``roots``: its bytes for small ones, else size and time (the
    inputs); hypothesis's cache directory is left out."""
    files = {}
    for root in roots:
        for path in root.rglob("*"):
            if ".hypothesis" in path.parts:
                continue
            stat = path.lstat()
            small = path.is_file() and stat.st_size < 4096
            files[path] = path.read_bytes() if small else (path.is_dir(), stat.st_size,
                                                             stat.st_mtime_ns)
    return files


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SHARDY_REF_DEBUG"}
    env["OPENBLAS_NUM_THREADS"] = "1"  # cheaper process starts: CI has two cores
    return env


# The depth column (1001-3000 nested regions, 2-15 s each) is `slow`: CI runs it, the
# README's quick subset leaves it out.
PARAMS = [pytest.param(command, case,
                       id=f"{command.split()[-1].removeprefix('shardy-ref-')}-{case}",
                       marks=[pytest.mark.slow] if case == "depth" else [])
          for command, row in TABLE.items() for case, entry in row.items()
          if isinstance(entry, Cell)]


@pytest.mark.parametrize(("command", "case"), PARAMS)
def test_misuse(command, case, inputs, tmp_path):
    entry = TABLE[command][case]
    (tmp_path / "previous.out").write_bytes(PREVIOUS)
    argv = [_fields(a, inputs, tmp_path) for a in [*PREFIX[command], *entry.args]]
    stream, says = ("out", entry.says[4:]) if entry.says.startswith("out:") else \
        ("err", entry.says)
    says = _fields(says, inputs, tmp_path)
    before = _snapshot(tmp_path, inputs.root)
    if case == "sigint":
        # fuzz --jobs 2: its manager process and two workers
        status, out, err = _interrupted(argv, tmp_path, children=3 if "fuzz" in command else 0)
    else:
        done = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True,
                              timeout=600, check=False)
        status, out, err = done.returncode, done.stdout, done.stderr
    out, err = (s.decode("utf-8", "replace") for s in (out, err))
    shown = f"{shlex.join(argv)}\nexit {status}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    for text in (out, err):
        assert "Traceback" not in text and "RecursionError" not in text, shown
    assert "internal error" not in err, shown
    assert status in entry.statuses, shown
    assert says in (out if stream == "out" else err), shown
    assert _snapshot(tmp_path, inputs.root) == before, "files changed: " + shown


# -- Ctrl-C ----------------------------------------------------------------------------------

# a terminal's Ctrl-C interrupts: Python ignores SIGINT when started with it ignored (as
# pytest may be, in a background job)
_WITH_CTRL_C = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); " \
               "os.execv(sys.argv[1], sys.argv[1:])"


def _interrupted(argv: list[str], cwd: Path, children: int):
    """Run ``argv`` in a session of its own, press Ctrl-C once it is at work (its
    command thread runs, and ``children`` child processes do) and the whole
    session hears it, as from a terminal; its exit status and output. The session must be
    gone after it (no worker left behind)."""
    proc = subprocess.Popen([sys.executable, "-c", _WITH_CTRL_C, *argv], cwd=cwd, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _wait_until_working(proc, children)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    deadline = time.monotonic() + 10
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _session(proc.pid), "processes left running after Ctrl-C"
    return proc.returncode, out, err


def _wait_until_working(proc: subprocess.Popen, children: int) -> None:
    """Until the command runs on its own thread (:mod:`shardy_ref.tools.stack`) with
    ``children`` more processes, then a moment more (without /proc: two seconds)."""
    if not Path(f"/proc/{proc.pid}/task").exists():
        time.sleep(2)
        return
    deadline, threads = time.monotonic() + 60, 0
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):  # it may just have ended
            threads = len(os.listdir(f"/proc/{proc.pid}/task"))
        if threads >= 2 and len(_session(proc.pid)) >= 1 + children:
            time.sleep(0.3)
            return
        time.sleep(0.02)
    pytest.fail(f"not at work after 60 s (exit status {proc.poll()})")


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies are not)."""
    pids = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def test_ctrl_c_stops_the_command_thread_before_the_exit():
    """The command's thread hears Ctrl-C too, so its ``finally`` blocks run (a temporary
    output file goes) and it does not finish the command after the interrupt was reported;
    a Ctrl-C as the main thread starts to wait is not lost."""
    import threading

    from shardy_ref.tools.stack import run_with_deep_stack

    started, stages = threading.Event(), []

    def command() -> int:
        try:
            started.set()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                time.sleep(0.01)
            stages.append("finished")
            return 0
        finally:
            stages.append("cleaned up")

    def press_ctrl_c() -> None:
        started.wait(10)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=press_ctrl_c).start()
        with pytest.raises(KeyboardInterrupt):
            run_with_deep_stack(command)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stages == ["cleaned up"]
