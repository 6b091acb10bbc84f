"""Random SPMD programs with collectives, for the vectorized-vs-threads and oracle tests.

``spmd_programs()`` draws a process grid (replicas x partitions, up to 16 processes) and a
function ``@f`` every process runs: it starts from a value that differs per process
(built from ``replica_id``/``partition_id``) and applies a random chain of elementwise ops
and collectives (``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all``,
``collective_permute``, ``collective_broadcast``) whose process groups follow each
strategy of the spec (cross-replica, cross-partition, cross-replica-and-partition,
flattened ids). ``@main`` runs it with ``interpreter.run_parallel`` and returns every
process's result.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st


@dataclass
class Builder:
    """Emits the body of ``@f`` one op at a time, tracking the current value's shape."""

    replicas: int
    partitions: int
    element: str
    shape: list[int]
    lines: list[str] = field(default_factory=list)
    counter: int = 0
    channel: int = 0
    self_loops: bool = True  # jaxlib's interpreter predates the fix of self-loops
    # jaxlib's interpreter meets processes by (process group, channel id): two channel-less
    # collectives over the same processes race there. For it, at most one per program.
    one_channelless: bool = False
    channelless: int = 0

    def may_skip_channel(self) -> bool:
        """Whether the next collective may go without a channel handle (and if so, count
        it)."""
        if self.one_channelless and self.channelless:
            return False
        self.channelless += 1
        return True

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def type(self, shape=None) -> str:
        dims = "".join(f"{d}x" for d in (self.shape if shape is None else shape))
        return f"tensor<{dims}{self.element}>"

    def emit(self, name: str, x: str, attrs: list[str], shape=None, region: str = "") -> str:
        """Append ``%out = "stablehlo.<name>"(x) region {attrs} : (T) -> R`` (``R`` of
        ``shape``, default the current shape, which becomes the current shape)."""
        out = self.fresh()
        new = list(self.shape if shape is None else shape)
        body = ", ".join(a for a in attrs if a)
        self.lines.append(f'{out} = "stablehlo.{name}"({x}) {region + " " if region else ""}'
                          f"{{{body}}} : ({self.type()}) -> {self.type(new)}")
        self.shape = new
        return out

    def next_channel(self) -> str:
        self.channel += 1
        return f"channel_handle = #stablehlo.channel_handle<handle = {self.channel}, type = 1>"


def _groups(draw, ids: int) -> list[list[int]]:
    """A random partition of range(ids) into groups of one random size."""
    sizes = [s for s in range(1, ids + 1) if ids % s == 0]
    size = draw(st.sampled_from(sizes))
    order = draw(st.permutations(range(ids)))
    return [sorted(order[i:i + size]) if draw(st.booleans()) else list(order[i:i + size])
            for i in range(0, ids, size)]


def _dense_groups(groups: list[list[int]]) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    return f"dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"


def _reduction_groups(draw, b: Builder) -> tuple[list[list[int]], str, int]:
    """Groups, attributes and the number of processes per group for all_reduce/all_gather/
    reduce_scatter: one of the three strategies of the spec."""
    kind = draw(st.sampled_from(["cross_replica", "cross_replica_and_partition", "flattened"]))
    if kind == "cross_replica" and not b.may_skip_channel():
        kind = "cross_replica_and_partition"
    if kind == "flattened":
        groups = _groups(draw, b.replicas * b.partitions)
        return groups, f"{b.next_channel()}, use_global_device_ids", len(groups[0])
    groups = _groups(draw, b.replicas)
    if kind == "cross_replica":
        return groups, "", len(groups[0])
    return groups, b.next_channel(), len(groups[0]) * b.partitions


def _exchange_groups(draw, b: Builder) -> tuple[list[list[int]], str]:
    """Groups for all_to_all/collective_broadcast: cross-replica or cross-partition."""
    if draw(st.booleans()) and b.may_skip_channel():
        return _groups(draw, b.replicas), ""
    return _groups(draw, b.partitions), b.next_channel()


def _region(b: Builder, draw) -> str:
    scalar = f"tensor<{b.element}>"
    op = draw(st.sampled_from(["add", "maximum", "multiply", "two_ops"]))
    if op == "two_ops":
        body = (f"%s = stablehlo.add %a, %b : {scalar}\n"
                f"      %t = stablehlo.minimum %s, %a : {scalar}\n"
                f"      stablehlo.return %t : {scalar}")
    else:
        body = f"%s = stablehlo.{op} %a, %b : {scalar}\n      stablehlo.return %s : {scalar}"
    return f"({{\n    ^bb0(%a: {scalar}, %b: {scalar}):\n      {body}\n  }})"


def _all_reduce(draw, b: Builder, x: str) -> str:
    groups, attrs, _ = _reduction_groups(draw, b)
    return b.emit("all_reduce", x, ["replica_groups = " + _dense_groups(groups), attrs],
                  region=_region(b, draw))


def _all_gather(draw, b: Builder, x: str) -> str:
    groups, attrs, size = _reduction_groups(draw, b)
    dim = draw(st.integers(0, len(b.shape) - 1))
    new = list(b.shape)
    new[dim] *= size
    if new[dim] > 48:
        return x
    return b.emit("all_gather", x, [f"all_gather_dim = {dim} : i64",
                                    "replica_groups = " + _dense_groups(groups), attrs], new)


def _reduce_scatter(draw, b: Builder, x: str) -> str:
    groups, attrs, size = _reduction_groups(draw, b)
    dims = [d for d, n in enumerate(b.shape) if n % size == 0]
    if not dims:
        return x
    dim = draw(st.sampled_from(dims))
    new = list(b.shape)
    new[dim] //= size
    return b.emit("reduce_scatter", x, [f"scatter_dimension = {dim} : i64",
                                        "replica_groups = " + _dense_groups(groups), attrs],
                  new, region=_region(b, draw))


def _all_to_all(draw, b: Builder, x: str) -> str:
    groups, attrs = _exchange_groups(draw, b)
    count = len(groups[0])
    splits = [d for d, n in enumerate(b.shape) if n % count == 0]
    if not splits:
        return x
    split = draw(st.sampled_from(splits))
    concat = draw(st.integers(0, len(b.shape) - 1))
    new = list(b.shape)
    new[split] //= count
    new[concat] *= count
    return b.emit("all_to_all", x, [f"split_dimension = {split} : i64",
                                    f"concat_dimension = {concat} : i64",
                                    f"split_count = {count} : i64",
                                    "replica_groups = " + _dense_groups(groups), attrs], new)


def _collective_permute(draw, b: Builder, x: str) -> str:
    cross_partition = draw(st.booleans()) or not b.may_skip_channel()
    ids = b.partitions if cross_partition else b.replicas
    sources = draw(st.lists(st.integers(0, ids - 1), unique=True, max_size=ids))
    targets = draw(st.permutations(range(ids)))[:len(sources)]
    pairs = [[s, t] for s, t in zip(sources, targets, strict=True)
             if b.self_loops or s != t]
    if not pairs:
        return x
    attrs = b.next_channel() if cross_partition else ""
    return b.emit("collective_permute", x, ["source_target_pairs = " + _dense_groups(pairs),
                                            attrs])


def _collective_broadcast(draw, b: Builder, x: str) -> str:
    groups, attrs = _exchange_groups(draw, b)
    return b.emit("collective_broadcast", x, ["replica_groups = " + _dense_groups(groups),
                                              attrs])


def _elementwise(draw, b: Builder, x: str) -> str:
    op = draw(st.sampled_from(["add", "multiply", "subtract", "maximum"]))
    out = b.fresh()
    b.lines.append(f"{out} = stablehlo.{op} {x}, {x} : {b.type()}")
    return out


STEPS = [_all_reduce, _all_gather, _reduce_scatter, _all_to_all, _collective_permute,
         _collective_broadcast, _elementwise]


@st.composite
def spmd_programs(draw, max_processes: int = 16, max_steps: int = 5, self_loops: bool = True,
                  one_channelless: bool = False):
    """The text of a module whose @main returns every process's result."""
    grids = [(r, p) for r in range(1, max_processes + 1) for p in range(1, max_processes + 1)
             if r * p <= max_processes]
    replicas, partitions = draw(st.sampled_from(grids))
    element = draw(st.sampled_from(["i32", "f32", "ui8"]))
    shape = [draw(st.sampled_from([1, 2, 4, 6])), draw(st.sampled_from([2, 4, 8]))]
    b = Builder(replicas, partitions, element, shape, self_loops=self_loops,
                one_channelless=one_channelless)
    cvt = "convert"
    b.lines += [
        "%r = stablehlo.replica_id : tensor<ui32>",
        "%p = stablehlo.partition_id : tensor<ui32>",
        f"%k = stablehlo.constant dense<{partitions}> : tensor<ui32>",
        "%rk = stablehlo.multiply %r, %k : tensor<ui32>",
        "%id = stablehlo.add %rk, %p : tensor<ui32>",
        f"%ide = stablehlo.{cvt} %id : (tensor<ui32>) -> tensor<{element}>",
        f"%idb = stablehlo.broadcast_in_dim %ide, dims = [] : (tensor<{element}>) -> {b.type()}",
        f"%io = stablehlo.iota dim = 1 : {b.type()}",
        f"%v0 = stablehlo.add %io, %idb : {b.type()}",
    ]
    x = "%v0"
    for _ in range(draw(st.integers(1, max_steps))):
        x = draw(st.sampled_from(STEPS))(draw, b, x)
    n = replicas * partitions
    result = b.type()
    body = "\n  ".join(b.lines)
    grid = ", ".join("[" + ", ".join(["@f"] * partitions) + "]" for _ in range(replicas))
    results = ", ".join([result] * n)
    text = (f"func.func @f() -> {result} {{\n  {body}\n  func.return {x} : {result}\n}}\n"
            f"func.func @main() -> ({results}) {{\n"
            f'  %out:{n} = "interpreter.run_parallel"() {{programs = [{grid}]}} : () -> ({results})\n'  # noqa: E501
            f"  func.return {', '.join(f'%out#{i}' for i in range(n))} : {results}\n}}\n")
    return text
