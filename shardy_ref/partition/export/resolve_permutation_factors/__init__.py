"""``sdy-resolve-permutation-factors``: make ops sharded along permutation factors
computable shard by shard (upstream ``export/resolve_permutation_factors.cc``, pass
``ShardyResolvePermutationFactorsPass`` in ``export/passes.td``).

With ``enable-halo-exchange`` (the default) pads, slices and reverses exchange halos
between neighbour shards (:mod:`.pad_slice`, :mod:`.reverse`) and reshapes with
indivisible splits do too (:mod:`.reshape`); whatever halo exchange cannot do, and every
other op with a sharded permutation factor, is resolved by resharding those factors to
replicated (:mod:`.replicate`); so is a convolution's window-size factor when its windows
do not tile the input (:mod:`.convolution`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.stablehlo_attrs import ChannelHandle
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.partition.export.resolve_permutation_factors.convolution import handle_convolution
from shardy_ref.partition.export.resolve_permutation_factors.emit import State
from shardy_ref.partition.export.resolve_permutation_factors.pad_slice import (
    handle_pad,
    handle_slice,
)
from shardy_ref.partition.export.resolve_permutation_factors.replicate import (
    replicate_permutation_factors,
)
from shardy_ref.partition.export.resolve_permutation_factors.reshape import handle_reshape
from shardy_ref.partition.export.resolve_permutation_factors.reverse import handle_reverse
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule
from shardy_ref.transforms.common.device_counts import partition_count_option, replica_count_option

HALO_HANDLERS = {
    "stablehlo.pad": handle_pad,
    "stablehlo.reverse": handle_reverse,
    "stablehlo.slice": handle_slice,
}


def _next_channel_id(module: Operation) -> int:
    """Upstream ``getNextChannelId``: one more than the largest channel handle in use."""
    handles = [0]
    for op in module.walk():
        attr = op.attributes.get("channel_handle")
        if isinstance(attr, ChannelHandle):
            handles.append(attr.handle)
    return max(handles) + 1


def resolve_op(op: Operation, halo: bool, state: State, rule=None) -> None:
    """One op of the walk: reshapes always, pads/slices/reverses by halo exchange when
    enabled and possible, else permutation factors replicated. ``rule`` is the op's
    sharding rule as it was before the walk rewrote its operands (a concatenate of slices
    has permutation factors only while its operands are slices)."""
    if op.name == "stablehlo.reshape":
        handle_reshape(op, halo, state)
        return
    if rule is None:
        rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    if rule is None or rule.is_custom_rule:
        return
    if op.name == "stablehlo.convolution":
        handle_convolution(op, rule, state)
    factors = permutation_factors(op, rule)
    if not factors:
        return
    handler = HALO_HANDLERS.get(op.name)
    if halo and handler is not None and handler(op, state):
        return
    replicate_permutation_factors(op, rule, factors, state)


def permutation_factors(op: Operation, rule) -> list[int]:
    """The rule's permutation factors, and for a pad also every padded dim (a factor per
    dim): the pad rule only marks dims whose size changes, but ``low = 1, high = -1`` moves
    data between shards too (upstream leaves such a pad to fail in convert-global-to-local)."""
    factors = set(rule.permutation_factors)
    if op.name == "stablehlo.pad":
        attrs = op.attributes
        factors.update(d for d, padding in enumerate(zip(
            attrs["edge_padding_low"].value, attrs["edge_padding_high"].value,
            attrs["interior_padding"].value, strict=True)) if any(padding))
    return sorted(factors)


@register_pass
@dataclass(frozen=True, slots=True)
class ResolvePermutationFactorsPass(Pass):
    """Resolves shardings along permutation factors by halo exchange or replication."""

    NAME = "sdy-resolve-permutation-factors"
    enable_halo_exchange: bool = field(
        default=True, metadata={"help": "Implement halo exchange logic for windowed operations"})
    replica_count: int = replica_count_option()
    partition_count: int = partition_count_option()

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = SymbolTable(op)
        state = State(op, table, self.replica_count, self.partition_count,
                      _next_channel_id(op))
        for child in op.regions[0].blocks[0]:
            if child.name == "sdy.mesh":
                state.mesh_names.setdefault(child.attributes["mesh"], child.attributes[
                    "sym_name"].value)
        ops = [nested for nested in op.walk(post_order=True)
               if nested.name.startswith("stablehlo.") and not is_terminator(nested)]
        rules = {nested: get_or_create_sharding_rule(nested, False,
                                                     set_sharding_rule_on_op=False)
                 for nested in ops if nested.name != "stablehlo.reshape"}
        for nested in ops:
            if nested.parent is not None:
                resolve_op(nested, self.enable_halo_exchange, state, rules.get(nested))
