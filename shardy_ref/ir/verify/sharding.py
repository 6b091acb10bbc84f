"""Verification of axis refs and tensor shardings, with upstream's messages.

This is upstream ``verifiers.cc`` from ``getMeshSafe`` to ``verifyFuncAttribute``, the
dialect's ``sdy.sharding`` attribute hooks (``SdyDialect::verifyOperationAttribute``,
``verifyRegionArgAttribute``, ``verifyRegionResultAttribute``), ``MeshOp::verify`` and the
symbol-use checks of ``sdy.sharding_constraint`` and ``sdy.reshard`` (our rule IDs AXREF-*,
AXLIST-*, DIMSH-*, SUBAX-*, TSH-*, TSPV-1 for the constraints upstream's docs list under
those ops and attributes; cases per ID in ``tests/ir/verify_cases``). Checks run in
upstream's order and stop at the first failure. :func:`verify_mesh` rechecks meshes
(MESHATTR-*, MESH-4), checked at parse.
Other rule modules use the helpers here. Each takes an ``emit(message) -> VerifyError``
that builds the error with the caller's prefix, as upstream's ``EmitErrorFn`` does, and
raises what it returns; :func:`op_emitter` and :func:`value_in_range_emitter` make them.

See https://openxla.org/shardy/sdy_dialect#tensorshardingattr and
``shardy/dialect/sdy/ir/verifiers.cc`` at the pinned commit (a0277a83e7f8).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from shardy_ref.ir.axis_lists import axis_set_diff
from shardy_ref.ir.builtin_attrs import format_symbol_name
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation, OpResult, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.types import (
    RankedTensorType,
    TupleType,
    Type,
    UnrankedTensorType,
    VectorType,
)
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.ir.verify import (
    VerifyContext,
    attr_verifier,
    func_attr_verifier,
    note,
    op_error,
    op_verifier,
    symbol_use_verifier,
)

EmitError = Callable[[str], VerifyError]

# MLIR's ShapedType: the types a sharding can describe dimension by dimension
_SHAPED_TYPES = (RankedTensorType, UnrankedTensorType, VectorType)


def _quoted(name: str) -> str:
    """An axis name as upstream streams it into messages: in plain double quotes."""
    return f'"{name}"'


# --- error builders and lookups (upstream getEmitErrorFn, getMeshSafe, ...) -------------

def op_emitter(op: Operation) -> EmitError:
    """``getEmitErrorFn``: errors as ``'<op name>' op <message>`` at ``op``."""
    return lambda message: op_error(op, message)


def value_in_range_emitter(emit: EmitError, num_values: int, index: int) -> EmitError:
    """``getEmitValueInRangeErrorFn``: ``- <message>`` when there is a single value,
    else ``<index> - <message>``, after ``emit``'s own prefix (``'op' op result 1 - ...``)."""
    if num_values == 1:
        return lambda message: emit(f"- {message}")
    return lambda message: emit(f"{index} - {message}")


def mesh_for(sharding: TensorSharding, op: Operation, ctx: VerifyContext) -> Mesh | None:
    """``getMeshSafe``: the inline mesh, or the ``sdy.mesh`` of that name in the module
    nearest to ``op`` (a mesh of an outer module is not visible); None if there is none."""
    ref = sharding.mesh_or_ref
    if isinstance(ref, Mesh):
        return ref
    module = ctx.from_enclosing("module", op, _nearer_module, None)
    if module is None:
        return None
    if module is ctx.module:
        return ctx.mesh_of(sharding)
    for child in module.regions[0].blocks[0] if module.regions else ():
        name = child.attributes.get("sym_name")
        if child.name == "sdy.mesh" and getattr(name, "value", None) == ref:
            mesh = child.attributes.get("mesh")
            return mesh if isinstance(mesh, Mesh) else None
    return None


def _nearer_module(op: Operation, outer: Operation | None) -> Operation | None:
    return op if op.name == "builtin.module" else outer


def _add_manual_axes(op: Operation, outer: dict[str, Operation]) -> dict[str, Operation]:
    if op.name != "sdy.manual_computation" or not op.attributes.get("manual_axes"):
        return outer
    return {**dict.fromkeys(op.attributes["manual_axes"], op), **outer}


def parent_manual_axes(op: Operation, ctx: VerifyContext | None = None) -> dict[str, Operation]:
    """``getParentManualComputationOps``: each axis made manual by an enclosing
    ``sdy.manual_computation`` of ``op`` (not ``op`` itself), to the outermost such op
    (memoised in ``ctx``; do not change the result)."""
    if ctx is not None:
        return ctx.from_enclosing("manual_axes", op, _add_manual_axes, {})
    owners: dict[str, Operation] = {}
    parent = op.parent_op
    while parent is not None:
        if parent.name == "sdy.manual_computation":
            for axis_name in parent.attributes.get("manual_axes") or ():
                owners[axis_name] = parent
        parent = parent.parent_op
    return owners


def bound_axis_error(emit: EmitError, axis_name: str, owner: Operation) -> VerifyError:
    """``emitBoundAxisInManualComputationError`` (MC-8): ``axis_name`` is already manual
    in the enclosing ``owner``, which a note points at."""
    error = emit(f"operates on axis {_quoted(axis_name)} which is already bound by a "
                 "parent sdy.manual_computation op")
    error.notes.append(note(owner.location, "parent bounding this axis as manual"))
    return error


# --- axis-ref lists (sdy_dialect #axisrefattr, #axisreflistattr, #subaxisinfoattr) -----

@dataclass
class SeenAxes:
    """What the axis lists verified so far used (upstream's ``seenAxisRefs`` and
    ``axisNameToSubAxes``): shared so that an axis can't be used twice across them."""

    refs: set[AxisRef] = field(default_factory=set)
    sub_axes: dict[str, list[AxisRef]] = field(default_factory=dict)


def verify_axis_ref_list(axis_refs: Iterable[AxisRef], mesh_axis_sizes: dict[str, int],
                         emit: EmitError, seen: SeenAxes | None = None) -> None:
    """``verifyAxisRefList``: every name is a mesh axis (AXREF-1), no axis ref repeats one
    already in ``seen`` (AXLIST-2), and no two adjacent sub-axes can be merged (AXLIST-3).

    Sub-axes are only collected into ``seen``; :func:`verify_sub_axes` checks them.
    """
    seen = seen if seen is not None else SeenAxes()
    prev: AxisRef | None = None
    for axis in axis_refs:
        if axis.name not in mesh_axis_sizes:
            raise emit(f"unknown axis name: {_quoted(axis.name)}")
        if axis in seen.refs:
            raise emit(f"duplicate axis ref: {axis.params()}")
        seen.refs.add(axis)
        if axis.sub_axis_info is not None:
            seen.sub_axes.setdefault(axis.name, []).append(axis)
            if prev is not None and prev.can_merge(axis):
                raise emit("two consecutive sub-axes can be merged: "
                           f"{prev.params()}, {axis.params()}")
        prev = axis


def mesh_less(mesh: Mesh) -> Callable[[AxisRef, AxisRef], bool]:
    """``AxisRefAttr::getMeshComparator``: by mesh axis order, then within one axis.

    Names the mesh lacks (sortedness is checked before names are) sort after the mesh's
    own, as upstream's comparator does when only one of the two names is known.
    """
    order = {name: i for i, name in enumerate(mesh.axis_names)}
    unknown = len(order)

    def less(a: AxisRef, b: AxisRef) -> bool:
        if a.name == b.name:
            return a < b
        return order.get(a.name, unknown) < order.get(b.name, unknown)
    return less


def axis_sizes(mesh: Mesh) -> dict[str, int]:
    """``MeshAttr::getAxisNameToSize``."""
    return {axis.name: axis.size for axis in mesh.axes}


def verify_sorted_axis_ref_list(axis_refs: Sequence[AxisRef], mesh: Mesh, emit: EmitError,
                                what: str, seen: SeenAxes | None = None) -> None:
    """``verifySortedAxisRefList``: ``axis_refs`` are sorted w.r.t. ``mesh`` (TSH-9:
    ``<what> axes are not ordered w.r.t. mesh``), then :func:`verify_axis_ref_list`."""
    if not axis_refs:  # the usual replicated and unreduced lists: nothing to check
        return
    less = mesh_less(mesh)
    if any(less(b, a) for a, b in pairwise(axis_refs)):
        raise emit(f"{what} axes are not ordered w.r.t. mesh")
    verify_axis_ref_list(axis_refs, axis_sizes(mesh), emit, seen)


def verify_sub_axes(seen: SeenAxes, mesh_axis_sizes: dict[str, int], emit: EmitError) -> None:
    """``verifySubAxes`` for every axis with sub-axes in ``seen``: not also used whole
    (AXLIST-2), each sub-axis valid (SUBAX-1..4), no two overlapping (AXLIST-2).

    Upstream walks the axes in hash-map order; this walks them in order of first use, so
    with bad sub-axes of two different axes the error may name the other one.
    """
    for name, sub_axes in seen.sub_axes.items():
        if AxisRef(name) in seen.refs:
            raise emit(f"both sub-axis and full-axis are used for axis name: {_quoted(name)}")
        axis_size = mesh_axis_sizes[name]
        prev: AxisRef | None = None
        for axis in sorted(sub_axes):
            info = axis.sub_axis_info
            if info.pre_size < 1:
                raise emit(f"sub-axis pre-size must be at least 1: {axis.params()}")
            if info.size <= 1:
                raise emit(f"sub-axis sizes must be greater than 1: {axis.params()}")
            if axis_size % info.next_pre_size != 0:
                raise emit(f"sub-axis next pre-size {info.next_pre_size} doesn't divide the "
                           f"size of the full axis {axis_size}: {axis.params()}")
            if info.size == axis_size:
                raise emit(f"sub-axis size is equal to the full axis size: {axis.params()}")
            if prev is not None and prev.sub_axis_info.next_pre_size > info.pre_size:
                raise emit(f"overlapping sub-axes: {prev.params()}, {axis.params()}")
            prev = axis


# --- tensor shardings (sdy_dialect #dimensionshardingattr, #tensorshardingattr) --------

def _no_dim_sharded(sharding: TensorSharding) -> bool:
    """Upstream ``isFullyReplicated``: no dimension has axes (replicated and unreduced
    axes don't count, unlike :attr:`TensorSharding.is_fully_replicated`)."""
    return not any(d.axes for d in sharding.dim_shardings)


def _tensor_type(sharding: TensorSharding, type_: Type | None, emit: EmitError):
    """TSH-4..6: the ranked type ``sharding`` describes, or None when the sharding is
    valid without one (a non-shaped type and an empty rank-0 sharding)."""
    tensor_type = type_ if isinstance(type_, _SHAPED_TYPES) else None
    if isinstance(type_, TupleType):
        if len(type_.types) != 1:
            raise emit(f"ops can only have a sharding for a tuple of size 1: '{type_}'")
        inner = type_.types[0]
        tensor_type = inner if isinstance(inner, _SHAPED_TYPES) else None
    if tensor_type is None:
        if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
            shown = "<<NULL TYPE>>" if type_ is None else type_
            raise emit("non-shaped tensors can only have a sharding with rank 0 and no "
                       f"replicated or unreduced axes. type: '{shown}', sharding: {sharding}")
        return None
    if isinstance(tensor_type, UnrankedTensorType):
        raise emit(f"only ranked tensors can have a sharding. type: '{type_}'")
    rank = len(tensor_type.shape)
    if sharding.rank != rank:
        raise emit(f"sharding doesn't match tensor rank: {sharding.rank} != {rank}")
    return tensor_type


def _verify_dim_shardings(sharding: TensorSharding, tensor_type, mesh: Mesh,
                          sizes: dict[str, int], emit: EmitError, seen: SeenAxes,
                          check_divisibility: bool) -> None:
    """Per dim of ``sharding``: the priority (DIMSH-2, DIMSH-3), the axes (DIMSH-1,
    AXLIST-*, TSH-8, collected into ``seen``) and, if asked, the divisibility of the dim's
    static size by its sharded size."""
    for dim, (dim_sharding, dim_size) in enumerate(zip(sharding.dim_shardings,
                                                       tensor_type.shape)):
        if dim_sharding.priority is not None:
            if dim_sharding.priority < 0:
                raise emit(f"dim {dim} has a negative priority")
            if dim_sharding.is_closed and not dim_sharding.axes:
                raise emit(f"dim {dim} is empty and closed but has a priority")
        verify_axis_ref_list(dim_sharding.axes, sizes, emit, seen)
        if dim_size is None or not check_divisibility:
            continue
        sharded_size = dim_sharding.sharded_size(mesh)
        if sharded_size > 0 and dim_size % sharded_size != 0:
            raise emit(f"dim {dim} with size {dim_size} is not divisible by its sharded "
                       f"size {sharded_size}")


def verify_tensor_sharding(sharding: TensorSharding, type_: Type | None, mesh: Mesh | None,
                           emit: EmitError, *, check_divisibility: bool = False,
                           already_manual: dict[str, Operation] | None = None) -> None:
    """``verifyTensorShardingAttr``: ``sharding`` of a value of ``type_`` (None when there
    is no value) on ``mesh`` (None when its symbol didn't resolve), in upstream's order:
    the mesh is known; a maximal mesh (or no type and no sharded dim) has rank 0 and no
    replicated or unreduced axes; the type (TSH-4..6); per dim the
    priority (DIMSH-2, DIMSH-3) and the axes (DIMSH-1, AXLIST-*, TSH-8); the replicated
    then unreduced axes (TSH-2, TSH-3, TSH-9); the sub-axes (SUBAX-*, AXREF-2); no axis
    in ``already_manual``, the axes enclosing manual computations bound (MC-8).

    ``check_divisibility`` also requires each static dim to divide by its sharded size.
    TSH-7 (no sharded dim of size 0) is not checked: upstream dropped that check in
    commit 4a8fbeed ("Allow sharding dim of size 0 with an axis of size > 1").
    """
    if mesh is None:
        raise emit(f"unknown mesh: {format_symbol_name(str(sharding.mesh_or_ref))}")
    if mesh.is_maximal or (type_ is None and _no_dim_sharded(sharding)):
        if sharding.rank != 0 or sharding.replicated_axes or sharding.unreduced_axes:
            raise emit("a maximal sharding can only have a sharding with rank 0 and no "
                       "replicated or unreduced axes.")
        return
    tensor_type = _tensor_type(sharding, type_, emit)
    if tensor_type is None:
        return
    sizes = axis_sizes(mesh)
    seen = SeenAxes()
    _verify_dim_shardings(sharding, tensor_type, mesh, sizes, emit, seen, check_divisibility)
    verify_sorted_axis_ref_list(sharding.replicated_axes, mesh, emit, "replicated", seen)
    verify_sorted_axis_ref_list(sharding.unreduced_axes, mesh, emit, "unreduced", seen)
    verify_sub_axes(seen, sizes, emit)
    for axis in sharding.all_axes() if already_manual else ():
        owner = already_manual.get(axis.name)
        if owner is not None:
            raise bound_axis_error(emit, axis.name, owner)


def verify_tensor_sharding_for_op(sharding: TensorSharding, type_: Type | None,
                                  op: Operation, ctx: VerifyContext, emit: EmitError) -> None:
    """:func:`verify_tensor_sharding` for a sharding attached to ``op``: the mesh is
    looked up from ``op``, and the axes of enclosing manual computations are bound."""
    verify_inline_mesh(sharding, op)
    verify_tensor_sharding(sharding, type_, mesh_for(sharding, op, ctx), emit,
                           already_manual=parent_manual_axes(op, ctx))


def verify_tensor_sharding_per_value(per_value: TensorShardingPerValue,
                                     types: Sequence[Type], op: Operation,
                                     ctx: VerifyContext, emit: EmitError) -> None:
    """``verifyTensorShardingPerValueAttr`` (TSPV-1): one valid sharding per value.

    ``emit`` carries the caller's prefix up to the value index, e.g.
    ``lambda m: op_error(op, "result " + m)``; each value's errors then read
    ``'op' op result 1 - <message>`` (``result - `` for a single value). An op without
    values may still carry one sharding on a maximal mesh or with no sharded dim.
    """
    shardings = per_value.shardings
    if not types and len(shardings) == 1:
        first = shardings[0]
        verify_inline_mesh(first, op)
        mesh = mesh_for(first, op, ctx)
        if (mesh is not None and mesh.is_maximal) or _no_dim_sharded(first):
            verify_tensor_sharding(first, None, mesh, value_in_range_emitter(emit, 0, 0),
                                   already_manual=parent_manual_axes(op, ctx))
            return
    if len(shardings) != len(types):
        raise emit(f"shardings don't match number of values: {len(shardings)} shardings "
                   f"vs {len(types)} values")
    for index, (sharding, type_) in enumerate(zip(shardings, types)):
        verify_tensor_sharding_for_op(sharding, type_, op, ctx,
                                      value_in_range_emitter(emit, len(types), index))


# --- the ``sdy.sharding`` attribute (upstream ``SdyDialect::verify*Attribute``) ----------

@attr_verifier("sdy.sharding")
def _verify_op_sharding(op: Operation, attr, ctx: VerifyContext) -> None:
    """On an op, ``sdy.sharding`` is a sharding per result (TSPV-1,
    sdy_dialect#tensorshardingpervalueattr)."""
    if not isinstance(attr, TensorShardingPerValue):
        raise op_error(op, "should have a sharding attribute of type TensorShardingPerValueAttr")
    verify_tensor_sharding_per_value(attr, op.result_types, op, ctx,
                                     lambda m: op_error(op, f"result {m}"))


@func_attr_verifier("sdy.sharding")
def _verify_func_sharding(func: Operation, kind: str, index: int, attr, type_: Type,
                          ctx: VerifyContext) -> None:
    """``verifyFuncAttribute``: on a function argument or result, one TensorSharding."""
    def emit(message: str) -> VerifyError:
        return op_error(func, f"{kind} {index} - {message}")

    if not isinstance(attr, TensorSharding):
        raise emit("should have a sharding attribute of type TensorShardingAttr")
    verify_tensor_sharding_for_op(attr, type_, func, ctx, emit)


# --- meshes (sdy_dialect #sdymesh-sdymeshop, #meshattr, #meshaxisattr) ------------------

def verify_mesh(mesh: Mesh, emit: EmitError) -> None:
    """``MeshAxisAttr::verify`` on each axis, then ``MeshAttr::verify`` (MESHATTR-1..4).
    MLIR runs them when it builds the attribute, as our parser does; this catches meshes
    built in memory (by a pass or the API)."""
    for axis in mesh.axes:
        message = MeshAxis.verify_params(axis.name, axis.size)
        if message is not None:
            raise emit(message)
    message = Mesh.verify_params(mesh.axes, mesh.device_ids)
    if message is not None:
        raise emit(message)


def verify_inline_mesh(sharding: TensorSharding, op: Operation) -> None:
    """An inline ``mesh<...>`` is valid; reported bare at ``op``, as upstream's parser does."""
    if isinstance(sharding.mesh_or_ref, Mesh):
        verify_mesh(sharding.mesh_or_ref, lambda m: VerifyError(op.location, m))


@op_verifier("sdy.mesh")
def _verify_mesh_op(op: Operation, ctx: VerifyContext) -> None:
    """A valid mesh (MESH-4, worded as upstream's parser: ``custom op 'sdy.mesh' ...``),
    ``HasParent<ModuleOp>`` (MESH-2), then ``MeshOp::verify``: the name resolves."""
    from shardy_ref.ir.symbols import SymbolTable, symbol_name

    mesh = op.attributes.get("mesh")
    if isinstance(mesh, Mesh):
        verify_mesh(mesh, lambda m: VerifyError(op.location, f"custom op 'sdy.mesh' {m}"))
    parent = op.parent_op
    if parent is None or parent.name != "builtin.module":
        raise op_error(op, "expects parent op 'builtin.module'")
    name = symbol_name(op)
    if name is None:
        return
    table = ctx.symbols if parent is ctx.module and ctx.symbols is not None else None
    if (table or SymbolTable(parent)).lookup(name) is None:  # the module's, built once
        raise VerifyError(op.location, f"Mesh not in symbol table: {format_symbol_name(name)}")


# --- sdy.sharding_constraint and sdy.reshard (their verifySymbolUses) -------------------

@symbol_use_verifier("sdy.sharding_constraint", "sdy.reshard")
def _verify_sharding_op(op: Operation, ctx: VerifyContext) -> None:
    """``ShardingConstraintOp`` / ``ReshardOp::verifySymbolUses``: the sharding is valid
    for the result (SC-1, RESHARD-1); the unreduced axes may change from the operand's
    sharding, but introduced ones must be ``sum`` and kept ones keep their reduction."""
    sharding = op.attributes.get("sharding")
    if not isinstance(sharding, TensorSharding) or not op.results:
        return
    verify_tensor_sharding_for_op(sharding, op.results[0].type, op, ctx, op_emitter(op))
    source = sharding_bypassing_barriers(op.operands[0]) if op.operands else None
    if source is not None:
        verify_unreduced_axes_transition(op, [source], [sharding], ctx,
                                         ReductionOp.SUM, source.reduction_op)


def verify_unreduced_axes_transition(op: Operation,
                                     operand_shardings: Sequence[TensorSharding | None],
                                     result_shardings: Sequence[TensorSharding | None],
                                     ctx: VerifyContext,
                                     introduced_op: ReductionOp | None = None,
                                     removed_op: ReductionOp | None = None) -> None:
    """``verifyUnreducedAxesTransition`` (upstream ``utils.cc``): unreduced axes of the
    results that the operands lack may be introduced only if ``introduced_op`` is given,
    and with that reduction; ones dropped only if ``removed_op`` is; axes kept keep their
    reduction. Shardings on different meshes are not compared."""
    operands = [s for s in operand_shardings if s is not None]
    results = [s for s in result_shardings if s is not None]
    if not any(s.unreduced_axes for s in operands) and \
            not any(s.unreduced_axes for s in results):
        return  # no unreduced axis to introduce, drop or keep: every rule below holds
    meshes = {m for m in (mesh_for(s, op, ctx) for s in operands + results) if m is not None}
    if len(meshes) != 1:
        return
    mesh = meshes.pop()
    operand_axes = [a for s in operands for a in s.unreduced_axes]
    result_axes = [a for s in results for a in s.unreduced_axes]
    introduced = axis_set_diff(result_axes, operand_axes, mesh)
    removed = axis_set_diff(operand_axes, result_axes, mesh)
    if introduced:
        if introduced_op is None:
            raise op_error(op, f"cannot add new unreduced axis '{introduced[0].name}'.")
        _check_reduction(op, results, introduced, introduced_op, "introduce")
    if removed:
        if removed_op is None:
            raise op_error(op, f"dropped unreduced axis '{removed[0].name}' without a blessed "
                           "operation (e.g., sdy.reshard). This is an invalid transition "
                           "from unreduced to reduced.")
        _check_reduction(op, operands, removed, removed_op, "reduce")
    for result in results:
        for operand in operands:
            if operand.reduction_op != result.reduction_op and any(
                    a.overlaps(b) for a in result.unreduced_axes for b in operand.unreduced_axes):
                raise op_error(op, "cannot change the reduction operator of kept unreduced "
                               f"axes from {operand.reduction_op.keyword} to "
                               f"{result.reduction_op.keyword}.")


def _check_reduction(op: Operation, shardings: list[TensorSharding], diff: list[AxisRef],
                     expected: ReductionOp, verb: str) -> None:
    """Each sharding with an unreduced axis overlapping ``diff`` reduces by ``expected``."""
    for sharding in shardings:
        if sharding.reduction_op != expected and any(
                a.overlaps(d) for a in sharding.unreduced_axes for d in diff):
            raise op_error(op, f"cannot {verb} '{sharding.reduction_op.keyword}' unreduced "
                           f"axes. Expected '{expected.keyword}'.")


# --- the mesh shared by shardings (upstream utils.cc getCommonMesh) ---------------------

def common_mesh(shardings: Iterable[TensorSharding], op: Operation, ctx: VerifyContext,
                ignore_device_ids: bool = False) -> Mesh | None:
    """The mesh all ``shardings`` are bound to, empty meshes aside; None when they
    disagree or a mesh is unknown (upstream ``getCommonMesh``). With
    ``ignore_device_ids`` meshes differing only in device order agree, and the one
    without explicit device ids wins."""
    mesh: Mesh | None = None
    for sharding in shardings:
        other = mesh_for(sharding, op, ctx)
        if other is None:
            return None
        if mesh is None or mesh.is_empty:
            mesh = other
        elif other.is_empty:
            continue
        elif not other.equals(mesh, ignore_device_ids):
            return None
        elif ignore_device_ids and not other.device_ids:
            mesh = other
    return mesh


# --- the sharding a value carries (upstream ``getSharding``) ------------------------------

def sharding_bypassing_barriers(value: Value) -> TensorSharding | None:
    """``getShardingBypassingBarriers``: the sharding of ``value``, looking through
    ``sdy.propagation_barrier`` ops."""
    while isinstance(value, OpResult) and value.op.name == "sdy.propagation_barrier":
        value = value.op.operands[0]
    return get_sharding(value)
