"""Which sharding a value carries: upstream ``getShardableValue`` and ``getSharding``.

A value's sharding lives on whatever defines it: a function argument's ``sdy.sharding``
argument attribute, the ``sharding``/``out_sharding`` attribute of an sdy op, the
edge-owner shardings of a data-flow op (``ShardableDataFlowOpInterface``: named and manual
computations, ``stablehlo.while``/``case``/``optimization_barrier``), or the
``sdy.sharding`` TensorShardingPerValue of any other op (attribute names in upstream
``shardy/dialect/sdy/ir/constants.h``). The verifiers of ops that read their operands'
shardings (the collectives, ``Sdy_CollectiveOpInterface`` in ``ir/op_interface.td``)
use :func:`get_sharding`; so will propagation.

See ``shardy/dialect/sdy/ir/utils.cc`` (``getShardableValue``, ``getSharding``) and
``dialect.cc`` (the ``ShardableDataFlowOpInterface`` implementations) at the pinned
commit (a0277a83e7f8).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr
from shardy_ref.ir.func_attrs import get_result_attr, set_arg_attr, set_result_attr
from shardy_ref.ir.location import UNKNOWN_LOC, Location
from shardy_ref.ir.operation import BlockArgument, Operation, OpResult, Value
from shardy_ref.ir.sdy_sharding import TensorSharding, TensorShardingPerValue
from shardy_ref.ir.types import tensor_rank


@dataclass(frozen=True, slots=True)
class _DataFlowOp:
    """How an op implements ``ShardableDataFlowOpInterface``: which value owns the edge of
    a target, and where the edge owners' shardings live."""

    # (op, target) -> the edge owner of ``target`` (a result or block argument of op)
    owner_of: Callable[[Operation, Value], Value | None]
    result_shardings: str  # attribute with one sharding per result
    block_arg_shardings: str | None = None  # attribute with one per block argument
    erase_manual_axes: bool = False  # block arguments see the sharding minus manual axes


def _owner_is_target(op: Operation, target: Value) -> Value:
    return target


def _result_owner(op: Operation, target: Value) -> Value | None:
    """``stablehlo.case``/``optimization_barrier``: only results are targets."""
    return target if isinstance(target, OpResult) else None


def _while_owner(op: Operation, target: Value) -> Value | None:
    """``stablehlo.while``: a block argument of either region belongs to the result of
    the same index."""
    if isinstance(target, OpResult):
        return target
    return op.results[target.index] if target.index < op.num_results else None


DATA_FLOW_OPS: dict[str, _DataFlowOp] = {
    "sdy.named_computation": _DataFlowOp(_owner_is_target, "out_shardings", "in_shardings"),
    "sdy.manual_computation": _DataFlowOp(_owner_is_target, "out_shardings", "in_shardings",
                                          erase_manual_axes=True),
    "stablehlo.while": _DataFlowOp(_while_owner, "sdy.sharding"),
    "stablehlo.case": _DataFlowOp(_result_owner, "sdy.sharding"),
    "stablehlo.optimization_barrier": _DataFlowOp(_result_owner, "sdy.sharding"),
}

# ops whose result sharding is an inherent attribute of their own (upstream's
# DataFlowEdgeOp, ShardingConstraintOp, ReshardOp and CollectiveOpInterface cases)
OWN_SHARDING_ATTR: dict[str, str] = {
    "sdy.data_flow_edge": "sharding",
    "sdy.sharding_constraint": "sharding",
    "sdy.reshard": "sharding",
    **{f"sdy.{name}": "out_sharding" for name in (
        "all_gather", "all_slice", "all_to_all", "collective_permute", "all_reduce",
        "reduce_scatter", "sharded_to_unreduced", "replicated_to_unreduced")},
}

FUNCTION_OPS = frozenset({"func.func"})
SHARDING_ATTR = "sdy.sharding"  # upstream ``kShardingAttr``


def owning_op(value: Value) -> Operation | None:
    """Upstream ``getOwningOp``: the defining op, or the op holding the block argument."""
    return value.op if isinstance(value, OpResult) else value.owner_op


def _data_flow_edge_user(owner: Value | None) -> Operation | None:
    """``getDataFlowEdgeUser``: the ``sdy.data_flow_edge`` that is the one use of owner."""
    if owner is None or not owner.has_one_use:
        return None
    user = owner.uses[0].owner
    return user if user.name == "sdy.data_flow_edge" else None


def shardable_value(value: Value) -> Value | None:
    """Upstream ``getShardableValue``: the value holding the sharding of ``value``.

    That is the result of the ``sdy.data_flow_edge`` on ``value``'s edge owner if there is
    one; else an op result or function argument itself; the edge owner of a data-flow
    op's block argument; the matching operand of a ``stablehlo.async_start`` block
    argument; None for other block arguments (nothing can shard them).
    """
    op = owning_op(value)
    if op is None:
        return None
    flow = DATA_FLOW_OPS.get(op.name)
    if flow is not None:
        edge = _data_flow_edge_user(flow.owner_of(op, value))
        if edge is not None:
            return edge.results[0]
    if isinstance(value, OpResult) or op.name in FUNCTION_OPS:
        return value
    if flow is not None:
        return flow.owner_of(op, value)
    if op.name == "stablehlo.async_start" and value.index < op.num_operands:
        return op.operands[value.index]
    return None


def get_sharding(value: Value) -> TensorSharding | None:
    """The sharding ``value`` carries, or None: upstream ``getSharding`` (``utils.cc``).

    After :func:`shardable_value`, by the op owning the value: a function argument's
    ``sdy.sharding`` argument attribute; the ``sharding``/``out_sharding`` inherent
    attribute of ``sdy.data_flow_edge``, ``sdy.sharding_constraint``, ``sdy.reshard`` and
    the collectives; a data-flow op's edge-owner sharding
    (``ShardableDataFlowOpInterface::getEdgeOwnerSharding``: a manual computation's block
    arguments see their in-sharding without the manual axes); otherwise the entry of the
    op's ``sdy.sharding`` (a TensorShardingPerValue) at the result number.
    """
    if type(value) is OpResult:  # most values: a result of an op with no special place
        op = value.op
        name = op.name
        if name not in DATA_FLOW_OPS and name not in OWN_SHARDING_ATTR \
                and name not in FUNCTION_OPS:
            return _nth(op.attributes.get(SHARDING_ATTR), value.index)
    value = shardable_value(value)
    if value is None:
        return None
    op = owning_op(value)
    if op.name in FUNCTION_OPS:
        return _func_arg_sharding(op, value.index) if isinstance(value, BlockArgument) else None
    own = OWN_SHARDING_ATTR.get(op.name)
    if own is not None:
        sharding = op.attributes.get(own)
        return sharding if isinstance(sharding, TensorSharding) else None
    flow = DATA_FLOW_OPS.get(op.name)
    if flow is not None:
        return _edge_owner_sharding(op, flow, value)
    return _nth(op.attributes.get("sdy.sharding"), value.index)


def set_sharding(value: Value, sharding: TensorSharding) -> None:
    """Upstream ``setSharding`` (``utils.cc``): store ``sharding`` where :func:`get_sharding`
    reads it. Other results of the op (other edge owners) that had no sharding yet get a
    fully open one on the same mesh. A block argument nothing can shard is left alone."""
    value = shardable_value(value)
    if value is None:
        return
    op = owning_op(value)
    if op.name in FUNCTION_OPS:
        set_arg_attr(op, value.index, SHARDING_ATTR, sharding)
        return
    own = OWN_SHARDING_ATTR.get(op.name)
    if own is not None:
        op.attributes[own] = sharding
        return
    flow = DATA_FLOW_OPS.get(op.name)
    if flow is not None and isinstance(value, BlockArgument):
        owners = op.regions[0].blocks[0].args
        new = _replace_at(op.attributes.get(flow.block_arg_shardings), owners, value.index,
                          sharding)
        if flow.erase_manual_axes:
            manual = tuple(op.attributes.get("manual_axes") or ())
            old = op.attributes[flow.block_arg_shardings]
            new = TensorShardingPerValue(tuple(
                add_free_axes(outer, s, manual) for outer, s in zip(old, new)))
        op.attributes[flow.block_arg_shardings] = new
        return
    attr = flow.result_shardings if flow is not None else SHARDING_ATTR
    op.attributes[attr] = _replace_at(op.attributes.get(attr), op.results, value.index,
                                      sharding)


def set_shardings(op: Operation, shardings) -> None:
    """Upstream ``setShardings``: the op's ``sdy.sharding``, one per result (none: no-op)."""
    shardings = tuple(shardings)
    if shardings:
        op.attributes[SHARDING_ATTR] = TensorShardingPerValue(shardings)


def _replace_at(per_value, values, index: int, sharding: TensorSharding):
    """``replaceValueSharding`` or, with no shardings yet, ``getOpenWithShardingAtIndex``."""
    if isinstance(per_value, TensorShardingPerValue) and len(per_value) == len(values):
        shardings = list(per_value)
    else:
        shardings = [TensorSharding.fully_open(sharding.mesh_or_ref, tensor_rank(v.type))
                     for v in values]
    shardings[index] = sharding
    return TensorShardingPerValue(tuple(shardings))


def get_func_result_sharding(func: Operation, index: int) -> TensorSharding | None:
    sharding = get_result_attr(func, index, SHARDING_ATTR)
    return sharding if isinstance(sharding, TensorSharding) else None


def set_func_result_sharding(func: Operation, index: int,
                             sharding: TensorSharding | None) -> None:
    """Upstream ``setFuncResultSharding``; None removes it."""
    set_result_attr(func, index, SHARDING_ATTR, sharding)


def _func_arg_sharding(func: Operation, index: int) -> TensorSharding | None:
    arg_attrs = func.attributes.get("arg_attrs")
    if not isinstance(arg_attrs, ArrayAttr) or index >= len(arg_attrs):
        return None
    attrs = arg_attrs[index]
    sharding = dict(attrs.value).get("sdy.sharding") if isinstance(attrs, DictionaryAttr) \
        else None
    return sharding if isinstance(sharding, TensorSharding) else None


def _edge_owner_sharding(op: Operation, flow: _DataFlowOp, owner: Value) -> TensorSharding | None:
    if isinstance(owner, OpResult):
        return _nth(op.attributes.get(flow.result_shardings), owner.index)
    if flow.block_arg_shardings is None:
        return None
    sharding = _nth(op.attributes.get(flow.block_arg_shardings), owner.index)
    if sharding is not None and flow.erase_manual_axes:
        sharding = erase_manual_axes(sharding, tuple(op.attributes.get("manual_axes") or ()))
    return sharding


def _nth(per_value, index: int) -> TensorSharding | None:
    if isinstance(per_value, TensorShardingPerValue) and 0 <= index < len(per_value):
        return per_value[index]
    return None


def erase_free_axes(sharding: TensorSharding, manual_axes: Sequence[str]) -> TensorSharding:
    """Upstream ``eraseFreeAxes``: each dimension keeps only its leading manual axes."""
    dims = []
    for dim in sharding.dim_shardings:
        n = 0
        while n < len(dim.axes) and dim.axes[n].name in manual_axes:
            n += 1
        dims.append(dim.replace(axes=dim.axes[:n]))
    return sharding.replace(dim_shardings=tuple(dims))


def add_free_axes(outer: TensorSharding, new: TensorSharding,
                  manual_axes: Sequence[str]) -> TensorSharding:
    """Upstream ``addFreeAxesToManualComputationSharding``: the manual axes of the
    in/out sharding ``outer`` followed by the (free) axes of the body-side ``new``, with
    ``new``'s open/closed flags and priorities and ``outer``'s replicated/unreduced axes."""
    base = erase_free_axes(outer, manual_axes)
    dims = tuple(nd.replace(axes=bd.axes + nd.axes)
                 for bd, nd in zip(base.dim_shardings, new.dim_shardings))
    return outer.replace(mesh_or_ref=new.mesh_or_ref, dim_shardings=dims)


def erase_manual_axes(sharding: TensorSharding, manual_axes: Sequence[str]) -> TensorSharding:
    """Upstream ``eraseManualAxes``: each dimension drops its leading manual axes, and the
    replicated and unreduced axes drop all manual ones."""
    if not manual_axes:
        return sharding
    dims = []
    for dim in sharding.dim_shardings:
        free = 0
        while free < len(dim.axes) and dim.axes[free].name in manual_axes:
            free += 1
        dims.append(dim.replace(axes=dim.axes[free:]))
    return sharding.replace(
        dim_shardings=tuple(dims),
        replicated_axes=tuple(a for a in sharding.replicated_axes if a.name not in manual_axes),
        unreduced_axes=tuple(a for a in sharding.unreduced_axes if a.name not in manual_axes))


def value_location(value: Value) -> Location:
    """Where ``value`` is defined: its defining op, or for a block argument its own
    location when the parser recorded one, else the op holding it."""
    loc = getattr(value, "location", None)
    if loc is not None:
        return loc
    op = owning_op(value)
    return op.location if op is not None else UNKNOWN_LOC


def block_argument_edge_owners(op: Operation) -> list[Value]:
    """``getBlockArgumentEdgeOwners``: the body arguments of ops that shard them."""
    flow = DATA_FLOW_OPS[op.name]
    return list(op.regions[0].blocks[0].args) if flow.block_arg_shardings else []


def op_result_edge_owners(op: Operation) -> list[Value]:
    """``getOpResultEdgeOwners``: every result of a data-flow op."""
    return list(op.results)


def set_block_arg_shardings(op: Operation, shardings: list[TensorSharding]) -> None:
    """``setBlockArgumentEdgeOwnerShardings``: a manual computation keeps the manual axes
    of its in-shardings in front of the (free) edge axes."""
    flow = DATA_FLOW_OPS[op.name]
    if flow.erase_manual_axes:
        manual = tuple(op.attributes.get("manual_axes") or ())
        shardings = [add_free_axes(outer, new, manual)
                     for outer, new in zip(op.attributes[flow.block_arg_shardings], shardings,
                                           strict=True)]
    op.attributes[flow.block_arg_shardings] = TensorShardingPerValue(tuple(shardings))
