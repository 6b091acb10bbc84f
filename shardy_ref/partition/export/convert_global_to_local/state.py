"""The state shared by the ``sdy-convert-global-to-local`` patterns: options, symbol table,
channel ids, the global type and sharding of every value, and the helpers upstream's
patterns share (``getLocalType``, ``getDeviceId``, ``getDimensionOffset``), after upstream
``export/convert_global_to_local.cc``.

A localizer (registered with :func:`localizer` under upstream op names) is called on an op
whose operands are already local; it leaves local-typed results, in place or through
:meth:`ConversionState.replace`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.sharding_walker import lookup_mesh
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import RankedTensorType, Type
from shardy_ref.ir.value_sharding import get_sharding, value_location
from shardy_ref.partition.export.convert_global_to_local.replica_groups import InvalidAxes
from shardy_ref.partition.export.lowering import (  # shard_index is re-exported for the patterns
    I64,
    SCALAR_I64,
    Builder,
    device_id,
    shard_index,
)

LOCALIZERS: dict[str, Callable[[ConversionState, Operation], None]] = {}

CHANNEL_HANDLE_TYPE = 1  # upstream ``kChannelHandleType`` (device to device)


def localizer(*op_names: str):
    """Register the decorated function as the localizer of ``op_names``."""
    def register(fn):
        for name in op_names:
            LOCALIZERS[name] = fn
        return fn
    return register


@dataclass(slots=True)
class Options:
    """The pass options (upstream ``ConvertGlobalToLocalPass`` in ``passes.td``)."""

    replica_count: int = 1
    partition_count: int = 1
    per_dim_all_gather: bool = False
    enable_rgv3: bool = False
    combine_multi_dimension_reduce_scatter: bool = False


def _location(where):
    if isinstance(where, Operation):
        return where.location
    return value_location(where) if where is not None else None


def i64_constant(b: Builder, value: int) -> Value:
    """A scalar ``tensor<i64>`` constant."""
    return b.op("stablehlo.constant", types=[SCALAR_I64], attributes={
        "value": DenseElementsAttr.from_values(SCALAR_I64, [value])}).results[0]


@dataclass(slots=True)
class ConversionState:
    """Upstream ``ConversionState`` plus the type converter's lookups.

    ``global_types``/``shardings`` remember each value's global type and sharding as they
    were before conversion (upstream still sees the original values during the dialect
    conversion); :meth:`replace` carries them over to replacement values.
    """

    options: Options
    table: SymbolTable
    next_channel: int = 1
    global_types: dict[Value, Type] = field(default_factory=dict)
    shardings: dict[Value, TensorSharding | None] = field(default_factory=dict)

    # -- lookups ----------------------------------------------------------------------
    def mesh(self, sharding_or_mesh_ref) -> Mesh | None:
        """The mesh of a sharding, a mesh name, or an inline mesh (None if unknown)."""
        if isinstance(sharding_or_mesh_ref, TensorSharding):
            sharding_or_mesh_ref = sharding_or_mesh_ref.mesh_or_ref
        if isinstance(sharding_or_mesh_ref, Mesh):
            return sharding_or_mesh_ref
        return lookup_mesh(self.table, sharding_or_mesh_ref)

    def sharding(self, value: Value) -> TensorSharding | None:
        """The sharding ``value`` had before conversion (``getSharding``)."""
        if value in self.shardings:
            return self.shardings[value]
        return get_sharding(value)

    def global_type(self, value: Value) -> Type:
        """The type ``value`` had before conversion."""
        return self.global_types.get(value, value.type)

    def result_sharding(self, op: Operation, i: int) -> TensorSharding | None:
        return self.sharding(op.results[i])

    def local_type(self, type_: Type, sharding: TensorSharding | None, where=None) -> Type:
        """Upstream ``getLocalType``: each dimension divided by its sharded size; ``type_``
        itself when unsharded or the mesh is unknown. ``where`` (a value, or an op) locates
        the error raised for a dimension not divisible by its sharded size."""
        if sharding is None or not isinstance(type_, RankedTensorType):
            return type_
        mesh = self.mesh(sharding)
        if mesh is None:
            return type_
        shape = []
        for dim, (size, dim_sharding) in enumerate(zip(type_.shape, sharding.dim_shardings)):
            count = dim_sharding.sharded_size(mesh)
            if size is not None and size % count:
                raise PassError(_location(where), "Failed to compute local type due to "
                                f"non-divisible sharding: dimension {dim} of {type_} (size "
                                f"{size}) is not divisible by {count}, its sharded size in "
                                f"{sharding}; run sdy-pad-for-divisibility first")
            shape.append(None if size is None else size // count)
        return RankedTensorType(tuple(shape), type_.element_type, type_.encoding)

    def local_value_type(self, value: Value) -> Type:
        """The local type of ``value`` from its global type and sharding."""
        return self.local_type(self.global_type(value), self.sharding(value), value)

    # -- building -----------------------------------------------------------------------
    def builder(self, anchor: Operation) -> Builder:
        return Builder(anchor)

    def device_id(self, b: Builder) -> Value:
        """Upstream ``getDeviceId``: the partition (or replica) id as a scalar i64."""
        return device_id(b, self.options.replica_count, self.options.partition_count)

    def dimension_offset(self, b: Builder, mesh: Mesh, axes, local_dim_size: int) -> Value:
        """Upstream ``getDimensionOffset``: this device's offset along a dimension sharded by
        ``axes``, looked up in a constant per-device table."""
        n = mesh.total_size
        device = self.device_id(b)
        table_type = RankedTensorType((n,), I64)
        table = b.op("stablehlo.constant", types=[table_type], attributes={
            "value": DenseElementsAttr.from_values(
                table_type, [shard_index(d, mesh, axes) * local_dim_size for d in range(n)])})
        one = RankedTensorType((1,), I64)
        piece = b.op("stablehlo.dynamic_slice", [table.results[0], device], [one],
                     {"slice_sizes": DenseArrayAttr(I64, (1,))})
        return b.op("stablehlo.reshape", [piece.results[0]], [SCALAR_I64]).results[0]

    def next_channel_id(self) -> int:
        channel = self.next_channel
        self.next_channel += 1
        return channel

    # -- the walk ------------------------------------------------------------------------
    def record(self, root: Operation) -> None:
        """Remember the global type and sharding of every value under ``root``."""
        for op in root.walk():
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        self.global_types[arg] = arg.type
                        self.shardings[arg] = get_sharding(arg)
            for result in op.results:
                self.global_types[result] = result.type
                self.shardings[result] = get_sharding(result)

    def convert_block(self, block) -> None:
        """Localize each op of ``block`` in order, then the ops nested in it (pre-order, as
        upstream's dialect conversion visits them); ops that localizers build are final."""
        for op in list(block):
            self.convert_op(op)

    def convert_op(self, op: Operation) -> None:
        fn = LOCALIZERS.get(op.name)
        if fn is None:
            if op.name.startswith("sdy.") and op.name != "sdy.return":
                raise PassError(op.location, f"failed to legalize operation '{op.name}' "
                                "that was explicitly marked illegal")
            fn = localize_generic
        try:
            fn(self, op)
        except InvalidAxes as e:
            raise PassError(op.location, f"'{op.name}' op {e}") from None
        if op.parent is None:  # replaced: the localizer converted what it kept
            return
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:  # e.g. a while body's arguments, sharded as its results
                    arg.type = self.local_value_type(arg)
                self.convert_block(block)

    def replace(self, op: Operation, new_values) -> None:
        """Replace ``op``'s results with ``new_values`` (keeping their global type and
        sharding on record) and erase ``op``."""
        new_values = list(new_values)
        for old, new in zip(op.results, new_values):
            self.global_types.setdefault(new, self.global_type(old))
            self.shardings.setdefault(new, self.sharding(old))
        op.replace_all_uses_with(new_values)
        op.erase()


def localize_generic(state: ConversionState, op: Operation) -> None:
    """Upstream ``localizeGenericOp``: the op with local result types (regions kept)."""
    for result in op.results:
        result.type = state.local_value_type(result)
