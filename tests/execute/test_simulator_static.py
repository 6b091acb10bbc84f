"""What a partitioned program works out once instead of on every run (issue 30): the entry
function, the devices' layout, the memory estimate and the interpreter's block plans of
``SpmdProgram.run``, and each sharding's device blocks when results are put back together.
Runs that reuse them give exactly what a fresh program gives, for any inputs."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings

from shardy_ref.execute import InterpreterError, compile_spmd
from shardy_ref.execute import interpreter as interpreter_module
from shardy_ref.execute.context import ProcessLayout
from shardy_ref.execute.memory import estimate_peak, global_bytes
from shardy_ref.execute.shards import (
    block_index,
    device_blocks,
    device_ids,
    mesh_shape,
    shard,
    shard_compact,
    unshard,
    unshard_compact,
)
from shardy_ref.ir.sharding_layout import device_positions
from shardy_ref.ir.utils import entry_function
from tests.execute.test_shards import sharded_arrays
from tests.execute.test_simulate_jax_programs import EXAMPLES, _inputs
from tests.profiles import examples

PROGRAMS = [p for p in EXAMPLES if p.stem.startswith("sim_")]


def _bitwise_equal(got: tuple, want: tuple) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def _plain_estimate(program, arrays):
    """The memory estimate worked out from scratch, as every run did before."""
    func = entry_function(program.per_device, None if program.function == "main"
                          else program.function)
    return estimate_peak(func, program.layout(), [a.varying(program.mesh) for a in program.args],
                         held=global_bytes(arrays))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_repeated_runs_equal_a_fresh_program(path, monkeypatch):
    """The second run reuses the first one's plans (planning again would fail here) and,
    on other inputs, gives what a program that never ran gives; the memory estimate is
    the one worked out from scratch."""
    program = compile_spmd(path.read_text(), filename=str(path))
    first, second = _inputs(program.propagated, seed=1), _inputs(program.propagated, seed=2)
    program.run(*first)
    assert program.estimate_memory(second) == _plain_estimate(program, second)
    fresh = dataclasses.replace(program)
    assert not fresh._facts and program._facts
    want = fresh.run(*second)

    def no_planning(*args):
        raise AssertionError("a block was planned again")

    monkeypatch.setattr(interpreter_module, "value_deaths", no_planning)
    _bitwise_equal(program.run(*second), want)


def test_the_budget_error_names_the_estimate_from_scratch():
    path = next(p for p in PROGRAMS if p.stem == "sim_mlp_64")
    program = compile_spmd(path.read_text(), filename=str(path))
    arrays = _inputs(program.propagated, seed=3)
    for _ in range(2):  # the first run works the estimate out, the second reuses it
        need = _plain_estimate(program, arrays)
        with pytest.raises(InterpreterError, match="needs about") as e:
            program.run(*arrays, memory_budget=need.peak - 1)
        assert f"({need.why})" in str(e.value)
        program.run(*arrays, memory_budget=need.peak)
    assert program.estimate_memory() == _plain_estimate(program, ())


@settings(max_examples=examples(100), deadline=None)
@given(sharded_arrays())
def test_device_blocks_are_each_devices_block_index(case):
    mesh, s, data = case
    assert device_blocks(s, mesh, data.ndim) == tuple(
        (device, block_index(s, mesh, data.ndim, position))
        for position, device in device_positions(mesh))
    shards = shard(data, s, mesh, pad_value=-1)
    np.testing.assert_array_equal(unshard(shards, data.shape, s, mesh), data)


@settings(max_examples=examples(50), deadline=None)
@given(sharded_arrays())
def test_results_are_read_per_device_id_in_any_layout(case):
    """``unshard_compact`` reads device ``d`` at its position in the layout, also when the
    layout's ids are not in row-major order (a permuted mesh)."""
    mesh, s, data = case
    compact = shard_compact(data, s, mesh, pad_value=-1)
    full = np.broadcast_to(compact, mesh_shape(mesh) + compact.shape[len(mesh.axes):])
    ids = np.array(device_ids(mesh)).reshape(mesh_shape(mesh))
    np.testing.assert_array_equal(
        unshard_compact(full, ProcessLayout(ids), data.shape, s, mesh), data)
    flipped = np.flip(ids).copy()
    by_device = {int(ids[at]): full[at] for at in np.ndindex(*ids.shape)}
    moved = np.stack([by_device[int(d)] for d in flipped.reshape(-1)]).reshape(full.shape)
    np.testing.assert_array_equal(
        unshard_compact(moved, ProcessLayout(flipped), data.shape, s, mesh), data)
