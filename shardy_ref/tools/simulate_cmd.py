"""``shardy-ref run`` and ``shardy-ref check``: the simulator from the command line.

``run`` propagates and partitions a module for its mesh, runs every device at once and
writes the global results (``--out Y.npz``: ``out0, out1, ...``; else a summary on
stdout); ``--single-device`` runs the unpartitioned program instead. ``--backend xla``
hands the per-device program to XLA (through jax, the ``jax`` extra) and runs it on jax's
devices instead of our NumPy simulator; with ``--processes P --process-id I
--coordinator HOST:PORT`` (once per process, on one or more hosts) on the devices of all P
processes, joined by ``jax.distributed``, process 0 printing. ``check`` runs the
partitioned program and the single-device one and compares them output by output, printing
the largest absolute and relative error and the devices holding a wrong element; it exits
1 on a mismatch. Inputs come from ``--inputs X.npz`` (``arg0, arg1, ...``: the entry
function's arguments, global shapes, in order) or are seeded random ones. Errors are
``file:line:col: error: message``, exit 1.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import threading
import time
from contextlib import contextmanager, nullcontext, redirect_stdout

import numpy as np

from shardy_ref.backends.jax_runtime import BackendError
from shardy_ref.execute.compare import compare, mismatches
from shardy_ref.ir.diagnostics import ToolError
from shardy_ref.tools.arg_types import (
    byte_size,
    non_negative_float,
    non_negative_int,
    positive_int,
)
from shardy_ref.tools.command import tool_command

BACKENDS = ("numpy", "xla")
PARTITIONERS = ("ours", "xla")


def _parser(command: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"shardy-ref {command}", description=(
        "Propagate, partition and run MODULE on every device of its mesh"
        if command == "run" else
        "Run MODULE partitioned on every device of its mesh and on one device; compare"))
    p.add_argument("module", help="an MLIR file with sdy shardings (- for stdin)")
    p.add_argument("--inputs", metavar="X.npz", help="arguments arg0, arg1, ... (global "
                   "shapes); default: seeded random inputs")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the random inputs (0)")
    p.add_argument("--function", default="main", help="the entry function (main)")
    p.add_argument("--memory-budget", type=byte_size, metavar="BYTES",
                   help="refuse a run that needs more (default: half the available "
                   "memory); suffixes K, M, G")
    p.add_argument("--devices-from-mesh", action="store_true", help="lay out the mesh's "
                   "devices even when the module's mhlo.num_partitions says otherwise")
    p.add_argument("--no-halo-exchange", action="store_true",
                   help="replicate instead of exchanging halos for permutation factors")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--backend", choices=BACKENDS, default="numpy", help="who runs the "
                   "per-device program: our NumPy simulator (numpy, the default) or XLA on "
                   "jax's devices (xla; needs the jax extra)")
    p.add_argument("--processes", type=positive_int, default=1, metavar="P", help="with --backend "
                   "xla: run on the devices of P processes (one or more hosts; start this "
                   "command once per process) joined by jax.distributed (1)")
    p.add_argument("--process-id", type=non_negative_int, default=0, metavar="I",
                   help="this process's number, 0 .. P-1; only process 0 prints (0)")
    p.add_argument("--coordinator", metavar="HOST:PORT", help="process 0's address "
                   "(default: $JAX_COORDINATOR_ADDRESS)")
    if command == "run":
        p.add_argument("--out", metavar="Y.npz", help="write the results out0, out1, ...")
        p.add_argument("--single-device", action="store_true",
                       help="run the unpartitioned program on one device")
    else:
        p.add_argument("--rtol", type=non_negative_float, default=1e-5,
                       help="relative tolerance (1e-5)")
        p.add_argument("--atol", type=non_negative_float, default=1e-5,
                       help="absolute tolerance (1e-5)")
        p.add_argument("--partitioner", choices=PARTITIONERS, default="ours",
                       help="who partitions MODULE: our passes (ours, the default) or XLA "
                       "(xla: XLA's per-device program, run by our simulator; needs the jax "
                       "extra)")
        p.add_argument("--xla-partitioner", choices=("shardy", "gspmd"), default="shardy",
                       help="with --partitioner xla: XLA's Shardy or GSPMD partitioner "
                       "(shardy; gspmd needs a module lowered with mhlo.sharding)")
        p.add_argument("--save-hlo", metavar="DIR", help="with --partitioner xla: keep XLA's "
                       "partitioned program in DIR (its HLO and the StableHLO we ran)")
    return p


@tool_command("run")
def run_main(argv: list[str]) -> int:
    return _main("run", argv)


@tool_command("check")
def check_main(argv: list[str]) -> int:
    return _main("check", argv)


def _main(command: str, argv: list[str]) -> int:
    parser = _parser(command)
    opts = parser.parse_args(argv)
    _check_paths(parser, opts)
    progress = Progress(enabled=not opts.quiet)
    _check_partitioner_options(parser, opts)
    if opts.backend == "xla" or getattr(opts, "partitioner", None) == "xla":
        # XLA warns on stderr that GSPMD, which keeps our all-manual program as it is, is
        # deprecated: not news to the user (set TF_CPP_MIN_LOG_LEVEL=0 to see it)
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        if opts.processes != 1 or opts.process_id:
            _join(opts, progress)
        text, filename = read_module_file(opts.module)
        with redirect_stdout(io.StringIO()) if opts.process_id else nullcontext():
            return (run_command if command == "run" else check_command)(opts, text, filename,
                                                                        progress)
    except BackendError as e:  # the runtime's own words, after the command's name
        raise ToolError(e.message) from e
    finally:
        progress.stop()


def _check_partitioner_options(parser: argparse.ArgumentParser, opts) -> None:
    """Usage errors (exit 2) for XLA-partitioner options without ``--partitioner xla`` and
    for what that mode does not combine with."""
    if getattr(opts, "partitioner", "ours") == "xla":
        clash = [flag for flag, on in (("--backend xla", opts.backend == "xla"),
                                       ("--processes", opts.processes != 1),
                                       ("--no-halo-exchange", opts.no_halo_exchange),
                                       ("--devices-from-mesh", opts.devices_from_mesh),
                                       ("--memory-budget", opts.memory_budget is not None),
                                       ("--function", opts.function != "main"))
                 if on]
        if clash:
            parser.error(f"--partitioner xla runs XLA's program in our simulator; it takes no "
                         f"{', '.join(clash)}")
        return
    for flag, on in (("--save-hlo", getattr(opts, "save_hlo", None)),
                     ("--xla-partitioner", getattr(opts, "xla_partitioner", "shardy")
                      != "shardy")):
        if on:
            parser.error(f"{flag} goes with --partitioner xla")


def _check_paths(parser: argparse.ArgumentParser, opts) -> None:
    """Usage errors (exit 2) for an ``--inputs`` file that is not an ``.npz`` archive and
    an ``--out`` that is a directory."""
    import zipfile

    if opts.inputs and os.path.isfile(opts.inputs) and not zipfile.is_zipfile(opts.inputs):
        parser.error(f"argument --inputs: {opts.inputs} is not an .npz file (numpy.savez "
                     "writes one: arg0, arg1, ...)")
    out = getattr(opts, "out", None)
    if out and os.path.isdir(out):
        parser.error(f"argument --out: {out} is a directory; name the .npz file to write")


def _join(opts, progress) -> None:
    """Join the other processes of a ``--processes`` run (before jax starts); only process
    0 prints, so P processes write one report."""
    if opts.backend != "xla":
        raise ToolError("--processes runs on XLA's devices: add --backend xla")
    if opts.processes < 1 or not 0 <= opts.process_id < opts.processes:
        raise ToolError(f"--process-id {opts.process_id} is not a process of "
                        f"--processes {opts.processes} (0 .. P-1)")
    if not (opts.coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS")):
        raise ToolError("--processes needs --coordinator HOST:PORT (or "
                        "JAX_COORDINATOR_ADDRESS): process 0's address")
    from shardy_ref.backends import join_processes

    join_processes(opts.processes, opts.process_id, opts.coordinator)
    if opts.process_id:
        progress.enabled = False
        opts.out = None


def read_module_file(path: str) -> tuple[str, str]:
    """The text of ``path`` (``-``: standard input) and the name errors give it."""
    from shardy_ref.tools.source import read_source

    try:
        return read_source(path)
    except OSError as e:
        raise ToolError(f"cannot read {path}: {e.strerror}") from None


# -- the two commands -----------------------------------------------------------------------
def run_command(opts, text: str, filename: str, progress) -> int:
    if opts.single_device and opts.backend != "numpy":
        raise ToolError("--single-device runs our interpreter; it takes no --backend")
    if opts.single_device:
        from shardy_ref.execute import run

        module = _parsed(text, filename)
        arrays = _inputs(opts, _entry_types(module, opts.function))
        with progress.phase("running on one device"):
            results = run(module, *arrays, function=opts.function)
    else:
        program = _compile(opts, text, filename, progress)
        arrays = _inputs(opts, [a.type for a in program.args])
        results = _run_partitioned(opts, program, arrays, progress)
    _write_results(opts.out, results)
    return 0


def check_command(opts, text: str, filename: str, progress) -> int:
    from shardy_ref.execute import run

    module = _parsed(text, filename)  # parsed once: compile_spmd partitions a clone
    if opts.partitioner == "xla":
        from shardy_ref.tools.check_xla import check_with_xla

        return check_with_xla(opts, module, text, filename,
                              _inputs(opts, _entry_types(module, opts.function)), progress)
    program = _compile(opts, module, filename, progress)
    arrays = _inputs(opts, [a.type for a in program.args])
    with progress.phase("running on one device"):
        want = run(module, *arrays, function=opts.function)
    got = _run_partitioned(opts, program, arrays, progress)
    progress.stop()
    ok = True
    print(describe(program, filename))
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g is None and w is None:
            print(f"  out{i}: token")
            continue
        line, same = compare(g, w, opts.rtol, opts.atol)
        bad = "" if same else "; devices with wrong elements: " + \
            format_devices(wrong_devices(program, i, g, w, opts.rtol, opts.atol))
        print(f"  out{i}: {line}{bad}")
        ok &= same
    who = " (run by XLA)" if opts.backend == "xla" else ""
    print(f"OK: the partitioned program{who} computes the same results" if ok else
          f"MISMATCH: the partitioned program{who} differs from the single-device run")
    return 0 if ok else 1


def _run_partitioned(opts, program, arrays: list, progress) -> tuple:
    """The global results of ``program`` on ``arrays``, run by the chosen backend."""
    if opts.backend == "xla":
        from shardy_ref.backends import compile_on_xla

        with _stdout_to_stderr(opts.processes > 1):
            with progress.phase(f"compiling for {program.num_devices} devices with XLA"):
                compiled = compile_on_xla(program)
            with progress.phase(f"running {program.num_devices} devices on XLA"):
                return compiled.run(*arrays)
    with progress.phase(f"running {program.num_devices} devices"):
        return program.run(*arrays, memory_budget=opts.memory_budget)


@contextmanager
def _stdout_to_stderr(enabled: bool):
    """Standard output (the file descriptor, which C++ writes to) sent to standard error:
    gloo, jax's CPU collectives across processes, prints a line per connection there,
    which would mix with the results (C's buffer is flushed before and after)."""
    if not enabled:
        yield
        return
    import ctypes

    flush = ctypes.CDLL(None).fflush
    sys.stdout.flush()
    flush(None)
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        flush(None)
        os.dup2(saved, 1)
        os.close(saved)


_COLLECTIVES = ("all_gather", "all_reduce", "all_to_all", "collective_permute",
                "reduce_scatter", "collective_broadcast")


def describe(program, filename: str) -> str:
    """What propagation and partitioning decided: the mesh, the entry function's argument
    and result shardings, and the collectives the per-device program runs."""
    def sharding(spec) -> str:
        s = spec.sharding
        return "replicated" if s is None else str(s).removeprefix("#sdy.sharding")

    lines = [f"{filename}: mesh {str(program.mesh).removeprefix('#sdy.mesh')} "
             f"({program.num_devices} device{'s' if program.num_devices != 1 else ''})"]
    for kind, specs in (("argument", program.args), ("result", program.results)):
        for i, spec in enumerate(specs):
            lines.append(f"  {kind} {i}: {spec.type} sharded {sharding(spec)}")
    counts: dict[str, int] = {}
    for op in program.per_device.walk():
        name = op.name.removeprefix("stablehlo.")
        if name in _COLLECTIVES:
            counts[name] = counts.get(name, 0) + 1
    used = ", ".join(f"{n} x{c}" for n, c in sorted(counts.items())) or "none"
    lines.append(f"  per-device program: collectives {used}")
    return "\n".join(lines)


def _parsed(text: str, filename: str):
    """``text`` parsed and verified, located in ``filename``."""
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    module = parse_module(text, filename)
    verify_module(module)
    return module


def _compile(opts, module, filename: str, progress):
    """``module`` (its text, or the module op parsed and verified) propagated and
    partitioned for its mesh."""
    from shardy_ref.execute import compile_spmd

    with progress.phase("propagating and partitioning"):
        program = compile_spmd(module, function=opts.function, filename=filename,
                               enable_halo_exchange=not opts.no_halo_exchange)
    declared = _num_partitions(program.propagated)
    if declared is not None and declared != program.num_devices and not opts.devices_from_mesh:
        raise ToolError(f"the module says mhlo.num_partitions = {declared} but its mesh "
                        f"{program.mesh} has {program.num_devices} devices; pass "
                        "--devices-from-mesh to simulate the mesh's devices")
    return program


def _num_partitions(module_op) -> int | None:
    attr = module_op.attributes.get("mhlo.num_partitions")
    return int(attr.value) if attr is not None and hasattr(attr, "value") else None


def _entry_types(module_op, function: str) -> list:
    from shardy_ref.ir.utils import entry_function

    func = entry_function(module_op, None if function == "main" else function)
    return [a.type for a in func.regions[0].blocks[0].args]


# -- inputs and outputs ---------------------------------------------------------------------
def _inputs(opts, types: list) -> list:
    from shardy_ref.execute.inputs import random_arguments

    if not opts.inputs:
        return random_arguments(types, opts.seed)
    try:
        with np.load(opts.inputs, allow_pickle=False) as npz:
            given = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as e:
        raise ToolError(f"cannot read {opts.inputs}: {e}") from None
    names = [f"arg{i}" for i in range(len(types))]
    missing = [n for n in names if n not in given]
    extra = sorted(set(given) - set(names))
    if missing:
        raise ToolError(f"{opts.inputs} has no {', '.join(missing)} (the function takes "
                        f"{len(types)} argument(s): {', '.join(map(str, types))})")
    if extra:
        raise ToolError(f"{opts.inputs} has {', '.join(extra)}, which the function does "
                        f"not take (it takes {len(types)} argument(s))")
    arrays = []
    for name, t in zip(names, types, strict=True):
        a = given[name]
        want = tuple(getattr(t, "shape", ()))
        if tuple(a.shape) != want:
            raise ToolError(f"{name} has shape {list(a.shape)}, the function takes {t}")
        from shardy_ref.execute.dtypes import storage_dtype
        dtype = storage_dtype(t.element_type)
        if a.dtype != dtype:
            raise ToolError(f"{name} has dtype {a.dtype}, the function takes {t} "
                            f"(NumPy {dtype})")
        arrays.append(a)
    return arrays


def _write_results(path: str | None, results) -> None:
    """The results as ``out0, out1, ...`` in the ``.npz`` archive ``path`` (that very name:
    ``numpy.savez`` given a name would add ``.npz``), replaced only once complete; without
    ``path``, a summary on stdout."""
    if not path:
        for i, r in enumerate(results):
            a = np.asarray(r)
            print(f"out{i}: {a.dtype}{list(a.shape)}")
            print(np.array2string(a, threshold=64, edgeitems=3))
        return
    from shardy_ref.tools.source import replace_file

    archive = io.BytesIO()
    np.savez(archive, **{f"out{i}": np.asarray(r) for i, r in enumerate(results)})
    try:
        replace_file(path, archive.getvalue())
    except OSError as e:
        raise ToolError(f"cannot write {path}: {e.strerror}") from None


# -- comparing ------------------------------------------------------------------------------
def wrong_devices(program, index: int, got, want, rtol: float, atol: float) -> list[int]:
    """The devices whose block of result ``index`` holds a wrong element."""
    from shardy_ref.ir.sharding_layout import layout

    spec = program.results[index]
    bad = mismatches(np.asarray(got), np.asarray(want), rtol, atol) \
        if np.shape(got) == np.shape(want) else None
    if bad is None or spec.sharding is None or spec.mesh is None:
        return list(range(program.num_devices))
    blocks = layout(np.shape(want), spec.sharding, spec.mesh).blocks
    return sorted(b.device for b in blocks
                  if bad[tuple(slice(start, stop) for start, stop in b.ranges)].any())


def format_devices(devices: list[int]) -> str:
    return ", ".join(map(str, devices[:16])) + (f", ... ({len(devices)})"
                                                if len(devices) > 16 else "")


# -- progress -------------------------------------------------------------------------------
class Progress:
    """While a long phase runs, a line on stderr every few seconds when stderr is a
    terminal; into a file or pipe, one line as the phase ends if it took that long
    (``--quiet``: none)."""

    EVERY = 5.0

    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _terminal(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    @contextmanager
    def phase(self, what: str):
        start = time.monotonic()
        self._stop = threading.Event()
        ticking = self.enabled and self._terminal()
        if ticking:
            self._thread = threading.Thread(target=self._tick, args=(what, start, self._stop),
                                            daemon=True)
            self._thread.start()
        try:
            yield
        finally:
            self.stop()
        took = time.monotonic() - start
        if self.enabled and not ticking and took >= self.EVERY:
            self.stream.write(f"shardy-ref: {what}: {took:.0f} s\n")
            self.stream.flush()

    def _tick(self, what: str, start: float, stop: threading.Event) -> None:
        while not stop.wait(self.EVERY):
            self.stream.write(f"shardy-ref: {what}... {time.monotonic() - start:.0f} s\n")
            self.stream.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
