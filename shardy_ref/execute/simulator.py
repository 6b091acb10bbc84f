"""The multi-device simulator: a global-view module with shardings, compiled once into the
program every device of its mesh runs (:func:`compile_spmd`), then run on global arrays
(:meth:`SpmdProgram.run`): the inputs are cut into the shards their shardings give, one
vectorized run executes every device at once, and the global results are put back together
from the output shardings (padding removed, replicated copies checked equal).

Devices are laid out over the mesh's axes (:class:`~.context.ProcessLayout`), so a value
that is the same along some axes (a replicated argument, an ``all_gather`` result) is stored
once along them. ``simulate(module, *arrays)`` is compile + run; comparing it with ``run``
(one device, no partitioning) is what ``shardy-ref check`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from shardy_ref.execute.api import argument_tensor
from shardy_ref.execute.context import Context, ProcessGrid, ProcessLayout
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.interpreter import Interpreter
from shardy_ref.execute.memory import MemoryEstimate, estimate_peak, format_bytes, global_bytes
from shardy_ref.execute.shards import (
    ShardMismatch,
    device_ids,
    mesh_shape,
    reduce_unreduced,
    shard,
    shard_compact,
    sharded_axes,
    split_unreduced,
    unshard_compact,
)
from shardy_ref.execute.values import Tensor, Token
from shardy_ref.ir.diagnostics import EntryFunctionError
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_reshard_cse import mesh_of
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.ir.utils import entry_function

PROPAGATION_PIPELINE = "sdy-propagation-pipeline"
CHLO_LEGALIZATION = "chlo-legalize-to-stablehlo"
# ops that need no sharding of their own for a module to count as propagated
# ops only propagation (and the export passes it ends with) removes
_PROPAGATION_ONLY = frozenset({"sdy.sharding_constraint", "sdy.sharding_group",
                               "sdy.propagation_barrier"})
_UNANNOTATED = frozenset({"stablehlo.constant", "sdy.constant", "func.return", "sdy.return",
                          "stablehlo.return", "sdy.mesh", "func.func", "builtin.module"})


@dataclass(frozen=True, slots=True)
class IoSpec:
    """One argument or result of the entry function: its global type, and the sharding and
    mesh it is laid out with (``None`` for an unsharded or non-tensor value)."""

    type: object
    sharding: TensorSharding | None
    mesh: Mesh | None

    def varying(self, mesh: Mesh) -> frozenset[int]:
        """The axes of ``mesh`` (by position) along which devices hold different shards."""
        if not isinstance(self.type, RankedTensorType) or self.sharding is None \
                or self.mesh is None or self.mesh.is_maximal:
            return frozenset()
        if self.mesh != mesh:
            return frozenset(range(len(mesh.axes)))
        used = sharded_axes(self.sharding) | {a.name for a in self.sharding.unreduced_axes}
        return frozenset(i for i, a in enumerate(mesh.axes) if a.name in used and a.size > 1)


@dataclass(frozen=True, slots=True)
class SpmdProgram:
    """A partitioned program: the per-device module every device runs, the global-view
    module it came from after propagation (``propagated``, to show what was decided), the
    mesh its devices are laid out on, and the entry function's arguments and results."""

    per_device: object
    propagated: object
    function: str
    mesh: Mesh
    args: tuple[IoSpec, ...]
    results: tuple[IoSpec, ...]
    # what depends on the per-device module only, worked out by the first run (_static)
    _facts: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def num_devices(self) -> int:
        return len(device_ids(self.mesh)) if not self.mesh.is_maximal else 1

    def layout(self) -> ProcessLayout:
        """Devices over the mesh's axes, each position holding its device id."""
        return ProcessLayout(np.array(device_ids(self.mesh)).reshape(mesh_shape(self.mesh)))

    def estimate_memory(self, arrays=()) -> MemoryEstimate:
        """About how many bytes a run keeps alive at its peak (:mod:`.memory`)."""
        return self._estimate(_entry_function(self.per_device, self.function), arrays)

    def run(self, *arrays, memory_budget: int | None = None) -> tuple:
        """Run every device on shards of the global ``arrays``; returns the global results
        as NumPy arrays. Raises :class:`InterpreterError` for a wrong argument (naming it),
        a run over ``memory_budget`` bytes (default: half the available memory), or devices
        that disagree on a replicated result."""
        interp = Interpreter(self.per_device, memory_budget=memory_budget,
                             plans=self._static("plans", dict))
        func = self._static("func", lambda: interp.entry_function(self.function))
        self._check_arity(func, arrays)
        layout = self._static("layout", self.layout)
        need = self._estimate(func, arrays)
        if need.peak > interp.memory_budget:
            raise InterpreterError(func.location, f"simulating {self.num_devices} devices "
                                   f"needs about {format_bytes(need.peak)} ({need.why}), over "
                                   f"the memory budget of {format_bytes(interp.memory_budget)}")
        values = list(self._arguments(func, arrays, layout))
        ctx = Context(interp, layout.shape, grid=ProcessGrid(1, self.num_devices),
                      layout=layout)
        with np.errstate(all="ignore"):
            outs = interp.call_function(ctx, func, values)
        return tuple(self._result(i, spec, v, layout)
                     for i, (spec, v) in enumerate(zip(self.results, outs, strict=True)))

    # -- inputs and outputs ----------------------------------------------------------------
    def device_arguments(self, *arrays) -> list[list[np.ndarray]]:
        """The local arguments of every device, ``[argument][device id]``: the shards of the
        global ``arrays`` that :meth:`run` feeds its devices, for a runtime that runs the
        per-device program itself (XLA, :mod:`shardy_ref.backends.xla`)."""
        func = _entry_function(self.per_device, self.function)
        self._check_arity(func, arrays)
        layout = self.layout()
        out = []
        for i, value in enumerate(self._arguments(func, arrays, layout)):
            if isinstance(value, Token):
                raise InterpreterError(func.location, f"argument {i} of @{self.function} is a "
                                       "token, which only the simulator can pass")
            data = value.data if value.batch else \
                np.broadcast_to(value.data, layout.shape + value.data.shape)
            out.append([np.ascontiguousarray(data[tuple(int(c) for c in np.unravel_index(
                layout.position[d], layout.shape))]) for d in range(layout.ids.size)])
        return out

    def assemble_results(self, per_device) -> tuple:
        """The global results from every device's local ones, ``per_device[result][device
        id]`` (what :meth:`device_arguments`'s runtime returned): shards put back together,
        padding removed, unreduced parts summed, replicated copies checked equal, as
        :meth:`run` does."""
        func = _entry_function(self.per_device, self.function)
        types = func.attributes["function_type"].value.results
        layout = self.layout()
        out = []
        for i, (spec, t, values) in enumerate(zip(self.results, types, per_device,
                                                  strict=True)):
            stacked = np.stack([np.asarray(values[int(d)]) for d in layout.ids.reshape(-1)])
            data = stacked.reshape(layout.shape + stacked.shape[1:])
            out.append(self._result(i, spec, Tensor(t, data, layout.ndim), layout))
        return tuple(out)

    def _static(self, key: str, make):
        """``make()``, worked out once per program: the per-device module is not changed
        after :func:`compile_spmd` (a changed program is a new one, ``dataclasses.replace``,
        which starts with nothing worked out), so what depends on it alone (the entry
        function, the devices' layout, the memory estimate) is the same for every run. The
        interpreter's block plans are kept too, each reused while its block is unchanged."""
        known = self._facts.get(key)
        if known is None:
            known = self._facts[key] = make()
        return known

    def _varying(self) -> tuple[frozenset[int], ...]:
        """The mesh axes each argument varies along."""
        return self._static("varying", lambda: tuple(a.varying(self.mesh) for a in self.args))

    def _estimate(self, func, arrays) -> MemoryEstimate:
        """:func:`estimate_peak` of ``func`` with the global ``arrays`` held: the estimate
        without them (once per program) plus their bytes, which are held throughout, so
        they shift every candidate peak alike and leave where the peak is unchanged."""
        bare = self._static("estimate", lambda: estimate_peak(
            func, self._static("layout", self.layout), list(self._varying())))
        held = global_bytes(arrays)
        return MemoryEstimate(bare.peak + held, bare.why) if held else bare

    def _check_arity(self, func, arrays) -> None:
        if len(arrays) != len(self.args):
            raise InterpreterError(func.location, f"@{self.function} takes {len(self.args)} "
                                   f"arguments, got {len(arrays)}")

    def _arguments(self, func, arrays, layout: ProcessLayout):
        """The run-time values of the entry function's arguments on every device, one by
        one (the first wrong argument raises)."""
        block = func.regions[0].blocks[0]
        for i, (spec, varying, local, a) in enumerate(zip(self.args, self._varying(),
                                                          block.args, arrays, strict=True)):
            yield self._argument(i, spec, varying, local.type, a, layout)

    def _argument(self, index: int, spec: IoSpec, varying: frozenset, local_type, array,
                  layout: ProcessLayout):
        whole = argument_tensor(self.function, index, spec.type, array)
        if not isinstance(whole, Tensor) or (not varying and
                                             tuple(local_type.shape) == tuple(spec.type.shape)):
            return whole if isinstance(whole, Token) else Tensor(local_type, whole.data, 0)
        if spec.mesh == self.mesh:
            data = shard_compact(whole.data, spec.sharding, spec.mesh)
            data = split_unreduced(data, spec.sharding, spec.mesh)
            data = np.broadcast_to(data, layout.shape + data.shape[layout.ndim:])
        else:  # laid out on another mesh of the same devices: one shard per device
            shards = shard(whole.data, spec.sharding, spec.mesh)
            data = np.stack([shards[int(d)] for d in layout.ids.reshape(-1)])
            data = data.reshape(layout.shape + data.shape[1:])
        return Tensor(local_type, data, layout.ndim)

    def _result(self, index: int, spec: IoSpec, value, layout: ProcessLayout):
        if isinstance(value, Token):
            return None
        data = value.data if value.batch else \
            np.broadcast_to(value.data, layout.shape + value.data.shape)
        try:
            if spec.mesh is not None and spec.mesh.is_maximal:
                at = layout.index([spec.mesh.maximal_device_id])
                return np.array(data[tuple(i[0] for i in at)])
            sharding = spec.sharding or TensorSharding.fully_closed("", len(spec.type.shape))
            if sharding.unreduced_axes and spec.mesh == self.mesh:
                data = reduce_unreduced(data, sharding, self.mesh)
                sharding = sharding.replace(unreduced_axes=())
            return unshard_compact(data, layout, spec.type.shape, sharding,
                                   spec.mesh or self.mesh)
        except (ShardMismatch, ValueError) as e:
            raise InterpreterError(None, f"result {index} of @{self.function}: {e}") from e


def compile_spmd(module, *, function: str = "main", propagate: bool | None = None,
                 enable_halo_exchange: bool = True, filename: str = "<module>") -> SpmdProgram:
    """Partition ``module`` (MLIR text, parsed as ``filename``; or a parsed module op or a
    :class:`~shardy_ref.ir.Module`, cloned: never modified) for its mesh: CHLO legalized to
    StableHLO (as XLA does before partitioning; the special functions our legalization keeps
    count as the pointwise ops they legalize to: ``PassContext.legalized_chlo``),
    ``sdy-propagation-pipeline`` unless ``propagate`` is False (default: unless every op
    already has a sharding), then ``sdy-ref-per-device-pipeline``. Raises
    ParseError/VerifyError/PassError, located."""
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

    if isinstance(module, str):
        from shardy_ref.parser import parse_module

        op = parse_module(module, filename)
    else:
        op = getattr(module, "op", module).clone()
    verify_module(op)
    if propagate is None:
        propagate = not is_propagated(op)
    if any(o.name.startswith("chlo.") for o in op.walk()):  # as XLA before partitioning
        PassManager(parse_pipeline(CHLO_LEGALIZATION), verify=verify_module).run(
            op, PassContext(legalized_chlo=True))
    if propagate:
        PassManager(parse_pipeline(PROPAGATION_PIPELINE), verify=verify_module).run(
            op, PassContext(legalized_chlo=True))
    propagated = op.clone()  # the propagated module, kept as it is before partitioning
    func = _entry_function(op, function)
    _check_static(func)
    args, results = _io_specs(func)
    mesh = _main_mesh(op, args + results)
    _check_one_mesh(op, mesh)
    count = len(device_ids(mesh)) if not mesh.is_maximal else 1
    halo = str(enable_halo_exchange).lower()
    PassManager(parse_pipeline(f"sdy-ref-per-device-pipeline{{enable-halo-exchange="
                               f"{halo} partition-count={count}}}"),
                verify=verify_module).run(op, PassContext(legalized_chlo=True))
    return SpmdProgram(op, propagated, func.attributes["sym_name"].value, mesh,
                       tuple(args), tuple(results))


def simulate(module, *arrays, function: str = "main", memory_budget: int | None = None,
             **options) -> tuple:
    """Compile ``module`` for its mesh and run it on every device with the global
    ``arrays``: the global results, as :func:`shardy_ref.execute.run` gives them for one
    device."""
    return compile_spmd(module, function=function, **options).run(
        *arrays, memory_budget=memory_budget)


def is_propagated(module_op) -> bool:
    """Every op of every function that has tensor results carries a sharding (constants
    aside): nothing left for propagation to decide."""
    for op in module_op.walk():
        if op.name in _PROPAGATION_ONLY:
            return False
        if op.name in _UNANNOTATED or not op.results:
            continue
        if any(isinstance(r.type, RankedTensorType) for r in op.results) \
                and "sdy.sharding" not in op.attributes and op.name != "sdy.reshard":
            return False
    return True


def _entry_function(module_op, name: str):
    """The function to run (:func:`~shardy_ref.ir.utils.entry_function`, ``main`` meaning
    the default): a definition, since a declaration has no body to run."""
    try:
        return entry_function(module_op, None if name == "main" else name, require_body=True)
    except EntryFunctionError as e:
        raise InterpreterError(e.location, e.message) from None


def _check_static(func) -> None:
    """The simulator cuts arrays of known shapes: a dynamic argument or result is an
    error naming it."""
    name = func.attributes["sym_name"].value
    signature = func.attributes["function_type"].value
    for kind, types in (("argument", signature.inputs), ("result", signature.results)):
        for i, t in enumerate(types):
            if isinstance(t, RankedTensorType) and not t.has_static_shape:
                raise InterpreterError(func.location, f"{kind} {i} of @{name} has the dynamic "
                                       f"type {t}: the simulator needs static shapes")


def _io_specs(func) -> tuple[list[IoSpec], list[IoSpec]]:
    from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding

    block = func.regions[0].blocks[0]
    args = [_spec(a.type, get_sharding(a), func) for a in block.args]
    results = [_spec(t, get_func_result_sharding(func, i), func)
               for i, t in enumerate(func.attributes["function_type"].value.results)]
    return args, results


def _spec(type_, sharding: TensorSharding | None, func) -> IoSpec:
    return IoSpec(type_, sharding, mesh_of(sharding, func) if sharding is not None else None)


def _check_one_mesh(module_op, mesh: Mesh) -> None:
    """Every sharding of the module is on ``mesh`` (or a mesh without axes): the devices are laid
    out over one mesh's axes, and XLA too partitions a module for one device count."""
    from shardy_ref.ir.sharding_walker import transform_shardings
    from shardy_ref.ir.symbols import SymbolTable

    table = SymbolTable(module_op)
    found: list = []

    def record(sharding: TensorSharding) -> TensorSharding:
        ref = sharding.mesh_or_ref
        other = table.lookup(ref).attributes.get("mesh") if isinstance(ref, str) \
            and table.lookup(ref) is not None else ref
        if isinstance(other, Mesh) and other.axes and not found \
                and _axes(other) != _axes(mesh):
            found.append((ref, other))
        return sharding

    transform_shardings(module_op, record)
    if found:
        ref, other = found[0]
        name = f"@{ref} " if isinstance(ref, str) else ""
        raise InterpreterError(module_op.location, f"the simulator lays the devices out on one "
                               f"mesh, {mesh}, but a sharding uses the mesh {name}{other}")


def _axes(mesh: Mesh) -> tuple:
    return tuple((a.name, a.size) for a in mesh.axes), tuple(mesh.device_ids or ())


def _main_mesh(module_op, specs: list[IoSpec]) -> Mesh:
    """The mesh the devices are laid out on: the largest one the entry function's values
    use, else the largest ``sdy.mesh`` of the module, else one device."""
    meshes = [s.mesh for s in specs if s.mesh is not None and not s.mesh.is_maximal]
    if not meshes:
        meshes = [op.attributes["mesh"] for op in module_op.regions[0].blocks[0]
                  if op.name == "sdy.mesh" and not op.attributes["mesh"].is_maximal]
    if not meshes:
        return Mesh((), ())
    return max(meshes, key=lambda m: m.total_size)
