"""What a kernel sees besides its operands: the batch shape of varying values, which
processes are active, the process grid of ``interpreter.run_parallel``, and a way to run
regions and functions.

Vectorized SPMD: a run of P processes of one program is one run over values with batch
shape ``(P,)``; batch index ``i`` is process ``i`` (``replica_id * num_partitions +
partition_id``, StableHLO's flattened id). A kernel that applies a region elementwise
(``reduce``'s body, ``sort``'s comparator...) runs it once on a batch extended by the
element dimensions (:meth:`Context.extend`). The per-process fallback runs each process in
its own thread with an empty batch shape and a known ``process``; its collectives meet at
a rendezvous.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.values import Tensor, TupleValue


@dataclass(frozen=True, slots=True)
class ProcessGrid:
    """``num_replicas x num_partitions`` processes (StableHLO spec, "Execution")."""

    num_replicas: int = 1
    num_partitions: int = 1

    @property
    def num_processes(self) -> int:
        return self.num_replicas * self.num_partitions


SINGLE_PROCESS = ProcessGrid()


class ProcessLayout:
    """Where each process sits in the batch of a vectorized run: the leading batch
    dimensions ``shape`` index processes, ``ids[position]`` is the process id at a
    (row-major) position. ``run_parallel`` lays its ``P`` processes out flat, ``(P,)`` in
    id order; the simulator lays a mesh's devices out over the mesh's axes, so a value that
    is the same along some axes can be stored once along them (a NumPy broadcast view)."""

    __slots__ = ("ids", "position", "shape")

    def __init__(self, ids: np.ndarray):
        self.ids = np.asarray(ids, dtype=np.int64)
        self.shape = tuple(self.ids.shape)
        self.position = np.empty(self.ids.size, dtype=np.int64)  # process id -> position
        self.position[self.ids.reshape(-1)] = np.arange(self.ids.size)

    @classmethod
    def flat(cls, n: int) -> ProcessLayout:
        return cls(np.arange(n))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def index(self, pids) -> tuple:
        """The batch index (one array per process dimension) of process ids ``pids``."""
        pos = self.position[np.asarray(pids, dtype=np.int64)]
        return (pos,) if self.ndim == 1 else np.unravel_index(pos, self.shape)


class Context:
    """Execution context of one kernel call; cheap to derive (see :meth:`replace`)."""

    __slots__ = ("active", "batch_shape", "env", "grid", "index", "interp", "layout",
                 "lifting", "process", "rendezvous")

    def __init__(self, interp, batch_shape: tuple[int, ...] = (), *, env=None, active=None,
                 grid: ProcessGrid = SINGLE_PROCESS, process: int | None = None,
                 rendezvous=None, lifting: bool = False, index: tuple | None = None,
                 layout: ProcessLayout | None = None):
        self.interp = interp
        self.layout = layout  # how processes sit in the batch (vectorized runs only)
        self.batch_shape = tuple(batch_shape)
        self.env = env if env is not None else {}  # IR value -> run-time value (one call)
        self.index = index  # in an unbatched context: the batch index it runs
        self.active = active  # None (all active) or a bool array of batch_shape
        self.grid = grid
        self.process = process  # the process id when this context runs one process alone
        self.rendezvous = rendezvous
        self.lifting = lifting  # values from enclosing scopes may have a shorter batch

    @property
    def nb(self) -> int:
        """Number of batch dimensions in front of a varying value's own shape."""
        return len(self.batch_shape)

    def replace(self, **changes) -> Context:
        fields = {name: getattr(self, name) for name in self.__slots__ if name != "interp"}
        fields.update(changes)
        batch_shape = fields.pop("batch_shape")
        return Context(self.interp, batch_shape, **fields)

    # -- batches ---------------------------------------------------------------------------
    def unbatched(self, index: tuple) -> Context:
        """A context for running batch element ``index`` alone (the per-process fallback);
        varying values of enclosing scopes are seen at that index."""
        return self.replace(batch_shape=(), active=None, lifting=True, index=index)

    def lift(self, value):
        """``value`` from an enclosing scope as this context sees it: broadcast to a longer
        batch that starts with its own (elementwise regions), or taken at this context's
        index (one batch element)."""
        if isinstance(value, Tensor):
            if not value.batch or value.batch == self.nb:
                return value
            if value.batch > self.nb:
                if self.index is None:
                    raise InterpreterError(None, "a value varying over an outer batch is used "
                                           "where only one batch element runs")
                return value.at(self.index[:value.batch])
            outer = value.data.shape[:value.batch]
            if self.batch_shape[:value.batch] != outer:
                raise InterpreterError(None, "a region applied elementwise reads a value that "
                                       "varies over processes, in a layout that does not keep "
                                       "the processes in front")
            inner = value.data.shape[value.batch:]
            data = value.data.reshape(value.data.shape[:value.batch]
                                      + (1,) * (self.nb - value.batch) + inner)
            return Tensor(value.type, np.broadcast_to(data, self.batch_shape + inner), self.nb)
        if isinstance(value, TupleValue):
            return TupleValue(tuple(self.lift(e) for e in value.elements))
        return value

    def broadcast(self, value: Tensor) -> Tensor:
        """``value`` as a varying tensor of this batch (a read-only view, nothing copied)."""
        if value.batch == self.nb:
            return value
        if value.batch:
            return self.lift(value)
        data = np.broadcast_to(value.data, self.batch_shape + value.data.shape)
        return Tensor(value.type, data, self.nb)

    # -- processes -------------------------------------------------------------------------
    def process_ids(self) -> np.ndarray | int:
        """The flattened process id of every batch element: an int (one process) or an
        array over the leading (process) batch dimensions of a vectorized run."""
        if self.process is not None:
            return self.process
        if self.grid.num_processes == 1 or not self.nb:
            return 0
        return self.process_layout().ids

    def process_layout(self) -> ProcessLayout:
        """The layout of a vectorized run's processes (flat in id order by default)."""
        if self.layout is None:
            self.layout = ProcessLayout.flat(self.grid.num_processes)
        return self.layout

    # -- regions and calls -----------------------------------------------------------------
    def run_region(self, region, args) -> list:
        return self.interp.run_region(self, region, list(args))

    def call(self, name: str, args, location=None) -> list:
        return self.interp.call(self, name, list(args), location)
