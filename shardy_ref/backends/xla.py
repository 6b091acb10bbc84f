"""Our partitioned programs on real devices through XLA: ``run_on_xla(module, *arrays)``.

The module is partitioned by our own passes (:func:`shardy_ref.execute.compile_spmd`:
propagation if needed, then ``sdy-ref-per-device-pipeline``), the per-device program is
printed, and XLA compiles that text for ``N`` devices as an already-partitioned SPMD
program: ``num_partitions = N``, ``num_replicas = 1``, so ``stablehlo.partition_id`` and the
collectives' device ids (``replica_groups`` over flattened ids with
``use_global_device_ids``, channel handles) mean what they mean to our interpreter
(``interpreter.run_parallel`` with one replica). XLA's CPU and GPU compilers refuse
``num_partitions > 1`` without SPMD partitioning, so the entry function's arguments and
results are marked ``mhlo.sharding = "{manual}"``: every value is then manual and the
partitioner keeps the program as it is (no partitioning of XLA's own; the local shapes go
through unchanged, which :meth:`XlaProgram.parameter_shapes` lets tests check). Each
device's local inputs are the shards the simulator would give it
(:meth:`SpmdProgram.device_arguments`) and the global results are put back together by the
simulator's code (:meth:`SpmdProgram.assemble_results`). Under ``jax.distributed`` (several
processes, one or more hosts) the devices are global, each process places its own devices'
shards, and the results of all devices are gathered to every process before they are put
together.

jax is the optional ``jax`` extra; without it the error names the extra.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from shardy_ref.backends.jax_runtime import (
    BackendError,
    gather_partitions,
    require_jax,
    xla_devices,
)

MANUAL = "{manual}"


@dataclass(frozen=True, slots=True)
class XlaProgram:
    """A partitioned program compiled by XLA: our :class:`SpmdProgram` (its per-device
    module is what XLA compiled), the loaded executable and its devices, in partition
    order (device ``i`` runs as ``partition_id`` ``i``)."""

    program: object
    executable: object
    devices: tuple
    text: str  # what XLA compiled: our per-device program, its entry's values manual

    def run(self, *arrays) -> tuple:
        """Run every device on its shards of the global NumPy ``arrays``; returns the global
        results as NumPy arrays, as ``SpmdProgram.run`` does. Under ``jax.distributed`` every
        process calls this with the same ``arrays``: it places the shards of its own devices
        only, and gets every device's results from the other processes to put the global
        ones together."""
        jax = require_jax("the xla backend")
        partition = {d.id: i for i, d in enumerate(self.devices)}
        inputs = [_place(jax, self.devices, per_device)
                  for per_device in self.program.device_arguments(*arrays)]
        try:
            results = self.executable.execute_sharded(inputs)
            outputs = results.disassemble_into_single_device_arrays()
            local = [{partition[_device(a).id]: np.asarray(a) for a in per_device}
                     for per_device in outputs]
        except jax.errors.JaxRuntimeError as e:
            raise BackendError(None, f"XLA could not run the per-device program: {e}") from e
        if jax.process_count() > 1:
            return self.program.assemble_results(gather_partitions(jax, self.devices, local))
        return self.program.assemble_results([[values[i] for i in range(len(self.devices))]
                                              for values in local])

    def parameter_shapes(self) -> list[tuple[int, ...]]:
        """The shapes of the entry parameters of the program XLA compiled (after its SPMD
        pass): our local shapes when XLA did not partition the program again."""
        head = self.executable.hlo_modules()[0].to_string().split("\n", 1)[0]
        found = re.search(r"entry_computation_layout=\{\((.*)\)->", head)
        params = found.group(1) if found else ""
        return [tuple(int(d) for d in dims.split(",") if d)
                for dims in re.findall(r"\w+\[([\d,]*)\]", params)]


def _place(jax, devices, per_device: list[np.ndarray]):
    """One argument as a jax array whose shard on ``devices[i]`` is ``per_device[i]``
    (only this process's devices get theirs). Its sharding says replicated: the
    executable reads each device's buffer as that device's local value, which is what
    a per-device program wants."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    here = jax.process_index()
    buffers = [jax.device_put(a, d) for a, d in zip(per_device, devices, strict=True)
               if d.process_index == here]
    mesh = Mesh(np.array(devices, dtype=object), ("devices",))
    return jax.make_array_from_single_device_arrays(
        per_device[0].shape, NamedSharding(mesh, PartitionSpec()), buffers)


def run_per_device_on_xla(text: str, per_device: list[list[np.ndarray]], *,
                          devices=None, function: str = "main") -> list[list[np.ndarray]]:
    """Run an already partitioned program (MLIR text: what every device runs, with
    ``partition_id`` and collectives) on ``len(per_device)`` of XLA's devices, device ``i``
    on its arguments ``per_device[i]``; returns each device's results,
    ``[device][result]``. One process only."""
    jax = require_jax("the xla backend")
    from shardy_ref.ir.builtin_attrs import StringAttr
    from shardy_ref.ir.func_attrs import function_type, set_attrs
    from shardy_ref.ir.utils import entry_function
    from shardy_ref.parser import parse_module, print_module

    n = len(per_device)
    found = xla_devices(n, devices)
    module = parse_module(text)
    func = entry_function(module, None if function == "main" else function)
    signature = function_type(func)
    for kind, count in (("arg", len(signature.inputs)), ("result", len(signature.results))):
        set_attrs(func, kind, "mhlo.sharding", dict.fromkeys(range(count), StringAttr(MANUAL)))
    executable = _compile(print_module(module), found)
    inputs = [_place(jax, found, [np.asarray(per_device[d][i]) for d in range(n)])
              for i in range(len(signature.inputs))]
    partition = {d.id: i for i, d in enumerate(found)}
    try:
        outputs = executable.execute_sharded(inputs).disassemble_into_single_device_arrays()
    except jax.errors.JaxRuntimeError as e:
        raise BackendError(None, f"XLA could not run the per-device program: {e}") from e
    by_device: list[list] = [[None] * len(outputs) for _ in range(n)]
    for r, arrays in enumerate(outputs):
        for a in arrays:
            by_device[partition[_device(a).id]][r] = np.asarray(a)
    return by_device


def _device(array):
    """The one device of a single-device jax array."""
    (device,) = array.devices()
    return device


def compile_on_xla(module, *, devices=None, function: str = "main",
                   **options) -> XlaProgram:
    """Partition ``module`` with our passes (MLIR text, a parsed module, a
    :class:`~shardy_ref.ir.Module`, or an already compiled :class:`SpmdProgram`) and compile
    its per-device program with XLA for the mesh's devices (``devices``, default: jax's
    first ``N``). ``options`` go to :func:`~shardy_ref.execute.compile_spmd`."""
    from shardy_ref.execute import SpmdProgram, compile_spmd

    program = module if isinstance(module, SpmdProgram) else \
        compile_spmd(module, function=function, **options)
    found = xla_devices(program.num_devices, devices)
    text = per_device_text(program, manual=len(found) > 1)
    return XlaProgram(program, _compile(text, found), tuple(found), text)


def run_on_xla(module, *arrays, devices=None, function: str = "main", **options) -> tuple:
    """Partition ``module`` with our passes, compile the per-device program with XLA, run it
    on every device with its shards of the global NumPy ``arrays`` and return the global
    results (NumPy), like :func:`shardy_ref.execute.simulate` does with our simulator."""
    return compile_on_xla(module, devices=devices, function=function, **options).run(*arrays)


def _compile(text: str, devices: list):
    """XLA's executable of the per-device program ``text`` for ``devices`` (partition
    ``i`` on ``devices[i]``; its values all manual, so XLA does not partition it again)."""
    jax = require_jax("the xla backend")
    from jaxlib import xla_client as xc

    n = len(devices)
    options = xc.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = n
    build = options.executable_build_options
    build.use_spmd_partitioning = n > 1  # required by XLA for num_partitions > 1
    build.use_shardy_partitioner = False  # GSPMD keeps manual values as they are
    options.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id for d in devices]], dtype=np.int64))
    try:
        return devices[0].client.compile_and_load(text, xc.DeviceList(tuple(devices)),
                                                  options)
    except jax.errors.JaxRuntimeError as e:
        raise BackendError(None, f"XLA could not compile the per-device program: {e}") from e


def per_device_text(program, manual: bool) -> str:
    """Our per-device program as MLIR text for XLA; with ``manual``, every argument and
    result of its entry function marked ``mhlo.sharding = "{manual}"`` (on a copy: the
    program is not changed)."""
    from shardy_ref.ir.builtin_attrs import StringAttr
    from shardy_ref.ir.func_attrs import function_type, set_attrs
    from shardy_ref.ir.utils import entry_function
    from shardy_ref.parser import print_module

    if not manual:
        return print_module(program.per_device)
    module = program.per_device.clone()
    func = entry_function(module, program.function)
    signature = function_type(func)
    for kind, count in (("arg", len(signature.inputs)), ("result", len(signature.results))):
        set_attrs(func, kind, "mhlo.sharding", dict.fromkeys(range(count), StringAttr(MANUAL)))
    return print_module(module)
