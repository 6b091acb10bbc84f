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

Then, for a small-op program (issue 30), a Llama-style decoder layer at model width 64
(RMSNorm, q/k/v/o projections with rotary embeddings, causal softmax attention, SwiGLU MLP;
128 tokens) on the same meshes, it prints the simulated run (``SpmdProgram.run``) against
XLA's compiled run of the same partitioned program (``compile_on_xla(...).run``, inputs
placed and results put back together included), both in CPU time of this process
(``time.process_time``, best of ``10 x --repeat`` runs): that counts every thread XLA runs
on, so on a machine of few cores the comparison is work against work [simulated / xla-cpu
<= 3].

    python benchmarks/simulate.py [--repeat N] [--skip-threads] [--small-only]
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

from shardy_ref.tools.arg_types import positive_int

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


# the decoder layer: tokens (batch x seq), width, heads, MLP width
LB, LS, LD, LH, LF = 8, 16, 64, 8, 128
LDH = LD // LH
_DATA, _COLS, _ROWS = '{"data"}, {}', '{}, {"model"}', '{"model"}, {}'


def _t(*shape: int, et: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


class _Body:
    """The lines of a function body, and the decoder layer's pieces written into it."""

    def __init__(self):
        self.lines: list[str] = []
        self.x = _t(LB * LS, LD)  # activations, tokens x width
        self.hd = _t(LB, LH, LS, LDH)  # batch x heads x seq x head width

    def emit(self, line: str) -> None:
        self.lines.append("  " + line)

    def rms_norm(self, name: str, inp: str, gamma: str) -> str:
        x, n = self.x, _t(LB * LS)
        for line in (f"%{name}_sq = stablehlo.multiply %{inp}, %{inp} : {x}",
                     f"%{name}_zero = stablehlo.constant dense<0.0> : tensor<f32>",
                     f"%{name}_sum = stablehlo.reduce(%{name}_sq init: %{name}_zero) applies "
                     f"stablehlo.add across dimensions = [1] : ({x}, tensor<f32>) -> {n}",
                     f"%{name}_n = stablehlo.constant dense<{float(LD)}> : {n}",
                     f"%{name}_mean = stablehlo.divide %{name}_sum, %{name}_n : {n}",
                     f"%{name}_eps = stablehlo.constant dense<1.0e-06> : {n}",
                     f"%{name}_me = stablehlo.add %{name}_mean, %{name}_eps : {n}",
                     f"%{name}_r = stablehlo.rsqrt %{name}_me : {n}",
                     f"%{name}_rb = stablehlo.broadcast_in_dim %{name}_r, dims = [0] : ({n}) "
                     f"-> {x}",
                     f"%{name}_gb = stablehlo.broadcast_in_dim %{gamma}, dims = [1] : "
                     f"({_t(LD)}) -> {x}",
                     f"%{name}_xn = stablehlo.multiply %{inp}, %{name}_rb : {x}",
                     f"%{name} = stablehlo.multiply %{name}_xn, %{name}_gb : {x}"):
            self.emit(line)
        return name

    def matmul(self, name: str, a: str, b: str, k: int, n: int) -> str:
        self.emit(f"%{name} = stablehlo.dot_general %{a}, %{b}, contracting_dims = [1] x [0] "
                  f": ({_t(LB * LS, k)}, {_t(k, n)}) -> {_t(LB * LS, n)}")
        return name

    def heads(self, name: str, inp: str) -> str:
        split = _t(LB, LS, LH, LDH)
        self.emit(f"%{name}_r = stablehlo.reshape %{inp} : ({self.x}) -> {split}")
        self.emit(f"%{name} = stablehlo.transpose %{name}_r, dims = [0, 2, 1, 3] : "
                  f"({split}) -> {self.hd}")
        return name

    def rotary(self, name: str, inp: str) -> str:
        """Rotary embedding, rotate-half form: inp * cos + [-hi, lo] * sin."""
        hd, half, h = self.hd, _t(LB, LH, LS, LDH // 2), LDH // 2
        for line in (f"%{name}_lo = stablehlo.slice %{inp} [0:{LB}, 0:{LH}, 0:{LS}, 0:{h}] : "
                     f"({hd}) -> {half}",
                     f"%{name}_hi = stablehlo.slice %{inp} [0:{LB}, 0:{LH}, 0:{LS}, {h}:{LDH}] "
                     f": ({hd}) -> {half}",
                     f"%{name}_nhi = stablehlo.negate %{name}_hi : {half}",
                     f"%{name}_rh = stablehlo.concatenate %{name}_nhi, %{name}_lo, dim = 3 : "
                     f"({half}, {half}) -> {hd}",
                     f"%{name}_c = stablehlo.multiply %{inp}, %cosb : {hd}",
                     f"%{name}_s = stablehlo.multiply %{name}_rh, %sinb : {hd}",
                     f"%{name} = stablehlo.add %{name}_c, %{name}_s : {hd}"):
            self.emit(line)
        return name

    def attention(self, q: str, k: str, v: str) -> str:
        """Causal softmax attention per head; the heads' outputs back as tokens x width."""
        hd, sc, red, mask = self.hd, _t(LB, LH, LS, LS), _t(LB, LH, LS), _t(LB, LH, LS, LS,
                                                                          et="i1")
        for line in (f"%s = stablehlo.dot_general %{q}, %{k}, batching_dims = [0, 1] x [0, 1], "
                     f"contracting_dims = [3] x [3] : ({hd}, {hd}) -> {sc}",
                     f"%scale = stablehlo.constant dense<{1.0 / np.sqrt(LDH):e}> : {sc}",
                     f"%ss = stablehlo.multiply %s, %scale : {sc}",
                     f"%row = stablehlo.iota dim = 2 : {sc}",
                     f"%col = stablehlo.iota dim = 3 : {sc}",
                     f"%causal = stablehlo.compare GE, %row, %col : ({sc}, {sc}) -> {mask}",
                     f"%ninfs = stablehlo.constant dense<0xFF800000> : {sc}",
                     f"%masked = stablehlo.select %causal, %ss, %ninfs : {mask}, {sc}",
                     "%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",
                     f"%mx = stablehlo.reduce(%masked init: %ninf) applies stablehlo.maximum "
                     f"across dimensions = [3] : ({sc}, tensor<f32>) -> {red}",
                     f"%mxb = stablehlo.broadcast_in_dim %mx, dims = [0, 1, 2] : ({red}) -> {sc}",
                     f"%sh = stablehlo.subtract %masked, %mxb : {sc}",
                     f"%e = stablehlo.exponential %sh : {sc}",
                     "%zero = stablehlo.constant dense<0.0> : tensor<f32>",
                     f"%den = stablehlo.reduce(%e init: %zero) applies stablehlo.add across "
                     f"dimensions = [3] : ({sc}, tensor<f32>) -> {red}",
                     f"%denb = stablehlo.broadcast_in_dim %den, dims = [0, 1, 2] : ({red}) -> "
                     f"{sc}",
                     f"%p = stablehlo.divide %e, %denb : {sc}",
                     f"%o = stablehlo.dot_general %p, %{v}, batching_dims = [0, 1] x [0, 1], "
                     f"contracting_dims = [3] x [2] : ({sc}, {hd}) -> {hd}",
                     f"%ot = stablehlo.transpose %o, dims = [0, 2, 1, 3] : ({hd}) -> "
                     f"{_t(LB, LS, LH, LDH)}",
                     f"%or = stablehlo.reshape %ot : ({_t(LB, LS, LH, LDH)}) -> {self.x}"):
            self.emit(line)
        return "or"


def decoder_layer_module(devices: int) -> str:
    """A Llama-style decoder layer, small: x + attention(rms_norm(x)), then h +
    swiglu_mlp(rms_norm(h)); tokens on "data", heads and the MLP width on "model"
    (Megatron-style)."""
    data, model = MESHES[devices]
    body = _Body()
    x, u, rot = body.x, _t(LB * LS, LF), _t(LS, LDH)
    h1 = body.rms_norm("n1", "x", "g1")
    body.emit(f"%cosb = stablehlo.broadcast_in_dim %cos, dims = [2, 3] : ({rot}) -> {body.hd}")
    body.emit(f"%sinb = stablehlo.broadcast_in_dim %sin, dims = [2, 3] : ({rot}) -> {body.hd}")
    q = body.rotary("q", body.heads("qh", body.matmul("qm", h1, "wq", LD, LD)))
    k = body.rotary("k", body.heads("kh", body.matmul("km", h1, "wk", LD, LD)))
    v = body.heads("v", body.matmul("vm", h1, "wv", LD, LD))
    att = body.matmul("att", body.attention(q, k, v), "wo", LD, LD)
    body.emit(f"%h = stablehlo.add %x, %{att} : {x}")
    h2 = body.rms_norm("n2", "h", "g2")
    gate, up = body.matmul("gate", h2, "wg", LD, LF), body.matmul("up", h2, "wu", LD, LF)
    body.emit(f"%sig = stablehlo.logistic %{gate} : {u}")
    body.emit(f"%silu = stablehlo.multiply %{gate}, %sig : {u}")
    body.emit(f"%act = stablehlo.multiply %silu, %{up} : {u}")
    down = body.matmul("down", "act", "wd", LF, LD)
    body.emit(f"%y = stablehlo.add %h, %{down} : {x}")
    body.emit(f"func.return %y : {x}")
    specs = [("x", x, _DATA), ("g1", _t(LD), "{}"), ("cos", rot, "{}, {}"),
             ("sin", rot, "{}, {}"), ("wq", _t(LD, LD), _COLS), ("wk", _t(LD, LD), _COLS),
             ("wv", _t(LD, LD), _COLS), ("wo", _t(LD, LD), _ROWS), ("g2", _t(LD), "{}"),
             ("wg", _t(LD, LF), _COLS), ("wu", _t(LD, LF), _COLS), ("wd", _t(LF, LD), _ROWS)]
    args = ", ".join(f"%{name}: {t} {_sharded(spec)}" for name, t, spec in specs)
    return (f'sdy.mesh @mesh = <["data"={data}, "model"={model}]>\n'
            f"func.func @main({args}) -> ({x} {_sharded(_DATA)}) {{\n"
            + "\n".join(body.lines) + "\n}\n")


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


def measure_small(name: str, text: str, devices: int, repeat: int, xla: bool) -> dict:
    """A small-op program's simulated run against XLA's, both in CPU time."""
    from shardy_ref.execute import compile_spmd, run
    from shardy_ref.parser import parse_module

    start = time.process_time()
    program = compile_spmd(text, filename=name)
    compile_s = time.process_time() - start
    args = inputs(program)
    single = run(parse_module(text, name), *args)
    row = {"name": name, "devices": devices, "compile_s": compile_s,
           "rel_error": rel_error(program.run(*args), single),
           "sim_s": best(lambda: program.run(*args), repeat, time.process_time)}
    if xla:
        from shardy_ref.backends import compile_on_xla

        compiled = compile_on_xla(program)
        row["xla_error"] = rel_error(compiled.run(*args), single)
        row["xla_s"] = best(lambda: compiled.run(*args), repeat, time.process_time)
    return row


def print_small(repeat: int, xla: bool) -> None:
    """The small-op programs' lines (simulated / xla-cpu, target 3)."""
    print(f"{'small-op program':<20}{'devices':>8}{'compile':>9}{'simulated':>11}"
          f"{'xla-cpu':>10}{'sim / xla':>12}{'rel err':>10}{'xla err':>10}")
    for devices in MESHES:
        r = measure_small("decoder_layer", decoder_layer_module(devices), devices, repeat, xla)
        if xla:
            ratio = r["sim_s"] / r["xla_s"]
            versus = (f"{r['xla_s']:>9.4f}s{ratio:>7.2f} [{'ok' if ratio <= 3 else 'MISS'}]"
                      f"{r['rel_error']:>10.1e}{r['xla_error']:>10.1e}")
        else:
            versus = f"{'-':>10}{'-':>12}{r['rel_error']:>10.1e}{'-':>10}"
        print(f"{r['name']:<20}{devices:>8}{r['compile_s']:>8.2f}s{r['sim_s']:>10.4f}s{versus}")
    print("sim / xla: CPU time (process_time, all threads) of SpmdProgram.run / of XLA's "
          "compiled run, best of each (target 3)" if xla
          else "sim / xla: skipped, jax is not installed (pip install -e '.[jax]')")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=positive_int, default=3)
    parser.add_argument("--skip-threads", action="store_true",
                        help="do not time one interpreter per device (slow at 64)")
    parser.add_argument("--small-only", action="store_true",
                        help="only the small-op programs against XLA")
    opts = parser.parse_args()
    xla = importlib.util.find_spec("jax") is not None
    if not opts.small_only:
        print_large(opts, xla)
    print_small(10 * opts.repeat, xla)
    return 0


def print_large(opts, xla: bool) -> None:
    """The MLP and transformer block lines (issue 14's targets)."""
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


if __name__ == "__main__":
    sys.exit(main())
