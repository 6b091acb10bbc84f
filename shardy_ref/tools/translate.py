"""``shardy-ref-translate``: a drop-in for ``stablehlo-translate --interpret``.

    shardy-ref-translate --interpret [FILE|-] [-o OUT] [-split-input-file]
                         [--args=[dense<...> : tensor<...>, ...]] [--interpreter-print-dense]
                         [--probe-output-dir=DIR] [--no-vectorize] [-debug]

Each input chunk is parsed, verified and its entry function (``@main``, or the module's
only function) run by the NumPy interpreter; results are printed as the reference
interpreter prints them. A failing ``check.expect_*``, an unsupported op or bad input is
reported as ``file:line:col: error: message`` and makes the exit status 1; chunks are
independent. ``--no-vectorize`` runs ``interpreter.run_parallel`` one thread per process.
A bug of ours exits 70 with ``internal error in ... on OP`` (``-debug`` or
``SHARDY_REF_DEBUG=1``: the traceback); ``-o`` replaces its file only once all is
written, and only when the run succeeds.
"""
from __future__ import annotations

import io
import sys
from dataclasses import dataclass

from shardy_ref.tools.opt import (
    UsageError,
    cli_main,
    print_version,
    read_input,
    single_threaded_blas,
    split_chunks,
    write_output,
)

USAGE = __doc__.split("\n\n")[1]
ARGS_USAGE = "--args=[dense<1> : tensor<2xi32>, ...]"


@dataclass
class Options:
    input: str = "-"
    output: str | None = None
    interpret: bool = False
    split: bool = False
    args: str = ""
    print_dense: bool = False
    probe_dir: str | None = None
    vectorize: bool = True
    debug: bool = False


_FLAGS = {"interpret": "interpret", "split-input-file": "split",
          "interpreter-print-dense": "print_dense", "debug": "debug"}
_VALUED = {"args": "args", "probe-output-dir": "probe_dir", "o": "output"}


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name in ("h", "help"):
            print(__doc__)
            raise SystemExit(0)
        if name == "version":
            print_version("shardy-ref-translate")
            raise SystemExit(0)
        if name in _FLAGS:
            setattr(opts, _FLAGS[name], True)
        elif name == "no-vectorize":
            opts.vectorize = False
        elif name in _VALUED:
            if not eq:
                if i >= len(argv):
                    raise UsageError(f"missing value after {arg}")
                value, i = argv[i], i + 1
            setattr(opts, _VALUED[name], value)
        elif name in ("allow-unregistered-dialect", "mlir-disable-threading"):
            continue
        else:
            raise UsageError(f"Unknown command line argument '{arg}'.  "
                             "Try: 'shardy-ref-translate --help'")
    if len(positional) > 1:
        raise UsageError("Too many positional arguments specified!")
    if positional:
        opts.input = positional[0]
    if not opts.interpret:
        raise UsageError("no translation given: only --interpret is supported")
    return opts


def parse_interpreter_args(text: str):
    """``--args=[dense<...> : tensor<...>, ...]`` as uniform tensors (the reference's
    ``parseInterpreterArguments``), or a usage error with its words."""
    from shardy_ref.execute.values import from_dense
    from shardy_ref.ir.builtin_attrs import ArrayAttr, DenseElementsAttr
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.parser import parse_attribute

    if not text:
        return []
    try:
        attr = parse_attribute(text, "<args>")
    except ShardyRefError:
        attr = None
    if not isinstance(attr, ArrayAttr):
        raise UsageError(f"expectected array attribute string for args, i.e. {ARGS_USAGE}")
    values = []
    for a in attr.value:
        if not isinstance(a, DenseElementsAttr):
            raise UsageError("expected dense elements attribute for args elements, i.e. "
                             f"{ARGS_USAGE}")
        values.append(from_dense(a))
    return values


def interpret_chunk(chunk, opts: Options, filename: str, args: list, out) -> list:
    """Parse, verify and run one chunk; returns its diagnostics (empty on success)."""
    from shardy_ref.execute import Interpreter
    from shardy_ref.execute.printing import format_tensor
    from shardy_ref.execute.values import Tensor, to_dense
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.location import Location
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module
    from shardy_ref.pass_manager import blame

    try:
        with blame("the parser", location=Location(filename, chunk.first_line, 1)):
            module = parse_module(chunk.text, filename, chunk.first_line - 1)
        with blame("the verifier", module):
            verify_module(module)
        with blame("the interpreter", module):
            interp = Interpreter(module, stdout=out, probe_dir=opts.probe_dir,
                                 vectorize=opts.vectorize)
            func = interp.entry_function("main")
            results = interp.run_args(func, args)
    except ShardyRefError as e:
        return [e.diagnostic]
    for value in results:
        if not isinstance(value, Tensor):
            out.write("!stablehlo.token\n" if value.__class__.__name__ == "Token" else
                      f"{value}\n")
        elif opts.print_dense:
            out.write(f"{to_dense(value)}\n")
        else:
            out.write(f"{format_tensor(value)}\n")
    return []


def run(opts: Options, stdin=None, stdout=None, stderr=None) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    source = read_input(opts.input, stdin, stderr)
    if source is None:
        return 1
    text, filename = source
    try:
        args = parse_interpreter_args(opts.args)
    except UsageError as e:
        stderr.write(f"<unknown>:0: error: {e}\n")
        return 1
    out = io.StringIO() if opts.output else stdout
    failed = False
    source_lines = text.split("\n")
    for chunk in split_chunks(text, opts.split):
        for d in interpret_chunk(chunk, opts, filename, args, out):
            stderr.write(d.render(source_lines) + "\n")
            failed = True
    if opts.output and not failed and not write_output(opts.output, out.getvalue(), stderr):
        return 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    single_threaded_blas()
    return cli_main("shardy-ref-translate", parse_args, run, argv)


if __name__ == "__main__":
    sys.exit(main())
