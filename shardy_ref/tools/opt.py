"""``shardy-ref-opt``: a drop-in for upstream's ``sdy_opt`` (an mlir-opt for Shardy).

    shardy-ref-opt [FILE|-] [-o OUT] [-split-input-file] [-verify-diagnostics]
                   [-allow-unregistered-dialect] [-mlir-print-op-generic] [-debug]
                   [-PASS[=OPTIONS] ...] [--pass-pipeline=PIPELINE]
                   [--mlir-print-ir-before-all] [--mlir-print-ir-after-all]
                   [--mlir-print-ir-after-change] [--mlir-print-ir-after-failure]
                   [--mlir-timing] [--mlir-pass-statistics] [--dump-pass-pipeline]
                   [--verify-roundtrip] [--mlir-print-debuginfo] [--mlir-print-local-scope]
                   [--mlir-elide-elementsattrs-if-larger=N] [--no-implicit-module]
                   [--list-passes] [--version] [--help]

The command line only parses flags and drives the pass manager: each input chunk is
parsed, verified, run through the passes, verified again, and printed. Diagnostics go to
stderr as ``file:line:col: error: message``; the exit status is 1 when any chunk fails
(or, with ``-verify-diagnostics``, when diagnostics and ``expected-*`` lines disagree).
A bug of ours (any other Python exception) is reported as ``internal error in PASS on OP``
with exit status 70, or as its traceback with ``-debug`` or ``SHARDY_REF_DEBUG=1``. ``-o``
replaces its file only once the whole output is written, and a failed run leaves it as it
was.
"""
from __future__ import annotations

import os
import re
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

from shardy_ref.ir.diagnostics import UsageError

USAGE = ("OVERVIEW: shardy_ref's optimizer driver, a drop-in for sdy_opt\n\nUSAGE:\n" +
         __doc__.split("\n\n")[1])

_IGNORED_FLAGS = {"mlir-disable-threading", "verify-each"}
_PRINT_IR = ("before-all", "after-all", "after-change", "after-failure")
_BOOLEAN_FLAGS = {"mlir-timing": "timing", "mlir-pass-statistics": "statistics",
                  "dump-pass-pipeline": "dump_pipeline", "verify-roundtrip": "verify_roundtrip",
                  "mlir-print-debuginfo": "debug_info",
                  "mlir-print-local-scope": "local_scope"}
_ELIDE = "mlir-elide-elementsattrs-if-larger"
INTERNAL_ERROR_STATUS = 70  # EX_SOFTWARE: a bug of ours, not a problem with the input
REPORT_REQUEST = ("please report this bug to the shardy_ref project with the input and the "
                  "command line (-debug or SHARDY_REF_DEBUG=1 shows the Python traceback)")


@dataclass
class Options:
    input: str = "-"
    output: str | None = None
    split: bool = False
    verify_diagnostics: bool = False
    allow_unregistered: bool = False
    generic: bool = False
    passes: list[tuple[str, str]] = field(default_factory=list)  # (name, options) in order
    pipeline: str | None = None
    debug: bool = False
    # mlir-opt's debugging flags (:mod:`shardy_ref.tools.opt_instruments`)
    print_ir: set[str] = field(default_factory=set)  # before-all, after-all, ...
    timing: bool = False
    statistics: bool = False
    dump_pipeline: bool = False
    verify_roundtrip: bool = False
    # mlir-opt's printing and parsing flags
    debug_info: bool = False
    local_scope: bool = False
    elide_elements: int | None = None
    implicit_module: bool = True

    def print_flags(self) -> dict:
        """``print_module``'s keyword arguments for the printing flags (``-mlir-print-*``)."""
        return {"generic": self.generic, "debug_info": self.debug_info,
                "local_scope": self.local_scope,
                "elide_elements_larger_than": self.elide_elements}


def _unquote(value: str) -> str:
    """Drop one pair of matching outer quotes: ``"a=1 b='x'"`` -> ``a=1 b='x'``."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _boolean(flag: str, value: str) -> bool:
    """``--flag``, ``--flag=true`` or ``--flag=false`` (llvm::cl's boolean values)."""
    if value.lower() in ("", "true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise UsageError(f"for the --{flag} option: '{value}' value invalid for boolean argument! "
                     f"Try 0 or 1")


def _output(opts: Options, name: str, value: str | None, rest) -> None:
    opts.output = value if value is not None else next(rest, None)
    if opts.output is None:
        raise UsageError("missing file name after -o")


def _help(opts: Options, name: str, value: str | None, rest) -> None:
    from shardy_ref.tools.opt_help import passes_help
    print(USAGE)
    print("\n" + passes_help())
    raise SystemExit(0)


def _version(opts: Options, name: str, value: str | None, rest) -> None:
    print_version("shardy-ref-opt")
    raise SystemExit(0)


def _list_passes(opts: Options, name: str, value: str | None, rest) -> None:
    """mlir-opt's ``--list-passes``: the registered passes, then exit."""
    from shardy_ref.tools.opt_help import passes_help
    print("Available Passes:")
    print("\n".join(passes_help().splitlines()[1:]))
    raise SystemExit(0)


def _set(field_name: str):
    """A flag that turns ``field_name`` on, whatever value it is given."""
    def handle(opts: Options, name: str, value: str | None, rest) -> None:
        setattr(opts, field_name, True)
    return handle


def _set_boolean(field_name: str, negate: bool = False):
    """A flag taking llvm::cl's boolean values (``--flag``, ``--flag=false``)."""
    def handle(opts: Options, name: str, value: str | None, rest) -> None:
        setattr(opts, field_name, _boolean(name, "true" if value is None else value) != negate)
    return handle


def _elide(opts: Options, name: str, value: str | None, rest) -> None:
    value = next(rest, "") if value is None else value
    if not value.isdigit():  # llvm::cl's words for a bad unsigned value
        raise UsageError(f"for the --{_ELIDE} option: '{value}' value invalid for "
                         f"uint argument!")
    opts.elide_elements = int(value)


def _pipeline(opts: Options, name: str, value: str | None, rest) -> None:
    opts.pipeline = (value or "").strip("'\"")


def _print_ir(opts: Options, name: str, value: str | None, rest) -> None:
    opts.print_ir.add(name.removeprefix("mlir-print-ir-"))


def _ignored(opts: Options, name: str, value: str | None, rest) -> None:
    pass


# flag name (without dashes) -> handler(opts, name, value or None without "=", rest of argv)
_FLAGS = {
    "o": _output, "h": _help, "help": _help, "version": _version, "list-passes": _list_passes,
    "split-input-file": _set("split"), "verify-diagnostics": _set("verify_diagnostics"),
    "allow-unregistered-dialect": _set("allow_unregistered"),
    "mlir-print-op-generic": _set("generic"), "debug": _set("debug"),
    **{f"mlir-print-ir-{when}": _print_ir for when in _PRINT_IR},
    **{flag: _set_boolean(field_name) for flag, field_name in _BOOLEAN_FLAGS.items()},
    "no-implicit-module": _set_boolean("implicit_module", negate=True),
    _ELIDE: _elide, "pass-pipeline": _pipeline, **dict.fromkeys(_IGNORED_FLAGS, _ignored),
}


def parse_args(argv: list[str]) -> Options:
    """mlir-opt's command line: flags in :data:`_FLAGS`, ``-PASS[=OPTIONS]`` for every
    registered pass, at most one input file (anything after ``--`` is one)."""
    from shardy_ref.pass_manager import PASS_MODULES

    opts = Options()
    positional: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "--":
            positional += rest
        elif arg == "-" or not arg.startswith("-"):
            positional.append(arg)
        else:
            name, eq, value = arg.lstrip("-").partition("=")
            if name in _FLAGS:
                _FLAGS[name](opts, name, value if eq else None, rest)
            elif name in PASS_MODULES:
                opts.passes.append((name, _unquote(value) if eq else ""))
            else:
                raise UsageError(f"Unknown command line argument '{arg}'.  "
                                 f"Try: 'shardy-ref-opt --help'")
    if len(positional) > 1:
        raise UsageError("Too many positional arguments specified! Can specify at most 1 "
                         "positional arguments: See: shardy-ref-opt --help")
    if positional:
        opts.input = positional[0]
    return opts


def print_version(prog: str) -> None:
    """``--version``: the tool, the package version, and what it mirrors."""
    from shardy_ref import __version__

    print(f"{prog} (shardy_ref {__version__}): a reference implementation of OpenXLA "
          "Shardy in Python")


@dataclass
class Chunk:
    text: str
    first_line: int  # 1-based line of the chunk's first line in the whole input


_SPLIT = re.compile(r"^// -----.*$\n?", re.M)


def split_chunks(text: str, split: bool) -> list[Chunk]:
    """Cut the input at lines starting with ``// -----`` (``-split-input-file``)."""
    if not split:
        return [Chunk(text, 1)]
    chunks, pos, line = [], 0, 1
    for m in _SPLIT.finditer(text):
        piece = text[pos:m.start()]
        chunks.append(Chunk(piece, line))
        line += piece.count("\n") + m.group(0).count("\n")
        pos = m.end()
    chunks.append(Chunk(text[pos:], line))
    return chunks


def process_chunk(chunk: Chunk, opts: Options, filename: str):
    """Parse, verify, run passes, print. Returns (output text or None, diagnostics)."""
    from shardy_ref.ir.diagnostics import PassError, ShardyRefError
    from shardy_ref.ir.location import Location
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import PassContext, PassManager, blame
    from shardy_ref.tools.opt_instruments import instruments_for, report

    ctx = PassContext()
    instruments = instruments_for(opts, sys.stderr)
    timer = instruments.get("timer")
    try:
        with blame("the parser", location=Location(filename, chunk.first_line, 1)), \
                _timed(timer, "Parser"):
            module = parse_module(chunk.text, filename, chunk.first_line - 1, ctx.diagnostics,
                                  allow_unregistered=opts.allow_unregistered,
                                  implicit_module=opts.implicit_module)
        with blame("the verifier", module), _timed(timer, "Verifier"):
            verify_module(module)
        pipeline = build_pipeline(opts, filename)
        if pipeline and module.name != "builtin.module":  # --no-implicit-module
            raise PassError(module.location, f"can't run 'builtin.module' pass manager on "
                                             f"'{module.name}' op")
        if opts.dump_pipeline:
            from shardy_ref.pass_manager import pipeline_text
            sys.stderr.write(f"Pass Manager with {len(pipeline)} passes:\n"
                             f"{pipeline_text(pipeline)}\n")
        PassManager(pipeline, verify=verify_module,
                    instrumentations=instruments.values()).run(module, ctx)
        with blame("the printer", module), _timed(timer, "Output"):
            # sdy_opt registers neither the interpreter nor the check dialect
            text = print_module(module, generic_dialects=("check", "interpreter"),
                                **opts.print_flags())
        if opts.verify_roundtrip:
            verify_roundtrip(module, text, opts)
        return text, ctx.diagnostics
    except ShardyRefError as e:
        others = [o.diagnostic for o in getattr(e, "others", ())]
        return None, [*ctx.diagnostics, e.diagnostic, *others]
    finally:
        report(instruments, sys.stderr)


@contextmanager
def _timed(timer, name: str):
    start = time.perf_counter()
    try:
        yield
    finally:
        if timer is not None:
            timer.add(name, time.perf_counter() - start)


def verify_roundtrip(module, text: str, opts: Options) -> None:
    """mlir-opt's ``--verify-roundtrip``: the printed module, parsed again, prints the
    same, in the generic form and in the custom one."""
    from shardy_ref.ir.diagnostics import VerifyError
    from shardy_ref.parser import parse_module, print_module

    for generic in (True, False):
        printed = text if generic == opts.generic else print_module(
            module, generic=generic, generic_dialects=("check", "interpreter"))
        again = print_module(parse_module(printed, "<roundtrip>",
                                          allow_unregistered=opts.allow_unregistered),
                             generic=generic, generic_dialects=("check", "interpreter"))
        if again != printed:
            form = "generic" if generic else "custom"
            raise VerifyError(module.location, f"roundTrip testing roundtripped module "
                              f"differs from original ({form} form)")


def build_pipeline(opts: Options, filename: str) -> list:
    """The passes to run: ``--pass-pipeline`` (which must be anchored, as in mlir-opt) or
    the pass flags in order. An error in it is reported against the input file."""
    from shardy_ref.ir.diagnostics import PassError
    from shardy_ref.ir.location import Location
    from shardy_ref.pass_manager import PipelineElement, make_pass, parse_pipeline

    try:
        if opts.pipeline is not None:
            return parse_pipeline(opts.pipeline, anchored=True)
        return [PipelineElement(pass_=make_pass(n, o)) for n, o in opts.passes]
    except PassError as e:
        if not e.location.is_known:
            e.location = Location(filename, 0, 0)
        raise


def read_input(path: str, stdin, stderr) -> tuple[str, str] | None:
    """The input text and the file name diagnostics use (``-`` is stdin), or None after
    reporting a file that cannot be read, as mlir-opt words it."""
    from shardy_ref.tools.source import read_source

    try:
        return read_source(path, stdin)
    except OSError as e:
        stderr.write(f"Could not open input file '{path}': {e.strerror}\n")
        return None


def write_output(path: str, text: str, stderr) -> bool:
    """Write ``text`` to ``path`` so that a failure keeps the file's previous content
    (:func:`~shardy_ref.tools.source.replace_file`). Reports a failure as mlir-opt words
    it and returns False."""
    from shardy_ref.tools.source import OutputError, replace_file

    try:
        replace_file(path, text.encode("utf-8", errors="surrogateescape"))
    except OutputError as e:
        stderr.write(f"cannot {e.stage} output file '{path}': {e.strerror}\n")
        return False
    return True


def debug_requested(opts) -> bool:
    """``-debug`` or ``SHARDY_REF_DEBUG`` set (not 0): show tracebacks of internal errors."""
    return bool(getattr(opts, "debug", False)) or \
        os.environ.get("SHARDY_REF_DEBUG", "") not in ("", "0")


def report_internal_error(e: Exception, where: str, location, debug: bool, stderr) -> int:
    """Report a Python exception that escaped a command (a bug of ours): its traceback
    with ``debug``, else ``file:line:col: error: internal error in PASS on OP: ...`` (what
    :func:`~shardy_ref.pass_manager.blame` recorded, the innermost op in the traceback)
    and a request to report it. Returns the exit status, 70."""
    if debug:
        traceback.print_exception(e, file=stderr)
        return INTERNAL_ERROR_STATUS
    try:
        op, op_location = _innermost_op(e)
    except Exception:  # the report itself must not end in a traceback
        op = op_location = None
    tagged = getattr(e, "shardy_ref_op", None)
    op = op or tagged
    candidates = (op_location, getattr(tagged, "location", None),
                  getattr(e, "shardy_ref_location", None))
    loc = next((c for c in candidates if c is not None and c.is_known), location)
    where = getattr(e, "shardy_ref_where", None) or where
    on = f" on '{op.name}'" if op is not None else ""
    detail = "".join(traceback.format_exception_only(e)).strip().replace("\n", " ")
    stderr.write(f"{loc}: error: internal error in {where}{on}: {detail}\n{REPORT_REQUEST}\n")
    return INTERNAL_ERROR_STATUS


def _innermost_op(e: Exception):
    """The op the innermost frame of ``e``'s traceback was working on (its local ``op``,
    else any op local), and the location of the innermost op that has one."""
    from shardy_ref.ir.operation import Operation

    op = location = None
    tb = e.__traceback__
    while tb is not None:
        frame_locals = tb.tb_frame.f_locals
        ops = [v for v in frame_locals.values() if isinstance(v, Operation)]
        if isinstance(frame_locals.get("op"), Operation):
            ops.insert(0, frame_locals["op"])
        if ops:
            op = ops[0]
            known = [o.location for o in ops if o.location.is_known]
            location = known[0] if known else location
        tb = tb.tb_next
    return op, location


def cli_main(prog: str, parse, run_, argv: list[str] | None) -> int:
    """A command line's ``main``: parse flags (a usage error exits 1 with ``prog:``
    before it), run, and turn a closed pipe or Ctrl-C into an exit status, and any other
    Python exception into an internal-error report (exit 70)."""
    skip_collection_at_exit()
    try:  # Ctrl-C while the imports run is an interrupt too, not a traceback
        from shardy_ref.ir.location import Location
        from shardy_ref.tools.stack import run_with_deep_stack

        opts = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    except BrokenPipeError:  # --help or --list-passes into a pipe that closed early
        return 1
    except KeyboardInterrupt:
        return 130
    try:
        return run_with_deep_stack(lambda: run_(opts))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        source = Location("<stdin>" if opts.input == "-" else opts.input, 0, 0)
        return report_internal_error(e, prog, source, debug_requested(opts), sys.stderr)


def run(opts: Options, stdin=None, stdout=None, stderr=None) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    source = read_input(opts.input, stdin, stderr)
    if source is None:
        return 1
    text, filename = source
    outputs, failed = [], False
    source_lines = text.split("\n")
    for chunk in split_chunks(text, opts.split):
        out, diagnostics = process_chunk(chunk, opts, filename)
        if opts.verify_diagnostics:
            from shardy_ref.tools.verify_diagnostics import check, collect_expectations

            errors = check(diagnostics, collect_expectations(chunk.text, chunk.first_line),
                           filename)
            for line in errors:
                stderr.write(line + "\n")
            failed |= bool(errors)
        else:
            for d in diagnostics:
                stderr.write(d.render(source_lines) + "\n")
            failed |= out is None or any(d.severity == "error" for d in diagnostics)
        if out is not None:
            outputs.append(out.rstrip("\n"))
    body = "\n// -----\n".join(outputs) + "\n" if outputs else ""
    if opts.output:
        # mlir-opt discards the output of a failed run (ToolOutputFile is not kept); we
        # also leave an existing file as it was
        if not failed and not write_output(opts.output, body, stderr):
            return 1
    else:
        stdout.write(body)
    return 1 if failed else 0


@cache
def skip_collection_at_exit() -> None:
    """Freeze the heap (``gc.freeze``) when the process exits, so that the interpreter's
    shutdown does not run the cyclic collector over every object the command made and
    imported: about 25 ms of the 0.18 s a one-op ``shardy-ref-translate --interpret``
    takes (``benchmarks/startup.py``). By then the command's output is written and its
    files are closed, so nothing is left that a collection would finish. Registered once
    per process; in a process that goes on, nothing changes until it exits."""
    import atexit
    import gc

    atexit.register(gc.freeze)


def single_threaded_blas() -> None:
    """One BLAS thread unless the user asked for more (``OPENBLAS_NUM_THREADS``): these
    tools run one small program per process (the harnesses start them once per test chunk),
    and starting OpenBLAS's thread pool costs more CPU time (~0.1 s per start on 2 cores)
    than its threads ever save here. Called before NumPy is first imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    single_threaded_blas()
    return cli_main("shardy-ref-opt", parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
