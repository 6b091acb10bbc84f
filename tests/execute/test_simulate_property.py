"""``simulate`` equals the single-device run (issue 14): random programs (the generator of
tests/partition/test_per_device_property.py: elementwise ops, contractions, reductions with
add/max/min/multiply bodies, reshapes, pads, slices, sorts, windows, convolutions, reshards
and constraints) x random shardings x random meshes of up to 64 devices (sub-axes,
``device_ids`` permutations, non-divisible dimensions), propagated unless every op already
has a sharding. Integers must match exactly, f32 within rtol 1e-5 of the result's scale. A
located PassError is counted (``hypothesis.event``), never a wrong value or a traceback.

50 examples in the CI profile, 500 in ``HYPOTHESIS_PROFILE=long``."""
from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings

from shardy_ref.execute import compile_spmd, run
from shardy_ref.ir.diagnostics import PassError
from tests.partition.test_per_device_property import Case, cases
from tests.profiles import examples


def _arrays(case: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(case.seed)
    dtype = np.int32 if case.et == "i32" else np.float32
    return [rng.integers(-4, 5, s).astype(dtype) for s in case.arg_shapes]


def _same(got: np.ndarray, want: np.ndarray, et: str) -> bool:
    if et == "i32":
        return np.array_equal(got, want)
    scale = float(np.abs(want).max()) if want.size else 0.0
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= 1e-5 * max(scale, 1)))


@settings(max_examples=examples(50, 500), deadline=None)
@given(cases(devices=64))
def test_simulate_equals_the_single_device_run(case):
    try:
        program = compile_spmd(case.text, propagate=not case.explicit,
                               enable_halo_exchange=case.halo_exchange)
    except PassError as e:
        event(f"pass error: {e.message.split(':')[0][:60]}")
        return
    event(f"{program.num_devices} devices")
    arrays = _arrays(case)
    want = run(case.text, *arrays)
    got = program.run(*arrays)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert _same(g, w, case.et), (f"result {i} differs:\n{g}\n!=\n{w}\n--- program\n"
                                      f"{case.text}")
