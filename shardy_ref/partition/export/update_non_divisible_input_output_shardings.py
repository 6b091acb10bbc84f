"""``sdy-update-non-divisible-input-output-shardings``: make function inputs/outputs, call
results and manual computation edges evenly sharded, keeping the largest prefix of each
dimension's axes that divides it (upstream
``export/update_non_divisible_input_output_shardings.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-update-non-divisible-input-output-shardings).

Mesh ``"x"=4, "y"=2``: ``[{"x"}, {"y"}]`` on ``2x2`` becomes ``[{"x":(1)2}, {"y"}]``;
``[{"y", "x"}]`` on ``4`` becomes ``[{"y", "x":(1)2}]``; ``[{"x"}]`` on ``3`` becomes
``[{}]``.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import gcd

from shardy_ref.ir.call_graph import CALL_OP, FUNC_OP
from shardy_ref.ir.func_attrs import function_type, get_arg_attr, get_result_attr, set_attrs
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType, VectorType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    SHARDING_ATTR,
    erase_manual_axes,
    set_block_arg_shardings,
)
from shardy_ref.pass_manager import Pass, PassContext, register_pass


def _static_shape(type_) -> tuple[int, ...] | None:
    if isinstance(type_, RankedTensorType | VectorType) and None not in type_.shape:
        return tuple(type_.shape)
    return None


def evenly_sharded(sharding: TensorSharding, shape: Sequence[int],
                   table: SymbolTable) -> TensorSharding:
    """Upstream ``getEvenlySharded``: per dimension that its axes do not divide, the
    longest prefix of them (the last possibly cut to a sub-axis) that does."""
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    dims = []
    # a maximal-mesh sharding has no dimensions: nothing to do (upstream's zip_equal)
    for dim, size in zip(sharding.dim_shardings, shape):
        if size % dim.sharded_size(mesh) == 0:
            dims.append(dim)
            continue
        remaining, axes = size, []
        for axis in dim.axes:
            common = gcd(axis.size(mesh), remaining)
            if common == 1:
                break
            if axis.size(mesh) == common:
                axes.append(axis)
                remaining //= common
            else:
                axes.append(AxisRef.sub(axis.name, axis.pre_size, common))
                break
        dims.append(DimensionSharding(tuple(axes), dim.is_closed))
    return sharding.replace(dim_shardings=tuple(dims))


def _sharding(attr) -> TensorSharding | None:
    return attr if isinstance(attr, TensorSharding) else None


def _update_each(types: Sequence, get: Callable[[int], TensorSharding | None],
                 set_: Callable[[int, TensorSharding], None], table: SymbolTable) -> None:
    for index, type_ in enumerate(types):
        sharding, shape = get(index), _static_shape(type_)
        if sharding is not None and shape is not None:
            set_(index, evenly_sharded(sharding, shape, table))


def _updated_all(values: Sequence[Value], shardings: Sequence[TensorSharding],
                 table: SymbolTable) -> list[TensorSharding]:
    out = []
    for value, sharding in zip(values, shardings, strict=True):
        shape = _static_shape(value.type)
        out.append(evenly_sharded(sharding, shape, table) if shape is not None else sharding)
    return out


def _update_func_shardings(module: Operation, table: SymbolTable) -> None:
    """Each function's argument and result shardings."""
    for func in module.regions[0].blocks[0]:
        if func.name != FUNC_OP:
            continue
        ftype = function_type(func)
        for kind, types, get in (("arg", ftype.inputs, get_arg_attr),
                                 ("result", ftype.results, get_result_attr)):
            updates = {}
            _update_each(types, lambda i, f=func, g=get: _sharding(g(f, i, SHARDING_ATTR)),
                         updates.__setitem__, table)
            if updates:
                set_attrs(func, kind, SHARDING_ATTR, updates)


def _update_call_results(module: Operation, table: SymbolTable) -> None:
    """Each call's result shardings."""
    for call in module.walk(post_order=True):
        per_value = call.attributes.get("sdy.sharding")
        if call.name == CALL_OP and isinstance(per_value, TensorShardingPerValue):
            call.attributes["sdy.sharding"] = TensorShardingPerValue(
                tuple(_updated_all(call.results, per_value, table)))


def _update_edge_owner_shardings(module: Operation, table: SymbolTable) -> None:
    """The block argument and result edge owners of each manual computation (with its
    manual axes erased from the block arguments')."""
    for mc in module.walk():
        if mc.name != "sdy.manual_computation":
            continue
        manual = tuple(mc.attributes.get("manual_axes") or ())
        args = list(mc.regions[0].blocks[0].args)
        local = [erase_manual_axes(s, manual) for s in mc.attributes["in_shardings"]]
        if local:
            set_block_arg_shardings(mc, _updated_all(args, local, table))
        outs = list(mc.attributes["out_shardings"])
        if outs:
            mc.attributes[DATA_FLOW_OPS[mc.name].result_shardings] = \
                TensorShardingPerValue(tuple(_updated_all(mc.results, outs, table)))


@register_pass
@dataclass(frozen=True, slots=True)
class UpdateNonDivisibleInputOutputShardingsPass(Pass):
    """Makes function inputs/outputs (and call results and manual computation edges)
    evenly sharded."""

    NAME = "sdy-update-non-divisible-input-output-shardings"

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        _update_func_shardings(op, table)
        _update_call_results(op, table)
        _update_edge_owner_shardings(op, table)
