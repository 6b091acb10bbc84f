"""The ``sdy.reshard`` canonicalization patterns: reshard-of-reshard and reshard CSE.

Upstream ``shardy/dialect/sdy/ir/canonicalization.td`` (``ReshardOfReshardPattern``) and
``canonicalization.cc`` (``ReshardCommonSubexpressionEliminationPattern``), with
``isShardingEquivalentAcrossReshapes`` from ``ir/utils.cc``: two shardings are equivalent
across reshapes when every axis lands at the same linear stride of the row-major data.
"""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.operation import Block, Operation, OpResult, Value
from shardy_ref.ir.pattern_match import PatternRewriter, rewrite_pattern
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType

RESHARD = "sdy.reshard"
RESHARD_LABEL = "sdy-reshard"  # upstream kReshardLabel
RESHAPE, TRANSPOSE = "stablehlo.reshape", "stablehlo.transpose"


def mesh_of(sharding: TensorSharding, op: Operation) -> Mesh | None:
    """``TensorShardingAttr::getMesh(op)``: the inline mesh, or ``sdy.mesh`` of that name in
    the module enclosing ``op``."""
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    module = op.parent_op
    while module is not None and module.name != "builtin.module":
        module = module.parent_op
    target = SymbolTable(module).lookup(sharding.mesh_or_ref) if module is not None else None
    mesh = target.attributes.get("mesh") if target is not None else None
    return mesh if isinstance(mesh, Mesh) else None


@rewrite_pattern(RESHARD, benefit=2, labels=(RESHARD_LABEL,))
def ReshardOfReshardPattern(op: Operation, rewriter: PatternRewriter) -> bool:
    """``reshard(reshard(x, s1), s2) -> reshard(x, s2)`` when the inner one has one use
    (DRR: a new op with only the inherent ``sharding``; the inner one dies)."""
    inner = op.operands[0].defining_op
    if inner is None:
        return rewriter.notify_match_failure(op, "operand 0 has no defining op")
    if inner.name != RESHARD or not inner.results[0].has_one_use:
        return False
    new = rewriter.create(RESHARD, [inner.operands[0]], op.result_types,
                          {"sharding": op.attributes["sharding"]}, location=op.location)
    rewriter.replace_op(op, new)
    return True


def _is_metadata_op(op: Operation) -> bool:
    return op.name in (RESHAPE, TRANSPOSE)


def _unwrap_metadata_op(value: Value) -> Value:
    while isinstance(value, OpResult) and _is_metadata_op(value.op):
        value = value.op.operands[0]
    return value


def _target_sharding(sharding: TensorSharding, value: Value) -> TensorSharding:
    """``getTargetSharding``: undo the transposes above ``value``, stopping at a reshape
    that changes the rank."""
    while isinstance(value, OpResult):
        op = value.op
        if op.name == TRANSPOSE:
            perm = op.attributes["permutation"]
            dims = [None] * len(perm)
            for res_dim, op_dim in enumerate(perm):
                dims[op_dim] = sharding.dim_shardings[res_dim]
            sharding = TensorSharding(sharding.mesh_or_ref, tuple(dims),
                                      sharding.replicated_axes, sharding.unreduced_axes)
            value = op.operands[0]
            continue
        if op.name == RESHAPE and op.operands[0].type.rank == op.results[0].type.rank:
            value = op.operands[0]
            continue
        break
    return sharding


@dataclass(slots=True)
class _AxisStride:
    axis: AxisRef
    stride: float
    prefix_size: int = 1  # elements of the dims before this axis's dim x preceding axes
    dim_size: int = 1


def _near(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _axis_strides(sharding: TensorSharding, type_: RankedTensorType,
                  mesh: Mesh, allow_non_divisible: bool = False) -> list[_AxisStride]:
    """``getAxisStrides``: each axis with the linear stride it shards at, sorted by
    stride, consecutive sub-axes of one axis merged."""
    strides: list[_AxisStride] = []
    cumulative = 1.0
    for i in range(type_.rank - 1, -1, -1):
        axes = sharding.dim_shardings[i].axes
        total = 1
        for axis in axes:
            total *= axis.size(mesh)
        per_shard = type_.shape[i] / total if allow_non_divisible \
            else float(_ceil_div(type_.shape[i], total))
        current = cumulative * per_shard
        prefix = 1
        for d in type_.shape[:i]:
            prefix *= d
        preceding = total
        for axis in reversed(axes):
            preceding //= axis.size(mesh)
            strides.append(_AxisStride(axis, current, prefix * preceding, type_.shape[i]))
            current *= axis.size(mesh)
        cumulative *= type_.shape[i]
    strides.sort(key=lambda s: s.stride)
    merged: list[_AxisStride] = []
    for entry in strides:
        if merged:
            back = merged[-1]
            prev, curr = back.axis, entry.axis
            if prev.name == curr.name \
                    and curr.pre_size * curr.size(mesh) == prev.pre_size \
                    and _mergeable(back, entry, mesh, allow_non_divisible):
                pre = min(prev.pre_size, curr.pre_size)
                size = prev.size(mesh) * curr.size(mesh)
                back.axis = AxisRef(prev.name) if pre == 1 and size == mesh.axis_size(prev.name) \
                    else AxisRef.sub(prev.name, pre, size)
                back.prefix_size = min(back.prefix_size, entry.prefix_size)
                continue
        merged.append(entry)
    return merged


def _mergeable(back: _AxisStride, entry: _AxisStride, mesh: Mesh,
               allow_non_divisible: bool) -> bool:
    if not allow_non_divisible:
        return _near(entry.stride, back.stride * back.axis.size(mesh))
    return back.prefix_size == entry.prefix_size or (
        back.prefix_size == entry.prefix_size * entry.dim_size
        and entry.axis.size(mesh) == entry.dim_size)


def is_sharding_equivalent_across_reshapes(s1: TensorSharding | None, t1,
                                           s2: TensorSharding | None, t2,
                                           op: Operation,
                                           allow_non_divisible: bool = False) -> bool:
    """Upstream ``isShardingEquivalentAcrossReshapes``."""
    if s1 == s2 and t1 == t2:
        return True
    if s1 is None or s2 is None or s1.mesh_or_ref != s2.mesh_or_ref:
        return False
    if s1.replicated_axes != s2.replicated_axes:
        return False
    if not isinstance(t1, RankedTensorType) or not isinstance(t2, RankedTensorType):
        return False
    if t1.encoding is not None or t2.encoding is not None:
        return False
    mesh = mesh_of(s1, op)
    if mesh is None:
        return False
    strides1 = _axis_strides(s1, t1, mesh, allow_non_divisible)
    strides2 = _axis_strides(s2, t2, mesh, allow_non_divisible)
    return len(strides1) == len(strides2) and all(
        a.axis == b.axis and (a.prefix_size == b.prefix_size if allow_non_divisible
                              else _near(a.stride, b.stride))
        for a, b in zip(strides1, strides2))


def _find_compatible_reshard(root: Value, target: TensorSharding, target_type, block: Block,
                             current: Operation) -> Value | None:
    """A reshard before ``current`` in its block, reachable from ``root`` through reshapes
    only, whose sharding is equivalent to ``target``."""
    worklist, visited = [root], set()
    while worklist:
        value = worklist.pop()
        if value in visited:
            continue
        visited.add(value)
        for use in value.uses:
            user = use.owner
            if user is current:
                continue
            if user.name == RESHARD:
                if is_sharding_equivalent_across_reshapes(
                        user.attributes["sharding"], user.results[0].type, target,
                        target_type, current) \
                        and user.parent is block and user.is_before_in_block(current):
                    return user.results[0]
            elif user.name == RESHAPE:
                worklist.append(user.results[0])
    return None


def _clone_transformation_path(root: Value, target: Value, cached: Value,
                               rewriter: PatternRewriter) -> Value:
    """Replay the reshapes/transposes from ``root`` to ``target`` on ``cached``."""
    if target is root:
        return cached
    op = target.defining_op
    transformed = _clone_transformation_path(root, op.operands[0], cached, rewriter)
    rewriter.set_insertion_point_after_value(transformed)
    cloned = rewriter.clone(op)
    cloned.set_operand(0, transformed)
    return cloned.results[0]


@rewrite_pattern(RESHARD)
def ReshardCommonSubexpressionEliminationPattern(op: Operation,
                                                 rewriter: PatternRewriter) -> bool:
    """Reuse an earlier equivalent reshard of the same data (looking through reshapes and
    transposes), replaying the metadata ops in between."""
    input_ = op.operands[0]
    root = _unwrap_metadata_op(input_)
    target = _target_sharding(op.attributes["sharding"], input_)
    cached = _find_compatible_reshard(root, target, op.results[0].type, op.parent, op)
    if cached is None:
        return False
    if cached.type != root.type:
        rewriter.set_insertion_point_after_value(cached)
        cached = rewriter.create(RESHAPE, [cached], [root.type],
                                 location=op.location).results[0]
    rewriter.replace_op(op, [_clone_transformation_path(root, input_, cached, rewriter)])
    return True
