"""``sdy-resolve-single-device-sharding``: run each op sharded onto a single device (a
maximal mesh) under ``stablehlo.if`` on that device's id, zeros (or tokens) elsewhere, and
all-reduce its tensor results over the global mesh so every device holds them (upstream
``export/resolve_single_device_sharding.cc``)."""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Block, Operation, Region
from shardy_ref.ir.sdy_axes import AxisRef, AxisRefList
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.stablehlo_attrs import StablehloEnum
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.types import IntegerType, RankedTensorType, TokenType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.partition.export.explicit_reshards_util.single_device import (
    global_mesh_name,
    is_single_device,
)
from shardy_ref.partition.export.lowering import SCALAR_I64, Builder, device_id, zero_attr
from shardy_ref.pass_manager import Pass, PassContext, register_pass


def single_device_id(op: Operation, table: SymbolTable) -> int | None:
    """Upstream ``getSingleDeviceIdForOp``: the device of the op's single-device result
    shardings (the others must be replicated)."""
    device, other_sharded = None, False
    for result in op.results:
        if not isinstance(result.type, RankedTensorType):
            continue
        sharding = get_sharding(result)
        if sharding is None:
            continue
        if is_single_device(sharding, table):
            ids = mesh_or_lookup(table, sharding.mesh_or_ref).device_ids
            if ids:
                if device is not None and device != ids[0]:
                    raise PassError(op.location, "single-device results on different devices")
                device = ids[0]
        elif any(d.axes for d in sharding.dim_shardings):
            other_sharded = True
    if device is not None and other_sharded:
        raise PassError(op.location, "a single-device op with a sharded result")
    return device


def create_device_guard(b: Builder, device: int, replica_count: int, partition_count: int):
    """Upstream ``createDeviceGuard``: whether the current device id is ``device``."""
    current = device_id(b, replica_count, partition_count)
    target = b.op("stablehlo.constant", types=[SCALAR_I64], attributes={
        "value": DenseElementsAttr.from_values(SCALAR_I64, [device])}).results[0]
    return b.op("stablehlo.compare", [current, target], [RankedTensorType((), IntegerType(1))],
                {"comparison_direction": StablehloEnum("comparison_direction", "EQ")})


def _fill_true_branch(block: Block, op: Operation, table: SymbolTable) -> list[Operation]:
    """The branch run on the target device: a clone of ``op`` reading past the reshards
    of its operands onto that device; returns those reshards."""
    clone = op.clone()
    clone.attributes.pop("sdy.sharding", None)
    block.append(clone)
    single_reshards = []
    for use in clone.op_operands:
        definer = use.value.defining_op
        if definer is not None and definer.name == "sdy.reshard" and \
                is_single_device(definer.attributes["sharding"], table):
            use.set(definer.operands[0])
            single_reshards.append(definer)
    block.append(Operation("stablehlo.return", list(clone.results), location=op.location))
    return single_reshards


def _fill_false_branch(block: Block, types: list, location) -> None:
    """The branch run on the other devices: zero tensors and new tokens."""
    zeros = []
    for t in types:
        if isinstance(t, RankedTensorType):
            zero = Operation("stablehlo.constant", [], [t], {"value": zero_attr(t)},
                             location=location)
        elif isinstance(t, TokenType):
            zero = Operation("stablehlo.create_token", [], [t], location=location)
        else:
            continue
        block.append(zero)
        zeros.append(zero.results[0])
    block.append(Operation("stablehlo.return", zeros, location=location))


def _all_reduce_results(op: Operation, if_op: Operation, table: SymbolTable,
                        global_name: str) -> None:
    """Replace ``op``'s results with an all-reduce of the ``if``'s over the global mesh
    (tokens directly), which also stands for users' reshards to replicated."""
    mesh = mesh_or_lookup(table, global_name)
    axes = AxisRefList(tuple(AxisRef(a.name) for a in mesh.axes))
    for result, if_result in zip(op.results, if_op.results):
        if not isinstance(if_result.type, RankedTensorType):
            result.replace_all_uses_with(if_result)
            continue
        replicated = TensorSharding.fully_closed(global_name, len(if_result.type.shape))
        reduce = Operation("sdy.all_reduce", [if_result], [if_result.type],
                           {"reduction_axes": axes, "out_sharding": replicated},
                           location=op.location)
        op.parent.insert_before(op, reduce)  # right after the if, before op goes
        for use in list(result.uses):
            user = use.owner
            if user.name == "sdy.reshard" and user.attributes["sharding"] == replicated:
                user.results[0].replace_all_uses_with(reduce.results[0])
                user.erase()
                continue
            use.set(reduce.results[0])


def resolve(op: Operation, table: SymbolTable, global_name: str, replica_count: int,
            partition_count: int) -> None:
    """Upstream ``resolveSingleDeviceOp``."""
    device = single_device_id(op, table)
    b = Builder(op)
    guard = create_device_guard(b, device, replica_count, partition_count)
    types = list(op.result_types)
    if_op = b.op("stablehlo.if", [guard.results[0]], types, regions=[Region(), Region()])
    true_block, false_block = Block(), Block()
    if_op.regions[0].add_block(true_block)
    if_op.regions[1].add_block(false_block)
    single_reshards = _fill_true_branch(true_block, op, table)
    _fill_false_branch(false_block, types, op.location)
    _all_reduce_results(op, if_op, table, global_name)
    op.erase()
    for reshard in single_reshards:
        if not reshard.results[0].has_uses:
            reshard.erase()


@register_pass
@dataclass(frozen=True, slots=True)
class ResolveSingleDeviceShardingPass(Pass):
    """Lowers single-device ops to device-guarded ``stablehlo.if`` plus all-reduces."""

    NAME = "sdy-resolve-single-device-sharding"
    ANCHOR = "func.func"
    replica_count: int = field(default=1, metadata={"help": "Number of replicas per partition"})
    partition_count: int = field(default=1, metadata={"help": "Number of partitions per replica"})

    def run(self, op: Operation, ctx: PassContext) -> None:
        module = op.parent_op
        global_name = global_mesh_name(module)
        if global_name is None:
            return
        table = symbol_table(module)
        single = [nested for nested in op.walk(post_order=True)
                  if not nested.name.startswith("sdy.") and nested is not op
                  and single_device_id(nested, table) is not None]
        for nested in single:
            resolve(nested, table, global_name, self.replica_count, self.partition_count)
