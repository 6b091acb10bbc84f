"""Explicit reshards around single-device operations: ops whose result is sharded on a
maximal mesh (``<[], device_ids=[d]>``) run on device ``d`` alone, so their operands are
resharded onto that device (through a replicated tensor on the global mesh) and their
results back (upstream ``processSingleDeviceOperation`` in
``shardy/dialect/sdy/transforms/export/insert_explicit_reshards.cc``)."""
from __future__ import annotations

from collections.abc import Sequence

from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType, TokenType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding
from shardy_ref.ir.verify import op_error
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.propagate.utils import is_equivalent_or_replicated


def is_single_device(sharding: TensorSharding | None, table: SymbolTable) -> bool:
    return sharding is not None and mesh_or_lookup(table, sharding.mesh_or_ref).is_maximal


def global_mesh_name(module: Operation) -> str | None:
    """Upstream ``getGlobalMeshOp``: the first ``sdy.mesh`` with axes that is not maximal."""
    for op in module.regions[0].blocks[0]:
        mesh = op.attributes.get("mesh") if op.name == "sdy.mesh" else None
        if mesh is not None and not mesh.is_maximal and mesh.axes:
            return op.attributes["sym_name"].value
    return None


def _replicated(mesh_name: str, rank: int) -> TensorSharding:
    return TensorSharding.fully_closed(mesh_name, rank)


def _fully_replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or all(not d.axes for d in sharding.dim_shardings)


def get_single_device_mesh_info(op: Operation, out_shardings: Sequence,
                                table: SymbolTable):
    """Upstream ``getSingleDeviceMeshInfo``: the name of the single-device mesh of the
    results; raises if they name different devices."""
    device, single_name = None, None
    for sharding in out_shardings:
        if is_single_device(sharding, table):
            d = mesh_or_lookup(table, sharding.mesh_or_ref).device_ids[0]
            if device is not None and device != d:
                raise op_error(op, "has conflicting single-device result shardings")
            device, single_name = d, sharding.mesh_or_ref
    return single_name


def insert_single_device_operand_reshards(op: Operation, single: TensorSharding,
                                          global_name: str) -> None:
    """Upstream ``insertSingleDeviceOperandReshards``: reshard each tensor operand onto the
    single device, through a replicated tensor on the global mesh unless it is one."""
    for use in list(op.op_operands):
        value = use.value
        if not isinstance(value.type, RankedTensorType):
            continue
        rank = len(value.type.shape)
        source = get_sharding(value) or _replicated(global_name, rank)
        if (is_equivalent_or_replicated(source, single)
                and source.mesh_or_ref == single.mesh_or_ref):
            continue
        new = value
        if not (_fully_replicated(source) and source.mesh_or_ref == global_name):
            new = reshard(new, _replicated(global_name, rank), op).results[0]
        use.set(reshard(new, single, op).results[0])


def get_target_sharding_for_single_device_result(original: TensorSharding | None,
                                                 global_name: str, rank: int,
                                                 table: SymbolTable) -> TensorSharding:
    """Upstream ``getTargetShardingForSingleDeviceResult``: the result's sharding unless it
    is missing or single-device, else replicated on the global mesh."""
    if original is not None and not is_single_device(original, table):
        return original
    return _replicated(global_name, rank)


def insert_single_device_result_reshards(op: Operation, out_shardings: Sequence,
                                         table: SymbolTable, global_name: str) -> None:
    """Upstream ``insertSingleDeviceResultReshards``: reshard each tensor result to a
    replicated tensor on the global mesh, then to its target sharding if that differs."""
    last = op
    for index, result in enumerate(op.results):
        if not isinstance(result.type, RankedTensorType):
            continue
        rank = len(result.type.shape)
        target = get_target_sharding_for_single_device_result(
            out_shardings[index], global_name, rank, table)
        anchor = last.next_op
        replicated = _replicated(global_name, rank)
        to_replicated = reshard(result, replicated, anchor)
        to_replicated.location = op.location
        result.replace_uses_with_if(to_replicated.results[0],
                                    lambda use, r=to_replicated: use.owner is not r)
        last = to_replicated
        if target == replicated:
            continue
        tiled = reshard(to_replicated.results[0], target, anchor)
        tiled.location = op.location
        to_replicated.results[0].replace_uses_with_if(
            tiled.results[0], lambda use, t=tiled: use.owner is not t)
        last = tiled


def update_single_device_op_result_shardings(op: Operation, single: TensorSharding,
                                             global_name: str) -> None:
    """Upstream ``updateSingleDeviceOpResultShardings``: tensor results get the
    single-device sharding, tokens the replicated one on the global mesh."""
    for result in op.results:
        if isinstance(result.type, RankedTensorType):
            set_sharding(result, single)
        elif isinstance(result.type, TokenType):
            set_sharding(result, _replicated(global_name, 0))


def process_single_device_operation(op: Operation, out_shardings: Sequence,
                                    table: SymbolTable, module: Operation) -> None:
    """Upstream ``processSingleDeviceOperation``."""
    single_name = get_single_device_mesh_info(op, out_shardings, table)
    global_name = global_mesh_name(module)
    if global_name is None:
        return
    single = _replicated(single_name, 0)
    insert_single_device_operand_reshards(op, single, global_name)
    insert_single_device_result_reshards(op, out_shardings, table, global_name)
    update_single_device_op_result_shardings(op, single, global_name)
