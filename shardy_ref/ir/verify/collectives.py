"""Verification of the sdy collective ops, with upstream's messages.

The ops ``sdy.all_gather``, ``sdy.all_slice``, ``sdy.all_to_all``,
``sdy.collective_permute``, ``sdy.all_reduce``, ``sdy.reduce_scatter``,
``sdy.sharded_to_unreduced`` and ``sdy.replicated_to_unreduced`` are checked in two
phases, as upstream does (``shardy/dialect/sdy/ir/verifiers.cc``):

1. with the op's own invariants: the ODS traits (one operand and one result of the same
   shaped type, required attributes) and ``verifyCollectiveOp``, the
   ``Sdy_CollectiveOpInterface`` verifier (``ir/op_interface.td``; our rules COLL-1..4);
2. with the symbol uses, once the whole module passed phase 1: each op's
   ``verifySymbolUses`` (our rules AG-*, AS-*, A2A-*, CP-*, AR-*, RS-* for the
   constraints each op's section of https://openxla.org/shardy/sdy_dialect lists; cases
   per ID in ``tests/ir/verify_cases``; the two ``*_to_unreduced`` ops have no rule IDs
   and follow upstream's source only).

An operand's sharding is read with :func:`~shardy_ref.ir.value_sharding.get_sharding`;
tensor shardings and axis lists are checked with the helpers of ``verify/sharding.py``.

See https://openxla.org/shardy/sdy_dialect and ``shardy/dialect/sdy/ir/ops.td`` at the
pinned commit (a0277a83e7f8).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardy_ref.ir.axis_lists import add_axis_or_merge, sort_and_merge_axes
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_axes import AxisRef, AxisRefList, ListOfAxisRefLists, Mesh
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import AllToAllParamList, DimensionSharding, TensorSharding
from shardy_ref.ir.types import (
    RankedTensorType,
    TokenType,
    Type,
    UnrankedTensorType,
    VectorType,
)
from shardy_ref.ir.utils import is_equivalent
from shardy_ref.ir.value_sharding import get_sharding, value_location
from shardy_ref.ir.verify import VerifyContext, note, op_error, op_verifier, symbol_use_verifier
from shardy_ref.ir.verify.sharding import (
    SeenAxes,
    axis_sizes,
    mesh_for,
    op_emitter,
    verify_axis_ref_list,
    verify_sorted_axis_ref_list,
    verify_tensor_sharding_for_op,
    verify_unreduced_axes_transition,
)

Emit = Callable[[str], VerifyError]


# --- phase 1: ODS traits and Sdy_CollectiveOpInterface (ir/op_interface.td) ------------

@dataclass(frozen=True, slots=True)
class _Collective:
    """A collective op: its required attributes (ODS order: by name) and the interface's
    ``allowMissingInputSharding``/``allowDifferentMeshes`` overrides."""

    required: tuple[str, ...]
    allow_missing_input_sharding: bool = False
    allow_different_meshes: bool = False


COLLECTIVES: dict[str, _Collective] = {
    "sdy.all_gather": _Collective(("gathering_axes", "out_sharding")),
    "sdy.all_slice": _Collective(("out_sharding", "slicing_axes"),
                                 allow_missing_input_sharding=True),
    "sdy.all_to_all": _Collective(("out_sharding", "params")),
    "sdy.collective_permute": _Collective(("out_sharding",), allow_different_meshes=True),
    "sdy.all_reduce": _Collective(("out_sharding", "reduction_axes"),
                                  allow_missing_input_sharding=True),
    "sdy.reduce_scatter": _Collective(("out_sharding", "reduce_scatter_axes"),
                                      allow_missing_input_sharding=True),
    "sdy.sharded_to_unreduced": _Collective(("axes", "out_sharding")),
    "sdy.replicated_to_unreduced": _Collective(("axes", "out_sharding")),
}

_SHAPED = (RankedTensorType, UnrankedTensorType, VectorType)


def _is_shaped_non_token(type_: Type) -> bool:
    return isinstance(type_, _SHAPED) and not isinstance(type_.element_type, TokenType)


def _element_type(type_: Type) -> Type:
    return type_.element_type if isinstance(type_, _SHAPED) else type_


def _compatible_shapes(a: Type, b: Type) -> bool:
    """MLIR ``verifyCompatibleShape``: equal ranks, each dim equal or dynamic."""
    if isinstance(a, UnrankedTensorType) or isinstance(b, UnrankedTensorType):
        return True
    shape_a, shape_b = getattr(a, "shape", ()), getattr(b, "shape", ())
    return len(shape_a) == len(shape_b) and all(
        x is None or y is None or x == y for x, y in zip(shape_a, shape_b))


def _verify_traits(op: Operation) -> None:
    """The ODS traits in their order: ZeroRegions, OneResult, OneOperand, the operand,
    result and attribute constraints (OpInvariants), SameOperandsAndResultType and
    InferTypeOpInterface (the result type is the operand type)."""
    _verify_structure(op)
    _verify_types(op)


def _verify_structure(op: Operation) -> None:
    """The traits on the op's shape: ZeroRegions, OneResult, OneOperand and the required
    attributes."""
    if op.regions:
        raise op_error(op, "requires zero regions")
    if op.num_results != 1:
        raise op_error(op, "requires one result")
    if op.num_operands != 1:
        raise op_error(op, "requires a single operand")
    for name in COLLECTIVES[op.name].required:
        if name not in op.attributes:
            raise op_error(op, f"requires attribute '{name}'")


def _verify_types(op: Operation) -> None:
    """The traits on the operand and result types: both shaped non-token,
    SameOperandsAndResultType, then the inferred result type."""
    for kind, type_ in (("operand", op.operands[0].type), ("result", op.results[0].type)):
        if not _is_shaped_non_token(type_):
            raise op_error(op, f"{kind} #0 must be shaped of any non-token type values, "
                               f"but got '{type_}'")
    operand_type, result_type = op.operands[0].type, op.results[0].type
    if _element_type(operand_type) != _element_type(result_type) or \
            not _compatible_shapes(operand_type, result_type):
        raise op_error(op, "requires the same type for all operands and results")
    if getattr(operand_type, "encoding", None) != getattr(result_type, "encoding", None):
        raise op_error(op, "requires the same encoding for all operands and results")
    if operand_type != result_type:
        raise op_error(op, f"inferred type(s) '{operand_type}' are incompatible with return "
                           f"type(s) of operation '{result_type}'")


def _inherent(op: Operation, name: str, cls: type):
    """An inherent attribute of the expected class, or None. (A wrong class can't reach
    the verifier upstream: MLIR's property conversion rejects it while parsing.)"""
    attr = op.attributes.get(name)
    return attr if isinstance(attr, cls) else None


@op_verifier(*COLLECTIVES)
def verify_collective_op(op: Operation, ctx: VerifyContext) -> None:
    """The ODS traits, then ``verifyCollectiveOp``: the operand has a sharding unless the
    op allows none (COLL-1); ``out_sharding`` is valid for the result type (COLL-2); the
    operand and result meshes are equal unless the op allows otherwise (COLL-3); the
    operand and result shardings have the same rank (COLL-4)."""
    _verify_traits(op)
    spec = COLLECTIVES[op.name]
    operand = op.operands[0]
    operand_sharding = get_sharding(operand)
    if operand_sharding is None and not spec.allow_missing_input_sharding:
        raise op_error(op, "collective on operand without sharding")
    out = _inherent(op, "out_sharding", TensorSharding)
    if out is None:
        return
    verify_tensor_sharding_for_op(out, op.results[0].type, op, ctx, op_emitter(op))
    result_mesh = mesh_for(out, op, ctx)
    if not spec.allow_different_meshes and operand_sharding is not None:
        operand_mesh = mesh_for(operand_sharding, op, ctx)
        if operand_mesh is not None and operand_mesh != result_mesh:
            raise op_error(op, "result mesh does not match operand mesh",
                           [note(value_location(operand), f"operand mesh: {operand_mesh}")])
    if operand_sharding is not None and out.rank != operand_sharding.rank:
        raise op_error(op, f"result sharding has rank {out.rank} but operand sharding has "
                           f"rank {operand_sharding.rank}")


# --- axis algebra of the collectives (verifiers.cc, utils.cc/utils.h) -------------------

def axes_string(axes: Sequence[AxisRef]) -> str:
    """``strippedAttrsString(axes, stripMnemonic=true)``: ``["x", "y":(2)2]``."""
    return "[" + ", ".join(a.params() for a in axes) + "]"


def gather_axes_along_dim(dim_sharding: DimensionSharding, gathering_axes: Sequence[AxisRef],
                          dim: int, mesh: Mesh, axis_type: str, emit: Emit) -> list[AxisRef]:
    """Upstream ``gatherAxesAlongDim``: remove ``gathering_axes`` from the end of the
    dimension's axes, last first; each must be a suffix of the current last axis, which
    is popped or, when only partly gathered, replaced by its remaining prefix."""
    expected = list(dim_sharding.axes)
    for axis in reversed(gathering_axes):
        if not expected or not axis.suffix_of(expected[-1], mesh):
            raise emit(f"can't apply {axis_type} axis {axis.params()} to operand sharding "
                       f"on dimension {dim}")
        prefix = expected.pop().prefix_without_overlap(axis)
        if prefix is not None:
            expected.append(prefix)
    return expected


def slice_axes_along_dim(dim_sharding: DimensionSharding, slicing_axes: Sequence[AxisRef],
                         mesh: Mesh) -> list[AxisRef]:
    """Upstream ``sliceAxesAlongDim``: the dimension's axes with ``slicing_axes`` appended."""
    expected = list(dim_sharding.axes)
    for axis in slicing_axes:
        add_axis_or_merge(expected, axis, mesh)
    return expected


# --- phase 3: verifySymbolUses of each collective (verifiers.cc) -----------------------

@dataclass(frozen=True, slots=True)
class _Shardings:
    """What every symbol-use check starts from: the result sharding, the operand's
    sharding (fully replicated and open on the result's mesh when missing), the result
    mesh, and the op's error builder."""

    out: TensorSharding
    operand: TensorSharding
    mesh: Mesh
    emit: Emit


def _shardings(op: Operation, ctx: VerifyContext) -> _Shardings | None:
    """Upstream ``getOrCreateSharding(operand, out_sharding mesh)`` and the out mesh."""
    out = _inherent(op, "out_sharding", TensorSharding)
    mesh = mesh_for(out, op, ctx) if out is not None else None
    if mesh is None:
        return None
    operand = get_sharding(op.operands[0])
    if operand is None:
        rank = len(getattr(op.operands[0].type, "shape", ()))
        operand = TensorSharding.fully_open(out.mesh_or_ref, rank)
    return _Shardings(out, operand, mesh, op_emitter(op))


def _reduction_op(op: Operation) -> ReductionOp:
    """The ``reduction_op`` attribute (default ``sum``)."""
    return ReductionOp.from_attr(op.attributes.get("reduction_op")) or ReductionOp.SUM


def _verify_with_axes_per_dim(
        s: _Shardings, axes_per_dim: ListOfAxisRefLists,
        expected_dim: Callable[[DimensionSharding, Sequence[AxisRef], int], list[AxisRef]],
) -> None:
    """Upstream ``verifyCollectiveWithAxesPerDim``: the per-dimension axes are valid axis
    lists together (no axis twice across dims; sub-axes not checked further), there is one
    list per dimension, and applying them to the operand gives ``out_sharding``."""
    seen = SeenAxes()
    for axes in axes_per_dim:
        verify_axis_ref_list(axes.value, axis_sizes(s.mesh), s.emit, seen)
    if s.out.rank != len(axes_per_dim):
        raise s.emit(f"result sharding has rank {s.out.rank} but collective axes has rank "
                     f"{len(axes_per_dim)}")
    for dim, (operand_dim, axes) in enumerate(zip(s.operand.dim_shardings, axes_per_dim)):
        expected = expected_dim(operand_dim, axes.value, dim)
        if tuple(expected) != s.out.dim_shardings[dim].axes:
            raise s.emit(f"result sharding doesn't match expected sharding "
                         f"{axes_string(expected)} on dimension {dim}")


def _gather(s: _Shardings, axis_type: str):
    return lambda dim_sharding, axes, dim: gather_axes_along_dim(
        dim_sharding, axes, dim, s.mesh, axis_type, s.emit)


def _slice(s: _Shardings):
    return lambda dim_sharding, axes, dim: slice_axes_along_dim(dim_sharding, axes, s.mesh)


@symbol_use_verifier("sdy.all_gather")
def verify_all_gather(op: Operation, ctx: VerifyContext) -> None:
    """AG-2, AG-3: the gathering axes are valid and, removed from the end of each operand
    dimension, give ``out_sharding``."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "gathering_axes", ListOfAxisRefLists)
    if s is not None and axes is not None:
        _verify_with_axes_per_dim(s, axes, _gather(s, "gathering"))


@symbol_use_verifier("sdy.all_slice")
def verify_all_slice(op: Operation, ctx: VerifyContext) -> None:
    """AS-2, AS-3: the slicing axes are valid and, appended to each operand dimension,
    give ``out_sharding``."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "slicing_axes", ListOfAxisRefLists)
    if s is not None and axes is not None:
        _verify_with_axes_per_dim(s, axes, _slice(s))


@symbol_use_verifier("sdy.reduce_scatter")
def verify_reduce_scatter(op: Operation, ctx: VerifyContext) -> None:
    """RS-2, RS-3: the operand's unreduced axes may only be reduced with the op's
    reduction; the axes are valid and, appended to each operand dimension, give
    ``out_sharding``."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "reduce_scatter_axes", ListOfAxisRefLists)
    if s is None or axes is None:
        return
    verify_unreduced_axes_transition(op, [s.operand], [s.out], ctx,
                                     removed_op=_reduction_op(op))
    _verify_with_axes_per_dim(s, axes, _slice(s))


@symbol_use_verifier("sdy.sharded_to_unreduced")
def verify_sharded_to_unreduced(op: Operation, ctx: VerifyContext) -> None:
    """The result reduction is ``sum``; the axes, removed from the end of each operand
    dimension, give ``out_sharding``; the result's unreduced axes are the operand's plus
    these axes (sorted and merged)."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "axes", ListOfAxisRefLists)
    if s is None or axes is None:
        return
    if s.out.reduction_op != ReductionOp.SUM:
        raise s.emit("out_sharding reduction_op must be SUM")
    _verify_with_axes_per_dim(s, axes, _gather(s, "shard-to-unreduce"))
    expected = [*s.operand.unreduced_axes, *(a for lst in axes for a in lst)]
    if sort_and_merge_axes(expected, s.mesh) != list(s.out.unreduced_axes):
        raise s.emit("out_unreduced_axes should be in_unreduced_axes + "
                     "sharded_to_unreduced_axes")


@symbol_use_verifier("sdy.replicated_to_unreduced")
def verify_replicated_to_unreduced(op: Operation, ctx: VerifyContext) -> None:
    """The result reduction is ``sum``; dimension shardings are unchanged; the r2u axes are
    non-empty, sorted and valid, and replicated in the operand (no overlap with its
    dimension or unreduced axes); the result's unreduced axes are the operand's plus the
    r2u axes (sorted and merged)."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "axes", AxisRefList)
    if s is None or axes is None:
        return
    if s.out.reduction_op != ReductionOp.SUM:
        raise s.emit("out_sharding reduction_op must be SUM")
    if s.operand.dim_shardings != s.out.dim_shardings:
        raise s.emit("input and output must share the same dimension shardings")
    if not axes.value:
        raise s.emit("r2u axes must not be empty")
    verify_sorted_axis_ref_list(axes.value, s.mesh, s.emit, "r2u", SeenAxes())
    for axis in axes.value:
        if any(axis.overlaps(a) for d in s.operand.dim_shardings for a in d.axes):
            raise s.emit(f"r2u axis {axis.params()} overlaps with operand dimension sharding")
        if any(axis.overlaps(a) for a in s.operand.unreduced_axes):
            raise s.emit(f"r2u axis {axis.params()} overlaps with operand unreduced axes")
    expected = sort_and_merge_axes([*s.operand.unreduced_axes, *axes.value], s.mesh)
    if expected != list(s.out.unreduced_axes):
        raise s.emit("out_unreduced_axes should be in_unreduced_axes + r2u_axes")


@symbol_use_verifier("sdy.all_reduce")
def verify_all_reduce(op: Operation, ctx: VerifyContext) -> None:
    """AR-4 (checked first), AR-3, AR-2, AR-5, AR-6, then the unreduced-axes transition
    (the operand's unreduced axes may only be reduced with the op's reduction)."""
    s = _shardings(op, ctx)
    axes = _inherent(op, "reduction_axes", AxisRefList)
    if s is None or axes is None:
        return
    if not is_equivalent(s.operand, s.out, ignore_unreduced_axes=True):
        raise s.emit("operand and result shardings are not equivalent")
    verify_sorted_axis_ref_list(axes.value, s.mesh, s.emit, "reduction", SeenAxes())
    operand_axes = [*(a for d in s.operand.dim_shardings for a in d.axes),
                    *s.operand.replicated_axes]
    for axis in axes.value:
        if any(axis.overlaps(a) for a in operand_axes):
            raise s.emit(f"reduction axis {axis.params()} overlaps with operand dimension "
                         "sharding or replicated axes")
        if any(axis.overlaps(a) for a in s.out.unreduced_axes):
            raise s.emit(f"reduction axis {axis.params()} overlaps with result unreduced axes")
    verify_unreduced_axes_transition(op, [s.operand], [s.out], ctx,
                                     removed_op=_reduction_op(op))


@symbol_use_verifier("sdy.collective_permute")
def verify_collective_permute(op: Operation, ctx: VerifyContext) -> None:
    """CP-2: a different result mesh has the operand mesh's axes and another device order;
    CP-3: each dimension whose axes changed keeps its sharded size."""
    s = _shardings(op, ctx)
    operand_mesh = mesh_for(s.operand, op, ctx) if s is not None else None
    if operand_mesh is None:
        return
    operand_note = [note(value_location(op.operands[0]), f"operand mesh: {operand_mesh}")]
    if s.mesh.axes != operand_mesh.axes:
        raise op_error(op, "result mesh has different axes than operand mesh", operand_note)
    if s.operand.mesh_or_ref != s.out.mesh_or_ref and \
            s.mesh.device_ids == operand_mesh.device_ids:
        raise op_error(op, "result mesh name is different but same device ids as operand",
                       operand_note)
    for dim, (in_dim, out_dim) in enumerate(zip(s.operand.dim_shardings, s.out.dim_shardings)):
        if in_dim.axes == out_dim.axes:
            continue
        in_size, out_size = in_dim.sharded_size(s.mesh), out_dim.sharded_size(s.mesh)
        if in_size != out_size:
            raise s.emit(f"sharded size of result doesn't match operand on dimension {dim}: "
                         f"{out_size} != {in_size}")


@symbol_use_verifier("sdy.all_to_all")
def verify_all_to_all(op: Operation, ctx: VerifyContext) -> None:
    """A2A-2..6 per parameter in order (axes valid across all params, dims in range,
    no dim used twice, source dims ascending), then A2A-7: each parameter moves its axes
    from the end of the source dimension to the end of the target one, and every other
    dimension is unchanged."""
    s = _shardings(op, ctx)
    params = _inherent(op, "params", AllToAllParamList)
    if s is None or params is None:
        return
    if not params.value:
        raise s.emit("parameter list is empty")
    rank = len(getattr(op.results[0].type, "shape", ()))
    seen_dims = _verify_all_to_all_params(params, rank, s)
    _verify_all_to_all_result(params, seen_dims, s)


def _verify_all_to_all_params(params: AllToAllParamList, rank: int, s: _Shardings) -> set[int]:
    """A2A-2..6 per parameter in order; the source and target dimensions the params use."""
    seen, seen_dims, prev_src, sizes = SeenAxes(), set(), -1, axis_sizes(s.mesh)
    for param in params:
        verify_axis_ref_list(param.axes, sizes, s.emit, seen)
        for dim, what in ((param.src_dim, "source"), (param.tgt_dim, "target")):
            if not 0 <= dim < rank:
                raise s.emit(f"{what} dimension {dim} is out of range [0, {rank})")
        for dim in (param.src_dim, param.tgt_dim):
            if dim in seen_dims:
                raise s.emit(f"overlapping source/target dimensions in all-to-all params: {dim}")
            seen_dims.add(dim)
        if prev_src >= param.src_dim:
            raise s.emit(f"source dimensions are not sorted in ascending order: "
                         f"{param.src_dim} appears after {prev_src}")
        prev_src = param.src_dim
    return seen_dims


def _verify_all_to_all_result(params: AllToAllParamList, seen_dims: set[int],
                              s: _Shardings) -> None:
    """A2A-7: the result sharding is the operand's with each parameter's axes moved from
    its source dimension to its target one."""

    def check_dim(dim: int, expected: Sequence[AxisRef]) -> None:
        if tuple(expected) != s.out.dim_shardings[dim].axes:
            raise s.emit(f"result sharding doesn't match expected sharding "
                         f"{axes_string(expected)} on dimension {dim}")

    operand_dims = s.operand.dim_shardings
    for param in params:
        check_dim(param.src_dim, gather_axes_along_dim(
            operand_dims[param.src_dim], param.axes, param.src_dim, s.mesh, "all-to-all",
            s.emit))
        check_dim(param.tgt_dim, slice_axes_along_dim(operand_dims[param.tgt_dim], param.axes,
                                                      s.mesh))
    for dim, operand_dim in enumerate(operand_dims):
        if dim not in seen_dims:
            check_dim(dim, operand_dim.axes)
