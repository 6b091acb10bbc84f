"""The collectives that turn one sharding into another: upstream's ``CollectiveInserter``
(``shardy/dialect/sdy/transforms/export/reshard_to_collectives.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-reshard-to-collectives).

After aligning sub-axes so overlapping ones are equal and dropping each dimension's common
prefix, the in-axes (``in_axes``) still to remove and out-axes (``out_axes``) still to add
are resolved in at most two rounds of: ``all_slice`` (shrink: slice out-axes the input does
not use, first those that let an all-to-all follow), ``collective_permute`` (same shard
count, different axes or device order), ``all_to_all`` (move axes between dimensions) and
``all_gather`` (grow: gather in-axes the output does not use). Every collective's
``out_sharding`` is the closed current sharding.

The lists are manipulated exactly as upstream's ``std::list`` iterators do, including one
corner upstream relies on implicitly: when the last in-axis of a dimension is to be
gathered, every in-axis of that dimension is gathered (the reverse iterator wraps to the
front of the list).
"""
from __future__ import annotations

from bisect import bisect_left
from functools import cmp_to_key
from math import gcd

from shardy_ref.ir.axis_lists import add_axis_or_merge
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, AxisRefList, ListOfAxisRefLists, Mesh
from shardy_ref.ir.sdy_sharding import (
    AllToAllParam,
    AllToAllParamList,
    DimensionSharding,
    TensorSharding,
)

AxisList = list[AxisRef]
_AXIS_KEY = cmp_to_key(lambda a, b: 0 if a == b else (-1 if a < b else 1))


def _size(axes, mesh: Mesh) -> int:
    n = 1
    for axis in axes:
        n *= axis.size(mesh)
    return n


def _divisible(a: int, b: int) -> bool:
    return a % b == 0 or b % a == 0


def _first_overlapping(axis: AxisRef, ordered: list[AxisRef]) -> int:
    """Index of ``AxisRefAttr::getFirstOverlapping`` in the sorted ``ordered`` (or len)."""
    i = bisect_left([_AXIS_KEY(o) for o in ordered], _AXIS_KEY(axis))
    if i > 0 and axis.overlaps(ordered[i - 1]):
        return i - 1
    if i < len(ordered) and axis.overlaps(ordered[i]):
        return i
    return len(ordered)


def align_sub_axes(axes: AxisList, ordered_other: list[AxisRef], mesh: Mesh) -> None:
    """Upstream ``alignSubAxesByDecomposition``: split each axis of ``axes`` that partially
    overlaps axes of ``ordered_other`` into prefix, overlap and suffix (in place)."""
    i = 0
    while i < len(axes):
        axis = axes[i]
        j = _first_overlapping(axis, ordered_other)
        advanced = False
        while (j < len(ordered_other) and ordered_other[j].can_coexist(axis)
               and not ordered_other[j].contains(axis) and ordered_other[j].overlaps(axis)):
            other = ordered_other[j]
            del axes[i]
            prefix = axis.prefix_without_overlap(other)
            if prefix is not None:
                axes.insert(i, prefix)
                i += 1
            axes.insert(i, axis.overlap(other))
            i += 1
            suffix = axis.suffix_without_overlap(other, mesh)
            if suffix is not None:
                axes.insert(i, suffix)
                axis, j, advanced = suffix, j + 1, False
            else:
                advanced = True
                break
        if not advanced:
            i += 1


def align_all(axes_per_dim: list[AxisList], ordered_other: list[AxisRef], mesh: Mesh) -> None:
    if ordered_other:
        for axes in axes_per_dim:
            align_sub_axes(axes, ordered_other, mesh)


def _ordered(axes_per_dim: list[AxisList]) -> list[AxisRef]:
    return sorted((a for axes in axes_per_dim for a in axes), key=_AXIS_KEY)


def _pop_back_from_current(current: AxisList, to_pop: AxisList, start: int) -> None:
    """Upstream ``popBackFromCurrentAxes``: take ``to_pop[start:]`` off the end of
    ``current`` (a merged axis shrinks to its prefix)."""
    for axis in reversed(to_pop[start:]):
        prefix = current[-1].prefix_without_overlap(axis)
        if prefix is not None:
            current[-1] = prefix
        else:
            current.pop()


def _within_capacity(axis: AxisRef, capacity: int, mesh: Mesh):
    """Upstream ``getAxisWithinCapacity``: (the part of ``axis`` that fits ``capacity``,
    the rest, the capacity left)."""
    size = axis.size(mesh)
    if capacity <= 1 or not _divisible(size, capacity):
        return None, None, capacity
    if capacity >= size:
        return axis, None, capacity // size
    within = AxisRef.sub(axis.name, axis.pre_size, capacity)
    rest = AxisRef.sub(axis.name, axis.pre_size * capacity, size // capacity)
    return within, rest, 1


def _positions(axes_per_dim: list[AxisList]) -> dict[AxisRef, tuple[int, int]]:
    """Upstream ``getAxisToDimAndIndex`` (first occurrence wins)."""
    out: dict[AxisRef, tuple[int, int]] = {}
    for dim, axes in enumerate(axes_per_dim):
        for index, axis in enumerate(axes):
            out.setdefault(axis, (dim, index))
    return out


class CollectiveInserter:
    """Emits the collectives from ``inp`` to ``out`` on ``value`` before ``anchor``."""

    def __init__(self, inp: TensorSharding, out: TensorSharding, value: Value, mesh: Mesh,
                 anchor: Operation):
        self.value, self.mesh, self.anchor = value, mesh, anchor
        self.shape = tuple(value.type.shape)
        self.cur_mesh, self.out_mesh = inp.mesh_or_ref, out.mesh_or_ref
        self.unreduced = out.unreduced_axes
        self.in_axes = [list(d.axes) for d in inp.dim_shardings]
        self.out_axes = [list(d.axes) for d in out.dim_shardings]
        self.current = [list(d.axes) for d in inp.dim_shardings]
        self.capacity = [1] * len(self.in_axes)
        ordered_in, ordered_out = _ordered(self.in_axes), _ordered(self.out_axes)
        align_all(self.in_axes, ordered_out, mesh)
        align_all(self.out_axes, ordered_in, mesh)
        for ins, outs in zip(self.in_axes, self.out_axes):
            while ins and outs and ins[0] == outs[0]:
                ins.pop(0)
                outs.pop(0)
        self.in_set = {a for axes in self.in_axes for a in axes}
        self.out_pos = _positions(self.out_axes)

    @property
    def rank(self) -> int:
        return len(self.in_axes)

    def done(self) -> bool:
        return self.cur_mesh == self.out_mesh and not any(self.in_axes) \
            and not any(self.out_axes)

    def current_sharding(self) -> TensorSharding:
        return TensorSharding(self.cur_mesh, tuple(DimensionSharding(tuple(a), True)
                                                   for a in self.current),
                              (), tuple(self.unreduced))

    def _emit(self, name: str, **attributes) -> None:
        op = Operation(name, [self.value], [self.value.type],
                       {**attributes, "out_sharding": self.current_sharding()},
                       location=self.anchor.location)
        self.anchor.parent.insert_before(self.anchor, op)
        self.value = op.results[0]

    def insert(self) -> Value:
        for _ in range(2):
            if self.done():
                break
            self.try_all_slice()
            self.try_collective_permute()
            self.try_all_to_alls(allow_out_of_order=False)
            self.try_all_to_alls(allow_out_of_order=True)
            self.try_all_gather()
        return self.value

    # -- all_gather ----------------------------------------------------------------------
    def gathering_axes(self, dim: int) -> AxisList:
        ins = self.in_axes[dim]
        if not ins:
            return []
        start = len(ins)
        if ins[-1] not in self.out_pos:
            self.in_set.discard(ins[-1])
            start = 0  # upstream's reverse iterator wraps to the list's front here
        _pop_back_from_current(self.current[dim], ins, start)
        gathering: AxisList = []
        for axis in ins[start:]:
            add_axis_or_merge(gathering, axis, self.mesh)
        del ins[start:]
        return gathering

    def try_all_gather(self) -> None:
        per_dim = [self.gathering_axes(d) for d in range(self.rank)]
        if any(per_dim):
            self._emit("sdy.all_gather", gathering_axes=ListOfAxisRefLists(
                tuple(AxisRefList(tuple(a)) for a in per_dim)))

    # -- all_slice -------------------------------------------------------------------------
    def distribute(self, add_to_front: bool, available_of, consume=None) -> None:
        """Upstream ``distributeInAxesWithinCapacity``: put available axes into each
        dimension's in-axes while it has capacity (splitting an axis when only a part
        fits)."""
        split_added: AxisList = []
        for dim in range(self.rank):
            ins, capacity = self.in_axes[dim], self.capacity[dim]
            position = 0 if add_to_front else None
            available = available_of(dim)
            i = 0
            while i < len(available) and capacity > 1:
                within, rest, capacity = _within_capacity(available[i], capacity, self.mesh)
                if within is None:
                    i += 1
                    continue
                del available[i]
                if position is None:
                    ins.append(within)
                else:
                    ins.insert(position, within)
                    position += 1
                self.in_set.add(within)
                if consume is not None:
                    consume(within, dim)
                if rest is not None:
                    split_added.append(within)
                    available.insert(0, rest)
                    i += 1
            self.capacity[dim] = capacity
        split_added.sort(key=_AXIS_KEY)
        align_all(self.out_axes, split_added, self.mesh)

    def axes_to_slice_for_all_to_all(self, src: int):
        """Upstream ``getAxesToSliceForAllToAll``: ``(tgt, start, end)`` of out-axes of
        ``tgt`` to slice at ``src`` so a later all-to-all can move them, or None."""
        src_in = self.in_axes[src]
        if not src_in or self.out_axes[src]:
            return None
        entry = self.out_pos.get(src_in[-1])
        if entry is None:
            return None
        tgt = entry[0]
        if self.in_axes[tgt]:
            return None
        tgt_out = self.out_axes[tgt]
        start = tgt_out.index(src_in[-1]) + 1
        if start == len(tgt_out) or tgt_out[start] in self.in_set:
            return None
        i, k, common = len(src_in) - 1, start - 1, 1
        while i >= 0 and k >= 0 and src_in[i] == tgt_out[k]:
            common *= src_in[i].size(self.mesh)
            i, k = i - 1, k - 1
        for j in range(i, -1, -1):
            other = self.out_pos.get(src_in[j])
            if other is not None and other[0] == tgt:
                return None
        end, added = start, 1
        while end < len(tgt_out) and tgt_out[end] not in self.in_set:
            added *= tgt_out[end].size(self.mesh)
            end += 1
        if self.shape[src] % (_size(self.current[src], self.mesh) * added):
            return None
        self.capacity[tgt] //= common * added
        return tgt, start, end

    def init_capacity_per_dim(self) -> None:
        """Stage 0 of ``getSlicingAxesPerDim``: each dimension's capacity is how much more
        the output shards it than the input does."""
        for dim in range(self.rank):
            in_size = _size(self.in_axes[dim], self.mesh)
            out_size = _size(self.out_axes[dim], self.mesh)
            self.capacity[dim] = out_size // gcd(in_size, out_size)

    def add_slicing_axis(self, slicing: list[AxisList], dim: int, axis: AxisRef) -> None:
        """Record ``axis`` as sliced on ``dim``, in both the collective and the current
        sharding."""
        add_axis_or_merge(slicing[dim], axis, self.mesh)
        add_axis_or_merge(self.current[dim], axis, self.mesh)

    def slice_axes_for_all_to_alls(self, slicing: list[AxisList]) -> bool:
        """Stage 1 of ``getSlicingAxesPerDim``: for a future all-to-all from ``src`` to
        ``tgt``, slice out-axes of ``tgt`` at ``src``; whether anything was sliced."""
        has = False
        for src in range(self.rank):
            found = self.axes_to_slice_for_all_to_all(src)
            if found is None:
                continue
            has = True
            tgt, start, end = found
            for axis in self.out_axes[tgt][start:end]:
                self.in_axes[src].append(axis)
                self.in_set.add(axis)
                self.add_slicing_axis(slicing, src, axis)
        return has

    def slice_axes_in_desired_dim(self, dim: int, slicing: list[AxisList],
                                  available: AxisList) -> bool:
        """Stage 2 of ``getSlicingAxesPerDim``: slice the out-axes of ``dim`` the input does
        not use there, as far as its capacity allows; the others (and split-off rests) go
        to ``available``. Returns whether anything was sliced."""
        mesh = self.mesh
        ins, outs = self.in_axes[dim], self.out_axes[dim]
        capacity, i, has = self.capacity[dim], 0, False
        while i < len(outs):
            axis = outs[i]
            if axis in self.in_set:
                i += 1
                continue
            within, rest, capacity = _within_capacity(axis, capacity, mesh)
            if within is None:
                available.append(axis)
                i += 1
                continue
            has = True
            self.add_slicing_axis(slicing, dim, within)
            if not ins and i == 0:
                del outs[i]
            else:
                self.in_set.add(within)
                ins.append(within)
                outs[i] = within
                i += 1
            if rest is not None:
                outs.insert(i, rest)
                i += 1
                available.append(rest)
        self.capacity[dim] = capacity
        return has

    def slicing_axes_per_dim(self):
        """Upstream ``getSlicingAxesPerDim``."""
        slicing: list[AxisList] = [[] for _ in range(self.rank)]
        self.init_capacity_per_dim()
        has = self.slice_axes_for_all_to_alls(slicing)
        available: AxisList = []
        for dim in range(self.rank):
            has = self.slice_axes_in_desired_dim(dim, slicing, available) or has

        def consume(axis: AxisRef, dim: int) -> None:
            nonlocal has
            has = True
            self.add_slicing_axis(slicing, dim, axis)

        self.distribute(False, lambda _dim: available, consume)
        self.out_pos = _positions(self.out_axes)
        return slicing if has else None

    def try_all_slice(self) -> None:
        slicing = self.slicing_axes_per_dim()
        if slicing is not None:
            self._emit("sdy.all_slice", slicing_axes=ListOfAxisRefLists(
                tuple(AxisRefList(tuple(a)) for a in slicing)))

    # -- collective_permute --------------------------------------------------------------
    def should_collective_permute(self) -> bool:
        mesh = self.mesh
        available_in = available_out = None
        for dim, (ins, outs) in enumerate(zip(self.in_axes, self.out_axes)):
            if ins and outs and _divisible(ins[0].size(mesh), outs[0].size(mesh)):
                return True
            for axis in outs:
                if axis not in self.in_set:
                    available_out = axis
            last_dim, last_index, seen = None, 0, set()
            for axis in ins:
                cur_dim = None
                entry = self.out_pos.get(axis)
                if entry is not None:
                    cur_dim, cur_index = entry
                    if (cur_dim == dim or cur_dim in seen) and \
                            (last_dim != cur_dim or cur_index != last_index + 1):
                        return True
                    seen.add(cur_dim)
                    last_index = cur_index
                elif last_dim is not None and not outs:
                    return True
                else:
                    available_in = axis
                last_dim = cur_dim
        return (available_out is not None and available_in is not None
                and _divisible(available_out.size(mesh), available_in.size(mesh)))

    def place_out_axes(self, dim: int, available_out: AxisList) -> int:
        """Stage 1 of ``performCollectivePermute`` for ``dim``: replace its in-axes in the
        current sharding with its front out-axes while capacity allows; the remaining
        out-axes go to ``available_out``. Returns the capacity the out-axes used."""
        mesh = self.mesh
        ins, outs, current = self.in_axes[dim], self.out_axes[dim], self.current[dim]
        capacity = _size(ins, mesh)
        used = capacity
        _pop_back_from_current(current, ins, 0)
        while capacity > 1 and outs:
            within, rest, capacity = _within_capacity(outs[0], capacity, mesh)
            if within is None:
                break
            outs.pop(0)
            add_axis_or_merge(current, within, mesh)
            if rest is not None:
                outs.insert(0, rest)
        available_out += outs
        self.capacity[dim] = capacity
        return used // capacity

    def take_available_in_axes(self, dim: int, used: int) -> AxisList:
        """Empty the in-axes of ``dim`` and return those the output does not use, the ones
        past the ``used`` capacity first (so they can go back where they were)."""
        ins = self.in_axes[dim]
        ins[:] = [a for a in ins if a not in self.out_pos]
        available_in: AxisList = []
        while used > 1 and ins:
            within, rest, used = _within_capacity(ins[0], used, self.mesh)
            if within is None:
                break
            ins.pop(0)
            available_in.append(within)
            if rest is not None:
                ins.insert(0, rest)
        available_in[0:0] = ins
        ins.clear()
        return available_in

    def perform_collective_permute(self) -> None:
        """Upstream ``performCollectivePermute``."""
        available_out: AxisList = []
        available_in_per_dim: list[AxisList] = []
        self.in_set.clear()
        for dim in range(self.rank):
            used = self.place_out_axes(dim, available_out)
            available_in_per_dim.append(self.take_available_in_axes(dim, used))
        self.distribute(False, lambda _dim: available_out)
        self.distribute(True, lambda dim: available_in_per_dim[dim])
        available_in = [a for axes in available_in_per_dim for a in axes]
        for axes in available_in_per_dim:
            axes.clear()
        self.distribute(True, lambda _dim: available_in)
        self.out_pos = _positions(self.out_axes)
        for ins, current in zip(self.in_axes, self.current):
            for axis in ins:
                add_axis_or_merge(current, axis, self.mesh)

    def try_collective_permute(self) -> None:
        if self.should_collective_permute():
            self.perform_collective_permute()
        elif self.cur_mesh == self.out_mesh:
            return
        self.cur_mesh = self.out_mesh
        self._emit("sdy.collective_permute")

    # -- all_to_all ----------------------------------------------------------------------
    def all_to_all_info(self, src: int, allow_out_of_order: bool):
        """Upstream ``getAllToAllInfo``: move the maximal suffix of ``src``'s in-axes that
        all belong to one other dimension there."""
        src_in = self.in_axes[src]
        i, tgt = len(src_in) - 1, None
        while i >= 0:
            entry = self.out_pos.get(src_in[i])
            if entry is None or entry[0] == src or (tgt is not None and entry[0] != tgt):
                break
            tgt = entry[0]
            i -= 1
        if tgt is None:
            return None
        start = i + 1
        tgt_out = self.out_axes[tgt]
        moving = src_in[start:]
        if not allow_out_of_order and tgt_out[:len(moving)] != moving:
            return None
        axes: AxisList = []
        _pop_back_from_current(self.current[src], src_in, start)
        tgt_in = self.in_axes[tgt]
        for axis in moving:
            add_axis_or_merge(axes, axis, self.mesh)
            add_axis_or_merge(self.current[tgt], axis, self.mesh)
            self.in_set.discard(axis)
            if not tgt_in and tgt_out and tgt_out[0] == axis:
                tgt_out.pop(0)
            else:
                tgt_in.append(axis)
                self.in_set.add(axis)
        del src_in[start:]
        return axes, tgt

    def try_all_to_alls(self, allow_out_of_order: bool) -> None:
        for src in range(self.rank):
            while (info := self.all_to_all_info(src, allow_out_of_order)) is not None:
                axes, tgt = info
                self._emit("sdy.all_to_all", params=AllToAllParamList(
                    (AllToAllParam(tuple(axes), src, tgt),)))
