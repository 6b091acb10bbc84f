"""The sdy dialect's canonicalization patterns (``-canonicalize``).

Upstream ``shardy/dialect/sdy/ir/canonicalization.td`` (DRR patterns: the benefit is the
number of ops in the source pattern; a rewrite builds new ops with only their inherent
attributes) and ``canonicalization.cc``; registered per op in upstream's ``results.add``
order, with upstream's labels (``sdy-collective``, ``sdy-reshard``). No sdy op has a folder
(``ops.td`` sets no ``hasFolder``). Reshard patterns live in ``sdy_reshard_cse.py``.
"""
from __future__ import annotations

from shardy_ref.ir.axis_lists import add_axis_or_merge, sort_and_merge_axes
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.pattern_match import (
    PatternRewriter,
    add_canonicalization_patterns,
    rewrite_pattern,
)
from shardy_ref.ir.sdy_axes import AxisRefList, ListOfAxisRefLists
from shardy_ref.ir.sdy_reshard_cse import (
    ReshardCommonSubexpressionEliminationPattern,
    ReshardOfReshardPattern,
    mesh_of,
)
from shardy_ref.ir.sdy_sharding import (
    AllToAllParamList,
    DimensionSharding,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.ir.utils import is_equivalent
from shardy_ref.ir.value_sharding import get_sharding

COLLECTIVE = ("sdy-collective",)  # upstream kCollectiveLabel
INLINABLE_DIALECTS = {"sdy", "stablehlo", "func", "arith", "tensor", "chlo", "mhlo"}


def _defined_by(op: Operation, name: str) -> Operation | None:
    definer = op.operands[0].defining_op
    return definer if definer is not None and definer.name == name else None


def _replace_with_operand(op: Operation, rewriter: PatternRewriter) -> bool:
    """DRR ``(replaceWithValue $tensor)``."""
    rewriter.replace_op(op, [op.operands[0]])
    return True


def _empty_axes_per_dim(attr) -> bool:
    return isinstance(attr, ListOfAxisRefLists) and all(len(a) == 0 for a in attr)


# -- no-op collectives -------------------------------------------------------------------

@rewrite_pattern("sdy.all_gather", labels=COLLECTIVE)
def AllGatherNoopPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    return _empty_axes_per_dim(op.attributes["gathering_axes"]) and \
        _replace_with_operand(op, rewriter)


@rewrite_pattern("sdy.all_slice", labels=COLLECTIVE)
def AllSliceNoopPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    return _empty_axes_per_dim(op.attributes["slicing_axes"]) and \
        _replace_with_operand(op, rewriter)


@rewrite_pattern("sdy.all_reduce", labels=COLLECTIVE)
def AllReduceNoopPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    axes = op.attributes["reduction_axes"]
    return isinstance(axes, AxisRefList) and len(axes) == 0 and \
        _replace_with_operand(op, rewriter)


@rewrite_pattern("sdy.collective_permute", labels=COLLECTIVE)
def CollectivePermuteNoopPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    return is_equivalent(get_sharding(op.operands[0]), op.attributes["out_sharding"]) and \
        _replace_with_operand(op, rewriter)


@rewrite_pattern("sdy.reduce_scatter", labels=COLLECTIVE)
def ReduceScatterNoopPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    return _empty_axes_per_dim(op.attributes["reduce_scatter_axes"]) and \
        _replace_with_operand(op, rewriter)


@rewrite_pattern("sdy.all_to_all", labels=COLLECTIVE)
def AllToAllNoUsePattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """An unused all-to-all is erased (collectives are not trivially dead)."""
    return not op.results[0].has_uses and _replace_with_operand(op, rewriter)


# -- collective of collective ------------------------------------------------------------

@rewrite_pattern("sdy.all_slice", benefit=2, labels=COLLECTIVE)
def AllSliceOfAllGatherPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """``all_slice(all_gather(x, axes), axes) -> x``."""
    gather = _defined_by(op, "sdy.all_gather")
    if gather is None or gather.attributes["gathering_axes"] != op.attributes["slicing_axes"]:
        return False
    rewriter.replace_op(op, [gather.operands[0]])
    return True


@rewrite_pattern("sdy.all_reduce", benefit=2, labels=COLLECTIVE)
def AllReduceOfReplicatedToUnreducedPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """``all_reduce(replicated_to_unreduced(x, axes), axes) -> x``."""
    r2u = _defined_by(op, "sdy.replicated_to_unreduced")
    if r2u is None or r2u.attributes["axes"] != op.attributes["reduction_axes"]:
        return False
    rewriter.replace_op(op, [r2u.operands[0]])
    return True


@rewrite_pattern("sdy.all_reduce", labels=COLLECTIVE)
def AllReduceOfShardedToUnreducedPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """``all_reduce(sharded_to_unreduced(x, dims), axes) -> all_gather(x, dims)`` when the
    reduction axes are exactly the (sorted, merged) axes made unreduced."""
    s2u = _defined_by(op, "sdy.sharded_to_unreduced")
    if s2u is None:
        return False
    mesh = mesh_of(s2u.attributes["out_sharding"], s2u)
    axes = sort_and_merge_axes([a for dim in s2u.attributes["axes"] for a in dim], mesh)
    if tuple(axes) != tuple(op.attributes["reduction_axes"]):
        return False
    rewriter.replace_op_with_new_op(
        op, "sdy.all_gather", [s2u.operands[0]], op.result_types,
        {"gathering_axes": s2u.attributes["axes"], "out_sharding": op.attributes["out_sharding"]})
    return True


@rewrite_pattern("sdy.all_to_all", benefit=2, labels=COLLECTIVE)
def AllToAllFusionPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """``all_to_all(all_to_all(x, p1), p2) -> all_to_all(x, p1 + p2)`` (sorted by source
    dim) when the inner one has one use and no dimension appears twice."""
    inner = _defined_by(op, "sdy.all_to_all")
    if inner is None or not inner.results[0].has_one_use:
        return False
    inner_params, outer_params = inner.attributes["params"], op.attributes["params"]
    dims = [d for p in (*inner_params, *outer_params) for d in (p.src_dim, p.tgt_dim)]
    if len(set(dims)) != len(dims):
        return False
    combined = sorted((*inner_params, *outer_params), key=lambda p: p.src_dim)
    new = rewriter.create("sdy.all_to_all", [inner.operands[0]], op.result_types,
                          {"params": AllToAllParamList(tuple(combined)),
                           "out_sharding": op.attributes["out_sharding"]}, location=op.location)
    rewriter.replace_op(op, new)
    return True


def _reduce_scatter_fusion_axes(all_reduce: Operation, all_slice: Operation):
    """``matchAndComputeReduceScatterFusionAxes``: per dim, the longest prefix of slicing
    axes taken from the reduction axes (all must be used) and the residual slicing axes."""
    remaining = list(all_reduce.attributes["reduction_axes"])
    scatter, residual = [], []
    for dim_axes in all_slice.attributes["slicing_axes"]:
        axes = list(dim_axes)
        k = 0
        while k < len(axes) and axes[k] in remaining:
            remaining.remove(axes[k])
            k += 1
        scatter.append(AxisRefList(tuple(axes[:k])))
        residual.append(AxisRefList(tuple(axes[k:])))
    if remaining:
        return None
    return scatter, residual


@rewrite_pattern("sdy.all_slice", labels=COLLECTIVE)
def ReduceScatterFusion(op: Operation, rewriter: PatternRewriter) -> bool:
    """``all_slice(all_reduce(x))`` -> ``reduce_scatter(x)`` (+ a residual ``all_slice``)
    when every user of the all-reduce is this same slice, and this one comes first."""
    all_reduce = _defined_by(op, "sdy.all_reduce")
    if all_reduce is None:
        return rewriter.notify_match_failure(op, "operand is not defined by sdy.all_reduce")
    for user in all_reduce.results[0].users:
        if user.name != "sdy.all_slice" or \
                user.attributes["slicing_axes"] != op.attributes["slicing_axes"] or \
                user.is_before_in_block(op):
            return False
    axes = _reduce_scatter_fusion_axes(all_reduce, op)
    if axes is None:
        return False
    scatter, residual = axes
    out: TensorSharding = all_reduce.attributes["out_sharding"]
    slice_out: TensorSharding = op.attributes["out_sharding"]
    mesh = mesh_of(out, all_reduce)
    operand = all_reduce.operands[0]
    in_sharding = get_sharding(operand) or TensorSharding.fully_closed(mesh, operand.type.rank)
    dims = []
    for dim, dim_scatter in zip(in_sharding.dim_shardings, scatter, strict=True):
        expected = list(dim.axes)
        for axis in dim_scatter:
            add_axis_or_merge(expected, axis, mesh)
        dims.append(DimensionSharding(tuple(expected), True))
    attrs = {"reduce_scatter_axes": ListOfAxisRefLists(tuple(scatter)),
             "out_sharding": TensorSharding(out.mesh_or_ref, tuple(dims),
                                            slice_out.replicated_axes,
                                            slice_out.unreduced_axes, slice_out.reduction_op)}
    if "reduction_op" in all_reduce.attributes:
        attrs["reduction_op"] = all_reduce.attributes["reduction_op"]
    final = rewriter.create("sdy.reduce_scatter", [operand], op.result_types, attrs,
                            location=all_reduce.location).results[0]
    if any(len(r) for r in residual):
        final = rewriter.create(
            "sdy.all_slice", [final], op.result_types,
            {"slicing_axes": ListOfAxisRefLists(tuple(residual)), "out_sharding": slice_out},
            location=op.location).results[0]
    for user in all_reduce.results[0].users:
        rewriter.replace_op(user, [final])
    rewriter.erase_op(all_reduce)
    return True


# -- manual computation --------------------------------------------------------------------

@rewrite_pattern("sdy.manual_computation")
def ManualComputationUnusedInputsPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """Drop body arguments without uses, with their operands and in-shardings (an in-place
    change upstream makes without telling the rewriter)."""
    body = op.regions[0].blocks[0]
    unused = [arg.index for arg in body.args if not arg.has_uses]
    if not unused:
        return False
    op.erase_operands(unused)
    for index in reversed(unused):
        body.erase_argument(index)
    dropped = set(unused)
    op.attributes["in_shardings"] = TensorShardingPerValue(tuple(
        s for i, s in enumerate(op.attributes["in_shardings"]) if i not in dropped))
    return True


def _manual_axes_product(op: Operation) -> int | None:
    shardings = [*op.attributes["in_shardings"], *op.attributes["out_shardings"]]
    if not shardings:
        return 1
    meshes = [mesh_of(s, op) for s in shardings]
    nonempty = [m for m in meshes if m is not None and not m.is_empty]
    if None in meshes or any(m != nonempty[0] for m in nonempty[1:]):
        return None
    mesh = nonempty[0] if nonempty else meshes[-1]
    product = 1
    for axis in op.attributes["manual_axes"]:
        product *= mesh.axis_size(axis)
    return product


def _legal_to_inline(op: Operation) -> bool:
    return all(nested.dialect in INLINABLE_DIALECTS
               for region in op.regions for nested in region.walk())


def _inline_region_before(op: Operation) -> None:
    """``mlir::inlineRegion`` of ``op``'s body before ``op`` (no rewriter: the driver is not
    told about the clones): body arguments become the operands, the ``sdy.return``
    operands replace the results."""
    body = op.regions[0].blocks[0]
    mapping = dict(zip(body.args, op.operands, strict=True))
    for nested in body:
        if nested is body.last_op:
            break
        op.parent.insert_before(op, nested.clone(mapping))
    for result, value in zip(op.results, body.last_op.operands, strict=True):
        result.replace_all_uses_with(mapping.get(value, value))


@rewrite_pattern("sdy.manual_computation")
def RedundantManualComputationPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """Erase an empty manual computation without inputs or outputs; inline one whose
    manual axes have total size 1."""
    body = op.regions[0].blocks[0]
    if not len(op.attributes["in_shardings"]) and not len(op.attributes["out_shardings"]) \
            and body.first_op is not None and body.first_op.name == "sdy.return":
        rewriter.erase_op(op)
        return True
    if _manual_axes_product(op) != 1:
        return rewriter.notify_match_failure(op, "product of manual axis sizes is not 1")
    if not _legal_to_inline(op):
        rewriter.emit_op_error(op, "failed to inline redundant ManualComputationOp.")
        return False
    _inline_region_before(op)
    rewriter.erase_op(op)
    return True


# upstream's getCanonicalizationPatterns, in results.add order
add_canonicalization_patterns("sdy.manual_computation", ManualComputationUnusedInputsPattern,
                              RedundantManualComputationPattern)
add_canonicalization_patterns("sdy.reshard", ReshardCommonSubexpressionEliminationPattern,
                              ReshardOfReshardPattern)
add_canonicalization_patterns("sdy.all_gather", AllGatherNoopPattern)
add_canonicalization_patterns("sdy.all_slice", AllSliceOfAllGatherPattern, AllSliceNoopPattern)
add_canonicalization_patterns("sdy.all_reduce", AllReduceNoopPattern,
                              AllReduceOfReplicatedToUnreducedPattern,
                              AllReduceOfShardedToUnreducedPattern)
add_canonicalization_patterns("sdy.all_to_all", AllToAllFusionPattern, AllToAllNoUsePattern)
add_canonicalization_patterns("sdy.collective_permute", CollectivePermuteNoopPattern)
add_canonicalization_patterns("sdy.reduce_scatter", ReduceScatterFusion,
                              ReduceScatterNoopPattern)
