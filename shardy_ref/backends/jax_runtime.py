"""jax as an optional runtime: importing it (with an install hint when it is absent) and
finding the devices a partitioned program runs on.

jax is the ``jax`` extra (``pip install -e '.[jax]'``), pinned to the jaxlib our oracle
uses (:data:`shardy_ref.ORACLE_JAX_VERSION`). On CPU, jax makes one host device unless it is
told otherwise before its backend starts; :func:`xla_devices` asks for enough
(``jax_num_cpu_devices``, the config twin of ``--xla_force_host_platform_device_count``)
when the backend has not started yet, and says how to fix it when it has.

With several processes (``jax.distributed.initialize``, one or more hosts) the devices are
jax's global ones, the same share on every process (:func:`xla_devices`), and every
process gets every device's results by :func:`gather_partitions`.
"""
from __future__ import annotations

import os
import re

import numpy as np

from shardy_ref.ir.diagnostics import ShardyRefError

EXTRA_HINT = "pip install -e '.[jax]' in a checkout, or pip install 'shardy-ref[jax]'"
# host devices asked for when jax has not started: the largest mesh of examples/jax, so one
# process can run 8-, 16- and 64-device programs (64 host devices start in ~20 ms)
CPU_DEVICES = 64
_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


class BackendError(ShardyRefError):
    """A runtime cannot run the program: jax is missing, too few devices, XLA refused it."""


class MissingExtraError(BackendError):
    """jax (the ``jax`` extra) is not installed."""


def require_jax(what: str):
    """The ``jax`` module; a :class:`MissingExtraError` naming the extra when it is absent
    (never an ImportError traceback). When jax is not imported yet, XLA's C++ log level is
    set to warnings-and-worse off (unless ``TF_CPP_MIN_LOG_LEVEL`` says otherwise): XLA
    warns that GSPMD, which keeps our all-manual program as it is, is deprecated."""
    import os
    import sys

    if "jax" not in sys.modules:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import jax
    except ImportError:
        raise MissingExtraError(None, f"{what} needs jax, which is not installed: "
                                f"{EXTRA_HINT}") from None
    return jax


def join_processes(processes: int, process_id: int, coordinator: str | None = None) -> None:
    """Join ``processes`` processes (on one or more hosts) as ``process_id`` by
    ``jax.distributed.initialize`` at ``coordinator`` (``host:port``, process 0's host; by
    default jax's ``JAX_COORDINATOR_ADDRESS``), CPU collectives across processes by gloo.
    It must come before jax's backend starts; then :func:`run_on_xla
    <shardy_ref.backends.run_on_xla>` runs on the devices of all processes."""
    jax = require_jax("running on several processes")
    if _backends_started():  # unknown (None): initialize says it when it is too late
        raise BackendError(None, "jax started its backend before this process could join "
                           "the others: join them before jax first runs anything")
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except (AttributeError, ValueError) as e:
        raise BackendError(None, f"this jax has no gloo CPU collectives: {e}") from e
    try:
        jax.distributed.initialize(coordinator, num_processes=processes,
                                   process_id=process_id)
    except (RuntimeError, ValueError) as e:  # JaxRuntimeError is a RuntimeError
        raise BackendError(None, f"process {process_id} of {processes} could not join "
                           f"the others at {coordinator}: {e}") from e


def xla_devices(count: int, devices=None) -> list:
    """``count`` devices to run a program on: the first of ``devices`` when given, else of
    jax's default backend (its CPU host devices unless a GPU or TPU is present). Under
    ``jax.distributed`` they are global: ``count / P`` devices of each of the ``P``
    processes, in process order (every process runs its share). A :class:`BackendError`
    says how to get more when there are too few."""
    jax = require_jax("the xla backend")
    if devices is not None:
        found = list(devices)
        if len(found) < count:
            raise BackendError(None, f"the program runs on {count} devices, {len(found)} "
                               "were given")
        return found[:count]
    _ask_for_cpu_devices(jax, count, _distributed_processes())
    if jax.process_count() > 1:
        return _share_of_every_process(jax, count)
    found = jax.devices()
    if len(found) < count:
        platform = found[0].platform if found else "cpu"
        raise BackendError(None, f"the program runs on {count} devices but jax has "
                           f"{len(found)} {platform} device(s): jax started its backend "
                           "before shardy_ref could ask for more. Set XLA_FLAGS=--xla_force_"
                           f"host_platform_device_count={count} (or call jax.config.update("
                           f"'jax_num_cpu_devices', {count})) before jax first runs anything")
    return list(found[:count])


def _share_of_every_process(jax, count: int) -> list:
    """The first ``count / P`` devices (by id) of each of jax's ``P`` processes, process 0's
    first: partition ``i`` runs on process ``i // (count / P)``."""
    processes = jax.process_count()
    share, rest = divmod(count, processes)
    if rest:
        raise BackendError(None, f"the program runs on {count} devices, which the "
                           f"{processes} processes of jax.distributed cannot share evenly")
    chosen = []
    for process in range(processes):
        local = sorted((d for d in jax.devices() if d.process_index == process),
                       key=lambda d: d.id)
        if len(local) < share:
            raise BackendError(None, f"the program runs on {count} devices, {share} on each "
                               f"of the {processes} processes of jax.distributed, but process "
                               f"{process} has {len(local)}: call jax.config.update("
                               f"'jax_num_cpu_devices', {share}) (or set XLA_FLAGS=--xla_force_"
                               f"host_platform_device_count={share}) in every process before "
                               "jax.distributed.initialize")
        chosen += local[:share]
    return chosen


def _distributed_processes() -> int:
    """How many processes ``jax.distributed.initialize`` joined this one with (1 when it
    was not called), known before jax's backend starts."""
    try:
        from jax._src.distributed import global_state
    except ImportError:  # another jax layout: the device count is the user's
        return 1
    return int(global_state.num_processes or 1) if global_state.client is not None else 1


def _ask_for_cpu_devices(jax, count: int, processes: int = 1) -> None:
    """Ask jax for ``max(count, CPU_DEVICES)`` host devices (split over the ``processes``
    of jax.distributed) unless its backend has started or the user already asked for
    enough (by XLA_FLAGS or the config)."""
    if _backends_started() is not False:  # started, or unknown: the count is the user's
        return
    share = -(-count // processes)
    flag = _FLAG.search(os.environ.get("XLA_FLAGS", ""))
    configured = max(int(jax.config.jax_num_cpu_devices), int(flag.group(1)) if flag else 1)
    if configured < share:
        jax.config.update("jax_num_cpu_devices", max(share, CPU_DEVICES // processes))


def _backends_started() -> bool | None:
    """Whether jax has started its backends (then its device count is fixed); None when
    this jax does not say (another layout of its internals)."""
    try:
        from jax._src.xla_bridge import backends_are_initialized
    except ImportError:
        return None
    return backends_are_initialized()


def gather_partitions(jax, devices, local: list[dict[int, np.ndarray]]) -> list[list]:
    """Every partition's results on every process, ``[result][partition]``, from this
    process's ``local[result]`` (partition -> its value, for the partitions on this
    process's ``devices``). The values travel as bytes (so jax's 32-bit default narrows no
    dtype) in one all-gather over one device of each process: a row per process, a slot per
    partition it holds; a result has the same shape and dtype on every device (the
    per-device program's type)."""
    owners = [[i for i, d in enumerate(devices) if d.process_index == p]
              for p in range(jax.process_count())]
    if not all(owners):
        idle = [p for p, partitions in enumerate(owners) if not partitions]
        raise BackendError(None, f"process(es) {idle} of jax.distributed hold none of the "
                           "program's devices, so they cannot take part in the run")
    mine = owners[jax.process_index()]
    templates = [values[mine[0]] for values in local]
    slots = max(len(partitions) for partitions in owners)
    row = np.concatenate([_bytes([values[i] for values in local]) for i in mine] +
                         [np.zeros(sum(t.nbytes for t in templates) * (slots - len(mine)),
                                   np.uint8)])
    rows = _all_gather(jax, [devices[partitions[0]] for partitions in owners], row)
    out = [[None] * len(devices) for _ in local]
    for partitions, gathered in zip(owners, rows, strict=True):
        for partition, values in zip(partitions, _unpack(gathered, templates, len(partitions)),
                                     strict=True):
            for r, value in enumerate(values):
                out[r][partition] = value
    return out


def _all_gather(jax, devices: list, row: np.ndarray) -> np.ndarray:
    """Every process's ``row`` (the same length on all), stacked in process order:
    ``devices`` holds one device of each process; each process puts its row on its own."""
    if not row.size:
        return np.zeros((len(devices), 0), np.uint8)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(devices, dtype=object), ("processes",))
    (here,) = [d for d in devices if d.process_index == jax.process_index()]
    stacked = jax.make_array_from_single_device_arrays(
        (len(devices), row.size), NamedSharding(mesh, PartitionSpec("processes")),
        [jax.device_put(row[None], here)])
    gathered = jax.jit(_identity, out_shardings=NamedSharding(mesh, PartitionSpec()))(stacked)
    return np.asarray(gathered.addressable_data(0))


def _identity(x):
    """The all-gather's function: jit makes its replicated result from the sharded input."""
    return x


def _bytes(values: list[np.ndarray]) -> np.ndarray:
    """One partition's results as one run of bytes."""
    return np.concatenate([np.zeros(0, np.uint8)] + [
        np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in values])


def _unpack(row: np.ndarray, templates: list[np.ndarray], count: int) -> list[list]:
    """The results of the first ``count`` partitions in a gathered ``row``, shaped like
    ``templates``."""
    out, offset = [], 0
    for _ in range(count):
        values = []
        for t in templates:
            values.append(row[offset:offset + t.nbytes].view(t.dtype).reshape(t.shape))
            offset += t.nbytes
        out.append(values)
    return out
