"""The multi-device simulator against the single-device interpreter, side by side in one run
(issue 14's targets in brackets).

For an MLP and a transformer block (model width 512, batch x seq = 1024 tokens), sharded for
data and tensor parallelism on meshes of 8 (data=2, model=4) and 64 (data=8, model=8)
devices, it prints:

- time: the partitioned program simulated on every device (``SpmdProgram.run``; compiling
  is timed apart) / the unpartitioned program on one device (``run``) [<= 1.3 at 8,
  <= 1.6 at 64];
- memory: peak bytes traced (``tracemalloc``, which sees NumPy's buffers) in the same two
  runs, as a ratio [<= 1.5];
- speedup of the vectorized simulation over one interpreter per device (a thread per
  device, collectives at a rendezvous: ``run_spmd(..., vectorize=False)``), for information;
- xla-cpu: the same partitioned program compiled by XLA and run on as many CPU host devices
  (``shardy_ref.backends.compile_on_xla``; inputs placed and results put back together
  included, compiling not), and its largest error against the single-device run; ``-`` with
  a note when jax (the ``jax`` extra) is absent.

    python benchmarks/simulate.py [--repeat N] [--skip-threads]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as benchmarks/interpret.py
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's GSPMD deprecation warning

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interpret import D, transformer_module  # the same block, B*S = 1024

TOKENS, HIDDEN = 1024, 2048
MESHES = {8: (2, 4), 64: (8, 8)}


def _sharded(spec: str) -> str:
    return f"{{sdy.sharding = #sdy.sharding<@mesh, [{spec}]>}}"


def mlp_module(devices: int) -> str:
    """relu(x @ w1) @ w2: batch on "data", the hidden dimension on "model"."""
    data, model = MESHES[devices]
    x, w1, w2 = (f"tensor<{TOKENS}x{D}xf32>", f"tensor<{D}x{HIDDEN}xf32>",
                 f"tensor<{HIDDEN}x{D}xf32>")
    h = f"tensor<{TOKENS}x{HIDDEN}xf32>"
    return f"""sdy.mesh @mesh = <["data"={data}, "model"={model}]>
func.func @main(%x: {x} {_sharded('{"data"}, {}')}, %w1: {w1} {_sharded('{}, {"model"}')},
                %w2: {w2} {_sharded('{"model"}, {}')}) -> ({x} {_sharded('{"data"}, {}')}) {{
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : ({x}, {w1}) -> {h}
  %zero = stablehlo.constant dense<0.0> : {h}
  %r = stablehlo.maximum %h, %zero : {h}
  %y = stablehlo.dot_general %r, %w2, contracting_dims = [1] x [0] : ({h}, {w2}) -> {x}
  return %y : {x}
}}
"""


# the transformer block's arguments and how they are sharded (Megatron-style)
TRANSFORMER_SHARDINGS = {
    "%x": '{"data"}, {}', "%g1": "{}", "%b1": "{}", "%wq": '{}, {"model"}',
    "%wk": '{}, {"model"}', "%wv": '{}, {"model"}', "%wo": '{"model"}, {}', "%g2": "{}",
    "%b2": "{}", "%w1": '{}, {"model"}', "%w2": '{"model"}, {}',
}


def transformer_block_module(devices: int) -> str:
    """benchmarks/interpret.py's block, its arguments and result sharded."""
    data, model = MESHES[devices]
    text = transformer_module()
    head, body = text.split(") -> ", 1)
    for name, spec in TRANSFORMER_SHARDINGS.items():
        start = head.index(name + ":")
        end = head.find(",", start)
        end = len(head) if end < 0 else end
        head = head[:end] + " " + _sharded(spec) + head[end:]
    result, rest = body.split(" {\n", 1)
    return (f'sdy.mesh @mesh = <["data"={data}, "model"={model}]>\n' + head + ") -> ("
            + result + " " + _sharded('{"data"}, {}') + ") {\n" + rest)


def inputs(program) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    out = []
    for spec in program.args:
        shape = tuple(spec.type.shape)
        scale = 1 / np.sqrt(shape[0]) if len(shape) == 2 else 1.0
        out.append((rng.standard_normal(shape) * scale).astype(np.float32))
    return out


def best(fn, repeat: int, clock=time.perf_counter) -> float:
    """The shortest of ``repeat`` runs of ``fn`` in seconds of ``clock`` (``time.process_time``
    for CPU time, which other processes on a shared machine do not inflate)."""
    times = []
    for _ in range(repeat):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def rel_error(got, want) -> float:
    return max(float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))
               for a, b in zip(got, want, strict=True))


def measure(name: str, text: str, devices: int, repeat: int, threads: bool,
            xla: bool) -> dict:
    from shardy_ref.execute import compile_spmd, run, run_spmd, shard

    start = time.perf_counter()
    program = compile_spmd(text, filename=name)
    compile_s = time.perf_counter() - start
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    module = parse_module(text, name)  # parsed once, as the program was compiled once
    verify_module(module)
    args = inputs(program)
    single = run(module, *args)
    simulated = program.run(*args)
    row = {
        "name": name, "devices": devices, "compile_s": compile_s,
        "rel_error": rel_error(simulated, single),
        "single_s": best(lambda: run(module, *args), repeat),
        "sim_s": best(lambda: program.run(*args), repeat),
        "single_mem": peak_bytes(lambda: run(module, *args)),
        "sim_mem": peak_bytes(lambda: program.run(*args)),
    }
    if threads:
        shards = [shard(a, s.sharding, s.mesh) for a, s in zip(args, program.args, strict=True)]
        per_device = [[x[d] for x in shards] for d in range(devices)]
        row["threads_s"] = best(lambda: run_spmd(program.per_device, per_device,
                                                 vectorize=False), 1)
    if xla:
        from shardy_ref.backends import compile_on_xla

        compiled = compile_on_xla(program)
        row["xla_error"] = rel_error(compiled.run(*args), single)
        row["xla_s"] = best(lambda: compiled.run(*args), repeat)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-threads", action="store_true",
                        help="do not time one interpreter per device (slow at 64)")
    opts = parser.parse_args()
    xla = importlib.util.find_spec("jax") is not None
    print(f"{'program':<20}{'devices':>8}{'compile':>9}{'single':>9}{'simulated':>11}"
          f"{'time ratio':>12}{'mem ratio':>11}{'vs threads':>12}{'rel err':>10}"
          f"{'xla-cpu':>10}{'xla err':>10}")
    for devices in MESHES:
        for name, make in (("mlp", mlp_module), ("transformer_block", transformer_block_module)):
            r = measure(name, make(devices), devices, opts.repeat, not opts.skip_threads, xla)
            target = 1.3 if devices == 8 else 1.6
            ratio = r["sim_s"] / r["single_s"]
            mem = r["sim_mem"] / r["single_mem"]
            speedup = f"{r['threads_s'] / r['sim_s']:.1f}x" if "threads_s" in r else "-"
            on_xla = f"{r['xla_s']:>9.3f}s{r['xla_error']:>10.1e}" if xla else f"{'-':>10}{'-':>10}"
            print(f"{name:<20}{devices:>8}{r['compile_s']:>8.2f}s{r['single_s']:>8.3f}s"
                  f"{r['sim_s']:>10.3f}s{ratio:>7.2f} [{'ok' if ratio <= target else 'MISS'}]"
                  f"{mem:>6.2f} [{'ok' if mem <= 1.5 else 'MISS'}]{speedup:>12}"
                  f"{r['rel_error']:>10.1e}{on_xla}")
    print("time ratio: simulated / single-device (targets 1.3 at 8, 1.6 at 64 devices); "
          "mem ratio: peak traced bytes, simulated / single-device (target 1.5)")
    print("xla-cpu: the same partitioned program run by XLA on as many CPU host devices" if xla
          else "xla-cpu: skipped, jax is not installed (pip install -e '.[jax]')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
