"""``interpreter.run_parallel``: a ``num_replicas x num_partitions`` grid of processes, and
how their collectives find each other (StableHLO spec, "Execution", "Process groups";
``stablehlo/reference/ProcessGrid.cpp``).

When every process runs the same function (the SPMD case) the grid runs **once**, over
values whose batch dimension is the process id: ``partition_id`` is an ``arange``, a
collective is an indexing, reshape or sum over that dimension. When the programs differ,
each process runs in its own thread on unbatched values and its collectives meet at a
:class:`Rendezvous` (as the reference interpreter does). Both give identical results.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from shardy_ref.execute.context import Context, ProcessGrid
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.values import Tensor, Token, TupleValue
from shardy_ref.ir.replica_groups import device_groups
from shardy_ref.ir.sdy_axes import AxisRef as SdyAxisRef
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_axes import SubAxisInfo as SdyAxisInfo
from shardy_ref.ir.stablehlo_attrs import ReplicaGroupMeshAxes

RENDEZVOUS_TIMEOUT = 30.0  # seconds a process waits for its peers before giving up


# -- process groups -------------------------------------------------------------------------
def replica_groups(op, name: str = "replica_groups", symbols=None) -> list[list[int]]:
    """The groups of a ``replica_groups``/``source_target_pairs`` attribute, ``-1`` padding
    dropped (the reference's ``getReplicaGroups``); mesh-axes groups are resolved against
    the ``sdy.mesh`` that ``symbols.lookup`` (the module's symbols) finds
    (:func:`mesh_axes_groups`)."""
    attr = op.attributes.get(name)
    if attr is None:
        return []
    if isinstance(attr, ReplicaGroupMeshAxes):
        return mesh_axes_groups(op, attr, _mesh_of_groups(symbols, op, attr))
    if not hasattr(attr, "flat_values"):
        raise InterpreterError(None, f"'{op.name}': {name} = {attr} is not supported by the "
                               "interpreter (dense or mesh-axes replica groups only)")
    shape = attr.type.shape
    values = [int(v) for v in attr.flat_values()]
    width = shape[1] if len(shape) == 2 else 0
    rows = [values[i * width:(i + 1) * width] for i in range(shape[0] if shape else 0)]
    return [[v for v in row if v != -1] for row in rows]


def mesh_axes_groups(op, attr: ReplicaGroupMeshAxes, mesh: Mesh) -> list[list[int]]:
    """``#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>`` as device groups:
    the devices that differ only along the listed (sub-)axes form a group, ordered by
    those axes, the first listed the most major (XLA's ``mesh[...] {axes}`` replica groups;
    the groups our partitioner writes for the same axes, :func:`device_groups`)."""
    refs = [_sdy_ref(op, ref, mesh) for ref in attr.axes]
    return [[int(d) for d in row] for row in device_groups(refs, mesh)]


def _sdy_ref(op, ref, mesh: Mesh) -> SdyAxisRef:
    """A ``#stablehlo.axis_ref`` of ``mesh`` as the sdy axis ref it names."""
    names = [a.name for a in mesh.axes]
    if ref.name not in names:
        raise InterpreterError(None, f"'{op.name}': replica groups name axis '{ref.name}', "
                               f"which mesh {mesh} does not have")
    sub = ref.sub_axis_info
    out = SdyAxisRef(ref.name, None if sub is None else SdyAxisInfo(sub.pre_size, sub.size))
    if sub is not None and (mesh.axis_size(ref.name) % (sub.pre_size * sub.size)):
        raise InterpreterError(None, f"'{op.name}': sub-axis {ref.name}:({sub.pre_size})"
                               f"{sub.size} does not divide axis of size "
                               f"{mesh.axis_size(ref.name)}")
    return out


def _mesh_of_groups(symbols, op, attr: ReplicaGroupMeshAxes) -> Mesh:
    """The mesh that mesh-axes replica groups name (inline, or an ``sdy.mesh`` symbol
    ``symbols`` finds)."""
    if isinstance(attr.mesh, Mesh):
        return attr.mesh
    name = attr.mesh.root
    found = None if symbols is None else symbols.lookup(name)
    mesh = found.attributes.get("mesh") if found is not None and found.name == "sdy.mesh" \
        else None
    if mesh is None:
        raise InterpreterError(None, f"'{op.name}': replica groups name mesh @{name}, which "
                               "is not an sdy.mesh of the module")
    return mesh


def channel_id(op) -> int:
    handle = op.attributes.get("channel_handle")
    return int(handle.handle) if handle is not None else 0


def use_global_device_ids(op) -> bool:
    attr = op.attributes.get("use_global_device_ids")
    return attr is not None and bool(getattr(attr, "value", True))


def cross_replica(grid: ProcessGrid, groups) -> list[list[int]]:
    p = grid.num_partitions
    return [[r * p + part for r in group] for group in groups for part in range(p)]


def cross_partition(grid: ProcessGrid, groups) -> list[list[int]]:
    p = grid.num_partitions
    return [[r * p + part for part in group] for group in groups
            for r in range(grid.num_replicas)]


def cross_replica_and_partition(grid: ProcessGrid, groups) -> list[list[int]]:
    p = grid.num_partitions
    return [[r * p + part for part in range(p) for r in group] for group in groups]


def flattened_ids(grid: ProcessGrid, groups) -> list[list[int]]:
    return [list(group) for group in groups]


def reduction_groups(ctx, op) -> list[list[int]]:
    """Groups of ``all_gather``/``all_reduce``/``reduce_scatter``/``collective_reduce``."""
    groups = replica_groups(op, symbols=ctx.interp.module)
    cid, use_global = channel_id(op), use_global_device_ids(op)
    if use_global:
        return flattened_ids(ctx.grid, groups)
    return (cross_replica_and_partition if cid > 0 else cross_replica)(ctx.grid, groups)


def exchange_groups(ctx, op, name: str = "replica_groups") -> list[list[int]]:
    """Groups of ``all_to_all``/``collective_broadcast``/``collective_permute``."""
    groups = replica_groups(op, name, ctx.interp.module)
    return (cross_partition if channel_id(op) > 0 else cross_replica)(ctx.grid, groups)


def check_groups(ctx, op, groups: list[list[int]]) -> None:
    n = ctx.grid.num_processes
    for group in groups:
        for pid in group:
            if not 0 <= pid < n:
                raise InterpreterError(None, f"'{op.name}' names process {pid}, but the "
                                       f"process grid has {n} process(es)"
                                       + ("" if n > 1 else
                                          " (run it through interpreter.run_parallel)"))


# -- the rendezvous of the per-process fallback ---------------------------------------------
@dataclass
class _Meeting:
    values: dict = field(default_factory=dict)
    readers: int = 0


class Rendezvous:
    """Where the threads of a process grid exchange collective operands: a process offers
    its value under (group, channel, how often it met there before) and waits for the
    rest of its group (``ProcessGrid::rendezvous``)."""

    def __init__(self, timeout: float = RENDEZVOUS_TIMEOUT):
        self.cond = threading.Condition()
        self.meetings: dict = {}
        self.counts: dict = {}
        self.failed: str | None = None
        self.timeout = timeout
        self.channels: dict = {}  # send/recv: channel id -> deque of values

    def fail(self, why: str) -> None:
        with self.cond:
            self.failed = why
            self.cond.notify_all()

    def exchange(self, pid: int, group: tuple, channel: int, value) -> dict:
        with self.cond:
            seen = self.counts.get((pid, group, channel), 0)
            self.counts[(pid, group, channel)] = seen + 1
            key = (group, channel, seen)
            meeting = self.meetings.setdefault(key, _Meeting())
            meeting.values[pid] = value
            self.cond.notify_all()
            if not self.cond.wait_for(lambda: self.failed or len(meeting.values) == len(group),
                                      self.timeout):
                raise InterpreterError(None, f"rendezvous timed out: process {pid} waited for "
                                       f"processes {sorted(set(group) - set(meeting.values))}")
            if self.failed:
                raise InterpreterError(None, f"process {pid} stopped: {self.failed}")
            meeting.readers += 1
            if meeting.readers == len(group):
                del self.meetings[key]
            return dict(meeting.values)

    def send(self, channel: int, values) -> None:
        with self.cond:
            self.channels.setdefault(channel, deque()).append(values)
            self.cond.notify_all()

    def recv(self, channel: int, pid: int):
        with self.cond:
            queue = self.channels.setdefault(channel, deque())
            if not self.cond.wait_for(lambda: self.failed or queue, self.timeout):
                raise InterpreterError(None, f"recv timed out: process {pid}, channel {channel}")
            if self.failed:
                raise InterpreterError(None, f"process {pid} stopped: {self.failed}")
            return queue.popleft()


# -- collectives over groups ----------------------------------------------------------------
def group_classes(ctx, op, groups: list[list[int]], values: list[Tensor], channel: int
                  ) -> list[tuple[list[np.ndarray], np.ndarray]]:
    """The operands of every group's members, one entry per group size: for each value an
    array ``[G, S, *shape]`` (groups x members), and the groups ``[G, S]`` of that size. In
    the per-process fallback only this process's own group is met (G = 1)."""
    check_groups(ctx, op, groups)
    if ctx.process is not None:
        mine = [g for g in groups if ctx.process in g]
        if not mine:
            raise InterpreterError(None, f"Failed to find process group with process_id: "
                                   f"{ctx.process} in '{op.name}'")
        group = tuple(mine[0])
        met = ctx.rendezvous.exchange(ctx.process, group, channel,
                                      [v.data for v in values])
        stacked = [np.stack([met[pid][i] for pid in group])[None] for i in range(len(values))]
        return [(stacked, np.array([group]))]
    covered = np.zeros(ctx.grid.num_processes, dtype=bool)
    covered[[p for g in groups for p in g]] = True
    if not covered.all():
        raise InterpreterError(None, f"Failed to find process group with process_id: "
                               f"{int(np.argmin(covered))} in '{op.name}'")
    by_size: dict[int, list] = {}
    for g in groups:
        by_size.setdefault(len(g), []).append(g)
    classes = []
    for same_size in by_size.values():
        idx = np.array(same_size, dtype=np.int64)
        stacked = []
        for v in values:
            if ctx.nb == 0 or not v.batch:  # one value for every process
                stacked.append(np.broadcast_to(v.data, idx.shape + v.data.shape))
            else:
                stacked.append(ctx.broadcast(v).data[ctx.process_layout().index(idx)])
        classes.append((stacked, idx))
    return classes


class GroupResults:
    """Per-member results ``[G, S, *shape]`` of each group class, assembled back into this
    context's layout: a varying tensor over all processes, or this process's own entry.

    When every member of a group gets the same value (an ``all_reduce``, an ``all_gather``)
    and the groups are the fibers of some process dimensions (devices that differ only
    along some mesh axes), the result is stored once per group and broadcast along those
    dimensions, or kept uniform when one group holds every process: memory for the
    distinct values only."""

    def __init__(self, ctx, type_):
        self.ctx, self.type = ctx, type_
        self.data = None  # by process position, [P, *shape]
        self.compact = None  # the whole result, process dimensions of size 1 where shared

    def add(self, groups: np.ndarray, per_member: np.ndarray) -> None:
        ctx = self.ctx
        if ctx.process is not None:
            member = list(groups[0]).index(ctx.process)
            self.data = np.array(per_member[0, member])
        elif ctx.nb == 0:
            self.data = np.array(per_member[0, 0])
        else:
            layout = ctx.process_layout()
            if self.data is None and self.compact is None and _same_for_members(per_member):
                self.compact = compact_groups(layout, groups, per_member[:, 0])
                if self.compact is not None:
                    return
            if self.data is None:
                self.data = np.empty((layout.ids.size, *per_member.shape[2:]),
                                     dtype=per_member.dtype)
                if self.compact is not None:
                    self.data[...] = np.broadcast_to(
                        self.compact, layout.shape + self.compact.shape[layout.ndim:]
                    ).reshape(self.data.shape)
                    self.compact = None
            self.data[layout.position[groups.reshape(-1)]] = \
                per_member.reshape((-1, *per_member.shape[2:]))

    def tensor(self) -> Tensor:
        ctx = self.ctx
        if ctx.process is not None or ctx.nb == 0:
            return Tensor(self.type, self.data, 0)
        layout = ctx.process_layout()
        if self.compact is not None:
            inner = self.compact.shape[layout.ndim:]
            if all(n == 1 for n in self.compact.shape[:layout.ndim]):
                return Tensor(self.type, self.compact.reshape(inner), 0)
            return Tensor(self.type, np.broadcast_to(self.compact, layout.shape + inner),
                          layout.ndim)
        return Tensor(self.type, self.data.reshape(layout.shape + self.data.shape[1:]),
                      layout.ndim)


def _same_for_members(per_member: np.ndarray) -> bool:
    """Every member of a group holds the same value (a broadcast along members)."""
    return per_member.ndim >= 2 and (per_member.shape[1] == 1 or per_member.strides[1] == 0)


def fiber_dims(layout, groups: np.ndarray) -> tuple[int, ...] | None:
    """The process dimensions ``groups`` (``[G, S]`` process ids) span, when every group is
    the set of processes that differ only along them; else None."""
    count, size = groups.shape
    if count * size != layout.ids.size:
        return None
    coords = layout.index(groups)
    spanned = tuple(d for d, c in enumerate(coords) if (c != c[:, :1]).any())
    sizes = [layout.shape[d] for d in spanned]
    if int(np.prod(sizes, dtype=np.int64)) != size:
        return None
    if spanned:
        member = np.ravel_multi_index([coords[d] for d in spanned], sizes)
        if not (np.sort(member, axis=1) == np.arange(size)).all():
            return None
    return spanned


def ordered_fibers(ctx, groups: list[list[int]]) -> tuple[int, ...] | None:
    """In a vectorized run, the process dimensions ``groups`` span when they are the fibers
    of those dimensions and, along them, process ids increase in row-major order (so a
    reduction folding in increasing process id, as the reference does, folds along the
    dimensions in order); else None."""
    if ctx.process is not None or not ctx.nb or not groups:
        return None
    layout = ctx.process_layout()
    if ctx.nb != layout.ndim or len({len(g) for g in groups}) != 1:
        return None
    idx = np.array(groups, dtype=np.int64)
    spanned = fiber_dims(layout, idx)
    if not spanned:
        return None
    coords = layout.index(idx)
    member = np.ravel_multi_index([coords[d] for d in spanned],
                                  [layout.shape[d] for d in spanned])
    by_coordinate = np.take_along_axis(idx, np.argsort(member, axis=1), axis=1)
    return spanned if bool((np.diff(by_coordinate, axis=1) > 0).all()) else None


def fiber_slices(layout, spanned: tuple[int, ...]):
    """Index tuples over the process dimensions, one per position along ``spanned`` in
    row-major order, keeping every dimension (size 1 along ``spanned``)."""
    for at in np.ndindex(*(layout.shape[d] for d in spanned)):
        index = [slice(None)] * layout.ndim
        for d, i in zip(spanned, at, strict=True):
            index[d] = slice(i, i + 1)
        yield tuple(index)


def compact_groups(layout, groups: np.ndarray, per_group: np.ndarray) -> np.ndarray | None:
    """``per_group`` (``[G, *shape]``, one value per group) laid out over the process
    dimensions with size 1 along the dimensions the groups span; None when the groups are
    not fibers of process dimensions."""
    spanned = fiber_dims(layout, groups)
    if spanned is None:
        return None
    coords = layout.index(groups[:, 0])
    shape = tuple(1 if d in spanned else n for d, n in enumerate(layout.shape))
    out = np.empty(shape + per_group.shape[1:], dtype=per_group.dtype)
    out[tuple(np.zeros_like(c) if d in spanned else c for d, c in enumerate(coords))] = \
        per_group
    return out


def process_index_order(groups: np.ndarray) -> np.ndarray:
    """For each group, its members in increasing process id (the order the reference's
    ``getSortedTensors`` reduces in)."""
    return np.argsort(groups, axis=1, kind="stable")


# -- run_parallel ---------------------------------------------------------------------------
def run_parallel(ctx: Context, op, inputs: list) -> list:
    programs = [[sym.root for sym in row.value] for row in op.attributes["programs"].value]
    if not programs or not programs[0] or any(len(r) != len(programs[0]) for r in programs):
        raise InterpreterError(None, "programs must be a non-empty rectangular grid")
    grid = ProcessGrid(len(programs), len(programs[0]))
    names = [name for row in programs for name in row]
    funcs = [ctx.interp.module.lookup(n) for n in names]
    for name, f in zip(names, funcs, strict=True):
        if f is None or f.name != "func.func":
            raise InterpreterError(None, f"run_parallel: no function named @{name}")
    arity = [len(f.regions[0].blocks[0].args) if f.regions and f.regions[0].blocks else 0
             for f in funcs]
    if sum(arity) != len(inputs):
        raise InterpreterError(None, f"run_parallel: the programs take {sum(arity)} inputs, "
                               f"got {len(inputs)}")
    if any(v.varying for v in inputs):
        raise InterpreterError(None, "run_parallel cannot be nested in a parallel run")
    _check_result_types(op, names, funcs)
    args, at = [], 0
    for n in arity:
        args.append(inputs[at:at + n])
        at += n
    infeed = [s.root for s in op.attributes["infeed"].value] \
        if "infeed" in op.attributes else []
    same = len(set(names)) == 1
    if same and ctx.interp.vectorize and not infeed:
        results = run_vectorized(ctx, grid, funcs[0], args)
    else:
        results = run_threads(ctx, grid, funcs, args, infeed)
    return [v for per_process in results for v in per_process]


def _check_result_types(op, names: list[str], funcs: list) -> None:
    """The programs' declared results, in grid order, are the op's result types (else a
    program's results would not fit the values the op defines)."""
    declared = [t for f in funcs for t in f.attributes["function_type"].value.results]
    if len(declared) != len(op.results):
        raise InterpreterError(None, f"run_parallel: the programs return {len(declared)} "
                               f"results, the op has {len(op.results)}")
    at = 0
    for name, f in zip(names, funcs, strict=True):
        for t in f.attributes["function_type"].value.results:
            if t != op.results[at].type:
                raise InterpreterError(None, f"run_parallel: @{name} returns {t} as result "
                                       f"{at} of the op, which has type "
                                       f"{op.results[at].type}")
            at += 1


def run_vectorized(ctx: Context, grid: ProcessGrid, func, args: list) -> list:
    n = grid.num_processes
    batched = []
    for position in range(len(args[0])):
        values = [a[position] for a in args]
        batched.append(_stack(values, n))
    inner = Context(ctx.interp, (n,), grid=grid)
    outs = ctx.interp.call_function(inner, func, batched)
    return [[v.at((i,)) for v in outs] for i in range(n)]


def _stack(values: list, n: int):
    first = values[0]
    if all(v is first for v in values) or isinstance(first, Token):
        return first  # the same value for every process stays uniform
    if isinstance(first, TupleValue):
        return TupleValue(tuple(_stack([v.elements[i] for v in values], n)
                                for i in range(len(first.elements))))
    return Tensor(first.type, np.stack([v.data for v in values]), 1)


def run_threads(ctx: Context, grid: ProcessGrid, funcs: list, args: list,
                 infeed: list) -> list:
    rendezvous = Rendezvous()
    rendezvous.infeed = deque(infeed)
    n = grid.num_processes
    results: list = [None] * n
    errors: list = [None] * n

    def run(pid: int) -> None:
        inner = Context(ctx.interp, (), grid=grid, process=pid, rendezvous=rendezvous)
        try:
            with np.errstate(all="ignore"):  # NumPy's error state is per thread
                results[pid] = ctx.interp.call_function(inner, funcs[pid], args[pid])
        except Exception as e:  # reported below, in process order
            errors[pid] = e
            rendezvous.fail(f"process {pid} failed")

    threads = [threading.Thread(target=run, args=(pid,), daemon=True) for pid in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = next((e for e in errors if e is not None and not _is_secondary(e)), None) \
        or next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return results


def _is_secondary(error: Exception) -> bool:
    return isinstance(error, InterpreterError) and "stopped: process" in error.message
