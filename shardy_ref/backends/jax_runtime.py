"""jax as an optional runtime: importing it (with an install hint when it is absent) and
finding the devices a partitioned program runs on.

jax is the ``jax`` extra (``pip install -e '.[jax]'``), pinned to the jaxlib our oracle
uses (:data:`shardy_ref.ORACLE_JAX_VERSION`). On CPU, jax makes one host device unless it is
told otherwise before its backend starts; :func:`xla_devices` asks for enough
(``jax_num_cpu_devices``, the config twin of ``--xla_force_host_platform_device_count``)
when the backend has not started yet, and says how to fix it when it has.
"""
from __future__ import annotations

import os
import re

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
    (never an ImportError traceback)."""
    try:
        import jax
    except ImportError:
        raise MissingExtraError(None, f"{what} needs jax, which is not installed: "
                                f"{EXTRA_HINT}") from None
    return jax


def xla_devices(count: int, devices=None) -> list:
    """``count`` devices to run a program on: the first of ``devices`` when given, else of
    jax's default backend (its CPU host devices unless a GPU or TPU is present). A
    :class:`BackendError` says how to get more when there are too few."""
    jax = require_jax("the xla backend")
    if devices is not None:
        found = list(devices)
        if len(found) < count:
            raise BackendError(None, f"the program runs on {count} devices, {len(found)} "
                               "were given")
        return found[:count]
    _ask_for_cpu_devices(jax, count)
    if jax.process_count() > 1:
        raise BackendError(None, "the xla backend runs on one host's devices; this is process "
                           f"{jax.process_index()} of {jax.process_count()} (jax.distributed)")
    found = jax.devices()
    if len(found) < count:
        platform = found[0].platform if found else "cpu"
        raise BackendError(None, f"the program runs on {count} devices but jax has "
                           f"{len(found)} {platform} device(s): jax started its backend "
                           "before shardy_ref could ask for more. Set XLA_FLAGS=--xla_force_"
                           f"host_platform_device_count={count} (or call jax.config.update("
                           f"'jax_num_cpu_devices', {count})) before jax first runs anything")
    return list(found[:count])


def _ask_for_cpu_devices(jax, count: int) -> None:
    """Ask jax for ``max(count, CPU_DEVICES)`` host devices unless its backend has started
    or the user already asked for at least ``count`` (by XLA_FLAGS or the config)."""
    try:
        from jax._src.xla_bridge import backends_are_initialized
    except ImportError:  # another jax layout: leave the device count to the user
        return
    if backends_are_initialized():
        return
    flag = _FLAG.search(os.environ.get("XLA_FLAGS", ""))
    configured = max(int(jax.config.jax_num_cpu_devices), int(flag.group(1)) if flag else 1)
    if configured < count:
        jax.config.update("jax_num_cpu_devices", max(count, CPU_DEVICES))
