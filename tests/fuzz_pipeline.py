"""Mutants of the corpus's chunks through the whole ``shardy-ref-opt`` path (issue 15):
parse -> verify -> print -> re-parse -> ``sdy-propagation-pipeline`` -> explicit reshards ->
collectives -> print -> re-parse. Each mutant ends as ``ok``, ``error`` (one of our located
errors: the input was bad), ``crash`` (any other exception: a bug), ``timeout`` (over the time
limit) or ``roundtrip`` (printed text that does not parse back to the same text).

    python -m tests.fuzz_pipeline --count 100000 [--seed S] [--timeout 5]

prints the counts and the distinct crash sites; tests/test_fuzz_pipeline.py runs a sample.
"""
from __future__ import annotations

import argparse
import random
import re
import signal
import sys
import traceback
from collections import Counter
from dataclasses import dataclass

# number replacements: zero, negative, past i64, far past i64, not dividing a mesh axis
NUMBERS = ("0", "-1", "9223372036854775808", "1180591620717411303424", "7")
TYPES = ("f32", "i1", "i64", "bf16", "index", "complex<f32>")
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|%[\w$.#-]+|@[\w$.-]+|#[\w.]+|![\w.]+|\w+|->|\S')
_NUMBER = re.compile(r"(?<![\w.%@#])-?\d+(?![\w.])")
_ELEMENT_TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i32|i64|ui32)\b")
_AXIS = re.compile(r'"[a-z][a-z_0-9]*"(?=\s*(?:[,}\]=:]))')
PIPELINE = ("sdy-propagation-pipeline", "func.func(sdy-insert-explicit-reshards)",
            "func.func(sdy-reshard-to-collectives)")


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | error | crash | timeout | roundtrip
    detail: str = ""


def mutate(text: str, rng: random.Random) -> str:
    """One to three random edits of ``text`` (the mutation kinds of issue 15)."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(("delete", "duplicate", "swap", "truncate", "number", "type",
                           "axis", "sub_axis", "brace"))
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
    return text[:start] + text[end:] if rng.random() < 0.5 else \
        text[:start] + rng.choice("{}[]()<>") + text[start:]


_MUTATORS = {
    "delete": _token_edit("delete"), "duplicate": _token_edit("duplicate"),
    "swap": _token_edit("swap"), "truncate": _token_edit("truncate"),
    "number": _pick(_NUMBER, NUMBERS), "type": _pick(_ELEMENT_TYPE, TYPES),
    "axis": _pick(_AXIS, ('"q"', '"x"', '"y"', '""')), "sub_axis": _sub_axis,
    "brace": _brace,
}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def run_one(text: str, timeout: float = 5.0) -> Outcome:
    """``text`` through the whole path, classified."""
    from shardy_ref.ir.diagnostics import ShardyRefError

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return _run(text)
    except _Timeout:
        return Outcome("timeout")
    except ShardyRefError as e:
        return Outcome("error", e.message.split("\n")[0][:80])
    except RecursionError:
        return Outcome("crash", "RecursionError")
    except Exception as e:  # what the fuzzer is looking for
        return Outcome("crash", _site(e))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run(text: str) -> Outcome:
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


def main(argv: list[str] | None = None) -> int:
    from tests.parser.test_robustness import corpus_chunks

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--show", type=int, default=3, help="examples printed per crash site")
    opts = parser.parse_args(argv)
    sys.setrecursionlimit(10000)
    rng = random.Random(opts.seed)
    chunks = corpus_chunks()
    kinds: Counter = Counter()
    sites: dict[str, list[str]] = {}
    for _ in range(opts.count):
        text = mutate(rng.choice(chunks), rng)
        outcome = run_one(text, opts.timeout)
        kinds[outcome.kind] += 1
        if outcome.kind in ("crash", "timeout", "roundtrip"):
            sites.setdefault(f"{outcome.kind}: {outcome.detail}", []).append(text)
    print(" ".join(f"{k}={kinds[k]}" for k in ("ok", "error", "crash", "timeout", "roundtrip")))
    for site, texts in sorted(sites.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(texts):6d}  {site}")
        for text in texts[:opts.show]:
            print("        " + text[:300].replace("\n", "\n        "))
    return 0 if not sites else 1


if __name__ == "__main__":
    sys.exit(main())
