"""Hypothesis strategies for sdy values and sharded programs, reusable by any
implementation's fuzzing (in the manner of ``hypothesis.extra.numpy``).

Everything drawn is *valid* by construction, by the rules of
https://openxla.org/shardy/sharding_representation (the invariants of "Basic structure",
"Axis splitting and sub-axes" and "Priorities") and https://openxla.org/shardy/sdy_dialect
(``#meshattr``, ``#subaxisinfoattr``, ``#tensorshardingattr``): mesh axis names are unique,
sub-axes divide their axis, no axis is used twice in a sharding, replicated and unreduced
axes are sorted by mesh order, closed empty dimensions carry no priority. Programs parse,
verify and print back identically.

Example::

    from hypothesis import given, settings, strategies as st
    from shardy_ref.testing import strategies as sst

    @settings(deadline=None)  # checks that run passes outlast the 200 ms default when busy
    @given(sst.meshes(min_axes=1), sst.programs(control_flow=True), st.data())
    def test_something(mesh, text, data):
        sharding = data.draw(sst.tensor_shardings(mesh, (8, 4), priorities=False))
        args = sst.inputs_for(text, seed=0)  # numpy arrays for @main
"""
from __future__ import annotations

import itertools

from hypothesis import strategies as st

from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis, SubAxisInfo, mesh_axis_key
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.testing.programs import programs
from shardy_ref.testing.strategy_programs import inputs, inputs_for, mlir_text

__all__ = [
    "AXIS_NAMES", "axis_pieces", "axis_refs", "disjoint_axis_refs", "inputs", "inputs_for",
    "meshes", "mlir_text", "op_sharding_rules", "programs", "tensor_shardings",
    "verifiable_op_sharding_rules",
]

AXIS_NAMES = ("a", "b", "c", "x", "y", "z", "data", "model", "weird name", "é")
AXIS_SIZES = (1, 2, 3, 4, 6, 8, 16)


@st.composite
def meshes(draw, min_axes: int = 0, max_axes: int = 4, *, allow_device_ids: bool = True,
           allow_maximal: bool = True, max_devices: int | None = None) -> Mesh:
    """A mesh of ``min_axes`` to ``max_axes`` uniquely named axes (sdy_dialect ``#meshattr``): sizes
    from :data:`AXIS_SIZES`, at most ``max_devices`` devices in all; with
    ``allow_device_ids`` sometimes an explicit ``device_ids`` permutation (when there are
    at most 64 devices), with ``allow_maximal`` sometimes a maximal mesh ``<[], device_ids=
    [k]>`` when no axis is drawn; else the empty mesh."""
    names = draw(st.lists(st.sampled_from(AXIS_NAMES), min_size=min_axes, max_size=max_axes,
                          unique=True))
    sizes, total = [], 1
    for _ in names:
        fits = [s for s in AXIS_SIZES if max_devices is None or total * s <= max_devices]
        size = draw(st.sampled_from(fits))
        sizes.append(size)
        total *= size
    axes = tuple(MeshAxis(n, s) for n, s in zip(names, sizes))
    if not axes:
        if allow_maximal and draw(st.booleans()):
            return Mesh((), (draw(st.integers(0, 7)),))
        return Mesh()
    device_ids = ()
    if allow_device_ids and total <= 64 and draw(st.booleans()):
        device_ids = tuple(draw(st.permutations(range(total))))
    return Mesh(axes, device_ids)


def _divisor_pairs(size: int) -> list[tuple[int, int]]:
    """(pre_size, sub_size) of every proper sub-axis of an axis of ``size``."""
    out = []
    for pre in range(1, size):
        if size % pre:
            continue
        for sub in range(2, size // pre + 1):
            if (size // pre) % sub == 0 and pre * sub <= size and sub != size:
                out.append((pre, sub))
    return out


@st.composite
def axis_refs(draw, mesh: Mesh, *, sub_axes: bool = True) -> AxisRef:
    """One axis ref of ``mesh`` (which needs an axis): a full axis or, with ``sub_axes``,
    a proper sub-axis ``"x":(m)k`` with ``m*k`` dividing the axis size and ``k > 1``
    ("Axis splitting and sub-axes" in sharding_representation; sdy_dialect
    ``#subaxisinfoattr``)."""
    axis = draw(st.sampled_from(mesh.axes))
    splits = _divisor_pairs(axis.size) if sub_axes else []
    if splits and draw(st.booleans()):
        pre, size = draw(st.sampled_from(splits))
        return AxisRef(axis.name, SubAxisInfo(pre, size))
    return AxisRef(axis.name)


def _cut(draw, axis: MeshAxis) -> list[AxisRef]:
    """Consecutive sub-axes of ``axis``, a non-mergeable subset of them (sub-axis invariants:
    two adjacent sub-axes in one list would have to be merged)."""
    cuts, pre = [], 1
    while pre < axis.size:
        options = [s for s in range(2, axis.size // pre + 1) if (axis.size // pre) % s == 0]
        s = draw(st.sampled_from(options))
        cuts.append((pre, s))
        pre *= s
    if len(cuts) == 1:
        return [AxisRef(axis.name)]
    keep = [c for c in cuts if draw(st.booleans())]
    chosen = [k for i, k in enumerate(keep) if i == 0 or keep[i - 1][0] * keep[i - 1][1] != k[0]]
    return [AxisRef(axis.name, SubAxisInfo(p, s)) for p, s in chosen]


@st.composite
def disjoint_axis_refs(draw, mesh: Mesh, *, sub_axes: bool = True) -> list[AxisRef]:
    """Disjoint axis refs of ``mesh``: per axis of size > 1, nothing, the full axis or (with
    ``sub_axes``) non-overlapping, non-mergeable sub-axes; usable together in one sharding
    (sharding_representation invariants: no axis or overlapping sub-axis used twice)."""
    pieces = []
    for axis in mesh.axes:
        if axis.size == 1 or not draw(st.booleans()):
            continue
        if sub_axes and _divisor_pairs(axis.size) and draw(st.booleans()):
            pieces.extend(_cut(draw, axis))
        else:
            pieces.append(AxisRef(axis.name))
    return pieces


axis_pieces = disjoint_axis_refs  # the older name


def _dimension(draw, axes, size, open_dims, priorities) -> DimensionSharding:
    """One dimension sharding: open or closed per ``open_dims`` (None: either), a priority
    sometimes when ``priorities``, never on an empty closed dimension ("Priorities"
    in sharding_representation)."""
    is_closed = draw(st.booleans()) if open_dims is None else not open_dims
    priority = draw(st.one_of(st.none(), st.integers(0, 5))) if priorities else None
    if is_closed and not axes:
        priority = None
    return DimensionSharding(axes, is_closed, priority)


def _product(axes, mesh: Mesh) -> int:
    sizes = {a.name: a.size for a in mesh.axes}
    out = 1
    for a in axes:
        out *= a.sub_axis_info.size if a.sub_axis_info is not None else sizes[a.name]
    return out


@st.composite
def tensor_shardings(draw, mesh: Mesh | None = None, shape_or_rank=None, *,
                     mesh_name: str | None = "mesh", rank: int | None = None,
                     open_dims: bool | None = None, priorities: bool = True,
                     replicated: bool = True, unreduced: bool = True, sub_axes: bool = True,
                     divisible: bool = False) -> TensorSharding:
    """A valid sharding (sdy_dialect ``#tensorshardingattr``, sharding_representation) of a
    tensor on ``mesh`` (drawn when None), referenced as ``@mesh_name`` or inline when that
    is None. ``shape_or_rank`` (or ``rank``) fixes the rank; with a shape and ``divisible``,
    each dimension's axes divide its size ("Dimension sharding divisibility"). ``open_dims``
    True/False makes every dimension open or closed; ``priorities``, ``replicated``,
    ``unreduced`` and ``sub_axes`` allow those parts. A maximal mesh gets the empty sharding
    ``[]``."""
    mesh = mesh if mesh is not None else draw(meshes())
    shape = tuple(shape_or_rank) if isinstance(shape_or_rank, (tuple, list)) else None
    if shape is not None:
        rank = len(shape)
    elif shape_or_rank is not None:
        rank = shape_or_rank
    rank = rank if rank is not None else draw(st.integers(0, 4))
    pieces = draw(disjoint_axis_refs(mesh, sub_axes=sub_axes)) if not mesh.is_maximal else []
    pieces = draw(st.permutations(pieces))
    slots = [draw(st.integers(0, rank + 1)) for _ in pieces]  # dim, replicated or unreduced
    dims = []
    for d in range(rank):
        axes = tuple(p for p, s in zip(pieces, slots) if s == d)
        if any(a.can_merge(b) for a, b in itertools.pairwise(axes)):
            axes = axes[:1]  # two consecutive sub-axes of one axis must not be mergeable
        if divisible and shape is not None:
            while axes and (shape[d] is None or shape[d] % _product(axes, mesh)):
                axes = axes[:-1]
        dims.append(_dimension(draw, axes, shape, open_dims, priorities))
    key = mesh_axis_key(mesh)
    rep = tuple(sorted((p for p, s in zip(pieces, slots) if s == rank), key=key))
    unred = tuple(sorted((p for p, s in zip(pieces, slots) if s == rank + 1), key=key))
    rep = rep if replicated else ()
    unred = unred if unreduced else ()
    if mesh.is_maximal:
        dims, rep, unred = [], (), ()
    reduction = draw(st.sampled_from(list(ReductionOp))) if unred else ReductionOp.SUM
    mesh_or_ref = mesh_name if mesh_name is not None else mesh
    return TensorSharding(mesh_or_ref, tuple(dims), rep, unred, reduction)


@st.composite
def op_sharding_rules(draw) -> OpShardingRule:
    """A well-formed rule: every factor is used, special factor sets sorted and disjoint."""
    n_factors = draw(st.integers(1, 22))
    factors = list(range(n_factors))
    sizes = tuple(draw(st.sampled_from([1, 2, 4, 8, 16, 2**40])) for _ in factors)
    n_tensors = draw(st.integers(2, 4))
    owner = [draw(st.integers(0, n_tensors - 1)) for _ in factors]
    mappings = []
    for t in range(n_tensors):
        mine = [f for f in factors if owner[f] == t]
        dims, current = [], []
        for f in mine:
            current.append(f)
            if draw(st.booleans()):
                dims.append(DimMapping(tuple(current)))
                current = []
        if current:
            dims.append(DimMapping(tuple(current)))
        mappings.append(TensorMapping(tuple(dims)))
    n_operands = draw(st.integers(1, n_tensors - 1))
    kinds = [draw(st.sampled_from(["pass", "reduction", "need_replication", "permutation"]))
             for _ in factors]
    blocked = tuple(f for f in factors if draw(st.booleans()))
    return OpShardingRule(
        sizes, tuple(mappings[:n_operands]), tuple(mappings[n_operands:]),
        tuple(f for f in factors if kinds[f] == "reduction"),
        tuple(f for f in factors if kinds[f] == "need_replication"),
        tuple(f for f in factors if kinds[f] == "permutation"),
        blocked, draw(st.booleans()))


@st.composite
def verifiable_op_sharding_rules(draw) -> OpShardingRule:
    """An :func:`op_sharding_rules` rule that also passes upstream's verifier (our rules
    OSR-*, DIMMAP-*, see ``shardy_ref.ir.verify.rules``): no size-1 factor in a multi-factor
    dimension and no reduction factor in a result."""
    import dataclasses

    rule = draw(op_sharding_rules())
    mappings = (*rule.operand_mappings, *rule.result_mappings)
    multi = {f for m in mappings for d in m.dim_mappings if len(d.factor_indices) > 1
             for f in d.factor_indices}
    in_results = {f for m in rule.result_mappings for d in m.dim_mappings
                  for f in d.factor_indices}
    return dataclasses.replace(
        rule,
        factor_sizes=tuple(2 if size == 1 and f in multi else size
                           for f, size in enumerate(rule.factor_sizes)),
        reduction_factors=tuple(f for f in rule.reduction_factors if f not in in_results))


def rule_tensor_types(rule: OpShardingRule):
    """Operand and result types matching ``rule``: each dimension is the product of the
    sizes of its factors."""
    from shardy_ref.ir.types import F32, RankedTensorType

    def tensor(mapping: TensorMapping) -> RankedTensorType:
        shape = []
        for dim in mapping.dim_mappings:
            size = 1
            for f in dim.factor_indices:
                size *= rule.factor_sizes[f]
            shape.append(size)
        return RankedTensorType(tuple(shape), F32)

    return ([tensor(m) for m in rule.operand_mappings],
            [tensor(m) for m in rule.result_mappings])


@st.composite
def propagation_edges(draw, num_operands: int, num_results: int,
                      axis_names: tuple[str, ...] = AXIS_NAMES):
    """A ``#sdy.propagation_edges`` attribute valid for an op with that many operands and
    results, at least two values in all (sdy_dialect ``#propagationedgesattr``): unique
    non-negative steps, each axis entry's targets unique and different from its source."""
    from shardy_ref.ir.sdy_debug import (
        AxisToPropagationDetails,
        EdgeValueRef,
        PropagationEdges,
        PropagationOneStep,
    )

    refs = [EdgeValueRef("operand", i) for i in range(num_operands)] + \
           [EdgeValueRef("result", i) for i in range(num_results)]
    steps = draw(st.lists(st.integers(0, 1000), min_size=1, max_size=3, unique=True))
    out = []
    for step in steps:
        entries = []
        for _ in range(draw(st.integers(1, 3))):
            source = draw(st.sampled_from(refs))
            others = [r for r in refs if r != source]
            targets = draw(st.lists(st.sampled_from(others), min_size=1, unique=True))
            axis = AxisRef(draw(st.sampled_from(axis_names)))
            entries.append(AxisToPropagationDetails(axis, source, tuple(targets)))
        out.append(PropagationOneStep(step, tuple(entries)))
    return PropagationEdges(tuple(out))


# --- shardings with room for a mutation (tests/ir/test_verify_sharding_props.py) ---------

FREE_AXIS = "free"  # not in AXIS_NAMES, so never used by tensor_shardings


@st.composite
def ranked_tensor_types(draw, rank: int):
    """A ``tensor<...>`` of ``rank`` dims, some dynamic or of size 0."""
    from shardy_ref.ir.types import F32, I32, RankedTensorType

    dims = tuple(draw(st.one_of(st.none(), st.integers(0, 16))) for _ in range(rank))
    return RankedTensorType(dims, draw(st.sampled_from([F32, I32])))


@st.composite
def shardings_with_free_axis(draw, free_sizes=(4, 6, 8, 16), inline: bool | None = None):
    """``(mesh, sharding)``: a valid sharding (by ``@mesh`` or inline) on a mesh with an
    axis ``FREE_AXIS`` of a composite size that the sharding doesn't use."""
    names = draw(st.lists(st.sampled_from(AXIS_NAMES), max_size=3, unique=True))
    axes = [MeshAxis(n, draw(st.sampled_from([1, 2, 3, 4, 6, 8, 16]))) for n in names]
    free = MeshAxis(FREE_AXIS, draw(st.sampled_from(free_sizes)))
    pos = draw(st.integers(0, len(axes)))
    mesh = Mesh((*axes[:pos], free, *axes[pos:]))
    sharding = draw(tensor_shardings(Mesh(tuple(axes)), mesh_name="mesh"))
    if inline if inline is not None else draw(st.booleans()):
        sharding = sharding.replace(mesh_or_ref=mesh)
    return mesh, sharding


def proper_sub_axes(size: int) -> list[AxisRef]:
    """Every valid sub-axis ``(pre)k`` of the axis ``FREE_AXIS`` of ``size``."""
    return [AxisRef(FREE_AXIS, SubAxisInfo(p, k)) for p, k in _divisor_pairs(size)]
