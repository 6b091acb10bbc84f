#!/usr/bin/env python3
"""Run many StableHLO modules with the real StableHLO reference interpreter in one process.

Run with the oracle's interpreter (``../shared/oracle/setup`` builds it). Reads a JSON list
of ``{"id", "text"}`` on stdin (each a module whose ``@main`` takes no arguments and returns
tensors) and writes ``{id: {"ok": bool, "results": ["dense<...> : tensor<...>", ...],
"err": str}}`` on stdout. Each module runs in a forked child, so an interpreter abort
(``report_fatal_error``) fails only that module; importing jax once makes hundreds of
random programs a matter of seconds.
"""
import json
import os
import sys


def run_one(text):
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext, _mlir
    from jaxlib.mlir.dialects import stablehlo

    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    stablehlo.register_dialect(ctx)
    stablehlo.register_interpreter_dialect(ctx)
    ctx.enable_multithreading(False)
    with ctx, ir.Location.unknown():
        probe = ir.Attribute.parse("dense<1> : tensor<i32>")
        _mlir.register_type_caster(ir.Attribute(probe).typeid, replace=True)(lambda a: a)
        module = ir.Module.parse(text)
        results = stablehlo.eval_module(module, [])
        return [str(r) for r in results]


def run_forked(text):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read)
        try:
            out = {"ok": True, "results": run_one(text), "err": ""}
        except Exception as e:  # parse or interpreter errors
            out = {"ok": False, "results": [], "err": str(e)}
        with os.fdopen(write, "w") as f:
            json.dump(out, f)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        return {"ok": False, "results": [], "err": f"interpreter aborted (status {status})"}
    return json.loads(data)


def main() -> int:
    import jaxlib.mlir.ir  # noqa: F401  (load once, before forking)

    jobs = json.load(sys.stdin)
    json.dump({job["id"]: run_forked(job["text"]) for job in jobs}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
