"""Helpers on the IR that import, propagation and export passes share: upstream's
``shardy/dialect/sdy/ir/utils.{h,cc}`` (https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/ir/utils.h)
and a few ``TensorShardingAttr`` methods. No pass module defines a helper another pass uses;
it lives here (or in :mod:`shardy_ref.transforms.common`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from shardy_ref.ir.call_graph import FUNC_OP, get_func_or_die
from shardy_ref.ir.constants import DATA_FLOW_EDGE, SHARDING_RULE_ATTR
from shardy_ref.ir.diagnostics import EntryFunctionError
from shardy_ref.ir.func_attrs import function_type, get_arg_attr
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.sharding_walker import lookup_mesh
from shardy_ref.ir.symbols import SymbolTable, symbol_name
from shardy_ref.ir.types import RankedTensorType, VectorType, tensor_rank
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    SHARDING_ATTR,
    get_func_result_sharding,
    owning_op,
)


def mesh_or_lookup(table: SymbolTable, mesh_or_ref: str | Mesh) -> Mesh | None:
    """Upstream ``getMeshOrLookup``."""
    return mesh_or_ref if isinstance(mesh_or_ref, Mesh) else lookup_mesh(table, mesh_or_ref)


def common_mesh_or_ref(shardings: Sequence[TensorSharding],
                       table: SymbolTable) -> str | Mesh | None:
    """Upstream ``getCommonMeshOrRef``: the mesh (or its name) all ``shardings`` are bound
    to, empty meshes aside (the first non-empty one; the last if all are empty); None if
    they differ."""
    mesh_or_ref, mesh = None, None
    for sharding in shardings:
        if sharding.mesh_or_ref is mesh_or_ref:  # the same mesh again (most shardings)
            continue
        other = mesh_or_lookup(table, sharding.mesh_or_ref)
        if mesh is None or mesh.is_empty:
            mesh, mesh_or_ref = other, sharding.mesh_or_ref
        elif not other.is_empty and other != mesh:
            return None
    return mesh_or_ref


def non_maximal_mesh_or_ref(count: int, table: SymbolTable,
                            get: Callable[[int], TensorSharding | None]):
    """Upstream ``getMeshOrRef``: the mesh of the first sharding on a non-maximal mesh."""
    for i in range(count):
        sharding = get(i)
        if sharding is not None and not mesh_or_lookup(table, sharding.mesh_or_ref).is_maximal:
            return sharding.mesh_or_ref
    return None


def is_equivalent(a: TensorSharding | None, b: TensorSharding | None,
                  ignore_unreduced_axes: bool = False) -> bool:
    """Upstream ``TensorShardingAttr::isEquivalent``: both fully replicated, or the same
    mesh, unreduced axes and dimension axes (open/closed and priorities ignored); unreduced
    axes are left out of both tests with ``ignore_unreduced_axes``."""
    def replicated(s: TensorSharding | None) -> bool:
        if s is None:
            return True
        if not ignore_unreduced_axes and s.unreduced_axes:
            return False
        return not any(d.axes for d in s.dim_shardings)

    if replicated(a):
        return replicated(b)
    if b is None or a.mesh_or_ref != b.mesh_or_ref:
        return False
    if not ignore_unreduced_axes and a.unreduced_axes != b.unreduced_axes:
        return False
    return len(a.dim_shardings) == len(b.dim_shardings) and all(
        x.axes == y.axes for x, y in zip(a.dim_shardings, b.dim_shardings))


def func_result_shardings(func: Operation, table: SymbolTable) -> list[TensorSharding] | None:
    """Upstream ``getFuncResultShardings``: every result's sharding (fully open where it
    has none), or None if no result is sharded on a non-maximal mesh."""
    results = function_type(func).results
    mesh_or_ref = non_maximal_mesh_or_ref(len(results), table,
                                          lambda i: get_func_result_sharding(func, i))
    if mesh_or_ref is None:
        return None
    return [get_func_result_sharding(func, i)
            or TensorSharding.fully_open(mesh_or_ref, tensor_rank(t))
            for i, t in enumerate(results)]


MAIN_FUNC_NAME = "main"  # upstream ``kMainFuncName``


def main_func_or_die(module: Operation, table: SymbolTable) -> Operation:
    """Upstream ``getMainFuncOrDie(..., useSingleFunc=true)``: the module's only
    top-level function, else the one named ``main`` (a crash upstream if none)."""
    funcs = [op for op in module.regions[0].blocks[0] if op.name == FUNC_OP]
    if len(funcs) == 1:
        return funcs[0]
    return get_func_or_die(MAIN_FUNC_NAME, table, funcs[0] if funcs else None)


def entry_function(module: Operation, name: str | None = None, *,
                   require_body: bool = False) -> Operation:
    """The function a tool runs or shows: the one named ``name``; without a name,
    ``@main``, else the module's only function (the StableHLO reference interpreter's
    ``getMainFunction``, and its message). With ``require_body``, a declaration is refused
    too."""
    funcs = [op for op in module.regions[0].blocks[0] if op.name == FUNC_OP]
    wanted = name or MAIN_FUNC_NAME
    found = next((f for f in funcs if symbol_name(f) == wanted), None)
    if found is None and name is None and len(funcs) == 1:
        found = funcs[0]
    if found is None:
        raise EntryFunctionError(module.location,
                                 f"module must have entry func with name {wanted}")
    if require_body and not (found.regions and found.regions[0].blocks):
        raise EntryFunctionError(found.location, f"function @{symbol_name(found)} has no "
                                 "body to run")
    return found


def is_static_shaped(value: Value) -> bool:
    """``isStaticShapedType``: a ranked shaped type without dynamic dimensions."""
    t = value.type
    return isinstance(t, (RankedTensorType, VectorType)) and None not in t.shape


def insert_after_value(value: Value, op: Operation) -> None:
    """``setInsertionPointAfterValue`` then insert: right after the defining op, or at the
    start of the block for a block argument."""
    if isinstance(value, BlockArgument):
        value.parent_block.prepend(op)
    else:
        value.op.parent.insert_after(value.op, op)


def lookup_data_flow_edge(target: Value) -> Operation | None:
    """Upstream ``DataFlowEdgeOp::lookup(target)``: the ``sdy.data_flow_edge`` on the edge
    owner of ``target`` when ``target`` belongs to a data-flow op, else None."""
    op = owning_op(target)
    flow = DATA_FLOW_OPS.get(op.name) if op is not None else None
    if flow is None:
        return None
    owner = flow.owner_of(op, target)
    if owner is None or not owner.has_one_use:
        return None
    user = owner.uses[0].owner
    return user if user.name == DATA_FLOW_EDGE else None


def is_scalar(value: Value) -> bool:
    """Upstream ``isScalar``: a ranked shaped value of rank 0."""
    t = value.type
    return isinstance(t, RankedTensorType | VectorType) and len(t.shape) == 0


def _is_maximal(sharding: TensorSharding, table: SymbolTable) -> bool:
    mesh = sharding.mesh_or_ref
    if not isinstance(mesh, Mesh):
        mesh = lookup_mesh(table, mesh)
    return mesh is None or mesh.is_maximal


def func_arg_shardings(func: Operation, table: SymbolTable) -> TensorShardingPerValue | None:
    """Upstream ``getFuncArgShardings``: one sharding per argument, the missing ones fully
    open on the mesh of the first argument sharded on a non-maximal mesh; None if there is
    no such argument."""
    # the argument types come from the function type: the body may have moved already
    arg_types = function_type(func).inputs
    shardings = [get_arg_attr(func, i, SHARDING_ATTR) for i in range(len(arg_types))]
    mesh_or_ref = next((s.mesh_or_ref for s in shardings
                        if isinstance(s, TensorSharding) and not _is_maximal(s, table)), None)
    if mesh_or_ref is None:
        return None
    return TensorShardingPerValue(tuple(
        s if isinstance(s, TensorSharding) else TensorSharding.fully_open(mesh_or_ref,
                                                                          tensor_rank(t))
        for s, t in zip(shardings, arg_types)))


def remove_sharding_rules(root: Operation) -> None:
    """Upstream ``removeShardingRules``: drop every non-custom ``sdy.sharding_rule``."""
    for op in root.walk():
        rule = op.attributes.get(SHARDING_RULE_ATTR)
        if isinstance(rule, OpShardingRule) and not rule.is_custom_rule:
            del op.attributes[SHARDING_RULE_ATTR]


def closed_like(sharding: TensorSharding) -> TensorSharding:
    """Upstream ``getClosedLike``: all dimensions closed (axes and priorities kept), no
    replicated axes, unreduced axes kept."""
    dims = sharding.dim_shardings
    if not sharding.replicated_axes and all(d.is_closed for d in dims):
        return sharding  # already closed: the very same attribute, no IR change
    return sharding.replace(
        dim_shardings=tuple(d if d.is_closed else DimensionSharding(d.axes, True, d.priority)
                            for d in dims),
        replicated_axes=())
