"""``sdy-convert-global-to-local``: the pass, its options and the function signatures
(upstream ``ConvertGlobalToLocalPass``, ``FuncOpSignaturePattern`` and ``ReturnOpPattern`` in
``export/convert_global_to_local.cc``). Every value's type becomes its local (per-device)
type under its sharding; the sdy collectives and some StableHLO ops are rewritten by the
localizers of :mod:`.collectives`, :mod:`.computations` and :mod:`.stablehlo_ops`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.func_attrs import function_type, set_function_type
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.stablehlo_attrs import ChannelHandle
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.value_sharding import get_func_result_sharding
from shardy_ref.partition.export.convert_global_to_local import (  # noqa: F401 (they register)
    collectives,
    computations,
    stablehlo_ops,
)
from shardy_ref.partition.export.convert_global_to_local.state import ConversionState, Options
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.transforms.common.device_counts import partition_count_option, replica_count_option


def next_channel_id(module: Operation) -> int:
    """Upstream ``getNextChannelId``: one past the largest ``channel_handle`` in use."""
    highest = 0
    for op in module.walk():
        handle = op.attributes.get("channel_handle")
        if isinstance(handle, ChannelHandle):
            highest = max(highest, handle.handle)
    return highest + 1


def convert_func(state: ConversionState, func: Operation) -> None:
    """Upstream ``FuncOpSignaturePattern``: local argument and result types, then the body."""
    ftype = function_type(func)
    body = func.regions[0].blocks[0] if func.regions and func.regions[0].blocks else None
    inputs = list(ftype.inputs)
    if body is not None:
        for arg in body.args:
            arg.type = state.local_value_type(arg)
        inputs = [arg.type for arg in body.args]
    results = [state.local_type(t, get_func_result_sharding(func, i), func)
               for i, t in enumerate(ftype.results)]
    set_function_type(func, ftype.replace(inputs=tuple(inputs), results=tuple(results)))
    if body is not None:
        state.convert_block(body)


@register_pass
@dataclass(frozen=True, slots=True)
class ConvertGlobalToLocalPass(Pass):
    """Rewrites a sharded program with global shapes into the per-device program with local
    shapes, lowering sdy collectives to StableHLO collectives. See
    ``shardy/dialect/sdy/transforms/export/passes.td`` (``ConvertGlobalToLocalPass``)."""

    NAME = "sdy-convert-global-to-local"
    per_dim_all_gather: bool = field(default=False, metadata={"help": (
        "Keep per-dimension all-gather without combining them into a single all-gather")})
    combine_multi_dimension_reduce_scatter: bool = field(default=False, metadata={"help": (
        "Combine multi-dimension reduce-scatter into a single reduce-scatter")})
    enable_rgv3: bool = field(default=False, metadata={"help": (
        "Use StableHLO ReplicaGroupV3 (mesh-axes based) for collectives")})
    replica_count: int = replica_count_option()
    partition_count: int = partition_count_option()

    def run(self, op: Operation, ctx: PassContext) -> None:
        if self.replica_count > 1 and self.partition_count > 1:
            raise PassError(op.location, "Shardy partitioner convert_global_to_local does not "
                            "support both replica_count > 1 and partition_count > 1 yet.")
        options = Options(self.replica_count, self.partition_count, self.per_dim_all_gather,
                          self.enable_rgv3, self.combine_multi_dimension_reduce_scatter)
        state = ConversionState(options, SymbolTable(op), next_channel_id(op))
        state.record(op)
        for child in list(op.regions[0].blocks[0]):
            if child.name == "func.func":
                convert_func(state, child)
            elif child.name != "sdy.mesh":
                state.convert_op(child)
