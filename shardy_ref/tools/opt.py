"""``shardy-ref-opt``: a drop-in for upstream's ``sdy_opt`` (an mlir-opt for Shardy).

    shardy-ref-opt [FILE|-] [-o OUT] [-split-input-file] [-verify-diagnostics]
                   [-allow-unregistered-dialect] [-mlir-print-op-generic]
                   [-PASS[=OPTIONS] ...] [--pass-pipeline=PIPELINE]

The command line only parses flags and drives the pass manager: each input chunk is
parsed, verified, run through the passes, verified again, and printed. Diagnostics go to
stderr as ``file:line:col: error: message``; the exit status is 1 when any chunk fails
(or, with ``-verify-diagnostics``, when diagnostics and ``expected-*`` lines disagree).
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field

USAGE = __doc__.split("\n\n")[1]

_IGNORED_FLAGS = {"mlir-disable-threading", "verify-each"}
UNREGISTERED_MESSAGE = ("operation being parsed with an unregistered dialect. If this is intended, "
                        "please use -allow-unregistered-dialect with the MLIR tool used")


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


class UsageError(Exception):
    pass


def _unquote(value: str) -> str:
    """Drop one pair of matching outer quotes: ``"a=1 b='x'"`` -> ``a=1 b='x'``."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_args(argv: list[str]) -> Options:
    from shardy_ref.pass_manager import PASS_MODULES

    opts = Options()
    positional: list[str] = []
    i = 0
    only_positional = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_positional or arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name == "o":
            if eq:
                opts.output = value
            elif i < len(argv):
                opts.output, i = argv[i], i + 1
            else:
                raise UsageError("missing file name after -o")
        elif name in ("h", "help"):
            print(USAGE)
            print("\nPasses and pass pipelines:\n" + "\n".join(f"  -{n}" for n in PASS_MODULES))
            raise SystemExit(0)
        elif name == "split-input-file":
            opts.split = True
        elif name == "verify-diagnostics":
            opts.verify_diagnostics = True
        elif name == "allow-unregistered-dialect":
            opts.allow_unregistered = True
        elif name == "mlir-print-op-generic":
            opts.generic = True
        elif name == "pass-pipeline":
            opts.pipeline = value.strip("'\"")
        elif name in _IGNORED_FLAGS:
            continue
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
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import (
        PassContext,
        PassManager,
        PipelineElement,
        make_pass,
        parse_pipeline,
    )

    ctx = PassContext()
    try:
        module = parse_module(chunk.text, filename, chunk.first_line - 1, ctx.diagnostics)
        if not opts.allow_unregistered:
            check_registered(module)
        verify_module(module)
        if opts.pipeline is not None:
            pipeline = parse_pipeline(opts.pipeline)
        else:
            pipeline = [PipelineElement(pass_=make_pass(n, o)) for n, o in opts.passes]
        PassManager(pipeline, verify=verify_module).run(module, ctx)
        # sdy_opt registers neither the interpreter nor the check dialect
        return print_module(module, generic=opts.generic,
                            generic_dialects=("check", "interpreter")), ctx.diagnostics
    except ShardyRefError as e:
        others = [o.diagnostic for o in getattr(e, "others", ())]
        return None, [*ctx.diagnostics, e.diagnostic, *others]


def check_registered(module) -> None:
    from shardy_ref.ir.diagnostics import ParseError
    from shardy_ref.ir.location import Location
    from shardy_ref.ir.opdefs import is_registered_dialect

    for op in module.walk():
        if not is_registered_dialect(op.dialect):
            loc = op.location
            raise ParseError(Location(loc.file, loc.line, loc.col + len(op.name) + 2),
                             UNREGISTERED_MESSAGE)


def read_input(path: str, stdin, stderr) -> tuple[str, str] | None:
    """The input text and the file name diagnostics use (``-`` is stdin), or None after
    reporting a file that cannot be read, as mlir-opt words it."""
    if path == "-":
        return stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read(), path
    except OSError as e:
        stderr.write(f"Could not open input file '{path}': {e.strerror}\n")
        return None


def cli_main(prog: str, parse, run_, argv: list[str] | None) -> int:
    """A command line's ``main``: parse flags (a usage error exits 1 with ``prog:``
    before it), run, and turn a closed pipe or Ctrl-C into an exit status."""
    try:
        opts = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    try:
        return run_(opts)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130


def run(opts: Options, stdin=None, stdout=None, stderr=None) -> int:
    from shardy_ref.tools.verify_diagnostics import check, collect_expectations

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
        with open(opts.output, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(body)
    else:
        stdout.write(body)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    return cli_main("shardy-ref-opt", parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
