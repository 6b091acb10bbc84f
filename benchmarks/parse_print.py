#!/usr/bin/env python3
"""Parse and print throughput of shardy_ref, side by side with jaxlib's C++ MLIR.

Generates a module of transformer-like layers (dot_general, elementwise ops, reshapes,
reductions, constants, sharding constraints, sharded function arguments) with at least
``--ops`` operations, then times, in one run:

* our ``parse_module`` (Lark LALR, IR built during the parse; the layers repeat, so most
  op lines and attr-dicts are rebuilt from what the first ones made,
  ``shardy_ref/parser/op_shortcut.py``: on ``benchmarks/scale.py``'s less repetitive
  ``chain`` module that makes parsing about 2.5x faster, on the conformance corpus' small
  chunks, below its 4096-character threshold, nothing) and ``print_module``;
* when the oracle's jaxlib is installed (``../shared/oracle/setup``), ``ir.Module.parse``
  and ``get_asm`` of the same text in that interpreter.

Prints ops/s and MB/s for each and the ratios. Targets: parse >= 6k ops/s, print >= 15k
ops/s (issue 2, this 2-core machine); ours/C++ parse <= 10x, print <= 2x (issue 30: measure
on a quiet machine, the C++ side barely slows on a loaded one).

    python benchmarks/parse_print.py [--ops 20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

LAYER = """\
func.func @layer{i}(%arg0: tensor<8x128xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"data"}}, {{}}]>}}, %arg1: tensor<128x512xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{}}, {{"model"}}]>}}, %arg2: tensor<512x128xf32>) -> (tensor<8x128xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"data", ?}}, {{?}}]>}}) {{
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x512xf32>) -> tensor<8x512xf32>
  %1 = stablehlo.constant dense<0.000000e+00> : tensor<8x512xf32>
  %2 = stablehlo.maximum %0, %1 : tensor<8x512xf32>
  %3 = stablehlo.multiply %2, %2 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"data"}}, {{"model"}}]>]>}} : tensor<8x512xf32>
  %4 = stablehlo.dot_general %3, %arg2, contracting_dims = [1] x [0] : (tensor<8x512xf32>, tensor<512x128xf32>) -> tensor<8x128xf32>
  %5 = sdy.sharding_constraint %4 <@mesh, [{{"data"}}, {{?}}]> : tensor<8x128xf32>
  %6 = stablehlo.add %5, %arg0 : tensor<8x128xf32>
  %7 = stablehlo.reshape %6 : (tensor<8x128xf32>) -> tensor<8x4x32xf32>
  %8 = stablehlo.transpose %7, dims = [1, 0, 2] : (tensor<8x4x32xf32>) -> tensor<4x8x32xf32>
  %9 = stablehlo.reshape %8 : (tensor<4x8x32xf32>) -> tensor<8x128xf32>
  %c = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %10 = stablehlo.reduce(%9 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
  %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<8xf32>) -> tensor<8x128xf32>
  %12 = stablehlo.divide %9, %11 : tensor<8x128xf32>
  %13 = stablehlo.negate %12 : tensor<8x128xf32>
  %14 = stablehlo.exponential %13 : tensor<8x128xf32>
  %15 = stablehlo.subtract %14, %arg0 : tensor<8x128xf32>
  %16 = stablehlo.tanh %15 : tensor<8x128xf32>
  return %16 : tensor<8x128xf32>
}}
"""
OPS_PER_LAYER = 21  # ops in one function body, plus the func op itself


def generate(n_ops: int) -> tuple[str, int]:
    layers = -(-n_ops // (OPS_PER_LAYER + 1))
    text = 'sdy.mesh @mesh = <["data"=2, "model"=4]>\n' + "".join(
        LAYER.format(i=i) for i in range(layers))
    return text, 2 + layers * (OPS_PER_LAYER + 1)


def time_ours(text: str, repeat: int) -> tuple[float, float]:
    from shardy_ref.parser import parse_module, print_module

    parse_module("")  # build the parser outside the timing
    best_parse = best_print = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        module = parse_module(text)
        t1 = time.perf_counter()
        gc.disable()
        try:
            print_module(module)
        finally:
            gc.enable()
        t2 = time.perf_counter()
        best_parse, best_print = min(best_parse, t1 - t0), min(best_print, t2 - t1)
        del module
    return best_parse, best_print


ORACLE_SCRIPT = r"""
import json, sys, time
from jax._src.interpreters import mlir as jmlir
from jax._src.lib.mlir import ir
text = sys.stdin.read()
repeat = int(sys.argv[1])
ctx = jmlir.make_ir_context()
bp = bq = float("inf")
with ctx:
    for _ in range(repeat):
        t0 = time.perf_counter(); m = ir.Module.parse(text); t1 = time.perf_counter()
        m.operation.get_asm(); t2 = time.perf_counter()
        bp, bq = min(bp, t1 - t0), min(bq, t2 - t1)
print(json.dumps([bp, bq]))
"""


def time_oracle(text: str, repeat: int) -> tuple[float, float] | None:
    import corpus

    if not corpus.oracle_available():
        return None
    proc = subprocess.run([str(corpus.ORACLE_PY), "-c", ORACLE_SCRIPT, str(repeat)], input=text,
                          capture_output=True, text=True)
    if proc.returncode:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return tuple(json.loads(proc.stdout))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    text, n_ops = generate(args.ops)
    mb = len(text.encode()) / 1e6
    print(f"module: {n_ops} ops, {mb:.2f} MB")
    parse_s, print_s = time_ours(text, args.repeat)
    rows = [("shardy_ref (Python)", parse_s, print_s)]
    oracle = time_oracle(text, args.repeat)
    if oracle is not None:
        rows.append(("jaxlib C++ MLIR", *oracle))
    print(f"{'':24} {'parse ops/s':>12} {'parse MB/s':>11} {'print ops/s':>12} {'print MB/s':>11}")
    for name, p, q in rows:
        print(f"{name:24} {n_ops / p:12.0f} {mb / p:11.2f} {n_ops / q:12.0f} {mb / q:11.2f}")
    if oracle is not None:
        parse_ratio, print_ratio = parse_s / oracle[0], print_s / oracle[1]
        print(f"ratio ours/C++ (time): parse {parse_ratio:.1f}x (target <= 10: "
              f"{_met(parse_ratio <= 10)}), print {print_ratio:.1f}x (target <= 2: "
              f"{_met(print_ratio <= 2)})")
    print(f"targets: parse >= 6000 ops/s ({_met(n_ops / parse_s >= 6000)}), "
          f"print >= 15000 ops/s ({_met(n_ops / print_s >= 15000)})")
    return 0


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


if __name__ == "__main__":
    sys.exit(main())
