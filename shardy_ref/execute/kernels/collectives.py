"""StableHLO's collectives and process ids (StableHLO spec: ``all_gather``, ``all_reduce``,
``reduce_scatter``, ``all_to_all``, ``collective_permute``, ``collective_broadcast``,
``collective_reduce``, ``replica_id``, ``partition_id``).

Each collective gathers its operands per process group into an array ``[G, S, *shape]``
(groups x members, :func:`~shardy_ref.execute.spmd.group_classes`), computes every member's
result with array operations, and scatters them back per process. Vectorized, that is a
fancy index over the process dimension; in the per-process fallback, a rendezvous. Reductions
fold members in increasing process id, as the reference interpreter does.
"""
from __future__ import annotations

import numpy as np

from shardy_ref.execute import spmd
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.regions import apply_region, binary_op
from shardy_ref.execute.registry import kernel
from shardy_ref.execute.values import Tensor


@kernel("stablehlo.replica_id")
def replica_id(ctx, op):
    return _process_coordinate(ctx, op, lambda pid: pid // ctx.grid.num_partitions)


@kernel("stablehlo.partition_id")
def partition_id(ctx, op):
    return _process_coordinate(ctx, op, lambda pid: pid % ctx.grid.num_partitions)


def _process_coordinate(ctx, op, of) -> Tensor:
    t = op.results[0].type
    ids = ctx.process_ids()
    if isinstance(ids, int):
        return Tensor(t, np.array(of(ids), dtype=np.uint32), 0)
    data = of(ids).astype(np.uint32)
    if ctx.nb > ids.ndim:  # inside an elementwise region: the processes come first
        data = np.broadcast_to(data.reshape(ids.shape + (1,) * (ctx.nb - ids.ndim)),
                               ctx.batch_shape)
    return Tensor(t, data, ctx.nb)


def _fold(ctx, region, members: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Reduce ``members`` ``[G, S, *shape]`` over S with ``region``, in the order ``order``
    (``[G, S]`` member indices) -> ``[G, *shape]``."""
    g = np.arange(members.shape[0])
    acc = members[g, order[:, 0]]
    combine = binary_op(region)
    for s in range(1, members.shape[1]):
        nxt = members[g, order[:, s]]
        if combine is not None:
            acc = combine(acc, nxt)
        else:
            acc = apply_region(ctx, region, [acc, nxt], acc.shape)[0]
    return acc


def _collective(ctx, op, groups: list[list[int]], operands, compute) -> list[Tensor]:
    """Run ``compute(stacked, idx)`` (operands ``[G, S, *shape]`` of groups ``idx``
    ``[G, S]`` -> one per-member array ``[G, S, *out]`` per result) on every class of
    equally sized groups, and assemble each result per process."""
    results = [spmd.GroupResults(ctx, r.type) for r in op.results]
    for stacked, idx in spmd.group_classes(ctx, op, groups, list(operands),
                                           spmd.channel_id(op)):
        for res, per_member in zip(results, compute(stacked, idx), strict=True):
            res.add(idx, per_member)
    return [r.tensor() for r in results]


def _everyone(per_group: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """One value per group ``[G, *shape]`` given to every member: ``[G, S, *shape]``."""
    return np.broadcast_to(per_group[:, None], (idx.shape[0], idx.shape[1],
                                                *per_group.shape[1:]))


def _fold_fibers(ctx, op, spanned: tuple[int, ...], operand: Tensor) -> Tensor:
    """``all_reduce`` over groups that are fibers of process dimensions ``spanned``: fold
    the operand along them in place (increasing process id, as :func:`_fold`), keeping one
    copy per group, broadcast along them; nothing is gathered."""
    layout = ctx.process_layout()
    data = ctx.broadcast(operand).data
    combine = binary_op(op.regions[0])
    acc = None
    for index in spmd.fiber_slices(layout, spanned):
        nxt = data[index]
        if acc is None:
            acc = nxt
        elif combine is not None:
            acc = combine(acc, nxt)
        else:
            acc = apply_region(ctx, op.regions[0], [acc, nxt], acc.shape)[0]
    acc = np.asarray(acc)
    if len(spanned) == layout.ndim:
        return Tensor(operand.type, acc.reshape(acc.shape[layout.ndim:]), 0)
    return Tensor(operand.type, np.broadcast_to(acc, layout.shape + acc.shape[layout.ndim:]),
                  layout.ndim)


@kernel("stablehlo.all_reduce")
def all_reduce(ctx, op, *operands):
    groups = spmd.reduction_groups(ctx, op)
    spanned = spmd.ordered_fibers(ctx, groups)
    if spanned is not None and all(v.batch == ctx.nb for v in operands):
        spmd.check_groups(ctx, op, groups)
        return [_fold_fibers(ctx, op, spanned, v) for v in operands]

    def compute(stacked, idx):
        order = spmd.process_index_order(idx)
        return [_everyone(_fold(ctx, op.regions[0], s, order), idx) for s in stacked]
    return _collective(ctx, op, groups, operands, compute)


@kernel("stablehlo.reduce_scatter")
def reduce_scatter(ctx, op, operand):
    dim = op.attributes["scatter_dimension"].value

    def compute(stacked, idx):
        reduced = _fold(ctx, op.regions[0], stacked[0], spmd.process_index_order(idx))
        size = idx.shape[1]
        if reduced.shape[1 + dim] % size:
            raise InterpreterError(None, f"reduce_scatter: dimension {dim} of size "
                                   f"{reduced.shape[1 + dim]} does not split into {size} parts")
        return [np.stack(np.split(reduced, size, axis=1 + dim), axis=1)]  # [G, S, *part]
    return _collective(ctx, op, spmd.reduction_groups(ctx, op), [operand], compute)[0]


@kernel("stablehlo.all_gather")
def all_gather(ctx, op, *operands):
    dim = op.attributes["all_gather_dim"].value

    def compute(stacked, idx):
        return [_everyone(np.concatenate([s[:, m] for m in range(s.shape[1])], axis=1 + dim),
                          idx) for s in stacked]
    return _collective(ctx, op, spmd.reduction_groups(ctx, op), operands, compute)


@kernel("stablehlo.all_to_all")
def all_to_all(ctx, op, *operands):
    split = op.attributes["split_dimension"].value
    concat = op.attributes["concat_dimension"].value
    count = op.attributes["split_count"].value

    def compute(stacked, idx):
        outs = []
        for s in stacked:
            size = s.shape[1]
            if count != size or s.shape[2 + split] % count:
                raise InterpreterError(None, f"all_to_all: split_count {count} does not match "
                                       f"groups of {size} or dimension {split}")
            # parts[g, sender, receiver] = split part `receiver` of the sender's operand
            parts = np.stack(np.split(s, count, axis=2 + split), axis=2)
            received = [np.concatenate([parts[:, sender, r] for sender in range(size)],
                                       axis=1 + concat) for r in range(size)]
            outs.append(np.stack(received, axis=1))
        return outs
    return _collective(ctx, op, spmd.exchange_groups(ctx, op), operands, compute)


def _has_dynamic_root(op) -> bool:
    attr = op.attributes.get("has_dynamic_root")
    return attr is not None and bool(getattr(attr, "value", True))


def _with_singletons(ctx, groups: list[list[int]]) -> tuple[list[list[int]], set]:
    """``groups`` plus a group of one for each process in none (it gets zeros)."""
    covered = {p for g in groups for p in g}
    if ctx.process is None and ctx.nb:
        groups = groups + [[p] for p in range(ctx.grid.num_processes) if p not in covered]
    return groups, covered


def _rooted(ctx, op, operands, groups: list[list[int]], place) -> list[Tensor]:
    """The collectives with a root per group (``collective_broadcast``,
    ``collective_reduce``): ``place(stacked, idx, root)`` gives every member's value
    ``[G, S, *shape]`` from the members' operands and each group's root member (the first,
    or the dynamic root named by the last operand); processes in no group get zeros."""
    dynamic_root = _has_dynamic_root(op)
    data = list(operands[:-1] if dynamic_root else operands)
    groups, covered = _with_singletons(ctx, groups)
    if ctx.process is not None and ctx.process not in covered:
        return [_zeros(ctx, v) for v in data]

    def compute(stacked, idx):
        in_group = np.isin(idx, sorted(covered))
        outs = []
        for i, s in enumerate(stacked):
            root = _roots(ctx, op, operands[-1], i, idx) if dynamic_root \
                else np.zeros(idx.shape[0], dtype=np.int64)
            per_member = place(s, idx, root)
            per_member[~in_group] = 0
            outs.append(per_member)
        return outs
    return _collective(ctx, op, groups, data, compute)


@kernel("stablehlo.collective_broadcast")
def collective_broadcast(ctx, op, *operands):
    """Every member of a group gets its root's value."""
    def place(s, idx, root):
        return np.array(_everyone(s[np.arange(s.shape[0]), root], idx))
    return _rooted(ctx, op, operands, spmd.exchange_groups(ctx, op), place)


def _roots(ctx, op, roots: Tensor, index: int, idx: np.ndarray) -> np.ndarray:
    """Per group, the member index of the root of data operand ``index`` (the first
    member's value of the roots operand)."""
    values = roots.data[..., index]
    everyone = np.arange(ctx.grid.num_processes)
    per_process = values[ctx.process_layout().index(everyone)] if roots.batch else \
        np.full(ctx.grid.num_processes, int(values))
    root = per_process[idx[:, 0]].astype(np.int64)
    if ((root < 0) | (root >= idx.shape[1])).any():
        raise InterpreterError(None, f"'{op.name}' dynamic root index out of bounds")
    return root


def _zeros(ctx, value: Tensor) -> Tensor:
    return Tensor(value.type, np.zeros(value.type.shape, dtype=value.data.dtype), 0)


@kernel("stablehlo.collective_permute")
def collective_permute(ctx, op, operand):
    pairs = spmd.exchange_groups(ctx, op, "source_target_pairs")
    spmd.check_groups(ctx, op, pairs)
    t = op.results[0].type
    if ctx.process is not None:
        return _permute_one(ctx, op, operand, pairs)
    if ctx.nb == 0:  # one process alone: only a self-loop delivers anything
        if any(src == dst == 0 for src, dst in pairs):
            return operand
        return _zeros(ctx, operand)
    data = ctx.broadcast(operand).data
    out = np.zeros(data.shape, dtype=data.dtype)
    if pairs:
        layout = ctx.process_layout()
        src = np.array([p[0] for p in pairs])
        dst = np.array([p[1] for p in pairs])
        out[layout.index(dst)] = data[layout.index(src)]
    return Tensor(t, out, ctx.nb)


def _permute_one(ctx, op, operand: Tensor, pairs: list) -> Tensor:
    result = None
    channel = spmd.channel_id(op)
    me = ctx.process
    for src, dst in pairs:
        if me not in (src, dst):
            continue
        if src == dst:
            result = operand
            continue
        met = ctx.rendezvous.exchange(me, (src, dst), channel, [operand.data])
        if dst == me:
            result = Tensor(operand.type, met[src][0], 0)
    return result if result is not None else _zeros(ctx, operand)


@kernel("stablehlo.collective_reduce")
def collective_reduce(ctx, op, *operands):
    """Like all_reduce, but only each group's root gets the result; every other member
    gets zeros."""
    def place(s, idx, root):
        per_member = np.zeros_like(s)
        per_member[np.arange(s.shape[0]), root] = _fold(ctx, op.regions[0], s,
                                                        spmd.process_index_order(idx))
        return per_member
    return _rooted(ctx, op, operands, spmd.reduction_groups(ctx, op), place)
