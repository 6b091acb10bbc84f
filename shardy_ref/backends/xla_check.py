"""``check_partitioned``: XLA's partitioned program judged against our single-device run.

The module is partitioned by XLA (:func:`~.xla_partitioner.partition_with_xla`), and
every device of XLA's per-device program is run by our interpreter at once
(:func:`shardy_ref.execute.run_spmd`: ``partition_id``, replica groups, channel ids and
every collective as the StableHLO spec defines them), on the shards of the global inputs
that XLA's argument shardings give each device. Each device's results are then compared
with the shard of the single-device results that XLA's result shardings say it holds
(padding cut off), so a wrong element is pinned to the devices holding it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from shardy_ref.backends.hlo_sharding import HloSharding
from shardy_ref.backends.jax_runtime import BackendError
from shardy_ref.backends.xla_partitioner import XlaPartitioned, partition_with_xla
from shardy_ref.execute.compare import magnitude, mismatches


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """How one result of XLA's program compares: a line (shape, largest errors), whether it
    matches, and the devices holding a wrong element."""

    index: int
    line: str
    same: bool
    wrong_devices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PartitionedCheck:
    """The outcome of :func:`check_partitioned`."""

    partitioned: XlaPartitioned
    outputs: tuple[OutputCheck, ...]
    seconds: dict  # phase -> wall seconds: partition, single, devices
    first_wrong: object = None  # a xla_locate.Divergence when a mismatch could be located

    @property
    def ok(self) -> bool:
        return all(o.same for o in self.outputs)


def check_partitioned(module_text: str, *arrays, num_devices: int,
                      partitioner: str = "shardy", function: str = "main",
                      rtol: float = 1e-5, atol: float = 1e-5, devices=None,
                      partitioned: XlaPartitioned | None = None) -> PartitionedCheck:
    """Partition ``module_text`` (global view, sdy shardings) with XLA's ``partitioner``
    for ``num_devices`` devices, run XLA's per-device program on every device with our
    interpreter and compare each device's results with its shard of the single-device run
    on the global ``arrays``. ``partitioned`` skips XLA (a program from
    :func:`partition_with_xla`, possibly edited)."""
    from shardy_ref.execute import run, run_spmd
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    seconds = {}
    start = time.perf_counter()
    if partitioned is None:
        partitioned = partition_with_xla(module_text, num_devices, partitioner=partitioner,
                                         devices=devices)
    seconds["partition"] = time.perf_counter() - start
    start = time.perf_counter()
    module = parse_module(module_text)
    verify_module(module)
    want = run(module, *arrays, function=function)
    seconds["single"] = time.perf_counter() - start
    start = time.perf_counter()
    per_device = parse_module(partitioned.text, "<XLA's partitioned program>")
    verify_module(per_device)
    local = device_arguments(partitioned, arrays)
    got = run_spmd(per_device, local, function="main")
    seconds["devices"] = time.perf_counter() - start
    if len(partitioned.result_shardings) != len(want):
        raise BackendError(None, f"XLA's program has {len(partitioned.result_shardings)} "
                           f"result sharding(s) for {len(want)} results")
    outputs = tuple(check_output(i, sharding, [g[i] for g in got], w, rtol, atol)
                    for i, (sharding, w) in enumerate(zip(partitioned.result_shardings, want,
                                                          strict=True)))
    first = None
    if not all(o.same for o in outputs):
        from shardy_ref.backends.xla_locate import first_divergence

        first = first_divergence(partitioned, arrays, rtol=rtol, atol=atol, function=function)
    return PartitionedCheck(partitioned, outputs, seconds, first)


def device_arguments(partitioned: XlaPartitioned, arrays) -> list[list[np.ndarray]]:
    """Every device's arguments, ``[device][argument]``: its shards of the global
    ``arrays`` by XLA's argument shardings."""
    n = partitioned.num_devices
    if len(arrays) != len(partitioned.arg_shardings):
        raise BackendError(None, f"XLA's program takes {len(partitioned.arg_shardings)} "
                           f"arguments, got {len(arrays)}")
    shards = [s.shard(a, n) for s, a in zip(partitioned.arg_shardings, arrays, strict=True)]
    return [[per_arg[d] for per_arg in shards] for d in range(n)]


def check_output(index: int, sharding: HloSharding, per_device: list, want,
                 rtol: float, atol: float) -> OutputCheck:
    """Compare every device's value of result ``index`` with its shard of ``want`` (for an
    unreduced sharding, the sum over each group of devices whose parts make one tile): the
    line gives the largest error over every device (floats) or how many elements of the
    global value some device holds wrong (integers)."""
    want = np.asarray(want)
    expected = sharding.expected(want, len(per_device))
    scale = magnitude(want)
    wrong_anywhere = np.zeros(want.shape, dtype=bool)
    worst = 0.0
    wrong: list[int] = []
    groups: dict[tuple, list[int]] = {}
    for d, exp in enumerate(expected):
        if exp is not None:  # not a non-owner of a maximal sharding
            groups.setdefault(sharding.unreduced_group(d) if sharding.has_unreduced else (d,),
                              []).append(d)
    for members in groups.values():
        exp = expected[members[0]]
        values = [np.asarray(per_device[d]) for d in members]
        for d, value in zip(members, values, strict=True):
            if value.dtype != exp.dtype or value.ndim != exp.ndim or any(
                    g < e for g, e in zip(value.shape, exp.shape, strict=True)):
                return OutputCheck(index, f"{want.dtype}{list(want.shape)}: device {d} holds "
                                   f"{value.dtype}{list(value.shape)}, its shard is "
                                   f"{exp.dtype}{list(sharding.local_shape(want.shape))}",
                                   False, (d,))
        cut = tuple(slice(0, e) for e in exp.shape)
        value = values[0][cut] if len(values) == 1 else \
            np.sum([v[cut] for v in values], axis=0, dtype=exp.dtype)
        bad = mismatches(value, exp, rtol, atol, scale)
        if bad.any():
            wrong.extend(members)
            wrong_anywhere[_region(sharding, members[0], want.shape)] |= bad
        if want.dtype.kind in "fc":
            worst = max(worst, _max_error(value, exp))
    if want.dtype.kind in "fc":
        rel = worst / scale if scale else 0.0
        text = f"max abs error {worst:.3g}, max rel error {rel:.3g}"
    else:
        text = f"{int(wrong_anywhere.sum())} of {want.size} elements differ"
    return OutputCheck(index, f"{want.dtype}{list(want.shape)}: {text}", not wrong,
                       tuple(sorted(wrong)))


def _region(sharding: HloSharding, device: int, shape) -> tuple[slice, ...]:
    block = sharding.block(device, shape) if sharding.kind != "maximal" else \
        tuple((0, n) for n in shape)
    return tuple(slice(a, b) for a, b in block)


def _max_error(got: np.ndarray, want: np.ndarray) -> float:
    """The largest absolute difference where both are finite."""
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    finite = np.isfinite(g) & np.isfinite(w)
    return float(np.abs(g[finite] - w[finite]).max()) if finite.any() else 0.0
