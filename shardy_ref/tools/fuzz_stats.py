"""``shardy-ref fuzz --stats``: how many random programs per second go through
``sdy-propagation-pipeline`` on one core (parse, verify, every pass verified after it runs,
print: what each fuzzed example costs), and where the time goes: parsing, the verifier
after each pass that changed the IR (and the snapshots that tell), each pass, printing; and
how many programs per second two invariants check: propagation's fixpoint, and the
partitioned program run on every device against the single-device run."""
from __future__ import annotations

import time
from collections import Counter

PIPELINE = "sdy-propagation-pipeline"
OPS = 20  # ops per program in the measurement
AFTER_EACH = "verify (after each pass that changed the IR)"
SNAPSHOT = "snapshot (did the pass change the IR?)"
STATS_PROGRAMS = 100  # programs measured
# the invariants whose throughput --stats prints: the propagation one and the end-to-end one
THROUGHPUT_INVARIANTS = ("propagation_fixpoint", "per_device_equals_single_device")
INVARIANT_PROGRAMS = 30  # programs per invariant in that measurement


def throughput(count: int = 100, ops: int = OPS, rounds: int = 3) -> tuple[float, float]:
    """Programs per CPU second through the pipeline, as the invariants run it, in the best
    of ``rounds`` rounds over the same programs (as ``timeit`` reports: the other rounds
    measure what else the machine was doing), and the average number of ops per program
    (module, function, mesh and return included)."""
    from shardy_ref.testing.invariants import _run_pipeline
    from shardy_ref.testing.programs import random_program

    texts = [random_program(seed, ops=ops) for seed in range(count)]
    _run_pipeline(texts[0], PIPELINE)  # warm caches (grammar, pass registry)
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for text in texts:
            _run_pipeline(text, PIPELINE)
        best = min(best, time.process_time() - start)
    return count / best, _average_ops(texts)


def invariant_throughput(name: str, count: int = INVARIANT_PROGRAMS,
                         rounds: int = 2) -> float:
    """Programs per CPU second that invariant ``name`` checks, on ``count`` programs drawn as
    ``shardy-ref fuzz`` draws them (every feature; seeds 0..count-1, so the same programs in
    every run), best of ``rounds`` rounds; drawing the programs is not timed."""
    from shardy_ref.testing.invariants import INVARIANTS
    from shardy_ref.testing.program_features import Features
    from shardy_ref.testing.programs import random_program

    check = INVARIANTS[name]
    texts = [random_program(seed, Features.parse("all")) for seed in range(count)]
    check(texts[0])  # warm caches (grammar, pass registry, kernels)
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for text in texts:
            check(text)
        best = min(best, time.process_time() - start)
    return count / best


def _average_ops(texts: list[str]) -> float:
    from shardy_ref.parser import parse_module

    funcs = [parse_module(t, "<stats>") for t in texts]
    return sum(sum(1 for _ in m.walk()) for m in funcs) / len(funcs)


def breakdown(count: int = 100, ops: int = OPS) -> tuple[Counter, int, int]:
    """Seconds spent per phase over ``count`` programs: parse, verify (the input, and after
    each pass that changed the IR, as the pass manager does), the snapshots that tell, each
    pass of the pipeline, print; and how many passes ran, and how many were verified."""
    from shardy_ref.ir.ir_snapshot import ir_snapshot, unchanged_since
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline
    from shardy_ref.testing.programs import random_program

    spent: Counter = Counter()
    runs = verified = 0
    elements = list(_flatten(parse_pipeline(PIPELINE)))
    for seed in range(count):
        text = random_program(seed, ops=ops)
        t = time.process_time()
        module = parse_module(text, "<stats>")
        spent["parse"] += _lap(t)
        t = time.process_time()
        verify_module(module)
        last = ir_snapshot(module)
        spent["verify (input)"] += _lap(t)
        for element in elements:
            t = time.process_time()
            PassManager([element]).run(module, PassContext())
            spent[_name(element)] += _lap(t)
            t = time.process_time()
            changed = not unchanged_since(last, module)
            spent[SNAPSHOT] += _lap(t)
            runs += 1
            if changed:
                t = time.process_time()
                verify_module(module)
                last = ir_snapshot(module)
                spent[AFTER_EACH] += _lap(t)
                verified += 1
        t = time.process_time()
        print_module(module)
        spent["print"] += _lap(t)
    return spent, runs, verified


def _lap(start: float) -> float:
    return time.process_time() - start


def _flatten(elements):
    """The passes of a pipeline, named pipelines expanded."""
    from shardy_ref.pass_manager import PassPipeline

    for element in elements:
        if isinstance(element.pass_, PassPipeline):
            yield from _flatten(element.pass_.elements())
        else:
            yield element


def _name(element) -> str:
    if element.pass_ is not None:
        return element.pass_.NAME
    return f"{element.op_name}({','.join(_name(e) for e in element.nested)})"


def print_stats(out, count: int | None = None) -> None:
    """The throughput line, then the phases that take most of the time."""
    count = count or STATS_PROGRAMS
    rate, ops = throughput(count)
    out.write(f"throughput: {rate:.1f} programs/s through {PIPELINE} "
              f"({count} random programs, {ops:.1f} ops each, one core, best of 3 rounds)\n")
    programs = min(count, INVARIANT_PROGRAMS)
    for name in THROUGHPUT_INVARIANTS:
        out.write(f"invariant {name}: {invariant_throughput(name, programs):.1f} programs/s "
                  f"({programs} random programs with every feature, one core, "
                  f"best of 2 rounds)\n")
    spent, runs, verified = breakdown(count)
    total = sum(spent.values())
    out.write(f"where the time goes ({1000 * total / count:.1f} ms per program):\n")
    for phase, seconds in spent.most_common(12):
        out.write(f"  {100 * seconds / total:5.1f}%  {1000 * seconds / count:6.2f} ms  "
                  f"{phase}\n")
    out.write(f"passes that changed the IR, verified after: {verified} of {runs}\n")
    out.write(f"without verifying after passes: about "
              f"{count / (total - spent[AFTER_EACH] - spent[SNAPSHOT]):.1f} programs/s\n")
