"""``shardy-ref-translate``: a drop-in for ``stablehlo-translate --interpret``.

    shardy-ref-translate --interpret [FILE|-] [-o OUT] [-split-input-file]
                         [--args=[dense<...> : tensor<...>, ...]] [--interpreter-print-dense]
                         [--probe-output-dir=DIR] [--no-vectorize] [-debug]
                         [--num-partitions=N] [--num-replicas=R]

Each input chunk is parsed, verified and its entry function (``@main``, or the module's
only function) run by the NumPy interpreter; results are printed as the reference
interpreter prints them. A failing ``check.expect_*``, an unsupported op or bad input is
reported as ``file:line:col: error: message`` and makes the exit status 1; chunks are
independent. ``--no-vectorize`` runs ``interpreter.run_parallel`` one thread per process.
``--num-partitions=N`` (and ``--num-replicas=R``) run the entry function itself on every
process of an ``R x N`` grid, as ``interpreter.run_parallel`` would, every process with the
same ``--args``: a per-device program from any compiler (``partition_id``, collectives)
runs as it would on ``R x N`` devices; each process's results are printed after a line
``// process I (replica R, partition P)``. These two flags are ours, not the reference's.
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
    num_partitions: int = 1
    num_replicas: int = 1


def _help(opts: Options, arg: str, value: str | None, rest) -> None:
    print(__doc__)
    raise SystemExit(0)


def _version(opts: Options, arg: str, value: str | None, rest) -> None:
    print_version("shardy-ref-translate")
    raise SystemExit(0)


def _set(field_name: str, to: bool = True):
    """A flag setting ``field_name``, whatever value it is given."""
    def handle(opts: Options, arg: str, value: str | None, rest) -> None:
        setattr(opts, field_name, to)
    return handle


def _valued(field_name: str):
    """A flag with a value: ``--flag=VALUE`` or ``--flag VALUE``."""
    def handle(opts: Options, arg: str, value: str | None, rest) -> None:
        value = next(rest, None) if value is None else value
        if value is None:
            raise UsageError(f"missing value after {arg}")
        setattr(opts, field_name, value)
    return handle


def _count(field_name: str):
    """A flag with a positive whole number: ``--flag=N`` or ``--flag N``."""
    def handle(opts: Options, arg: str, value: str | None, rest) -> None:
        value = next(rest, None) if value is None else value
        if value is None or not value.isdigit() or int(value) < 1:
            raise UsageError(f"{arg.partition('=')[0]} takes a positive whole number, got "
                             f"{value!r}")
        setattr(opts, field_name, int(value))
    return handle


def _ignored(opts: Options, arg: str, value: str | None, rest) -> None:
    pass


# flag name (without dashes) -> handler(opts, arg, value or None without "=", rest of argv)
_FLAGS = {
    "h": _help, "help": _help, "version": _version,
    "interpret": _set("interpret"), "split-input-file": _set("split"),
    "interpreter-print-dense": _set("print_dense"), "debug": _set("debug"),
    "no-vectorize": _set("vectorize", False),
    "args": _valued("args"), "probe-output-dir": _valued("probe_dir"), "o": _valued("output"),
    "num-partitions": _count("num_partitions"), "num-replicas": _count("num_replicas"),
    "allow-unregistered-dialect": _ignored, "mlir-disable-threading": _ignored,
}


def parse_args(argv: list[str]) -> Options:
    """stablehlo-translate's command line: the flags in :data:`_FLAGS`, at most one input
    file, and ``--interpret``, the one translation there is."""
    opts = Options()
    positional: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name not in _FLAGS:
            raise UsageError(f"Unknown command line argument '{arg}'.  "
                             "Try: 'shardy-ref-translate --help'")
        _FLAGS[name](opts, arg, value if eq else None, rest)
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
            processes = opts.num_replicas * opts.num_partitions
            if processes == 1:
                per_process = [interp.run_args(func, args)]
            else:
                from shardy_ref.execute.api import run_grid

                per_process = run_grid(interp, func, [list(args)] * processes,
                                       num_replicas=opts.num_replicas)
    except ShardyRefError as e:
        return [e.diagnostic]
    for pid, results in enumerate(per_process):
        if len(per_process) > 1:
            replica, partition = divmod(pid, opts.num_partitions)
            out.write(f"// process {pid} (replica {replica}, partition {partition})\n")
        for value in results:
            _write_value(value, opts, out, format_tensor, to_dense, Tensor)
    return []


def _write_value(value, opts: Options, out, format_tensor, to_dense, tensor_type) -> None:
    if not isinstance(value, tensor_type):
        out.write("!stablehlo.token\n" if value.__class__.__name__ == "Token" else
                  f"{value}\n")
    elif opts.print_dense:
        out.write(f"{to_dense(value)}\n")
    else:
        out.write(f"{format_tensor(value)}\n")


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
