"""Differential test against real Shardy on inputs it rejects (issue 15, "oracle differential").

Every corpus chunk (as ``tools/corpus.py`` cuts it, with ``-allow-unregistered-dialect`` when
its RUN line passes it) and mutants of them (``tests/fuzz_pipeline.mutate``) until ``--mutants``
of them are rejected by the oracle go through parse + verify on both sides: the oracle (jaxlib's
Shardy, ``tools/oracle_batch.py``: the code behind ``../shared/oracle/sdy_opt``) and ours (the
in-process ``shardy-ref-opt`` path without passes). Each input is classified by exit status and
first ``error:`` line (``line:col: message``)::

    python -m tests.oracle_reject [--mutants 2000] [--seed S] [--jobs 1] [--json OUT]

The corpus wins over the oracle (jaxlib 0.10.2 against upstream HEAD): chunks whose
``expected-error`` lines disagree with the oracle are listed apart and left out of the table.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import corpus as corpus_tools

CLASSES = ("both accept", "identical", "same location", "different location",
           "ORACLE REJECTS, WE ACCEPT", "we reject, oracle accepts", "our crash", "oracle crash")
_ORACLE_ERROR = re.compile(r'^error: "-":(\d+):(\d+): (.*)$', re.M)
_EXPECTED = re.compile(r"expected-error(-re)? *(?:@\S+)? *\{\{(.*)\}\}\s*$")
_GENERIC_FLAGS = {"split-input-file", "verify-diagnostics", "allow-unregistered-dialect",
                  "mlir-print-op-generic", "o", "mlir-disable-threading", "verify-each"}
_INTERPRETER_OP = re.compile(r"\b(?:check|interpreter)\.[a-z_]+")
_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Input:
    """One text both sides parse and verify; ``expected`` is the corpus's ``expected-error``
    texts (None for mutants), ``parse_only`` whether its RUN lines run no pass."""

    id: str
    text: str
    unregistered: bool
    expected: tuple[str, ...] | None = None
    parse_only: bool = False


@dataclass(slots=True)
class Verdict:
    """What one side said: accepted, or the first error as ``line:col: message``."""

    accepted: bool
    first: str = ""
    crash: str = ""

    @property
    def location(self) -> str:
        return self.first.split(": ", 1)[0]


@dataclass(slots=True)
class Row:
    input: Input
    oracle: Verdict
    ours: Verdict
    kind: str = ""
    skew: str = ""  # why the corpus disagrees with the oracle ("" when it agrees)
    extra: dict = field(default_factory=dict)


# --- inputs ---------------------------------------------------------------------------------

def corpus_inputs() -> list[Input]:
    """Every chunk of the corpus, with its RUN-line flags and ``expected-error`` texts."""
    rc = corpus_tools._run_conformance()
    tests = {rel: rc.load_test(str(corpus_tools.CORPUS), rel)
             for rel in rc.all_corpus_files(str(corpus_tools.CORPUS))}
    out = []
    for ch in corpus_tools.corpus_chunks():
        if tests[ch.file].executable and _INTERPRETER_OP.search(strip_comments(ch.text)):
            continue  # the interpreter's part of an executable test, never given to sdy_opt
        parse_only = not any(_has_pass(r) for r in tests[ch.file].runs)
        expected = tuple(m.group(2) if not m.group(1) else ""
                         for m in map(_EXPECTED.search, ch.text.split("\n")) if m)
        out.append(Input(ch.id, ch.text, ch.unregistered, expected, parse_only))
    return out


def _has_pass(run: str) -> bool:
    """Whether a RUN line runs a pass (then its ``expected-error``s may come from the pass)."""
    first = run.split("|")[0].split()
    return any(t.startswith("-") and t.lstrip("-").split("=")[0] not in _GENERIC_FLAGS
               for t in first[1:])


def strip_comments(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("//"))


def mutants(seeds: list[Input], rng: random.Random, seen: set[str]):
    """An endless stream of distinct mutants of the seeds (comment lines dropped)."""
    from tests.fuzz_pipeline import mutate

    stripped = [(s, strip_comments(s.text)) for s in seeds]
    n = 0
    while True:
        seed, text = rng.choice(stripped)
        text = mutate(text, rng)
        if text in seen or "// -----" in text:
            continue
        seen.add(text)
        n += 1
        yield Input(f"mutant{n}<{seed.id}", text, seed.unregistered)


# --- the two sides --------------------------------------------------------------------------

def oracle_verdicts(inputs: list[Input]) -> list[Verdict]:
    """The oracle's verdicts (cached under .cache/oracle); a batch that kills the oracle is
    split until the input that does is found (then an "oracle crash")."""
    if not inputs:
        return []
    try:
        results = corpus_tools.oracle_print([(i.text, i.unregistered) for i in inputs])
    except subprocess.CalledProcessError as e:
        if len(inputs) == 1:
            return [Verdict(False, crash=f"exit {e.returncode}")]
        mid = len(inputs) // 2
        return oracle_verdicts(inputs[:mid]) + oracle_verdicts(inputs[mid:])
    return [_oracle_verdict(r) for r in results]


def _oracle_verdict(result: dict) -> Verdict:
    if result["ok"]:
        return Verdict(True)
    m = _ORACLE_ERROR.search(result["err"])
    if m is None:
        return Verdict(False, f"0:0: {result['err'].splitlines()[0] if result['err'] else ''}")
    return Verdict(False, f"{m.group(1)}:{m.group(2)}: {m.group(3)}")


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def our_verdict(inp: Input) -> Verdict:
    """Ours, as ``shardy-ref-opt [-allow-unregistered-dialect]`` without passes: parse,
    check dialects, verify; any exception but our located errors is a crash."""
    from shardy_ref.tools.opt import Chunk, Options, process_chunk

    opts = Options(allow_unregistered=inp.unregistered)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT_S)
    try:
        out, diagnostics = process_chunk(Chunk(inp.text, 1), opts, "input.mlir")
    except _Timeout:
        return Verdict(False, crash="timeout")
    except Exception as e:  # a bug of ours: reported, never raised
        return Verdict(False, crash=f"{type(e).__name__}: {e}"[:200])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    errors = [d for d in diagnostics if d.severity == "error"]
    if out is not None and not errors:
        return Verdict(True)
    d = errors[0]
    first = d.message.split("\n")[0]
    return Verdict(False, f"{d.location.line}:{d.location.col}: {first}")


def our_verdicts(inputs: list[Input], jobs: int) -> list[Verdict]:
    if jobs <= 1:
        return [our_verdict(i) for i in inputs]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.map(our_verdict, inputs, chunksize=16)


# --- classification -------------------------------------------------------------------------

def classify(oracle: Verdict, ours: Verdict) -> str:
    if oracle.crash:
        return "oracle crash"
    if ours.crash:
        return "our crash"
    if oracle.accepted:
        return "both accept" if ours.accepted else "we reject, oracle accepts"
    if ours.accepted:
        return "ORACLE REJECTS, WE ACCEPT"
    if ours.first == oracle.first:
        return "identical"
    return "same location" if ours.location == oracle.location else "different location"


def corpus_skew(inp: Input, oracle: Verdict) -> str:
    """Why the corpus's ``expected-error`` lines disagree with the oracle, or ""."""
    if inp.expected is None or oracle.crash:
        return ""
    if oracle.accepted:
        return "corpus expects an error, oracle accepts" if inp.expected and inp.parse_only \
            else ""
    if not inp.expected:
        return "oracle rejects a chunk the corpus has no expected-error for"
    message = oracle.first.split(": ", 1)[1]
    if any(e == "" or e in message for e in inp.expected):
        return ""
    return "oracle's message is not the expected-error"


def agrees_with_corpus(inp: Input, ours: Verdict) -> bool:
    if ours.crash:
        return False
    if not inp.expected:
        return ours.accepted or not inp.parse_only
    message = ours.first.split(": ", 1)[-1]
    return (not ours.accepted and any(e == "" or e in message for e in inp.expected)) or \
        (ours.accepted and not inp.parse_only)


def normalize(message: str) -> str:
    """A message with its numbers and names stripped, to group differences by kind."""
    message = message.split(": ", 1)[-1]
    message = re.sub(r'"[^"]*"', '"_"', message)
    message = re.sub(r"[%@^#][\w$.-]+", lambda m: m.group(0)[0] + "_", message)
    message = re.sub(r"(tensor|vector|memref)<[^>]*>", r"\1<_>", message)
    message = re.sub(r"(?<![\w.])-?\d+", "N", message)
    return message[:110]


def evaluate(inputs: list[Input], jobs: int) -> list[Row]:
    oracle = oracle_verdicts(inputs)
    ours = our_verdicts(inputs, jobs)
    rows = []
    for inp, o, u in zip(inputs, oracle, ours):
        rows.append(Row(inp, o, u, classify(o, u), corpus_skew(inp, o)))
    return rows


def collect(n_mutants: int, seed: int, jobs: int, batch: int = 400,
            corpus_sample: int | None = None, log=print) -> list[Row]:
    """Rows for the corpus chunks (every one, or ``corpus_sample`` spread evenly) and for
    mutants until ``n_mutants`` the oracle rejects (the accepted ones are kept as rows too)."""
    chunks = corpus_inputs()
    if corpus_sample is not None:
        step = max(1, len(chunks) // max(1, corpus_sample))
        chunks = chunks[::step][:corpus_sample]
    rows = evaluate(chunks, jobs)
    log(f"corpus: {len(rows)} chunks")
    rng = random.Random(seed)
    seeds = [r.input for r in rows if r.oracle.accepted and not r.oracle.crash and not r.skew]
    stream = mutants(seeds, rng, {c.text for c in chunks})
    rejected = 0
    while rejected < n_mutants:
        wanted = n_mutants - rejected
        candidates = [next(stream) for _ in range(min(batch, max(8, wanted * 2)))]
        oracle = oracle_verdicts(candidates)
        picked = [(i, o) for i, o in zip(candidates, oracle) if o.crash or not o.accepted]
        picked = picked[:wanted]
        accepted = [(i, o) for i, o in zip(candidates, oracle) if o.accepted and not o.crash]
        keep = picked + accepted[:len(picked)]  # the accepted ones catch over-strictness
        ours = our_verdicts([i for i, _ in keep], jobs)
        rows += [Row(i, o, u, classify(o, u)) for (i, o), u in zip(keep, ours)]
        rejected += len(picked)
        log(f"mutants: {rejected}/{n_mutants} rejected by the oracle")
    return rows


# --- the report -----------------------------------------------------------------------------

def summary(rows: list[Row]) -> dict:
    main = [r for r in rows if not r.skew]
    counts = {origin: Counter(r.kind for r in main if _origin(r) == origin)
              for origin in ("corpus", "mutant")}
    rejected = [r for r in main if not r.oracle.accepted and not r.oracle.crash]
    identical = sum(r.kind == "identical" for r in rejected)
    return {
        "counts": {o: dict(c) for o, c in counts.items()},
        "oracle_rejects": len(rejected),
        "identical": identical,
        "agreement_pct": round(100.0 * identical / len(rejected), 2) if rejected else 100.0,
        "skew": len(rows) - len(main),
    }


def _origin(row: Row) -> str:
    return "mutant" if row.input.expected is None else "corpus"


def report(rows: list[Row], top: int = 25, out=sys.stdout) -> None:
    s = summary(rows)
    w = out.write
    w(f"{'class':32s} {'corpus':>8s} {'mutant':>8s}\n")
    for k in CLASSES:
        w(f"{k:32s} {s['counts']['corpus'].get(k, 0):8d} {s['counts']['mutant'].get(k, 0):8d}\n")
    w(f"\noracle rejects {s['oracle_rejects']}; identical first error line {s['identical']} "
      f"({s['agreement_pct']}%)\n")
    _report_groups(rows, top, w)
    skewed = [r for r in rows if r.skew]
    agree = [r for r in skewed if agrees_with_corpus(r.input, r.ours)]
    w(f"\ncorpus disagrees with the oracle (version skew; the corpus wins): {len(skewed)}, "
      f"we agree with the corpus on {len(agree)}\n")
    for reason, n in Counter(r.skew for r in skewed).most_common():
        w(f"{n:6d}  {reason}\n")
    for r in skewed:
        if r not in agree:
            w(f"  WE DISAGREE WITH THE CORPUS: {r.input.id}: {r.skew}\n"
              f"    expected: {r.input.expected}\n    oracle: {r.oracle.first or 'accepts'}\n"
              f"    ours:   {r.ours.first or r.ours.crash or 'accepts'}\n")


def _report_groups(rows: list[Row], top: int, w) -> None:
    for kind in ("ORACLE REJECTS, WE ACCEPT", "we reject, oracle accepts", "our crash",
                 "oracle crash", "different location", "same location"):
        group = [r for r in rows if r.kind == kind and not r.skew]
        if not group:
            continue
        w(f"\n== {kind}: {len(group)}\n")
        key = (lambda r: normalize(r.ours.first or r.ours.crash)) \
            if kind in ("we reject, oracle accepts", "our crash") \
            else (lambda r: normalize(r.oracle.first or r.oracle.crash))
        by = Counter(key(r) for r in group)
        for message, n in by.most_common(top):
            example = next(r for r in group if key(r) == message)
            w(f"{n:6d}  {message}\n        e.g. {example.input.id}\n"
              f"          oracle: {example.oracle.first or example.oracle.crash or 'accepts'}\n"
              f"          ours:   {example.ours.first or example.ours.crash or 'accepts'}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--top", type=int, default=25, help="message groups shown per class")
    parser.add_argument("--json", help="write every row to this file")
    opts = parser.parse_args(argv)
    sys.setrecursionlimit(10000)
    if not corpus_tools.oracle_available():
        sys.stderr.write("oracle venv absent (../shared/oracle/setup)\n")
        return 2
    rows = collect(opts.mutants, opts.seed, opts.jobs,
                   log=lambda m: sys.stderr.write(m + "\n"))
    report(rows, opts.top)
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary(rows), "rows": [asdict(r) for r in rows]}, f, indent=1)
    return 1 if any(r.kind == "ORACLE REJECTS, WE ACCEPT" and not r.skew for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
