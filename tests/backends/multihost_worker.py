"""One process of ``test_multihost.py``: joins ``jax.distributed`` (coordinator
``127.0.0.1:PORT``, ``PROCESSES`` processes with ``DEVICES`` CPU devices each, cross-process
collectives by gloo), runs examples by ``run_on_xla`` on the global devices and compares
each result with our simulator's (rtol 1e-5): once on the default devices (the first half of
the partitions on process 0, so some collectives stay inside a process) and once on devices
taken from the processes in turn (partition ``i`` on process ``i % PROCESSES``: every
collective crosses processes). Prints ``ok <name> <seconds>`` per example,
``skip: <reason>`` (exit 3) when jax cannot do cross-process CPU collectives here.

``python -m tests.backends.multihost_worker PROCESS PROCESSES PORT DEVICES NAME...``
from the checkout's root."""
from __future__ import annotations

import sys
import time

SKIP = 3


def _join(process: int, processes: int, port: str, devices: int):
    import jax

    from shardy_ref.backends import BackendError, join_processes

    jax.config.update("jax_num_cpu_devices", devices)
    try:
        join_processes(processes, process, f"127.0.0.1:{port}")
    except BackendError as e:
        if "no gloo" not in e.message:
            raise
        print(f"skip: {e.message}", flush=True)
        sys.exit(SKIP)
    return jax


def _in_turn(jax, count: int) -> list:
    """``count`` global devices, partition ``i`` on process ``i % P``."""
    processes = jax.process_count()
    local = [[d for d in jax.devices() if d.process_index == p] for p in range(processes)]
    return [local[i % processes][i // processes] for i in range(count)]


def main(argv: list[str]) -> int:
    process, processes, port, devices, *names = argv
    jax = _join(int(process), int(processes), port, int(devices))

    import numpy as np

    from shardy_ref.backends import run_on_xla
    from shardy_ref.execute import compile_spmd
    from tests.execute.test_simulate_jax_programs import _inputs

    assert jax.process_count() == int(processes), jax.process_count()
    for name in names:
        start = time.perf_counter()
        path = f"examples/jax/{name}.mlir"
        program = compile_spmd(open(path).read(), filename=path)
        arrays = _inputs(program.propagated, seed=18)
        want = program.run(*arrays)
        for devices in (None, _in_turn(jax, program.num_devices)):
            got = run_on_xla(program, *arrays, devices=devices)
            assert len(got) == len(want), (name, len(got), len(want))
            for g, w in zip(got, want, strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape, (name, g.dtype, w.dtype)
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=name)
        print(f"ok {name} {time.perf_counter() - start:.2f}", flush=True)
    jax.distributed.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
