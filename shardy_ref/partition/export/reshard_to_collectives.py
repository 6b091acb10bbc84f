"""``sdy-reshard-to-collectives``: lower every ``sdy.reshard`` to ``all_slice``,
``collective_permute``, ``all_to_all`` and ``all_gather`` (upstream
``export/reshard_to_collectives.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-reshard-to-collectives). The collectives
themselves are chosen by
:class:`~shardy_ref.partition.export.collective_inserter.CollectiveInserter`.

A reshard stays when ``keep-redundant-reshards`` is set and it changes nothing, when either
side is on a maximal mesh, or when its output is not fully replicated and the meshes differ
beyond device order.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.operation import Operation, OpResult, Value
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.partition.export.collective_inserter import CollectiveInserter
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.utils import is_equivalent_or_replicated


def _bypass_barriers(value: Value) -> Value:
    while isinstance(value, OpResult) and value.op.name == "sdy.propagation_barrier":
        value = value.op.operands[0]
    return value


def _fully_replicated(sharding: TensorSharding) -> bool:
    return all(not d.axes for d in sharding.dim_shardings)


def _maximal(sharding: TensorSharding | None, table: SymbolTable) -> bool:
    if sharding is None:
        return False
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    return mesh is not None and mesh.is_maximal


def _equivalent_on_mesh(a: TensorSharding, b: TensorSharding, table: SymbolTable) -> bool:
    """Upstream ``isEquivalentOnMesh``: the same mesh, or meshes equal up to device order."""
    if a.mesh_or_ref == b.mesh_or_ref:
        return True
    return mesh_or_lookup(table, a.mesh_or_ref).equals(mesh_or_lookup(table, b.mesh_or_ref),
                                                         ignore_device_ids=True)


def _stays(op: Operation, keep_redundant: bool, table: SymbolTable) -> bool:
    """Upstream's dynamic legality of ``sdy.reshard``."""
    inp = get_sharding(_bypass_barriers(op.operands[0]))
    out = op.attributes["sharding"]
    if keep_redundant and is_equivalent_or_replicated(inp, out):
        return True
    if _maximal(inp, table) or _maximal(out, table):
        return True
    if _fully_replicated(out):
        return False
    return inp is not None and not _equivalent_on_mesh(inp, out, table)


def lower_reshard(op: Operation, table: SymbolTable) -> None:
    """Upstream ``ReshardPattern``: replace ``op`` by collectives on its (barrier-bypassed)
    input."""
    out = op.attributes["sharding"]
    value = _bypass_barriers(op.operands[0])
    inp = get_sharding(value) or TensorSharding.fully_open(out.mesh_or_ref, tensor_rank(value.type))
    if inp.rank != out.rank:
        return
    if _fully_replicated(out):
        if _fully_replicated(inp):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
            return
        out = TensorSharding.fully_closed(inp.mesh_or_ref, inp.rank)
    if not _equivalent_on_mesh(inp, out, table):
        return
    mesh = mesh_or_lookup(table, inp.mesh_or_ref)
    result = CollectiveInserter(inp, out, value, mesh, op).insert()
    op.results[0].replace_all_uses_with(result)
    op.erase()


@register_pass
@dataclass(frozen=True, slots=True)
class ReshardToCollectivesPass(Pass):
    """Converts reshard ops to collective ops."""

    NAME = "sdy-reshard-to-collectives"
    ANCHOR = "func.func"
    keep_redundant_reshards: bool = field(default=False, metadata={"help": (
        "Whether to keep redundant reshards instead of removing them")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        module = op.parent_op
        table = symbol_table(module)
        for nested in list(op.walk()):
            if nested.name == "sdy.reshard" and nested.parent is not None and \
                    not _stays(nested, self.keep_redundant_reshards, table):
                lower_reshard(nested, table)
