"""``sdy-per-instruction-partitioning``: partition selected ops one at a time, each wrapped
in an ``sdy.manual_computation`` holding its device-local code, leaving the rest of the
program global (upstream ``export/per_instruction_partitioning.cc``; a debugging and
bisection aid).

Candidates are the ops directly in a function body (not in nested regions) with a sharded
operand or result, minus terminators, sdy collectives and sdy bookkeeping ops, and
``Sharding`` custom calls; they are numbered in program order and the ``filter`` option
picks some (op-name substrings and/or a ``selectLow``/``selectHigh`` number range). Each
picked op is outlined into a private function of a scratch module (operands and results
padded to sizes its shardings divide, the meshes copied), that module runs upstream's
partitioner sub-pipeline by pass name, and the function body becomes the manual
computation's body; padded results are sliced back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import (
    DenseArrayAttr,
    StringAttr,
    TypeAttr,
)
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.func_attrs import set_arg_attr
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import ManualAxes, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.symbols import SymbolTable, unique_symbol_name
from shardy_ref.ir.types import (
    FunctionType,
    IntegerType,
    RankedTensorType,
    Type,
    tensor_rank,
)
from shardy_ref.ir.utils import common_mesh_or_ref, mesh_or_lookup
from shardy_ref.ir.value_sharding import (
    SHARDING_ATTR,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
)
from shardy_ref.ir.verify import verify_module
from shardy_ref.partition.export.explicit_reshards_util.single_device import global_mesh_name
from shardy_ref.partition.export.lowering import Builder, zero_attr
from shardy_ref.pass_manager import (
    Pass,
    PassContext,
    PassManager,
    PipelineElement,
    nested,
    passes,
    register_pass,
)
from shardy_ref.transforms.common.device_counts import partition_count_option, replica_count_option

# ops never partitioned on their own (upstream's skip list: CollectiveOpInterface,
# DataFlowEdgeOp, ManualComputationOp, MeshOp, PropagationBarrierOp, ReturnOp,
# ShardingConstraintOp, ShardingGroupOp)
_SKIPPED = frozenset({
    *(f"sdy.{name}" for name in (
        "all_gather", "all_slice", "all_to_all", "collective_permute", "all_reduce",
        "reduce_scatter", "sharded_to_unreduced", "replicated_to_unreduced")),
    "sdy.data_flow_edge", "sdy.manual_computation", "sdy.mesh", "sdy.propagation_barrier",
    "sdy.return", "sdy.sharding_constraint", "sdy.sharding_group",
})
_SHARDING_CUSTOM_CALLS = frozenset({"Sharding", "mhlo.sharding"})
OUTLINED_NAME = "outlined_op"


# -- selection ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class FilterConfig:
    """Upstream ``FilterConfig``: which candidates (by sequence number and op name) to
    partition; ``select_all`` for an empty filter."""

    select_low: int = -1
    select_high: int = -1
    op_names: tuple[str, ...] = ()
    select_all: bool = False

    @staticmethod
    def parse(text: str) -> FilterConfig:
        """Upstream ``parseFilter``: comma-separated ``selectLow=N``, ``selectHigh=N`` and
        op-name substrings in any order, optionally in one pair of quotes; a malformed
        number is ignored."""
        text = text.strip()
        if not text:
            return FilterConfig(select_all=True)
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1].strip()
        low, high, names = -1, -1, []
        for raw in text.split(","):
            token = raw.strip()
            if not token:
                continue
            key, eq, value = token.partition("=")
            if not eq or key not in ("selectLow", "selectHigh"):
                names.append(token)
            elif (number := _parse_int(value.strip())) is not None:
                low, high = (number, high) if key == "selectLow" else (low, number)
        return FilterConfig(low, high, tuple(names))

    def matches(self, op_name: str, seq_id: int) -> bool:
        """Upstream ``matchesFilter``."""
        if self.select_all:
            return True
        if 0 <= self.select_low and seq_id < self.select_low:
            return False
        if 0 <= self.select_high and seq_id > self.select_high:
            return False
        return not self.op_names or any(name in op_name for name in self.op_names)


def _parse_int(text: str) -> int | None:
    try:
        return int(text, 10)
    except ValueError:
        return None


def _is_sharded(value: Value) -> bool:
    """A sharding with an axis on some dimension (upstream ``!isFullyReplicated()``, which
    ignores replicated and unreduced axes)."""
    sharding = get_sharding(value)
    return sharding is not None and any(d.axes for d in sharding.dim_shardings)


def is_candidate(op: Operation) -> bool:
    """An op that gets a sequence number: not skipped, with a sharded operand or result."""
    if is_terminator(op) or op.name in _SKIPPED:
        return False
    if op.name == "stablehlo.custom_call":
        target = op.attributes.get("call_target_name")
        if getattr(target, "value", None) in _SHARDING_CUSTOM_CALLS:
            return False
    return any(_is_sharded(v) for v in (*op.results, *op.operands))


def candidates(module: Operation) -> list[Operation]:
    """The candidates of every defined function, in sequence-number order."""
    out = []
    for func in module.regions[0].blocks[0]:
        if func.name != "func.func" or not func.regions or func.regions[0].is_empty:
            continue
        for block in func.regions[0].blocks:
            out.extend(op for op in block if is_candidate(op))
    return out


def select_ops(module: Operation, config: FilterConfig) -> list[Operation]:
    return [op for seq_id, op in enumerate(candidates(module))
            if config.matches(op.name, seq_id)]


# -- shardings and padding ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class InstructionShardings:
    """Upstream ``InstructionShardingInfo``: the op's operand and result shardings on the
    target mesh (results without unreduced axes) and every axis they use, in order of
    first use."""

    in_shardings: tuple[TensorSharding, ...]
    out_shardings: tuple[TensorSharding, ...]
    manual_axes: tuple[str, ...]


def instruction_shardings(op: Operation, target: str | Mesh) -> InstructionShardings:
    """Upstream ``getInstructionShardingInfo`` (missing shardings are closed and
    replicated; inline meshes are rebound to the target mesh symbol)."""
    def shardings(values, clear_unreduced: bool) -> tuple[TensorSharding, ...]:
        out = []
        for value in values:
            sharding = (get_sharding(value)
                        or TensorSharding.fully_closed(target, tensor_rank(value.type)))
            if clear_unreduced or (isinstance(target, str) and
                                   isinstance(sharding.mesh_or_ref, Mesh)):
                sharding = sharding.replace(
                    mesh_or_ref=target,
                    unreduced_axes=() if clear_unreduced else sharding.unreduced_axes)
            out.append(sharding)
        return tuple(out)

    ins, outs = shardings(op.operands, False), shardings(op.results, True)
    axes: dict[str, None] = {}
    for sharding in (*ins, *outs):
        for axis in sharding.all_axes():
            axes.setdefault(axis.name, None)
    return InstructionShardings(ins, outs, tuple(axes))


def divisible_padded_type(type_: Type, sharding: TensorSharding, table: SymbolTable,
                          allowed_axes=None) -> Type:
    """Upstream ``getDivisiblePaddedType``: ``type_`` with each dimension rounded up to a
    multiple of its shard count (counting only ``allowed_axes`` if given)."""
    if not isinstance(type_, RankedTensorType) or \
            not any(d.axes for d in sharding.dim_shardings):
        return type_
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    if mesh is None:
        return type_
    shape = []
    for size, dim in zip(type_.shape, sharding.dim_shardings, strict=True):
        count = 1
        for axis in dim.axes:
            if allowed_axes is None or axis.name in allowed_axes:
                count *= axis.size(mesh)
        shape.append(size if size is None or size % count == 0 else size + count - size % count)
    return type_ if tuple(shape) == type_.shape else type_.replace(shape=tuple(shape))


def padded_types(op: Operation, info: InstructionShardings,
                 table: SymbolTable) -> tuple[list[Type], list[Type]]:
    """The padded operand and result types; an ``sdy.reshard`` pads both to the larger of
    its in- and out-padded shapes (upstream ``getUnifiedPaddedTypeForReshard``)."""
    axes = set(info.manual_axes)
    ins = [divisible_padded_type(v.type, s, table, axes)
           for v, s in zip(op.operands, info.in_shardings, strict=True)]
    outs = [divisible_padded_type(v.type, s, table, axes)
            for v, s in zip(op.results, info.out_shardings, strict=True)]
    if op.name == "sdy.reshard" and (ins[0] != op.operands[0].type or
                                     outs[0] != op.operands[0].type):
        shape = tuple(max(a, b) for a, b in zip(ins[0].shape, outs[0].shape, strict=True))
        unified = op.operands[0].type.replace(shape=shape)
        return [unified], [unified]
    return ins, outs


def _i64s(values) -> DenseArrayAttr:
    return DenseArrayAttr(IntegerType(64), tuple(values))


def pad_operands(b: Builder, op: Operation, info: InstructionShardings,
                 arg_types: list[Type]) -> list[Value]:
    """Upstream ``padIndivisibleOperands``: each operand whose padded type differs is padded
    with zeros at the high end, the pad carrying the operand's sharding."""
    out = []
    for operand, sharding, padded in zip(op.operands, info.in_shardings, arg_types,
                                         strict=True):
        if padded == operand.type:
            out.append(operand)
            continue
        scalar = RankedTensorType((), padded.element_type)
        zero = b.op("stablehlo.constant", types=[scalar],
                    attributes={"value": zero_attr(scalar)}).results[0]
        high = [p - s for p, s in zip(padded.shape, operand.type.shape, strict=True)]
        pad = b.op("stablehlo.pad", [operand, zero], [padded], {
            "edge_padding_low": _i64s([0] * len(high)), "edge_padding_high": _i64s(high),
            "interior_padding": _i64s([0] * len(high))}).results[0]
        set_sharding(pad, sharding)
        out.append(pad)
    return out


# -- outlining and wrapping --------------------------------------------------------------

def mesh_symbol(op: Operation, module: Operation, mesh_or_ref: str | Mesh,
                table: SymbolTable) -> str:
    """Upstream ``getOrCreateMeshSymbol``: the name of the ``sdy.mesh`` holding
    ``mesh_or_ref`` (the global mesh first unless it is maximal), else a new ``@mesh``
    (uniqued) at the start of the module."""
    if isinstance(mesh_or_ref, str):
        return mesh_or_ref
    body = module.regions[0].blocks[0]
    meshes = [m for m in body if m.name == "sdy.mesh"]
    global_name = global_mesh_name(module)
    if not mesh_or_ref.is_maximal and global_name is not None and \
            table.lookup(global_name).attributes["mesh"] == mesh_or_ref:
        return global_name
    for mesh_op in meshes:
        if mesh_op.attributes["mesh"] == mesh_or_ref:
            return mesh_op.attributes["sym_name"].value
    name = unique_symbol_name("mesh", table.symbols)
    new = Operation("sdy.mesh", attributes={"sym_name": StringAttr(name), "mesh": mesh_or_ref},
                    location=op.location)
    if body.first_op is None:
        body.append(new)
    else:
        body.insert_before(body.first_op, new)
    table.symbols[name] = new
    return name


def _adjust_padded_attributes(clone: Operation, result: int, original: RankedTensorType,
                              padded: RankedTensorType) -> None:
    """A padded ``stablehlo.slice`` or ``stablehlo.pad`` result: extend its limits or high
    padding by the padding (upstream ``outlineInstruction``)."""
    extra = [p - s for p, s in zip(padded.shape, original.shape, strict=True)]
    attr = {"stablehlo.slice": "limit_indices", "stablehlo.pad": "edge_padding_high"}.get(
        clone.name)
    if attr is not None:
        clone.attributes[attr] = _i64s(v + e for v, e in zip(clone.attributes[attr], extra))
    clone.results[result].type = padded


def outline(op: Operation, module: Operation, info: InstructionShardings,
            arg_types: list[Type], result_types: list[Type]) -> tuple[Operation, Operation]:
    """Upstream ``outlineInstruction``: a scratch module with the module's meshes and a
    private ``@outlined_op`` whose body is a clone of ``op`` on the padded types."""
    body = Block()
    scratch = Operation("builtin.module", regions=[Region([body])], location=op.location)
    for mesh_op in module.regions[0].blocks[0]:
        if mesh_op.name == "sdy.mesh":
            body.append(mesh_op.clone())
    func = Operation("func.func", attributes={
        "sym_name": StringAttr(OUTLINED_NAME),
        "function_type": TypeAttr(FunctionType(tuple(arg_types), tuple(result_types))),
        "sym_visibility": StringAttr("private")}, location=op.location)
    body.append(func)
    for index, sharding in enumerate(info.in_shardings):
        set_arg_attr(func, index, SHARDING_ATTR, sharding)
    for index, sharding in enumerate(info.out_shardings):
        set_func_result_sharding(func, index, sharding)
    entry = func.add_region(Region()).add_block(Block(arg_types))
    clone = op.clone()
    for index, arg in enumerate(entry.args):
        clone.set_operand(index, arg)
    entry.append(clone)
    for index, (result, padded) in enumerate(zip(op.results, result_types, strict=True)):
        if result.type != padded:
            _adjust_padded_attributes(clone, index, result.type, padded)
    entry.append(Operation("func.return", list(clone.results), location=op.location))
    return scratch, func


def partitioner_pipeline(enable_halo_exchange: bool, replica_count: int,
                         partition_count: int) -> list[PipelineElement]:
    """Upstream ``runPartitionerPipeline``'s passes, by name."""
    counts = f"replica-count={replica_count} partition-count={partition_count}"
    halo = f"enable-halo-exchange={str(enable_halo_exchange).lower()}"
    return [
        *passes(("sdy-resolve-permutation-factors", f"{halo} {counts}")),
        nested("func.func", ("sdy-insert-explicit-reshards", "enable-full-version=true"),
               "sdy-reshard-to-collectives", "sdy-pad-for-divisibility"),
        *passes(("sdy-convert-global-to-local", counts), "sdy-drop-sharding-and-mesh"),
    ]


def wrap(op: Operation, b: Builder, func: Operation, info: InstructionShardings,
         operands: list[Value], result_types: list[Type]) -> Operation:
    """Upstream ``createManualComputationFromFunc``: a manual computation over all the
    axes the op uses, whose body is the partitioned function's (``sdy.return`` ends it)."""
    manual = b.op("sdy.manual_computation", operands, result_types, {
        "in_shardings": TensorShardingPerValue(info.in_shardings),
        "out_shardings": TensorShardingPerValue(info.out_shardings),
        "manual_axes": ManualAxes(info.manual_axes)}, regions=[Region()])
    for block in func.regions[0].take_blocks():
        manual.regions[0].add_block(block)
        term = block.last_op
        if term is not None and term.name != "sdy.return":
            block.append(Operation("sdy.return", list(term.operands), location=term.location))
            term.erase()
    return manual


def slice_results(op: Operation, b: Builder, manual: Operation,
                  info: InstructionShardings) -> None:
    """Upstream ``sliceIndivisibleResults``: padded results are sliced back to their
    global shape (the slice keeps the result sharding); uses move to the new values."""
    for result, new, sharding in zip(op.results, manual.results, info.out_shardings,
                                     strict=True):
        if new.type != result.type:
            rank = len(result.type.shape)
            new = b.op("stablehlo.slice", [new], [result.type], {
                "start_indices": _i64s([0] * rank),
                "limit_indices": _i64s(result.type.shape),
                "strides": _i64s([1] * rank)}).results[0]
            set_sharding(new, sharding)
        result.replace_all_uses_with(new)


# -- the pass ----------------------------------------------------------------------------

@register_pass
@dataclass(frozen=True, slots=True)
class PerInstructionPartitioningPass(Pass):
    """Selectively extracts target instructions, runs the partitioner pipeline on them to
    generate device-local code, and wraps them in ``sdy.manual_computation``
    (``export/passes.td``)."""

    NAME = "sdy-per-instruction-partitioning"
    filter: str = field(default="", metadata={"help": (
        "Ops to partition: empty (all), op name substrings ('dot, pad'), "
        "'selectLow=0, selectHigh=10'")})
    enable_halo_exchange: bool = field(default=True, metadata={"help": (
        "Implement halo exchange logic for windowed operations inside the sub-pipeline")})
    replica_count: int = replica_count_option()
    partition_count: int = partition_count_option()

    def run(self, op: Operation, ctx: PassContext) -> None:
        for target in select_ops(op, FilterConfig.parse(self.filter)):
            self.partition(target, op, ctx)

    def partition(self, op: Operation, module: Operation, ctx: PassContext) -> None:
        """Upstream ``partitionAndWrapInstruction``."""
        table = SymbolTable(module)
        shardings = [get_sharding(v) for v in (*op.operands, *op.results)]
        mesh_or_ref = common_mesh_or_ref([s for s in shardings if s is not None], table)
        if mesh_or_ref is None:
            raise PassError(op.location, f"cannot partition '{op.name}' on its own: its "
                            "operands and results are not sharded on one common mesh")
        info = instruction_shardings(op, mesh_symbol(op, module, mesh_or_ref, table))
        arg_types, result_types = padded_types(op, info, table)
        b = Builder(op)
        operands = pad_operands(b, op, info, arg_types)
        scratch, func = outline(op, module, info, arg_types, result_types)
        pipeline = partitioner_pipeline(self.enable_halo_exchange, self.replica_count,
                                        self.partition_count)
        PassManager(pipeline, verify=verify_module).run(scratch, ctx)
        manual = wrap(op, b, func, info, operands, result_types)
        slice_results(op, b, manual, info)
        op.erase()
