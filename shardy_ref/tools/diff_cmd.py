"""``shardy-ref diff``: differential testing against another sdy_opt-compatible tool.

For N random programs (:func:`shardy_ref.testing.programs.random_program`, seeds S, S+1,
..., with the ``--features`` asked for), or the module files given, it runs our pass
pipeline in-process and the other tool as ``CMD FILE --pass-pipeline=builtin.module(PASSES)``,
parses both outputs with our parser and compares them structurally
(:mod:`shardy_ref.tools.diff_compare`). Each program ends as agree, disagree, ours-error,
theirs-error or both-error. A disagreement is shrunk
(:mod:`shardy_ref.tools.diff_shrink`) and saved with the pipeline, both shardings and a
one-line repro command; an error is saved as it is. The tool runs up to ``--batch``
programs per call with ``-split-input-file`` (its start-up dominates); the programs it
fails on (or all, for a tool without ``-split-input-file``) run again one per call.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from shardy_ref.ir.diagnostics import ToolError, UsageError
from shardy_ref.tools.arg_types import non_negative_int, percentage, positive_int
from shardy_ref.tools.command import tool_command

OUTCOMES = ("agree", "disagree", "ours-error", "theirs-error", "both-error")
_SPLIT = re.compile(r"^// -----.*$\n?", re.M)
TIMEOUT = 120.0  # seconds per call of the other tool, plus a second per program


@dataclass(frozen=True, slots=True)
class Run:
    """One side's result on one program: its output module (parsed by us) or an error."""

    module: object | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: str  # one of OUTCOMES
    detail: str = ""  # the difference or the error(s)
    difference: object | None = None  # diff_compare.Difference


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(1, f"shardy-ref diff: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="shardy-ref diff", description=(
        "Run random sharded programs through our pipeline and another sdy_opt-compatible "
        "tool; compare the shardings of every value"))
    p.add_argument("--tool", required=True, metavar="CMD",
                   help="the other tool's command line (split like a shell would)")
    p.add_argument("--pipeline", required=True, metavar="PASSES",
                   help="passes, e.g. sdy-propagation-pipeline (wrapped in builtin.module())")
    p.add_argument("--examples", type=non_negative_int, default=100, metavar="N",
                   help="programs (100)")
    p.add_argument("--seed", type=non_negative_int, default=0, metavar="S", help="first seed (0)")
    p.add_argument("--features", default="", metavar="LIST",
                   help="random programs also use these, comma-separated: groups, manual, "
                        "control-flow, calls, priorities, or all (none)")
    p.add_argument("--max-ops", type=positive_int, default=8, metavar="K",
                   help="at most K steps per random program (8)")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="diff these modules instead of random programs")
    p.add_argument("--save", default="shardy-ref-diff", metavar="DIR",
                   help="where disagreements go, as SEED.mlir (./shardy-ref-diff)")
    p.add_argument("--min-agreement", type=percentage, default=0.0, metavar="PCT",
                   help="exit 1 below this agreement in percent (0)")
    p.add_argument("--batch", type=positive_int, default=25, metavar="B",
                   help="programs per call of the tool, with -split-input-file (25)")
    p.add_argument("--no-shrink", action="store_true", help="save disagreements unshrunk")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    return p


def full_pipeline(passes: str) -> str:
    """``passes`` anchored on the module, as ``--pass-pipeline`` wants it."""
    passes = passes.strip().strip("'\"")
    return passes if passes.startswith("builtin.module(") else f"builtin.module({passes})"


# -- the two sides -------------------------------------------------------------------------

def run_ours(text: str, pipeline: str) -> Run:
    """Parse, verify, run ``pipeline`` and verify after each pass, as shardy-ref-opt does;
    the printed result is parsed again so both sides are compared as printed text."""
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    try:
        module = parse_module(text, "<program>")
        verify_module(module)
        PassManager(parse_pipeline(pipeline, anchored=True), verify=verify_module).run(
            module, PassContext())
        return Run(parse_module(print_module(module), "<ours>"))
    except ShardyRefError as e:
        return Run(None, str(e))
    except Exception as e:  # a bug of ours is an outcome to report, not a crash of diff
        return Run(None, f"internal error: {type(e).__name__}: {e}")


def _parse_theirs(text: str) -> Run:
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.parser import parse_module

    try:
        return Run(parse_module(text, "<theirs>", allow_unregistered=True))
    except ShardyRefError as e:
        return Run(None, f"our parser rejects its output: {e}")


def _invoke(tool: list[str], text: str, pipeline: str, workdir: str, split: bool):
    """Run the tool on ``text``: its CompletedProcess, or the OSError/timeout raised."""
    path = os.path.join(workdir, "input.mlir")
    Path(path).write_text(text, encoding="utf-8", errors="surrogateescape")  # bytes as read
    argv = [*tool, path, f"--pass-pipeline={pipeline}", *(["-split-input-file"] * split)]
    try:
        return subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT + text.count("// -----"), check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return e


def run_one(tool: list[str], text: str, pipeline: str, workdir: str) -> Run:
    done = _invoke(tool, text, pipeline, workdir, split=False)
    if isinstance(done, OSError):
        raise ToolCannotRun(done.strerror or str(done))
    if isinstance(done, Exception):
        return Run(None, f"cannot run the tool: {done}")
    if done.returncode == 0:
        return _parse_theirs(done.stdout)
    message = done.stderr.strip() or f"exit status {done.returncode}"
    return Run(None, message.splitlines()[0][:500])


def _tag(i: int) -> str:
    return f"shardy_ref_diff_{i}"


_EXPLICIT_MODULE = re.compile(r'\A(\s*//[^\n]*\n)*\s*module(\s+@(?:[\w$.-]+|"[^"]*"))?(?=[\s{])')


def _tagged(text: str, i: int) -> str:
    """``text`` as a module named after ``i``: an explicit top-level module is renamed (its
    name means nothing to the passes), top-level ops are wrapped in one."""
    m = _EXPLICIT_MODULE.match(text)
    if m is None:
        return f"module @{_tag(i)} {{\n{text}\n}}"
    return f"{m.group(1) or ''}module @{_tag(i)}{text[m.end():]}"


def _batch(tool: list[str], texts: list[str], pipeline: str, workdir: str) -> list:
    """One call on all ``texts`` (``-split-input-file``), each a module named after its
    index (:func:`_tagged`) so that outputs are matched to programs even when the tool
    leaves out the ones it failed on: a Run per program, None where no output matched."""
    joined = "\n// -----\n".join(_tagged(t, i) for i, t in enumerate(texts))
    done = _invoke(tool, joined, pipeline, workdir, split=True)
    runs: list = [None] * len(texts)
    if isinstance(done, Exception):
        return runs
    tags = {_tag(i): i for i in range(len(texts))}
    for output in _SPLIT.split(done.stdout):
        run = _parse_theirs(output)
        name = run.module.attributes.get("sym_name") if run.module is not None else None
        i = tags.get(getattr(name, "value", None))
        if i is not None:
            run.module.attributes.pop("sym_name")
            runs[i] = run
    return runs


def run_theirs(tool: list[str], texts: list[str], pipeline: str, workdir: str) -> list[Run]:
    """The tool's result on each program: one call for all of them, then one call for
    each program that has no output of that call (to report its error)."""
    runs = _batch(tool, texts, pipeline, workdir) if len(texts) > 1 else [None] * len(texts)
    return [run if run is not None else run_one(tool, text, pipeline, workdir)
            for run, text in zip(runs, texts)]


def judge(ours: Run, theirs: Run) -> Verdict:
    from shardy_ref.tools.diff_compare import compare

    if ours.error is not None and theirs.error is not None:
        return Verdict("both-error", f"ours: {ours.error}; theirs: {theirs.error}")
    if ours.error is not None:
        return Verdict("ours-error", ours.error)
    if theirs.error is not None:
        return Verdict("theirs-error", theirs.error)
    difference = compare(ours.module, theirs.module)
    if difference is None:
        return Verdict("agree")
    return Verdict("disagree", str(difference), difference)


# -- the run -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Session:
    """One ``shardy-ref diff`` run: the tool, the pipeline and where programs are saved."""

    tool: list[str]
    tool_text: str
    pipeline: str
    save: Path
    batch: int
    workdir: str

    def verdicts(self, texts: list[str]) -> list[Verdict]:
        ours = [run_ours(t, self.pipeline) for t in texts]
        theirs: list[Run] = []
        for i in range(0, len(texts), self.batch):
            theirs += run_theirs(self.tool, texts[i:i + self.batch], self.pipeline,
                                 self.workdir)
        return [judge(a, b) for a, b in zip(ours, theirs)]

    def still_disagrees(self, texts: list[str]) -> int | None:
        for i, v in enumerate(self.verdicts(texts)):
            if v.outcome == "disagree":
                return i
        return None

    def shrink(self, text: str) -> tuple[str, Verdict]:
        from shardy_ref.tools.diff_shrink import shrink

        small = shrink(text, self.still_disagrees)
        return small, self.verdicts([small])[0]

    def save_program(self, name: str, label: str, text: str, verdict: Verdict,
                     note: str = "") -> Path:
        """Write ``NAME.mlir`` (the seed or the input file's stem): a header with the
        outcome, both shardings and a repro command, then the program."""
        path = self.save / f"{name}.mlir"
        quoted = shlex.quote(f"--pass-pipeline={self.pipeline}")
        target = shlex.quote(str(path))
        header = [f"// shardy-ref diff: {label}, {verdict.outcome}{note}",
                  f"// tool: {self.tool_text}", f"// pipeline: {self.pipeline}"]
        d = verdict.difference
        if d is not None:
            header += [f"// first difference: {d.where}", f"//   ours:   {d.ours}",
                       f"//   theirs: {d.theirs}"]
        else:
            header += [f"// {line}" for line in verdict.detail.splitlines()[:5]]
        header.append(f"// repro: diff <(shardy-ref-opt {target} {quoted}) "
                      f"<({self.tool_text} {target} {quoted})")
        try:
            self.save.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(header) + "\n" + text, encoding="utf-8",
                            errors="surrogateescape")
        except OSError as e:
            raise CannotSave(f"cannot write {path}: {e.strerror}") from None
        return path


def report_one(session: Session, names: tuple[str, str], text: str, verdict: Verdict,
               shrink: bool, out) -> None:
    """Shrink a disagreement, save it (errors too, as they are) and print one line."""
    note = ""
    if verdict.outcome == "disagree" and shrink:
        from shardy_ref.tools.diff_shrink import op_count

        small, after = session.shrink(text)
        if after.outcome == "disagree":
            note = f" (shrunk from {op_count(text)} to {op_count(small)} ops)"
            text, verdict = small, after
    name, label = names
    path = session.save_program(name, label, text, verdict, note)
    first = verdict.detail.splitlines()[0] if verdict.detail else ""
    out.write(f"{label}: {verdict.outcome}: {first[:300]} -> {path}\n")


def summary(counts: Counter, total: int) -> tuple[str, float]:
    """The table of outcomes and the agreement in percent (agree and both-error: the
    tools behave the same; both-error counts a program both reject)."""
    width = max(len(o) for o in OUTCOMES)
    lines = [f"{'outcome':<{width}}  {'count':>6}  {'%':>6}"]
    for o in OUTCOMES:
        pct = 100.0 * counts[o] / total if total else 0.0
        lines.append(f"{o:<{width}}  {counts[o]:>6}  {pct:>6.1f}")
    agreement = 100.0 * (counts["agree"] + counts["both-error"]) / total if total else 100.0
    lines.append(f"agreement: {agreement:.1f}% of {total} programs")
    return "\n".join(lines), agreement


def _programs(opts) -> list[tuple[str, str, object]]:
    """``(name of the saved file, label, file or seed)`` per program: the files given,
    else the random seeds."""
    if opts.files:
        return [(Path(f).stem, f, f) for f in opts.files]
    return [(str(seed), f"seed {seed}", seed)
            for seed in range(opts.seed, opts.seed + opts.examples)]


def _text(source, features=None) -> str:
    from shardy_ref.testing.programs import random_program

    if isinstance(source, int):
        return random_program(source, features)
    from shardy_ref.tools.source import read_source

    return read_source(source)[0]


@tool_command("diff", says_error=False, usage_status=1)
def main(argv: list[str]) -> int:
    parser = _parser()
    opts = parser.parse_args(argv)
    if os.path.exists(opts.save) and not os.path.isdir(opts.save):
        parser.error(f"argument --save: {opts.save} is not a directory")
    from shardy_ref.testing.program_features import Features

    try:
        features = Features.parse(opts.features, opts.max_ops)
    except ValueError as e:
        raise UsageError(f"--features: {e}") from None
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    programs = _programs(opts)
    tool = shlex.split(opts.tool)
    if not tool or shutil.which(tool[0]) is None:
        raise CannotCompare(f"--tool: cannot run {opts.tool!r}: "
                            f"{'empty command' if not tool else 'no such executable'}")
    try:
        return _compare_all(opts, programs, features, tool)
    except ToolCannotRun as e:
        raise CannotCompare(f"--tool: cannot run {opts.tool!r}: {e}; nothing was "
                            "compared") from None
    except CannotSave as e:
        raise ToolError(f"--save: {e}") from None


class ToolCannotRun(Exception):
    """The other tool could not be started (or timed out): no verdict can be counted."""


class CannotSave(Exception):
    """A program could not be written to ``--save DIR``."""


class CannotCompare(ToolError):
    """``diff`` compared nothing, the other tool being unable to run: exit status 2 (1 is a
    disagreement, or an argument error)."""

    exit_status = 2


def _compare_all(opts, programs: list, features, tool: list[str]) -> int:
    counts: Counter = Counter()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shardy-ref-diff-") as workdir:
        session = Session(tool, opts.tool, full_pipeline(opts.pipeline),
                          Path(opts.save), opts.batch, workdir)
        for i in range(0, len(programs), opts.batch):
            chunk = programs[i:i + opts.batch]
            try:
                texts = [_text(source, features) for _, _, source in chunk]
            except OSError as e:
                raise ToolError(f"cannot read {e.filename}: {e.strerror}") from None
            for (name, label, _), text, verdict in zip(chunk, texts,
                                                       session.verdicts(texts)):
                counts[verdict.outcome] += 1
                if verdict.outcome not in ("agree", "both-error"):
                    report_one(session, (name, label), text, verdict, not opts.no_shrink,
                               sys.stdout)
            if not opts.quiet:
                done = min(i + opts.batch, len(programs))
                end = "\r" if sys.stderr.isatty() and done < len(programs) else "\n"
                sys.stderr.write(f"[{done}/{len(programs)}] {counts['agree']} agree, "
                                 f"{time.monotonic() - start:.0f} s{end}")
    table, agreement = summary(counts, len(programs))
    print(table)
    print(f"time: {time.monotonic() - start:.1f} s")
    return 0 if agreement >= opts.min_agreement else 1
