"""Collectives for unreduced axes that explicit reshards insert (upstream
``shardy/dialect/sdy/transforms/export/explicit_reshards_util.cc``): an ``sdy.all_reduce``
where a user needs fewer unreduced axes than its source has, and
``sdy.replicated_to_unreduced`` / ``sdy.sharded_to_unreduced`` where it needs more."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.axis_lists import axis_set_diff, sort_and_merge_axes
from shardy_ref.ir.operation import Operation, OpOperand, Value
from shardy_ref.ir.sdy_axes import AxisRef, AxisRefList, ListOfAxisRefLists, Mesh
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, value_location
from shardy_ref.partition.export.convert_global_to_local.replica_groups import (
    InvalidAxes,
    check_axes,
)
from shardy_ref.propagate.sharding_projection import PrefixStatus, axis_list_prefix_status


def collective(name: str, value: Value, out_sharding: TensorSharding, anchor: Operation,
               **attributes) -> Operation:
    """A new sdy collective on ``value`` inserted before ``anchor``."""
    op = Operation(name, [value], [value.type], {**attributes, "out_sharding": out_sharding},
                   location=value_location(value))
    anchor.parent.insert_before(anchor, op)
    return op


def reshard(value: Value, sharding: TensorSharding, anchor: Operation) -> Operation:
    """A new ``sdy.reshard`` of ``value`` inserted before ``anchor``."""
    op = collective("sdy.reshard", value, sharding, anchor)
    op.attributes["sharding"] = op.attributes.pop("out_sharding")
    return op


def all_reduce_attrs(axes, reduction_op: ReductionOp) -> dict:
    attrs = {"reduction_axes": AxisRefList(tuple(axes))}
    if reduction_op != ReductionOp.SUM:
        attrs["reduction_op"] = reduction_op.attr()
    return attrs


def insert_all_reduce_if_unreduced_to_replicated(use: OpOperand, source: TensorSharding | None,
                                                 user: TensorSharding | None,
                                                 table: SymbolTable, anchor: Operation):
    """Upstream ``insertAllReduceIfUnreducedToReplicated``: all-reduce the source's
    unreduced axes the user's sharding does not keep unreduced; returns the sharding the
    use now sees."""
    if source is None or not source.unreduced_axes:
        return source
    mesh = mesh_or_lookup(table, source.mesh_or_ref)
    target = user.unreduced_axes if user is not None else ()
    axes = axis_set_diff(source.unreduced_axes, target, mesh)
    if not axes:
        return source
    sharding = source.replace(unreduced_axes=tuple(
        axis_set_diff(source.unreduced_axes, axes, mesh)))
    op = collective("sdy.all_reduce", use.value, sharding, anchor,
                    **all_reduce_attrs(axes, source.reduction_op))
    use.set(op.results[0])
    return sharding


def _axes_past_prefix(in_axes: tuple[AxisRef, ...], out_axes: tuple[AxisRef, ...],
                      mesh: Mesh) -> list[AxisRef]:
    """The part of ``in_axes`` beyond its strict prefix ``out_axes`` (starting with the
    suffix of a last axis that ``out_axes`` only partly keeps)."""
    diff = []
    if out_axes and out_axes[-1] != in_axes[len(out_axes) - 1]:
        diff.append(in_axes[len(out_axes) - 1].suffix_without_overlap(out_axes[-1], mesh))
    diff += in_axes[len(out_axes):]
    return diff


@dataclass(frozen=True, slots=True)
class _ShardedToUnreduced:
    """What the dimension shardings allow of ``out``'s extra unreduced axes: the axes a
    ``sharded_to_unreduced`` takes (all and per dimension), the dimension shardings
    before it, and whether a reshard must reach them first."""
    axes: list[AxisRef]
    axes_per_dim: list[AxisRefList]
    dim_shardings: list
    need_reshard: bool


def _sharded_to_unreduced(inp: TensorSharding, out: TensorSharding, extra: list[AxisRef],
                          mesh: Mesh) -> _ShardedToUnreduced:
    """The dimension loop of upstream ``insertUnreducedCollectives``: a dimension whose
    out-axes are a strict prefix of its in-axes turns the rest unreduced in place if all of
    it is wanted unreduced; any other mismatch needs a reshard."""
    s2u, axes_per_dim, need_reshard = [], [], False
    dims = list(out.dim_shardings)
    for i, (in_dim, out_dim) in enumerate(zip(inp.dim_shardings, out.dim_shardings,
                                              strict=True)):
        in_axes, out_axes = in_dim.axes, out_dim.axes
        status = axis_list_prefix_status(out_axes, in_axes)
        axes_per_dim.append(AxisRefList(()))
        if status is PrefixStatus.STRICT_PREFIX:
            diff = _axes_past_prefix(in_axes, out_axes, mesh)
            if not axis_set_diff(diff, extra, mesh):
                axes_per_dim[i] = AxisRefList(tuple(diff))
                s2u += diff
                dims[i] = in_dim
            else:
                need_reshard = True
        elif status is PrefixStatus.NOT_A_PREFIX:
            need_reshard = True
    return _ShardedToUnreduced(s2u, axes_per_dim, dims, need_reshard)


def insert_unreduced_collectives(use: OpOperand, out: TensorSharding | None,
                                 table: SymbolTable, anchor: Operation):
    """Upstream ``insertUnreducedCollectives``: reach ``out``'s extra unreduced axes from
    the input with a reshard (if dimensions must change first), a
    ``replicated_to_unreduced`` and/or a ``sharded_to_unreduced``; returns the new
    sharding of the use, or None if nothing was inserted."""
    value = use.value
    inp = get_sharding(value)
    if inp is None or out is None or not out.unreduced_axes:
        return None
    mesh = mesh_or_lookup(table, inp.mesh_or_ref)
    extra = axis_set_diff(out.unreduced_axes, inp.unreduced_axes, mesh)
    if not extra:
        return None
    plan = _sharded_to_unreduced(inp, out, extra, mesh)
    s2u, dims = plan.axes, plan.dim_shardings
    result = value
    if plan.need_reshard:
        result = reshard(result, inp.replace(dim_shardings=tuple(dims)), anchor).results[0]
    last = get_sharding(result)
    r2u = axis_set_diff(extra, s2u, mesh)
    if r2u:
        merged = sort_and_merge_axes([*inp.unreduced_axes, *r2u], mesh)
        last = TensorSharding(inp.mesh_or_ref, tuple(dims), out.replicated_axes,
                              tuple(merged), out.reduction_op)
        result = collective("sdy.replicated_to_unreduced", result, last, anchor,
                            axes=AxisRefList(tuple(r2u))).results[0]
    if s2u:
        result = collective("sdy.sharded_to_unreduced", result, out, anchor,
                            axes=ListOfAxisRefLists(tuple(plan.axes_per_dim))).results[0]
        last = out
    if result is not value:
        use.set(result)
        return last
    return None


def make_explicit_reduction_operand_partial(op: Operation, table: SymbolTable) -> None:
    """Our addition to the full version: an ``sdy.all_reduce`` or ``sdy.reduce_scatter``
    that sums along axes its operand is not unreduced along (the operand is replicated there,
    AR-5) would add up every device's copy, so the partitioned program computes the value
    times the axes' size where the global program leaves it unchanged. A
    ``replicated_to_unreduced`` before it makes the operand partial along those axes, so
    the sum counts the value once. Upstream keeps the op as is. A max or min of copies is
    the value itself, so only sums need it."""
    reduction = op.attributes.get("reduction_op")
    if reduction is not None and ReductionOp(reduction.value) != ReductionOp.SUM:
        return
    if op.name == "sdy.all_reduce":
        axes = list(op.attributes["reduction_axes"])
    else:
        axes = [a for per_dim in op.attributes["reduce_scatter_axes"] for a in per_dim]
    out = op.attributes["out_sharding"]
    value = op.operands[0]
    inp = get_sharding(value) or TensorSharding.fully_closed(out.mesh_or_ref, out.rank)
    mesh = mesh_or_lookup(table, inp.mesh_or_ref)
    if mesh is None or (inp.unreduced_axes and inp.reduction_op != ReductionOp.SUM):
        return
    try:
        check_axes(axes, mesh)
    except InvalidAxes:  # sdy-convert-global-to-local reports them at the op
        return
    replicated = axis_set_diff(axes, inp.unreduced_axes, mesh)
    if not replicated:
        return
    partial = inp.replace(unreduced_axes=tuple(sort_and_merge_axes(
        [*inp.unreduced_axes, *replicated], mesh)), reduction_op=ReductionOp.SUM)
    new = collective("sdy.replicated_to_unreduced", value, partial, op,
                     axes=AxisRefList(tuple(sort_and_merge_axes(replicated, mesh))))
    op.set_operand(0, new.results[0])
