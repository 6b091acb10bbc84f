#!/usr/bin/env python3
"""Print many MLIR chunks with real Shardy (jaxlib) in one process.

Run with the oracle's interpreter (``../shared/oracle/setup`` builds it). Reads a
JSON list of ``{"id", "text", "unregistered", "generic", "pipeline"}`` on stdin (and
optionally ``"print_flags"``: more ``get_asm`` keyword arguments) and
writes ``{id: {"ok": bool, "out": str, "err": str}}`` on stdout. Starting jax once for
a thousand chunks instead of once per chunk is what makes corpus-wide differential
checks take seconds rather than half an hour.
"""
import json
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")


def main() -> int:
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir, passmanager

    jobs = json.load(sys.stdin)
    results = {}
    for job in jobs:
        ctx = jmlir.make_ir_context()
        ctx.allow_unregistered_dialects = bool(job.get("unregistered"))
        try:
            with ctx:
                module = ir.Module.parse(job["text"])
                if job.get("pipeline"):
                    passmanager.PassManager.parse(job["pipeline"]).run(module.operation)
                out = module.operation.get_asm(print_generic_op_form=bool(job.get("generic")),
                                               **job.get("print_flags", {}))
            results[job["id"]] = {"ok": True, "out": out, "err": ""}
        except Exception as e:  # MLIR reports parse, verify and pass failures as exceptions
            results[job["id"]] = {"ok": False, "out": "", "err": str(e)}
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
