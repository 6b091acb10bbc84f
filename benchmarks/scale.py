#!/usr/bin/env python3
"""Does shardy_ref scale linearly with the module size? (issue 15: a 100k-op module parses,
verifies and propagates in time linear in its size; target ratio time(100k)/time(20k) <= 5.5)

Two generated modules per size, on one mesh ``<["data"=2, "model"=4]>``:

* ``chain``: one ``@main`` holding a chain of transformer layers (``benchmarks/propagate.py``'s
  layernorm, attention and MLP: dot_general, add, broadcast_in_dim, reshape, reduce, ...) plus
  a transpose pair and a ``sdy.sharding_constraint`` every few layers, its weights sharded
  arguments of ``@main``;
* ``calls``: ``benchmarks/parse_print.py``'s small sharded functions, each called by
  ``func.call`` from ``@main`` in a chain.

For each, one run times (in CPU seconds) the phases side by side at the sizes given (default 20k and 100k
ops): ``parse`` (``parse_module``), ``verify`` (``verify_module``), ``propagate``
(``sdy-propagation-pipeline``, verifying after each pass as ``sdy_opt`` does), ``reshard``
(``sdy-insert-explicit-reshards`` then ``sdy-reshard-to-collectives`` on the propagated
module) and ``print`` (``print_module``), and prints each phase's ratio time(last)/time(first)
against the linear ratio scaled by 1.1, marked ``[ok]`` when within it (<= 5.5 for 100k/20k).
The peak resident memory of the process after each size is printed too.

    python benchmarks/scale.py [--ops 20000 100000] [--kind chain calls] [--repeat 1]
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parse_print import LAYER, OPS_PER_LAYER
from propagate import BS, T2, WEIGHTS, D, Writer, constants, layer
from simulate import best

CLOCK = time.process_time  # CPU seconds: the machine is shared, wall time is noisy

PHASES = ("parse", "verify", "propagate", "reshard", "print")
MESH = 'sdy.mesh @mesh = <["data"=2, "model"=4]>\n'
CONSTRAINT_EVERY = 4  # layers between two sharding constraints in the chain


def _chain_layer(w: Writer, x: str, i: int, consts: tuple[str, str, str, str]) -> str:
    """One transformer layer of ``benchmarks/propagate.py`` plus a transpose pair (and a
    sharding constraint every few layers); returns the layer's output value."""
    x = layer(w, x, i, consts)
    t = w.op(f"stablehlo.transpose {x}, dims = [1, 0] : ({T2}) -> tensor<{D}x{BS}xf32>")
    x = w.op(f"stablehlo.transpose {t}, dims = [1, 0] : (tensor<{D}x{BS}xf32>) -> {T2}")
    if i % CONSTRAINT_EVERY == CONSTRAINT_EVERY - 1:
        x = w.op(f'sdy.sharding_constraint {x} <@mesh, [{{"data"}}, {{?}}]> : {T2}')
    return x


def chain_module(n_ops: int) -> str:
    """``@main`` with about ``n_ops`` ops: a chain of layers, weights as sharded arguments."""
    per_layer = len(_layer_ops())
    layers = max(1, -(-n_ops // per_layer))
    args = [f'%x: {T2} {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}, {{}}]>}}']
    for i in range(layers):
        args += [f"%{n}_{i}: {t} {{sdy.sharding = #sdy.sharding<@mesh, {s}>}}"
                 for n, t, s in WEIGHTS]
    w = Writer()
    consts = constants(w)
    x = "%x"
    for i in range(layers):
        x = _chain_layer(w, x, i, consts)
    body = "\n".join(w.lines)
    return (f"{MESH}func.func @main({', '.join(args)}) -> {T2} {{\n{body}\n"
            f"  return {x} : {T2}\n}}\n")


def _layer_ops() -> list[str]:
    w = Writer()
    _chain_layer(w, "%x", CONSTRAINT_EVERY - 1, ("%a", "%b", "%c", "%d"))
    return w.lines


def calls_module(n_ops: int) -> str:
    """About ``n_ops`` ops: small sharded functions (``benchmarks/parse_print.py``'s layer),
    each called once, in a chain, from ``@main``."""
    per_function = OPS_PER_LAYER + 2  # its body and the func op, plus the call in @main
    functions = max(1, -(-n_ops // per_function))
    x, w1, w2 = "tensor<8x128xf32>", "tensor<128x512xf32>", "tensor<512x128xf32>"
    calls = [f"  %c{i} = call @layer{i}(%c{i - 1}, %w1, %w2) : ({x}, {w1}, {w2}) -> {x}"
             for i in range(functions)]
    calls[0] = calls[0].replace("%c-1", "%x")
    main = (f'func.func @main(%x: {x} {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}, {{}}]>}},'
            f' %w1: {w1} {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"model"}}]>}}, %w2: {w2})'
            f" -> {x} {{\n" + "\n".join(calls) + f"\n  return %c{functions - 1} : {x}\n}}\n")
    return MESH + "".join(LAYER.format(i=i) for i in range(functions)) + main


KINDS = {"chain": chain_module, "calls": calls_module}


def count_ops(module) -> int:
    """Every op of the module, the module itself included."""
    return sum(1 for _ in module.walk())


def time_phases(text: str, repeat: int) -> tuple[int, dict[str, float]]:
    """Best-of-``repeat`` seconds of each phase on ``text``, each phase on a fresh result of
    the phase before it, every run of every phase starting from a collected heap (the parse
    pauses the garbage collector, and its deferred collections are not the next phase's
    work; nor is the previous repetition's garbage)."""
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module, print_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    def run(pipeline: str, module) -> None:
        PassManager(parse_pipeline(pipeline), verify=verify_module).run(module, PassContext())

    parse_module("")  # build the parser outside the timing
    state: dict = {}

    def parse() -> None:
        state.pop("module", None)
        gc.collect()  # the previous repetition's module is garbage, not this parse's work
        best_s = best(lambda: state.__setitem__("module", parse_module(text)), 1, CLOCK)
        state["parse"] = min(state.get("parse", best_s), best_s)

    for _ in range(repeat):
        parse()
    times = {"parse": state.pop("parse")}
    n_ops = count_ops(state["module"])
    gc.collect()  # like the phases below, the verifier starts from a collected heap
    times["verify"] = best(lambda: verify_module(state["module"]), repeat, CLOCK)

    def propagate() -> None:
        state["module"] = parse_module(text)
        gc.collect()
        best_s = best(lambda: run("sdy-propagation-pipeline", state["module"]), 1, CLOCK)
        state["propagate"] = min(state.get("propagate", best_s), best_s)

    for _ in range(repeat):
        propagate()
    times["propagate"] = state.pop("propagate")
    propagated = print_module(state["module"])
    reshard = "sdy-insert-explicit-reshards,sdy-reshard-to-collectives"

    def partition() -> None:
        state["module"] = parse_module(propagated)
        gc.collect()
        best_s = best(lambda: run(reshard, state["module"]), 1, CLOCK)
        state["reshard"] = min(state.get("reshard", best_s), best_s)

    for _ in range(repeat):
        partition()
    times["reshard"] = state.pop("reshard")
    times["print"] = best(lambda: print_module(state["module"]), repeat, CLOCK)
    return n_ops, times


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report(kind: str, sizes: list[int], rows: list[tuple[int, dict[str, float], float]]) -> bool:
    """Print one table (a column per size, then the scaling ratio); True if every phase met
    its target."""
    print(f"\n{kind}: seconds per phase")
    print(f"{'phase':<10}" + "".join(f"{f'{n_ops} ops':>14}" for n_ops, _, _ in rows)
          + f"{'ratio':>9}  target")
    all_ok = True
    linear = rows[-1][0] / rows[0][0]
    target = 1.1 * sizes[-1] / sizes[0]
    for phase in PHASES:
        ratio = rows[-1][1][phase] / rows[0][1][phase]
        ok = ratio <= target
        all_ok &= ok
        print(f"{phase:<10}" + "".join(f"{t[phase]:14.2f}" for _, t, _ in rows)
              + f"{ratio:9.2f}  <= {target:.1f} [{'ok' if ok else 'MISS'}]")
    print(f"{'peak MB':<10}" + "".join(f"{m:14.0f}" for _, _, m in rows)
          + f"   (op count ratio {linear:.2f})")
    return all_ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, nargs="+", default=[20000, 100000])
    ap.add_argument("--kind", nargs="+", choices=sorted(KINDS), default=list(KINDS))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    all_ok = True
    for kind in args.kind:
        rows = []
        for size in sorted(args.ops):
            n_ops, times = time_phases(KINDS[kind](size), args.repeat)
            rows.append((n_ops, times, peak_rss_mb()))
            print(f"{kind} {n_ops} ops: " + ", ".join(f"{p} {t:.2f}s" for p, t in times.items()),
                  flush=True)
            gc.collect()
        all_ok &= report(kind, sorted(args.ops), rows)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
