"""Public reports of XLA partitioning bugs, tried with ``check --partitioner xla``
(issue 31, docs/xla_partitioner_bugs.md): each program of ``examples/xla_bugs`` gets the
verdict written beside it, and XLA's own run of the program (``jax.jit`` on CPU devices,
its per-device results put together by jax's shardings) agrees with that verdict: wrong
where the tool says MISMATCH, right where it says OK. Needs the ``jax`` extra."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from shardy_ref.backends import xla_devices  # noqa: E402
from shardy_ref.backends.xla_check import check_partitioned  # noqa: E402
from shardy_ref.execute import run  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.jax
HERE = ROOT / "examples" / "xla_bugs"
_spec = importlib.util.spec_from_file_location("lower_xla_bugs", HERE / "lower_xla_bugs.py")
bugs = importlib.util.module_from_spec(_spec)
sys.modules["lower_xla_bugs"] = bugs  # its dataclass looks its module up
_spec.loader.exec_module(bugs)


def _xla_run(name: str, arrays: list) -> np.ndarray:
    """XLA's result of program ``name`` run by jax on CPU devices, as a global array: the
    parts of an unreduced result summed over the devices holding parts of one tile."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    fn, args, mesh = bugs.programs()[name]
    with jax.set_mesh(mesh):
        placed = [jax.device_put(a, NamedSharding(mesh, spec))
                  for a, (_, _, spec) in zip(arrays, args, strict=True)]
        out = jax.jit(fn, keep_unused=True)(*placed)
    spec = out.sharding.spec
    unreduced = set(getattr(spec, "unreduced", ()) or ())
    tiles = NamedSharding(mesh, P(*spec.partitions)).devices_indices_map(out.shape)
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape, strict=True))
    parts = int(np.prod([sizes[a] for a in unreduced])) if unreduced else 1
    by_tile: dict = {}
    for shard in out.addressable_shards:
        key = tuple((s.start or 0, s.stop if s.stop is not None else n)
                    for s, n in zip(tiles[shard.device], out.shape, strict=True))
        by_tile.setdefault(key, []).append(np.asarray(shard.data))
    whole = np.zeros(out.shape, out.dtype)
    for key, values in by_tile.items():
        copies = len(values) // parts
        whole[tuple(slice(a, b) for a, b in key)] = np.sum(values, axis=0) / copies
    return whole


@pytest.mark.parametrize("case", bugs.CASES, ids=lambda c: c.name)
def test_verdict_and_xlas_own_run_agree(case):
    xla_devices(64)
    text = (HERE / f"{case.name}.mlir").read_text()
    with np.load(HERE / f"{case.name}.inputs.npz") as npz:
        arrays = [npz[f"arg{i}"] for i in range(len(npz.files))]
    devices = int(np.prod(case.mesh))
    report = check_partitioned(text, *arrays, num_devices=devices)
    assert ("OK" if report.ok else "MISMATCH") == case.verdict, \
        [o.line for o in report.outputs]
    (want,) = run(text, *arrays)
    xla = _xla_run(case.name, arrays)
    scale = float(np.abs(want).max())
    xla_right = np.allclose(xla, want, rtol=0, atol=1e-5 * max(scale, 1.0))
    assert xla_right == report.ok
    if not report.ok:  # the same error, measured by the tool and in XLA's run
        worst = float(np.abs(xla - want).max())
        assert f"max abs error {worst:.3g}" in report.outputs[0].line
        # located at the value XLA computes for the scatter (the gradient's scatter-add)
        assert report.first_wrong.xla_name.startswith("scatter")
