"""The JAX sweep: every function of :mod:`tests.execute.jax_functions` (more than 300 from
``jax.numpy``, ``jax.lax`` and ``jax.nn``), lowered by JAX with random ``in_shardings`` on a
mesh of 8 devices and on one of 16 (1-3 axes; dimensions of 12, 6 and 3 that 8 and 16 do not
divide), is partitioned and simulated by us (``simulate``) and run by XLA (``jax.jit`` with
the same shardings): the results agree, or our partitioner refuses with a located error of a
known class. Needs the ``jax`` extra.

``python -m tests.execute.test_jax_sweep [NAME...]`` prints the table.
"""
from __future__ import annotations

import itertools
import random
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from shardy_ref.backends import xla_devices  # noqa: E402

pytestmark = pytest.mark.jax

MESH_SHAPES = {8: ((8,), (2, 4), (4, 2), (2, 2, 2)), 16: ((16,), (4, 4), (2, 8), (2, 2, 4))}
AXIS_NAMES = ("x", "y", "z")
RTOL = 1e-4
# refusal classes: a located error of our partitioner, and why it is not a defect
REFUSALS: dict[str, str] = {}


@dataclass(frozen=True)
class Outcome:
    verdict: str  # equal, refused, wrong, error
    detail: str = ""


def _mesh(shape):
    from jax.sharding import Mesh

    devices = np.array(xla_devices(int(np.prod(shape)))).reshape(shape)
    return Mesh(devices, AXIS_NAMES[:len(shape)])


def draw_specs(f, devices: int, rng: random.Random):
    """A mesh shape of ``devices`` devices and a ``PartitionSpec`` per argument: each
    dimension left whole or sharded along one or two unused axes whose sizes divide it
    (JAX requires divisible argument shardings; intermediate values need not be)."""
    from jax.sharding import PartitionSpec as P

    shape = rng.choice(MESH_SHAPES[devices])
    sizes = dict(zip(AXIS_NAMES, shape, strict=False))
    specs = []
    for arg in f.args:
        free = list(sizes)
        rng.shuffle(free)
        parts = []
        for n in arg.shape:
            fits = [a for a in free if n % sizes[a] == 0]
            if not fits or rng.random() < 0.4:
                parts.append(None)
                continue
            first = fits[0]
            free.remove(first)
            second = [a for a in free if n % (sizes[first] * sizes[a]) == 0]
            if second and rng.random() < 0.3:
                free.remove(second[0])
                parts.append((first, second[0]))
            else:
                parts.append(first)
        specs.append(P(*parts))
    return shape, specs


def draw_inputs(f, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for arg in f.args:
        if arg.dtype == "float32":
            out.append(rng.standard_normal(arg.shape).astype(np.float32))
        elif arg.dtype == "bool":
            out.append(rng.integers(0, 2, arg.shape).astype(bool))
        else:
            out.append(rng.integers(arg.low, arg.high, arg.shape).astype(np.int32))
    return out


def run_case(f, devices: int, draw: int = 0) -> tuple[Outcome, str]:
    """Lower ``f`` with shardings drawn on ``devices`` devices (``draw`` picks another
    draw), simulate it and run it by XLA; the outcome and a description of the
    shardings."""
    from jax.sharding import NamedSharding

    from shardy_ref.execute import compile_spmd
    from shardy_ref.frontends.jax import lower_to_text
    from shardy_ref.ir.diagnostics import PassError

    rng = random.Random(f"{f.name}/{devices}" + (f"/{draw}" if draw else ""))
    shape, specs = draw_specs(f, devices, rng)
    mesh = _mesh(shape)
    where = f"mesh {dict(zip(AXIS_NAMES, shape, strict=False))} in_shardings {specs}"
    arrays = draw_inputs(f, np.random.default_rng(len(f.name) + devices))
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays]
    text = lower_to_text(f.fn, *structs, mesh=mesh, in_shardings=tuple(specs))
    with jax.set_mesh(mesh):
        jitted = jax.jit(f.fn, in_shardings=tuple(NamedSharding(mesh, s) for s in specs))
        want = jax.tree.leaves(jitted(*arrays))
    try:
        program = compile_spmd(text, filename=f"<jax {f.name}>")
    except PassError as e:
        return Outcome("refused", e.message.splitlines()[0]), where
    except Exception as e:
        return Outcome("error", f"partitioning: {type(e).__name__}: {e}"), where
    try:
        got = program.run(*arrays)
    except Exception as e:
        return Outcome("error", f"simulation: {type(e).__name__}: {e}"), where
    if len(got) != len(want):
        return Outcome("wrong", f"{len(got)} results, jax gives {len(want)}"), where
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        why = mismatch(np.asarray(g), np.asarray(w))
        if why:
            return Outcome("wrong", f"result {i}: {why}"), where
    return Outcome("equal"), where


def mismatch(got: np.ndarray, want: np.ndarray) -> str | None:
    """Integers and booleans exactly; floats within ``RTOL`` of the result's scale (XLA
    fuses and reassociates), NaNs and infinities where jax has them."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)}, jax gives {want.dtype}{list(want.shape)}"
    if not np.issubdtype(want.dtype, np.inexact):
        bad = int(np.sum(got != want))
        return f"{bad} elements differ" if bad else None
    want64, got64 = want.astype(np.float64), got.astype(np.float64)
    finite = np.isfinite(want64)
    if not np.array_equal(finite, np.isfinite(got64)) or not np.array_equal(
            got64[~finite], want64[~finite], equal_nan=True):
        return "the non-finite elements differ"
    if not finite.any():
        return None
    scale = max(float(np.abs(want64[finite]).max()), 1.0)
    err = float(np.abs(got64[finite] - want64[finite]).max())
    return f"largest error {err:.3g} over {RTOL} x {scale:.3g}" if err > RTOL * scale \
        else None


def _known_refusal(detail: str) -> str | None:
    return next((why for pattern, why in REFUSALS.items() if pattern in detail), None)


@pytest.fixture(scope="module")
def devices():
    # as many as tests/backends asks for, before jax's backend starts in this worker
    # (whichever of them runs first there fixes the count)
    xla_devices(64)


def _names():
    from tests.execute.jax_functions import FUNCTIONS
    return [f.name for f in FUNCTIONS]


@pytest.mark.parametrize("name", _names())
def test_function_is_right_or_refused(name, devices):
    """In the CI profile one sharding draw on one mesh size (8 or 16 devices, by the
    function's name); in the long profile four draws on each (``python -m`` runs one on
    each)."""
    from tests.execute.jax_functions import FUNCTIONS
    from tests.profiles import PROFILE, examples

    f = next(f for f in FUNCTIONS if f.name == name)
    sizes = (8, 16) if PROFILE == "long" else ((8, 16)[zlib.crc32(name.encode()) % 2],)
    for count, draw in itertools.product(sizes, range(examples(1, 4))):
        outcome, where = run_case(f, count, draw)
        assert outcome.verdict in ("equal", "refused"), \
            f"{name} on {where}: {outcome.verdict}: {outcome.detail}"
        if outcome.verdict == "refused":
            assert _known_refusal(outcome.detail), \
                f"{name} on {where}: refused for an unknown reason: {outcome.detail}"


def test_there_are_300_functions_of_every_family():
    from tests.execute.jax_functions import FUNCTIONS

    assert len(FUNCTIONS) >= 300
    prefixes = Counter(f.name.split("_")[0] for f in FUNCTIONS)
    for family in ("unary", "binary", "reduce", "take", "at", "dynamic", "sort", "reshape",
                   "einsum", "conv2d", "scan", "cond", "switch", "pad", "roll", "one"):
        assert prefixes[family], family


def main(argv: list[str]) -> int:
    from tests.execute.jax_functions import FUNCTIONS

    xla_devices(16)
    chosen = [f for f in FUNCTIONS if not argv or f.name in argv]
    total: Counter = Counter()
    refusals: Counter = Counter()
    start = time.time()
    for f in chosen:
        for count in (8, 16):
            outcome, where = run_case(f, count)
            total[outcome.verdict] += 1
            if outcome.verdict == "refused":
                refusals[outcome.detail] += 1
            if outcome.verdict != "equal":
                print(f"{outcome.verdict}: {f.name} on {where}: {outcome.detail[:300]}",
                      flush=True)
    cases = sum(total.values())
    print(f"functions: {len(chosen)}; cases (function x sharding): {cases}; equal: "
          f"{total['equal']}; refused: {total['refused']} "
          f"({100 * total['refused'] / max(cases, 1):.1f}%); wrong: {total['wrong']}; "
          f"errors: {total['error']} ({time.time() - start:.0f} s)")
    for why, n in refusals.most_common():
        print(f"  refused {n}: {why}")
    return 1 if total["wrong"] or total["error"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
