"""``shardy-ref fuzz``: run the invariants of :mod:`shardy_ref.testing.invariants` on random
sharded programs (:func:`shardy_ref.testing.programs.programs` with ``--features``, by
default all of them: every kind of the op catalog, sharding groups, manual computations,
control flow, calls and priorities; drawn by hypothesis from ``--seed``, no example
database). Each run ends with how often the op catalog's kinds were drawn (the full table
with ``--stats``). A failure is shrunk (hypothesis, then ops and shardings
taken out while it still fails: :mod:`shardy_ref.testing.shrink`) and written to
``--save DIR`` as ``<invariant>-<seed>.mlir`` with a header naming the invariant, its
message and a one-line command that checks that file again; the exit status is then 1.
Given FILEs, the invariants are checked on them instead. ``--stats`` measures how many
20-op random programs per second go through ``sdy-propagation-pipeline`` and where the
time goes, and how many programs per second two invariants check.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from shardy_ref.ir.diagnostics import UsageError
from shardy_ref.testing.invariants import INVARIANTS
from shardy_ref.tools.arg_types import non_negative_int, positive_int
from shardy_ref.tools.command import tool_command

DEFAULT_SAVE = "shardy-ref-fuzz"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shardy-ref fuzz", description=(
        "Check Shardy's invariants on random sharded programs (or on FILEs)"))
    p.add_argument("files", nargs="*", metavar="FILE", help="check these modules instead of "
                   "random programs (a saved counterexample)")
    p.add_argument("--invariant", action="append", choices=list(INVARIANTS), metavar="NAME",
                   help="an invariant to check (repeatable; default all): "
                   + ", ".join(INVARIANTS))
    p.add_argument("--examples", type=positive_int, default=None,
                   help="programs per invariant (100)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the program draws (0)")
    p.add_argument("--jobs", type=positive_int, default=1, help="invariants run in J processes (1)")
    p.add_argument("--save", metavar="DIR", default=DEFAULT_SAVE,
                   help=f"where counterexamples go (./{DEFAULT_SAVE})")
    p.add_argument("--features", default="all", metavar="LIST",
                   help="what random programs hold besides a plain op chain: any of "
                   "ops (every kind of the op catalog), groups, manual, control-flow, calls, "
                   "priorities, comma-separated, or all (default), or none")
    p.add_argument("--stats", action="store_true", help="measure programs per second "
                   "through sdy-propagation-pipeline and where the time goes, and print how "
                   "often each op kind was drawn: in the run when --invariant or --examples "
                   "is given, else in 100 programs drawn without running the invariants")
    return p


@dataclass(frozen=True, slots=True)
class Outcome:
    """One invariant's run: how many programs it saw (shrinking included), how many it did
    not apply to (and the first reason), and the shrunk failure, if any."""

    name: str
    examples: int
    skipped: int
    seconds: float
    skip_reason: str | None = None
    message: str | None = None
    program: str | None = None
    kinds: dict | None = None  # op catalog kind -> times drawn in this invariant's programs


@tool_command("fuzz", says_error=False)
def main(argv: list[str]) -> int:
    parser = _parser()
    opts = parser.parse_args(argv)
    if Path(opts.save).exists() and not Path(opts.save).is_dir():
        parser.error(f"argument --save: {opts.save} is not a directory")
    run_asked = opts.invariant or opts.examples is not None
    opts.examples = 100 if opts.examples is None else opts.examples
    names = opts.invariant or list(INVARIANTS)
    try:
        features = _features(opts.features)
    except ValueError as e:
        raise UsageError(f"--features: {e}") from None
    if opts.stats:
        from shardy_ref.tools.fuzz_stats import print_stats
        print_stats(sys.stdout)
        if not run_asked and not opts.files:
            print_drawn_kinds(sys.stdout, opts.examples, opts.seed, features)
            return 0
    if opts.files:
        return _check_files(opts.files, names)
    outcomes = _run_all(names, opts.examples, opts.seed, opts.jobs, features)
    print_coverage(sys.stdout, outcomes, features, full=opts.stats)
    failed = [o for o in outcomes if o.message is not None]
    for o in failed:
        try:
            path = save_counterexample(Path(opts.save), o, opts.seed)
        except OSError as e:
            path = f"not saved: cannot write to {opts.save}: {e.strerror}"
        print(f"{o.name}: FAILED: {o.message.splitlines()[0]}\n  counterexample: {path}")
    return 1 if failed else 0


def _features(text: str):
    from shardy_ref.testing.program_features import Features

    return Features() if text.strip() == "none" else Features.parse(text)


# -- one invariant --------------------------------------------------------------------------
def fuzz_invariant(name: str, examples: int, seed: int, on_example=None,
                   features=None) -> Outcome:
    """Run invariant ``name`` on ``examples`` random programs drawn from ``seed`` (with
    ``features``, default all); on a failure hypothesis shrinks it, and the outcome holds
    the smallest failing program."""
    from collections import Counter

    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded

    from shardy_ref.testing.programs import programs_with_kinds

    check = INVARIANTS[name]
    features = features if features is not None else _features("all")
    seen = {"examples": 0, "skipped": 0, "reason": None, "failure": None}
    kinds: Counter = Counter()

    @seeded(seed)
    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    @given(programs_with_kinds(features))
    def body(drawn: tuple[str, list[str]]) -> None:
        text, drawn_kinds = drawn
        kinds.update(drawn_kinds)
        seen["examples"] += 1
        if on_example is not None:
            on_example()
        try:
            why = check(text)
        except Exception as e:
            seen["failure"] = (describe(e), text)
            raise
        if why:
            seen["skipped"] += 1
            seen["reason"] = seen["reason"] or why

    start = time.perf_counter()
    message = program = None
    try:
        body()
    except Exception as e:
        message, program = seen["failure"] or (describe(e), None)
    if program is not None:
        message, program = _shrink_further(check, message, program)
    return Outcome(name, seen["examples"], seen["skipped"], time.perf_counter() - start,
                   seen["reason"], message, program, dict(kinds))


def _shrink_further(check, message: str, program: str) -> tuple[str, str]:
    """Hypothesis shrinks the program's seed; :func:`~shardy_ref.testing.shrink.shrink`
    then takes ops and shardings out of the program while it fails the same way."""
    from shardy_ref.testing.shrink import shrink

    kind = message.split(":")[0]

    def fails(text: str) -> bool:
        try:
            check(text)
        except Exception as e:
            return describe(e).split(":")[0] == kind
        return False

    program = shrink(program, fails)
    try:
        check(program)
    except Exception as e:
        message = describe(e)
    return message, program


def describe(e: BaseException) -> str:
    """An invariant violation's own message; any other exception with its type."""
    from shardy_ref.testing.invariants import InvariantViolation

    return str(e) if isinstance(e, InvariantViolation) else f"{type(e).__name__}: {e}"


def save_counterexample(directory: Path, outcome: Outcome, seed: int) -> Path:
    """Write the shrunk program with a header: the invariant, its message, and the command
    that checks this file again."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{outcome.name}-{seed}.mlir"
    header = [f"// shardy-ref fuzz: invariant {outcome.name} fails (seed {seed}, shrunk)"]
    header += [f"// {line}" for line in (outcome.message or "").splitlines()]
    header.append(f"// repro: shardy-ref fuzz --invariant {outcome.name} {path}")
    path.write_text("\n".join(header) + "\n" + (outcome.program or ""))
    return path


def _check_files(files: list[str], names: list[str]) -> int:
    from shardy_ref.tools.source import read_source

    status = 0
    for file in files:
        try:
            text, _ = read_source(file)
        except OSError as e:
            sys.stderr.write(f"shardy-ref fuzz: cannot read {file}: {e.strerror}\n")
            return 1
        for name in names:
            try:
                why = INVARIANTS[name](text)
            except Exception as e:
                print(f"{file}: {name}: FAILED: {describe(e)}")
                status = 1
            else:
                print(f"{file}: {name}: " + (f"not applicable ({why})" if why else "ok"))
    return status


# -- many invariants, with progress ---------------------------------------------------------
def _run_all(names: list[str], examples: int, seed: int, jobs: int,
             features=None) -> list[Outcome]:
    from shardy_ref.tools.fuzz_progress import reporter

    with reporter(names, examples) as report:
        if jobs == 1:
            outcomes = []
            for name in names:
                outcome = fuzz_invariant(name, examples, seed,
                                         on_example=lambda n=name: report.advance(n),
                                         features=features)
                report.finish(outcome)
                outcomes.append(outcome)
            return outcomes
        return _run_parallel(names, examples, seed, jobs, report, features)


def print_coverage(out, outcomes: list[Outcome], features, full: bool = False) -> None:
    """How often each op kind of the catalog was drawn, in the programs of the invariant
    that saw the fewest (every invariant draws its own programs): one line, or with
    ``full`` a table of every kind, fewest first."""
    if not getattr(features, "ops", False) or not outcomes:
        return
    from shardy_ref.testing.program_catalog import KIND_NAMES

    fewest = min(outcomes, key=lambda o: sum((o.kinds or {}).values()))
    counts = {k: (fewest.kinds or {}).get(k, 0) for k in KIND_NAMES}
    low = min(counts, key=counts.get)
    drawn = sum(1 for n in counts.values() if n)
    out.write(f"op kinds drawn in {fewest.examples} programs ({fewest.name}): {drawn} of "
              f"{len(counts)}; fewest {counts[low]} ({low})\n")
    if full:
        for kind in sorted(counts, key=lambda k: (counts[k], k)):
            out.write(f"  {counts[kind]:7d}  {kind}\n")


def print_drawn_kinds(out, examples: int, seed: int, features) -> None:
    """The op-kind table of ``examples`` programs of seeds ``seed``, ``seed + 1``, ...
    (drawn only: no invariant is run)."""
    from collections import Counter

    from shardy_ref.testing.programs import draw_program

    kinds: Counter = Counter()
    for i in range(examples):
        kinds.update(draw_program(seed + i, features)[1])
    drawn = Outcome(f"seeds {seed}-{seed + examples - 1}, not run", examples, 0, 0.0,
                    kinds=dict(kinds))
    print_coverage(out, [drawn], features, full=True)


def _run_parallel(names, examples: int, seed: int, jobs: int, report,
                  features=None) -> list[Outcome]:
    """One process per invariant, at most ``jobs`` at a time; progress comes back through a
    queue."""
    import multiprocessing
    import queue as queue_module
    from concurrent.futures import ProcessPoolExecutor

    with multiprocessing.Manager() as manager, \
            ProcessPoolExecutor(jobs, initializer=_ignore_ctrl_c) as pool:
        progress = manager.Queue()
        try:
            futures = {pool.submit(_worker, n, examples, seed, progress, features): n
                       for n in names}
            pending, outcomes = set(futures), {}
            while pending:
                try:
                    report.advance(progress.get(timeout=0.1))
                except queue_module.Empty:
                    pass
                for f in [f for f in pending if f.done()]:
                    pending.discard(f)
                    outcomes[futures[f]] = f.result()
                    report.finish(outcomes[futures[f]])
        except BaseException:  # Ctrl-C: stop the workers now, not after their invariants
            _stop_workers(pool)
            raise
        return [outcomes[n] for n in names]


def _ignore_ctrl_c() -> None:
    """In a worker: Ctrl-C, sent to the whole process group, is the parent's to handle
    (a worker would print its traceback and take the next invariant)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_workers(pool) -> None:
    """Terminate ``pool``'s processes and drop the invariants not started."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _worker(name: str, examples: int, seed: int, progress, features=None) -> Outcome:
    return fuzz_invariant(name, examples, seed, on_example=lambda: progress.put(name),
                          features=features)
