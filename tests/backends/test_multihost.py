"""``run_on_xla`` under ``jax.distributed`` (issue 18): two processes on this machine join a
coordinator on 127.0.0.1 with 8 CPU devices each (16 global), cross-process collectives by
gloo, and each runs examples on the global devices (8-device programs on 4 + 4 devices, a
16-device one on 8 + 8; then again with the partitions dealt to the processes in turn, so
every collective crosses processes) and compares every result with our simulator's
(``multihost_worker.py``). Which devices a program gets is checked without processes, on
a stand-in for jax. Needs the ``jax`` extra."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("jax")

from shardy_ref.backends import BackendError
from shardy_ref.backends.jax_runtime import _share_of_every_process
from shardy_ref.tools.cli import main
from tests.conftest import ROOT

pytestmark = pytest.mark.jax

PROCESSES = 2
DEVICES = 8  # CPU devices of each process
# an all_reduce, an all_gather of integers, collective_permute + all_gather + all_reduce of a
# padded dimension, shard_map's ppermute, psum_scatter (reduce_scatter) and all_to_all
NAMES = ["sim_mlp_col_row", "sim_argmax_int", "sim_nondivisible_10", "sim_shard_map_ppermute",
         "sim_shard_map_psum_scatter", "sim_shard_map_all_to_all_16"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_processes(argv) -> list[tuple[int, str, str]]:
    """``argv(i)`` run as process ``i`` of ``PROCESSES`` (all at once, from the checkout's
    root, jax on CPU): their exit codes, outputs and errors; the test skips when one says
    ``skip: ...`` (no gloo here)."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"JAX_PLATFORMS": "cpu"}
    procs = [subprocess.Popen(argv(i), cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for i in range(PROCESSES)]
    outputs = []
    try:
        for proc in procs:
            outputs.append((proc, *proc.communicate(timeout=120)))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    skips = [line for _, out, _ in outputs for line in out.splitlines()
             if line.startswith("skip:")]
    if skips:
        pytest.skip(skips[0])
    for i, (proc, out, err) in enumerate(outputs):
        assert proc.returncode == 0, f"process {i} failed:\n{out}\n{err[-4000:]}"
    return [(proc.returncode, out, err) for proc, out, err in outputs]


def test_two_processes_run_on_xla_like_the_simulator():
    port = _free_port()
    outputs = _run_processes(lambda i: [sys.executable, "-m", "tests.backends.multihost_worker",
                                        str(i), str(PROCESSES), str(port), str(DEVICES),
                                        *NAMES])
    for _, out, _ in outputs:
        assert [line.split()[1] for line in out.splitlines() if line.startswith("ok ")] == NAMES


def test_cli_check_on_two_processes():
    """``shardy-ref check --backend xla --processes 2`` once per process (no device count
    set: each process asks jax for its share): process 0 prints the report, process 1
    nothing, gloo's connection lines stay off standard output."""
    port = _free_port()
    cli = "import sys; from shardy_ref.tools.cli import main; sys.exit(main())"
    path = "examples/jax/sim_transformer_block.mlir"
    (_, first, _), (_, second, _) = _run_processes(
        lambda i: [sys.executable, "-c", cli, "check", "--backend", "xla", "--quiet",
                   "--processes", str(PROCESSES), "--process-id", str(i),
                   "--coordinator", f"127.0.0.1:{port}", path])
    assert first.startswith(f"{path}: mesh <[\"data\"=2, \"model\"=4]> (8 devices)")
    assert first.endswith("OK: the partitioned program (run by XLA) computes the same results\n")
    assert "Gloo" not in first and second == ""


def _fake_jax(per_process: list[int]):
    """A stand-in for jax with ``per_process[p]`` devices on process ``p`` (ids as jax
    numbers them on CPU: ``2048 p + k``), listed process 1 first to show the order is
    made, not found."""
    devices = [SimpleNamespace(id=2048 * p + k, process_index=p)
               for p in reversed(range(len(per_process))) for k in range(per_process[p])]
    return SimpleNamespace(process_count=lambda: len(per_process), devices=lambda: devices)


def test_each_process_gets_an_even_share_in_process_order():
    chosen = _share_of_every_process(_fake_jax([8, 8]), 8)
    assert [d.id for d in chosen] == [0, 1, 2, 3, 2048, 2049, 2050, 2051]


def test_a_share_that_does_not_divide_or_fit_says_so():
    with pytest.raises(BackendError, match=r"the 2 processes of jax\.distributed cannot share "
                       "evenly"):
        _share_of_every_process(_fake_jax([4, 4]), 3)
    with pytest.raises(BackendError, match=r"4 on each of the 2 processes .* process 1 has 2: "
                       r"call jax.config.update\('jax_num_cpu_devices', 4\)"):
        _share_of_every_process(_fake_jax([4, 2]), 8)


@pytest.mark.parametrize(("flags", "message"), [
    (["--processes", "2"], "--processes runs on XLA's devices: add --backend xla"),
    (["--backend", "xla", "--processes", "2", "--process-id", "2"],
     "--process-id 2 is not a process of --processes 2 (0 .. P-1)"),
    (["--backend", "xla", "--process-id", "1"],
     "--process-id 1 is not a process of --processes 1"),
    (["--backend", "xla", "--processes", "2"], "--processes needs --coordinator HOST:PORT"),
])
def test_cli_processes_usage(flags, message, capsys, monkeypatch):
    monkeypatch.delenv("JAX_COORDINATOR_ADDRESS", raising=False)
    assert main(["run", "--quiet", *flags, "examples/jax/sim_mlp_col_row.mlir"]) == 1
    assert capsys.readouterr().err.startswith(f"shardy-ref run: error: {message}")
