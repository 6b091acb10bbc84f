"""Mutants of the corpus's chunks through the whole path (issue 15): parse -> verify ->
print -> re-parse -> ``sdy-propagation-pipeline`` -> explicit reshards -> collectives -> print
-> re-parse, then the simulator (``sdy-ref-per-device-pipeline``, every device run on seeded
inputs, compared with the single-device run). Each mutant ends as ``ok``, ``error`` (one of
our located errors: the input was bad), ``slow-program`` (the single-device run of the
mutated program itself takes longer than the limit, e.g. a loop's trip count became 2**63),
``crash`` (any other exception: a bug), ``timeout`` (over the time limit, CPU seconds),
``roundtrip`` (printed text that does not parse back to the same text) or ``wrong`` (the
partitioned program computes other values).

    python -m tests.fuzz_pipeline --count 100000 [--seed S] [--timeout 5]

prints the counts and the distinct crash sites; tests/test_fuzz_pipeline.py draws the same
mutants with hypothesis (CI profile 2,000, long profile 100,000).
"""
from __future__ import annotations

import argparse
import math
import random
import re
import signal
import sys
import traceback
from collections import Counter
from dataclasses import dataclass

from tests.parser.test_robustness import corpus_chunks

# number replacements: zero, negative, past i64, far past i64, not dividing a mesh axis
NUMBERS = ("0", "-1", "9223372036854775808", "1180591620717411303424", "7")
TYPES = ("f32", "i1", "i64", "bf16", "index", "complex<f32>")
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[\w$.#-]+|@[\w$.-]+|#[\w.]+|![\w.]+|\w+|->|\S')
_NUMBER = re.compile(r"(?<![\w.%@#])-?\d+(?![\w.])")
_ELEMENT_TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i32|i64|ui32)\b")
_AXIS = re.compile(r'"[a-z][a-z_0-9]*"(?=\s*(?:[,}\]=:]))')
MAX_ELEMENTS = 1 << 16
# ops whose results the StableHLO spec leaves implementation-defined: a partitioned run may
# generate other numbers than the single-device one
RANDOM_OPS = frozenset({"stablehlo.rng_bit_generator", "stablehlo.rng"})
PIPELINE = ("sdy-propagation-pipeline", "func.func(sdy-insert-explicit-reshards)",
            "func.func(sdy-reshard-to-collectives)")


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | error | slow-program | crash | timeout | roundtrip | wrong
    detail: str = ""


def mutate(text: str, rng) -> str:
    """One to three random edits of ``text`` (the mutation kinds of issue 15). ``rng`` has
    ``randint`` and ``choice``, like :class:`random.Random` (or a hypothesis draw)."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(sorted(_MUTATORS))
        text = _MUTATORS[kind](text, rng)
    return text


def _spans(pattern, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _replace(text: str, span: tuple[int, int], new: str) -> str:
    return text[:span[0]] + new + text[span[1]:]


def _token_edit(kind: str):
    def edit(text: str, rng: random.Random) -> str:
        spans = _spans(_TOKEN, text)
        if not spans:
            return text
        start, end = rng.choice(spans)
        if kind == "delete":
            return text[:start] + text[end:]
        if kind == "duplicate":
            return text[:end] + " " + text[start:end] + text[end:]
        if kind == "truncate":
            return text[:start]
        (a, b), (c, d) = sorted([(start, end), rng.choice(spans)])
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:] if b <= c else text
    return edit


def _pick(pattern, choices):
    def edit(text: str, rng: random.Random) -> str:
        spans = _spans(pattern, text)
        return _replace(text, rng.choice(spans), rng.choice(choices)) if spans else text
    return edit


def _sub_axis(text: str, rng: random.Random) -> str:
    spans = _spans(_AXIS, text)
    if not spans:
        return text
    span = rng.choice(spans)
    return text[:span[1]] + rng.choice((":(1)2", ":(2)2", ":(1)3", ":(0)2")) + text[span[1]:]


def _brace(text: str, rng: random.Random) -> str:
    spans = [m.span() for m in re.finditer(r"[{}\[\]()<>]", text)]
    if not spans:
        return text
    start, end = rng.choice(spans)
    return text[:start] + text[end:] if rng.randint(0, 1) else \
        text[:start] + rng.choice("{}[]()<>") + text[start:]


_MUTATORS = {
    "delete": _token_edit("delete"), "duplicate": _token_edit("duplicate"),
    "swap": _token_edit("swap"), "truncate": _token_edit("truncate"),
    "number": _pick(_NUMBER, NUMBERS), "type": _pick(_ELEMENT_TYPE, TYPES),
    "axis": _pick(_AXIS, ('"q"', '"x"', '"y"', '""')), "sub_axis": _sub_axis,
    "brace": _brace,
}


BAD = ("crash", "timeout", "roundtrip", "wrong")


class _Timeout(BaseException):
    """The time limit (a BaseException, so no ``except Exception`` on the way wraps it)."""


def _alarm(signum, frame):
    raise _Timeout


def run_one(text: str, timeout: float = 5.0, simulate: bool = True) -> Outcome:
    """``text`` through the whole path (without the simulator if not ``simulate``),
    classified. A located error that reports an internal error is a crash."""
    from shardy_ref.ir.diagnostics import ShardyRefError

    previous = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)  # CPU seconds: fair on a loaded machine
    try:
        return _run(text, simulate)
    except _Timeout:
        return Outcome("timeout")
    except ShardyRefError as e:
        first = e.message.split("\n")[0]
        return Outcome("crash" if first.startswith("internal error") else "error", first[:80])
    except RecursionError:
        return Outcome("crash", "RecursionError")
    except Exception as e:  # what the fuzzer is looking for
        return Outcome("crash", _site(e))
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _run(text: str, simulate: bool) -> Outcome:
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    module = parse_module(text, "fuzz.mlir")
    verify_module(module)
    if (bad := _roundtrip(print_module(module))) is not None:
        return bad
    for pipeline in PIPELINE:
        PassManager(parse_pipeline(pipeline), verify=verify_module).run(module, PassContext())
    if (bad := _roundtrip(print_module(module))) is not None:
        return bad
    return _simulate(text) if simulate else Outcome("ok")


def _simulate(text: str) -> Outcome:
    """The simulator on ``text``: the partitioned program's results against the
    single-device run (not compared for RANDOM_OPS; skipped with more than MAX_ELEMENTS
    argument elements, where it only tells how slow NumPy is)."""
    from shardy_ref.execute import compile_spmd, run
    from shardy_ref.execute.inputs import random_arguments
    from shardy_ref.tools.simulate_cmd import compare

    program = compile_spmd(text, filename="fuzz.mlir")
    if sum(math.prod(a.type.shape) for a in program.args
           if hasattr(a.type, "shape")) > MAX_ELEMENTS:
        return Outcome("ok")
    if any(op.name in RANDOM_OPS for op in program.propagated.walk()):
        program.run(*random_arguments([a.type for a in program.args]))
        return Outcome("ok")  # runs, but its values are the implementation's to choose
    arrays = random_arguments([a.type for a in program.args])
    try:
        want = run(text, *arrays)
    except _Timeout:  # the program itself runs long (a mutated trip count), not our tools
        return Outcome("slow-program")
    got = program.run(*arrays)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if not (g is None and w is None) and not compare(g, w, 1e-4, 1e-5)[1]:
            return Outcome("wrong", f"result {i}: {compare(g, w, 1e-4, 1e-5)[0]}")
    return Outcome("ok")


def _roundtrip(printed: str) -> Outcome | None:
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module

    try:
        again = parse_module(printed, "printed.mlir")
        verify_module(again)
    except ShardyRefError as e:
        return Outcome("roundtrip", f"does not parse back: {e.message[:60]}")
    return None if print_module(again) == printed else Outcome("roundtrip", "prints differently")


def _site(e: Exception) -> str:
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "shardy_ref" in f.filename]
    where = f"{frames[-1].filename.split('shardy_ref/')[-1]}:{frames[-1].lineno}" if frames \
        else "?"
    return f"{where} {type(e).__name__}"


def seed_chunks() -> tuple[list[str], list[str]]:
    """The corpus chunks that parse and verify unmutated and have an entry function
    (mutants of these reach propagation and the simulator), and all chunks (cached)."""
    global _SEEDS
    if _SEEDS is None:
        chunks = corpus_chunks()
        clean = [c for c in chunks if _well_formed(c)]
        _SEEDS = (clean, chunks)
    return _SEEDS


_SEEDS: tuple[list[str], list[str]] | None = None


def _well_formed(text: str) -> bool:
    from shardy_ref.ir.diagnostics import ShardyRefError
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    try:
        module = parse_module(text, "seed.mlir")
        verify_module(module)
    except ShardyRefError:
        return False
    funcs = [op.attributes["sym_name"].value for op in module.regions[0].blocks[0]
             if op.name == "func.func"]
    return len(funcs) == 1 or "main" in funcs


def pick_and_mutate(rng) -> str:
    """A mutant: of a clean chunk four times in five, else of any chunk."""
    clean, chunks = seed_chunks()
    return mutate(rng.choice(clean if rng.randint(0, 4) else chunks), rng)


def _save(directory: str, number: int, outcome: Outcome, text: str) -> None:
    from pathlib import Path

    path = Path(directory) / f"{number:05d}_{outcome.kind}.mlir"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"// {outcome.kind}: {outcome.detail}\n{text}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--show", type=int, default=3, help="examples printed per crash site")
    parser.add_argument("--save", metavar="DIR", help="write each failing mutant to DIR")
    parser.add_argument("--progress", type=int, default=0, metavar="N",
                        help="print the counts every N mutants")
    opts = parser.parse_args(argv)
    sys.setrecursionlimit(10000)
    rng = random.Random(opts.seed)
    kinds: Counter = Counter()
    sites: dict[str, list[str]] = {}
    for _ in range(opts.count):
        text = pick_and_mutate(rng)
        outcome = run_one(text, opts.timeout)
        kinds[outcome.kind] += 1
        if opts.progress and sum(kinds.values()) % opts.progress == 0:
            print(f"{sum(kinds.values())}: " + " ".join(f"{k}={kinds[k]}" for k in
                                                       ("ok", "error", "slow-program", *BAD)),
                  flush=True)
        if outcome.kind in BAD:
            sites.setdefault(f"{outcome.kind}: {outcome.detail}", []).append(text)
            if opts.save:
                _save(opts.save, sum(len(t) for t in sites.values()), outcome, text)
    print(" ".join(f"{k}={kinds[k]}" for k in ("ok", "error", "slow-program", *BAD)))
    for site, texts in sorted(sites.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(texts):6d}  {site}")
        for text in texts[:opts.show]:
            print("        " + text[:300].replace("\n", "\n        "))
    return 0 if not sites else 1


if __name__ == "__main__":
    sys.exit(main())
