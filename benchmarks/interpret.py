"""Interpreter speed, measured side by side in one run (issue 12's targets in brackets).

1. A transformer block (model width 512, batch x seq = 4 x 256 = 1024 tokens, 8 heads,
   MLP 2048, layer norms) as a StableHLO module through our interpreter, against the same
   computation written directly in NumPy [ratio <= 1.15], and against ``jax.jit`` on the
   CPU when jax is importable (printed for information).
2. Dispatch: a chain of 400 elementwise ops (add, multiply, tanh) on 8x8 f32 through
   ``shardy_ref.execute.run`` (the public API, called again on the same module), against
   the same NumPy calls [ratio <= 15]; a reused :class:`Interpreter` is printed beside it.
3. ``interpreter.run_parallel`` of one small-op SPMD program on 8 and 64 processes:
   vectorized (one run over all processes) against the per-process fallback (a thread per
   process, collectives at a rendezvous) [speedup >= 3x at 64].

    python benchmarks/interpret.py [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # STYLE.md: one BLAS thread is faster here

import numpy as np

B, S, D, H, F = 4, 256, 512, 8, 2048
DH = D // H
EPS = 1e-5


def _t(*shape: int, et: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def transformer_module() -> str:
    """The block in StableHLO, the way JAX lowers it: layer norm, attention, layer norm,
    MLP with a tanh GELU, residuals."""
    x, w, v, m, f, bsd = _t(B * S, D), _t(D, D), _t(D), _t(D, F), _t(F, D), _t(B, S, D)
    lines = []

    def emit(s: str) -> None:
        lines.append("  " + s)

    def layer_norm(name: str, inp: str, gamma: str, beta: str) -> str:
        emit(f"%{name}_zero = stablehlo.constant dense<0.0> : tensor<f32>")
        emit(f"%{name}_sum = stablehlo.reduce(%{inp} init: %{name}_zero) applies stablehlo.add "
             f"across dimensions = [1] : ({x}, tensor<f32>) -> {_t(B * S)}")
        emit(f"%{name}_n = stablehlo.constant dense<{float(D)}> : {_t(B * S)}")
        emit(f"%{name}_mean = stablehlo.divide %{name}_sum, %{name}_n : {_t(B * S)}")
        emit(f"%{name}_meanb = stablehlo.broadcast_in_dim %{name}_mean, dims = [0] : "
             f"({_t(B * S)}) -> {x}")
        emit(f"%{name}_c = stablehlo.subtract %{inp}, %{name}_meanb : {x}")
        emit(f"%{name}_sq = stablehlo.multiply %{name}_c, %{name}_c : {x}")
        emit(f"%{name}_vs = stablehlo.reduce(%{name}_sq init: %{name}_zero) applies "
             f"stablehlo.add across dimensions = [1] : ({x}, tensor<f32>) -> {_t(B * S)}")
        emit(f"%{name}_var = stablehlo.divide %{name}_vs, %{name}_n : {_t(B * S)}")
        emit(f"%{name}_eps = stablehlo.constant dense<{EPS:e}> : {_t(B * S)}")
        emit(f"%{name}_ve = stablehlo.add %{name}_var, %{name}_eps : {_t(B * S)}")
        emit(f"%{name}_r = stablehlo.rsqrt %{name}_ve : {_t(B * S)}")
        emit(f"%{name}_rb = stablehlo.broadcast_in_dim %{name}_r, dims = [0] : "
             f"({_t(B * S)}) -> {x}")
        emit(f"%{name}_norm = stablehlo.multiply %{name}_c, %{name}_rb : {x}")
        emit(f"%{name}_gb = stablehlo.broadcast_in_dim %{gamma}, dims = [1] : ({v}) -> {x}")
        emit(f"%{name}_bb = stablehlo.broadcast_in_dim %{beta}, dims = [1] : ({v}) -> {x}")
        emit(f"%{name}_g = stablehlo.multiply %{name}_norm, %{name}_gb : {x}")
        emit(f"%{name}_out = stablehlo.add %{name}_g, %{name}_bb : {x}")
        return f"{name}_out"

    def matmul(name: str, a: str, b: str, k: int, n: int) -> str:
        emit(f"%{name} = stablehlo.dot_general %{a}, %{b}, contracting_dims = [1] x [0] : "
             f"({_t(B * S, k)}, {_t(k, n)}) -> {_t(B * S, n)}")
        return name

    def heads(name: str, inp: str) -> str:
        emit(f"%{name}_r = stablehlo.reshape %{inp} : ({x}) -> {_t(B, S, H, DH)}")
        emit(f"%{name} = stablehlo.transpose %{name}_r, dims = [0, 2, 1, 3] : "
             f"({_t(B, S, H, DH)}) -> {_t(B, H, S, DH)}")
        return name

    ln1 = layer_norm("ln1", "x", "g1", "b1")
    q = heads("q", matmul("qm", ln1, "wq", D, D))
    k = heads("k", matmul("km", ln1, "wk", D, D))
    vv = heads("v", matmul("vm", ln1, "wv", D, D))
    sc = _t(B, H, S, S)
    emit(f"%s = stablehlo.dot_general %{q}, %{k}, batching_dims = [0, 1] x [0, 1], "
         f"contracting_dims = [3] x [3] : ({_t(B, H, S, DH)}, {_t(B, H, S, DH)}) -> {sc}")
    emit(f"%scale = stablehlo.constant dense<{1.0 / np.sqrt(DH):e}> : {sc}")
    emit(f"%ss = stablehlo.multiply %s, %scale : {sc}")
    emit("%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>")
    emit(f"%mx = stablehlo.reduce(%ss init: %ninf) applies stablehlo.maximum across "
         f"dimensions = [3] : ({sc}, tensor<f32>) -> {_t(B, H, S)}")
    emit(f"%mxb = stablehlo.broadcast_in_dim %mx, dims = [0, 1, 2] : ({_t(B, H, S)}) -> {sc}")
    emit(f"%sh = stablehlo.subtract %ss, %mxb : {sc}")
    emit(f"%e = stablehlo.exponential %sh : {sc}")
    emit("%zero = stablehlo.constant dense<0.0> : tensor<f32>")
    emit(f"%den = stablehlo.reduce(%e init: %zero) applies stablehlo.add across "
         f"dimensions = [3] : ({sc}, tensor<f32>) -> {_t(B, H, S)}")
    emit(f"%denb = stablehlo.broadcast_in_dim %den, dims = [0, 1, 2] : ({_t(B, H, S)}) -> {sc}")
    emit(f"%p = stablehlo.divide %e, %denb : {sc}")
    emit(f"%o = stablehlo.dot_general %p, %{vv}, batching_dims = [0, 1] x [0, 1], "
         f"contracting_dims = [3] x [2] : ({sc}, {_t(B, H, S, DH)}) -> {_t(B, H, S, DH)}")
    emit(f"%ot = stablehlo.transpose %o, dims = [0, 2, 1, 3] : ({_t(B, H, S, DH)}) -> "
         f"{_t(B, S, H, DH)}")
    emit(f"%or = stablehlo.reshape %ot : ({_t(B, S, H, DH)}) -> {x}")
    att = matmul("att", "or", "wo", D, D)
    emit(f"%h = stablehlo.add %x, %{att} : {x}")
    ln2 = layer_norm("ln2", "h", "g2", "b2")
    up = matmul("up", ln2, "w1", D, F)
    # GELU, tanh form: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
    u = _t(B * S, F)
    emit(f"%c0 = stablehlo.constant dense<0.044715> : {u}")
    emit(f"%c1 = stablehlo.constant dense<{np.sqrt(2 / np.pi):e}> : {u}")
    emit(f"%c2 = stablehlo.constant dense<0.5> : {u}")
    emit(f"%c3 = stablehlo.constant dense<1.0> : {u}")
    emit(f"%u2 = stablehlo.multiply %{up}, %{up} : {u}")
    emit(f"%u3 = stablehlo.multiply %u2, %{up} : {u}")
    emit(f"%a0 = stablehlo.multiply %u3, %c0 : {u}")
    emit(f"%a1 = stablehlo.add %{up}, %a0 : {u}")
    emit(f"%a2 = stablehlo.multiply %a1, %c1 : {u}")
    emit(f"%a3 = stablehlo.tanh %a2 : {u}")
    emit(f"%a4 = stablehlo.add %a3, %c3 : {u}")
    emit(f"%a5 = stablehlo.multiply %{up}, %a4 : {u}")
    emit(f"%gelu = stablehlo.multiply %a5, %c2 : {u}")
    down = matmul("down", "gelu", "w2", F, D)
    emit(f"%y = stablehlo.add %h, %{down} : {x}")
    emit(f"func.return %y : {x}")
    del bsd
    args = (f"%x: {x}, %g1: {v}, %b1: {v}, %wq: {w}, %wk: {w}, %wv: {w}, %wo: {w}, "
            f"%g2: {v}, %b2: {v}, %w1: {m}, %w2: {f}")
    return f"func.func @main({args}) -> {x} {{\n" + "\n".join(lines) + "\n}\n"


def transformer_numpy(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
    """The same block written directly in NumPy (float32 throughout)."""
    def layer_norm(a, g, b):
        mean = a.sum(axis=1) / np.float32(D)
        c = a - mean[:, None]
        var = (c * c).sum(axis=1) / np.float32(D)
        return c * (1 / np.sqrt(var + np.float32(EPS)))[:, None] * g + b

    def heads(a):
        return a.reshape(B, S, H, DH).transpose(0, 2, 1, 3)

    h1 = layer_norm(x, g1, b1)
    q, k, v = heads(h1 @ wq), heads(h1 @ wk), heads(h1 @ wv)
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(DH))
    e = np.exp(s - s.max(axis=3, keepdims=True))
    p = e / e.sum(axis=3, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(B * S, D)
    h = x + o @ wo
    up = layer_norm(h, g2, b2) @ w1
    gelu = up * (np.tanh((up + up * up * up * np.float32(0.044715))
                         * np.float32(np.sqrt(2 / np.pi))) + np.float32(1)) * np.float32(0.5)
    return h + gelu @ w2


def _inputs(rng):
    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    return [r(B * S, D), r(D) + 1, r(D), r(D, D, scale=D ** -0.5), r(D, D, scale=D ** -0.5),
            r(D, D, scale=D ** -0.5), r(D, D, scale=D ** -0.5), r(D) + 1, r(D),
            r(D, F, scale=D ** -0.5), r(F, D, scale=F ** -0.5)]


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def spmd_module(processes: int, steps: int = 20) -> str:
    """A small-op SPMD program: elementwise work and an all-reduce per step."""
    t = "tensor<8x16xf32>"
    body = ["%p = stablehlo.partition_id : tensor<ui32>",
            "%pf = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>",
            f"%pb = stablehlo.broadcast_in_dim %pf, dims = [] : (tensor<f32>) -> {t}",
            f"%x0 = stablehlo.iota dim = 1 : {t}",
            f"%v0 = stablehlo.add %x0, %pb : {t}",
            f"%half = stablehlo.constant dense<0.5> : {t}"]
    groups = "[" + ", ".join(str(i) for i in range(processes)) + "]"
    for i in range(steps):
        body += [f"%a{i} = stablehlo.multiply %v{i}, %half : {t}",
                 f"%b{i} = stablehlo.tanh %a{i} : {t}",
                 f'%v{i + 1} = "stablehlo.all_reduce"(%b{i}) ({{\n'
                 "    ^bb0(%l: tensor<f32>, %r: tensor<f32>):\n"
                 "      %s = stablehlo.add %l, %r : tensor<f32>\n"
                 "      stablehlo.return %s : tensor<f32>\n"
                 f"  }}) {{replica_groups = dense<[{groups}]> : tensor<1x{processes}xi64>, "
                 "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
                 f"use_global_device_ids}} : ({t}) -> {t}"]
    results = ", ".join([t] * processes)
    programs = "[" + ", ".join(["@f"] * processes) + "]"
    return (f"func.func @f() -> {t} {{\n  " + "\n  ".join(body)
            + f"\n  func.return %v{steps} : {t}\n}}\n"
            f"func.func @main() -> ({results}) {{\n"
            f'  %r:{processes} = "interpreter.run_parallel"() {{programs = [{programs}]}} '
            f": () -> ({results})\n"
            f"  func.return {', '.join(f'%r#{i}' for i in range(processes))} : {results}\n}}\n")


DISPATCH_OPS = 400


def dispatch_module() -> str:
    t = "tensor<8x8xf32>"
    lines = [f"func.func @main(%v: {t}, %y: {t}) -> {t} {{"]
    for i in range(DISPATCH_OPS):
        prev = f"%v{i - 1}" if i else "%v"
        op = ("add", "multiply", "tanh")[i % 3]
        args = prev if op == "tanh" else f"{prev}, %y"
        lines.append(f"  %v{i} = stablehlo.{op} {args} : {t}")
    lines.append(f"  func.return %v{DISPATCH_OPS - 1} : {t}\n}}")
    return "\n".join(lines)


def dispatch_numpy(v, y):
    for i in range(DISPATCH_OPS):
        k = i % 3
        v = np.add(v, y) if k == 0 else np.multiply(v, y) if k == 1 else np.tanh(v)
    return v


def _best_cpu(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def dispatch(repeat: int) -> None:
    from shardy_ref.execute import Interpreter, run
    from shardy_ref.parser import parse_module

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 8)).astype(np.float32)
    y = (rng.standard_normal((8, 8)) * 0.1).astype(np.float32)
    module = parse_module(dispatch_module())
    (ours,) = run(module, x, y)
    assert np.allclose(ours, dispatch_numpy(x, y), rtol=1e-5, atol=1e-6)
    interp = Interpreter(module)
    func, args = interp.entry_function(), _args(interp, x, y)
    n = max(repeat, 20)
    t_run = _best_cpu(lambda: run(module, x, y), n)
    t_interp = _best_cpu(lambda: interp.run_args(func, args), n)
    t_np = _best_cpu(lambda: dispatch_numpy(x, y), n)
    print(f"dispatch ({DISPATCH_OPS} elementwise ops, 8x8 f32): execute.run "
          f"{t_run * 1e3:.2f} ms, NumPy {t_np * 1e3:.3f} ms, ratio {t_run / t_np:.1f} "
          f"(target <= 15); reused Interpreter {t_interp * 1e3:.2f} ms, "
          f"ratio {t_interp / t_np:.1f} (CPU time, best of {n})")


def _args(interp, *arrays) -> list:
    from shardy_ref.execute.api import argument_tensor

    block = interp.entry_function().regions[0].blocks[0]
    return [argument_tensor("main", i, a.type, v)
            for i, (a, v) in enumerate(zip(block.args, arrays, strict=True))]


def main() -> None:
    from shardy_ref.execute import Interpreter
    from shardy_ref.execute.api import argument_tensor
    from shardy_ref.parser import parse_module

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    repeat = ap.parse_args().repeat

    inputs = _inputs(np.random.default_rng(0))
    interp = Interpreter(parse_module(transformer_module()))
    func = interp.entry_function()
    types = [a.type for a in func.regions[0].blocks[0].args]
    args = [argument_tensor("main", i, t, a) for i, (t, a) in enumerate(zip(types, inputs,
                                                                      strict=True))]
    (ours,) = interp.run_args(func, args)
    ref = transformer_numpy(*inputs)
    err = float(np.max(np.abs(ours.data - ref)) / np.max(np.abs(ref)))
    t_ours = _best(lambda: interp.run_args(func, args), repeat)
    t_np = _best(lambda: transformer_numpy(*inputs), repeat)
    print(f"transformer block ({B}x{S} tokens, width {D}): interpreter {t_ours * 1e3:.1f} ms, "
          f"NumPy {t_np * 1e3:.1f} ms, ratio {t_ours / t_np:.3f} (target <= 1.15); "
          f"max relative difference {err:.1e}")
    try:
        import jax
        jitted = jax.jit(_jax_block())
        jitted(*inputs).block_until_ready()
        t_jax = _best(lambda: jitted(*inputs).block_until_ready(), repeat)
        print(f"  jax.jit on CPU {t_jax * 1e3:.1f} ms (interpreter / jax = {t_ours / t_jax:.2f})")
    except ImportError:
        print("  jax.jit: jax is not installed here (pip install jax to compare)")

    dispatch(repeat)

    for processes in (8, 64):
        text = spmd_module(processes)
        vec = Interpreter(parse_module(text))
        threads = Interpreter(parse_module(text), vectorize=False)
        a, b = vec.run(), threads.run()
        assert all(np.array_equal(x.data, y.data) for x, y in zip(a, b, strict=True))
        t_vec = _best(vec.run, max(1, repeat // 2))
        t_thr = _best(threads.run, max(1, repeat // 2))
        print(f"run_parallel, {processes} processes: vectorized {t_vec * 1e3:.1f} ms, "
              f"per-process {t_thr * 1e3:.1f} ms, speedup {t_thr / t_vec:.1f}x"
              + (" (target >= 3x)" if processes == 64 else ""))


def _jax_block():
    import jax.numpy as jnp

    def block(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
        def layer_norm(a, g, b):
            c = a - a.mean(axis=1, keepdims=True)
            return c * jnp.reciprocal(jnp.sqrt((c * c).mean(axis=1, keepdims=True) + EPS)) * g + b

        def heads(a):
            return a.reshape(B, S, H, DH).transpose(0, 2, 1, 3)

        h1 = layer_norm(x, g1, b1)
        q, k, v = heads(h1 @ wq), heads(h1 @ wk), heads(h1 @ wv)
        s = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(DH)
        p = jnp.exp(s - s.max(axis=3, keepdims=True))
        p = p / p.sum(axis=3, keepdims=True)
        h = x + (p @ v).transpose(0, 2, 1, 3).reshape(B * S, D) @ wo
        up = layer_norm(h, g2, b2) @ w1
        gelu = 0.5 * up * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (up + 0.044715 * up ** 3)))
        return h + gelu @ w2
    return block


if __name__ == "__main__":
    main()
