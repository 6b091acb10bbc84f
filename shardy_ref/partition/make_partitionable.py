"""``sdy-ref-make-partitionable``: our pass of ``sdy-ref-per-device-pipeline``, after
``sdy-resolve-permutation-factors`` and before ``sdy-reshard-to-collectives`` (which lowers
the reshards it inserts). It reshards around the ops that the later passes could only
compute wrongly from their shardings, so that every op becomes a correct per-device
computation:

- an op with no sharding rule (``stablehlo.map``, ``rng``, ``broadcast``, the batch norms
  other than inference, ``custom_call`` of an unknown target, ``composite``, the
  dynamic-shape ops, ``if``...) whose values are sharded: upstream's propagation does
  not pass through it, so nothing ties its operands' shardings to its results', and
  ``sdy-convert-global-to-local`` then runs the global op on local shards. It runs on
  whole values instead: its sharded operands are resharded to replicated, its sharded
  results computed replicated and resharded back (a local slice, no communication); an
  ``if``'s regions return their values replicated too;
- ``stablehlo.rng_bit_generator``: the rule lets its output stay sharded, but a device
  generating its shard alone draws other numbers than the global op; it draws the whole
  output and keeps its shard;
- ``stablehlo.dynamic_update_slice`` with constant start indices: the rule lets the
  update stay sharded along a dimension it only partly covers, where each device would
  need other devices' rows; the update is gathered there;
- a convolution with feature or batch groups whose feature dimension is sharded
  indivisibly: padding would change the groups; the factor is replicated;
- a scatter whose update windows span a dimension it indexes: StableHLO writes the
  fitting elements of a window at any start, so the dimension is replicated;
- a ``broadcast_in_dim`` expanding an operand dimension of size 1 that is sharded: the
  dimension is gathered first;
- a result dimension of size 1 that is sharded (propagation may shard it through a
  factor of another op): it is computed whole;
- ``stablehlo.get_dimension_size`` of a static dimension is its (global) size, a
  constant: a device asking its shard would get the local size.

Each of these is a deviation from upstream Shardy, whose passes leave such ops to XLA's
SPMD partitioner or emit a wrong per-device program; ``tests/known_differences.md`` lists
them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.types import RankedTensorType
from shardy_ref.ir.utils import mesh_or_lookup
from shardy_ref.ir.value_sharding import get_sharding, set_sharding, shardable_value
from shardy_ref.partition.export.explicit_reshards_util.factor_reshards import (
    is_dim_sharded,
    replicate_all,
    replicate_factors,
    without_dim_axes,
)
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import reshard
from shardy_ref.partition.export.lowering import Builder
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule

# Ops without a sharding rule that the later passes still partition correctly: constants
# and iotas are sliced or offset per device, data-flow ops and calls had their edges
# resharded by sdy-insert-explicit-reshards, manual computations are local by design,
# and the rest hold no tensor data.
PARTITIONED_WITHOUT_RULE = frozenset({
    "stablehlo.constant", "stablehlo.iota", "stablehlo.while", "stablehlo.case",
    "stablehlo.optimization_barrier", "func.call", "stablehlo.partition_id",
    "stablehlo.replica_id", "stablehlo.create_token", "stablehlo.after_all",
    "stablehlo.tuple", "stablehlo.get_tuple_element",
})

Fix = Callable[[Operation, SymbolTable], None]
FIXES: dict[str, Fix] = {}


def fix(*names: str):
    """Register the decorated function as what the pass does to ops named ``names``."""
    def register(fn: Fix) -> Fix:
        for name in names:
            FIXES[name] = fn
        return fn
    return register


def make_partitionable(op: Operation, table: SymbolTable) -> None:
    """Apply the fix of ``op``: its own, or for an op with tensors and no sharding rule,
    :func:`replicate_rule_less`; then :func:`whole_unit_result_dims`."""
    own = FIXES.get(op.name)
    if own is not None:
        own(op, table)
    elif op.name.startswith("sdy.") or op.name in PARTITIONED_WITHOUT_RULE \
            or is_terminator(op) or not _has_tensors(op):
        return
    elif get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False) is None:
        replicate_rule_less(op, table)
        return
    if op.parent is not None:
        whole_unit_result_dims(op, table)


def whole_unit_result_dims(op: Operation, table: SymbolTable) -> None:
    """A result dimension of size 1 keeps no axes (nor do the operand dimensions of its
    factors): sharded, it is padded to the axes' size and only the first device holds its
    element, which ops that shape their result (a convolution whose output has one
    window, a broadcast) do not compute; replicating one element costs nothing."""
    rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    if rule is None or rule.is_custom_rule:
        return
    factors = set()
    for result, mapping in zip(op.results, rule.result_mappings, strict=True):
        sharding = get_sharding(result)
        shape = getattr(result.type, "shape", None)
        if sharding is None or shape is None:
            continue
        for d, n in enumerate(shape):
            if n == 1 and sharding.dim_shardings[d].axes:
                factors.update(mapping.dim_mappings[d].factor_indices)
    if factors:
        replicate_factors(op, rule, sorted(factors), table)


def _has_tensors(op: Operation) -> bool:
    return any(isinstance(v.type, RankedTensorType) for v in (*op.operands, *op.results))


def replicate_rule_less(op: Operation, table: SymbolTable) -> None:
    """Whole values in and out (see the module docstring); an op with regions returns
    replicated values from them, as its results now are."""
    replicate_all(op)
    for region in op.regions:
        for block in region.blocks:
            terminator = block.terminator
            if terminator is None or len(terminator.operands) != len(op.results):
                continue
            for i, value in enumerate(list(terminator.operands)):
                sharding = get_sharding(value)
                if is_dim_sharded(sharding):
                    target = get_sharding(op.results[i]) or without_dim_axes(sharding)
                    terminator.set_operand(i, reshard(value, target, terminator).results[0])


@fix("stablehlo.rng_bit_generator")
def whole_random_bits(op: Operation, table: SymbolTable) -> None:
    rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    if rule is not None:
        output = {f for dim in rule.result_mappings[1].dim_mappings
                  for f in dim.factor_indices}
        replicate_factors(op, rule, sorted(output), table)


@fix("stablehlo.dynamic_update_slice")
def whole_update_rows(op: Operation, table: SymbolTable) -> None:
    """Replicate the update's own factors (the dimensions it covers only in part)."""
    rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    if rule is None:
        return
    operand_factors = {f for dim in rule.operand_mappings[0].dim_mappings
                       for f in dim.factor_indices}
    own = {f for dim in rule.operand_mappings[1].dim_mappings for f in dim.factor_indices
           if f not in operand_factors}
    replicate_factors(op, rule, sorted(own), table)


@fix("stablehlo.convolution")
def divisible_feature_groups(op: Operation, table: SymbolTable) -> None:
    """A convolution with feature or batch groups keeps the factors of its feature and
    batch dimensions sharded only where they divide them: padding a grouped dimension
    would change the groups (``sdy-pad-for-divisibility`` cannot)."""
    groups = (op.attributes["feature_group_count"].value,
              op.attributes["batch_group_count"].value)
    if groups == (1, 1):
        return
    rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    nums = op.attributes["dimension_numbers"]
    dims = [(0, nums.input_feature_dimension), (0, nums.input_batch_dimension),
            (1, nums.kernel_output_feature_dimension), (-1, nums.output_feature_dimension)]
    factors = set()
    for index, dim in dims:
        value = op.results[0] if index < 0 else op.operands[index]
        mapping = (rule.result_mappings[0] if index < 0 else rule.operand_mappings[index])
        if not divides(get_sharding(value), value.type.shape[dim], dim, table):
            factors.update(mapping.dim_mappings[dim].factor_indices)
    if factors:
        replicate_factors(op, rule, sorted(factors), table)


def divides(sharding, size: int, dim: int, table: SymbolTable) -> bool:
    """Whether ``sharding`` cuts dimension ``dim`` of ``size`` into equal shards."""
    if sharding is None or not sharding.dim_shardings[dim].axes:
        return True
    mesh = mesh_or_lookup(table, sharding.mesh_or_ref)
    return mesh is None or size % sharding.dim_shardings[dim].sharded_size(mesh) == 0


@fix("stablehlo.scatter")
def whole_indexed_windows(op: Operation, table: SymbolTable) -> None:
    """A scatter whose update windows span an operand dimension it indexes keeps that
    dimension's factor replicated. The rule shares the factor between the operand and
    the window (a pass-through: under XLA's semantics, a window that does not fit is
    skipped, so its start is 0 and each device's pieces line up), but StableHLO's scatter
    updates the elements of such a window that do fit, at any start: they land on other
    devices' shards."""
    rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
    if rule is None:
        return
    dn = op.attributes["scatter_dimension_numbers"]
    n = (op.num_operands - 1) // 2
    operand, updates = op.operands[0].type.shape, op.operands[n + 1].type.shape
    skipped = set(dn.inserted_window_dims) | set(dn.input_batching_dims)
    windows = iter(dn.update_window_dims)
    factors = []
    for d in range(len(operand)):
        if d in skipped:
            continue
        window = next(windows)
        if d in dn.scatter_dims_to_operand_dims and updates[window] == operand[d]:
            factors.extend(rule.operand_mappings[0].dim_mappings[d].factor_indices)
    if factors:
        replicate_factors(op, rule, factors, table)


@fix("stablehlo.broadcast_in_dim")
def whole_expanded_dims(op: Operation, table: SymbolTable) -> None:
    """An operand dimension of size 1 that the broadcast expands keeps no axes: sharded,
    it is padded to the axes' size (only the first device holds its element), and the
    broadcast no longer fits (its rule gives the dimension a size-1 factor of its own,
    which explicit reshards leave sharded)."""
    operand = op.operands[0]
    sharding = get_sharding(operand)
    if sharding is None:
        return
    out = op.results[0].type.shape
    dims = [d for d, (n, r) in enumerate(zip(operand.type.shape,
                                              op.attributes["broadcast_dimensions"]))
            if n == 1 and out[r] != 1 and sharding.dim_shardings[d].axes]
    if dims:
        op.set_operand(0, reshard(operand, without_dim_axes(sharding, dims), op).results[0])


@fix("stablehlo.get_dimension_size")
def fold_dimension_size(op: Operation, table: SymbolTable) -> None:
    """A static dimension's size as a constant (what MLIR's folder gives)."""
    size = op.operands[0].type.shape[op.attributes["dimension"].value]
    if size is None:
        replicate_all(op)
        return
    t = op.results[0].type
    const = Builder(op).op("stablehlo.constant", types=[t], attributes={
        "value": DenseElementsAttr.from_values(t, [size])})
    op.replace_all_uses_with(const.results)
    op.erase()


# sdy ops without side effects whose results may be left unused by canonicalization
COLLECTIVES = frozenset({"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
                         "sdy.collective_permute", "sdy.all_reduce", "sdy.reduce_scatter",
                         "sdy.replicated_to_unreduced", "sdy.sharded_to_unreduced",
                         "sdy.reshard"})


def erase_dead_collectives(root: Operation) -> None:
    """Erase the unused sdy collectives (as XLA's dead code elimination would), last
    first so that a chain goes at once: ``sdy-propagation-pipeline``'s canonicalizer folds
    ``all_reduce(replicated_to_unreduced(x))`` to ``x`` and leaves the
    ``replicated_to_unreduced``, whose operand ``sdy-reshard-to-collectives`` may then
    replace by an unsharded one that no collective accepts (real Shardy fails there)."""
    for op in reversed(list(root.walk())):
        if op.name in COLLECTIVES and op.parent is not None \
                and not any(r.has_uses for r in op.results):
            op.erase()


def name_replicated_sources(root: Operation) -> None:
    """An ``sdy.reshard`` to a replicated sharding of a value without one is a no-op that
    ``sdy-reshard-to-collectives`` replaces by the value; a collective using it would then
    have an operand without a sharding, which no collective accepts (real Shardy fails
    there). The value gets the reshard's sharding, which means the same."""
    for op in root.walk():
        if op.name != "sdy.reshard" or not any(u.name in COLLECTIVES
                                               for u in op.results[0].users):
            continue
        source, target = op.operands[0], op.attributes["sharding"]
        if get_sharding(source) is None and not is_dim_sharded(target) \
                and not target.unreduced_axes and shardable_value(source) is source:
            set_sharding(source, target)


@register_pass
@dataclass(frozen=True, slots=True)
class MakePartitionablePass(Pass):
    """Reshards around the ops whose per-device computation their shardings do not give
    (see the module docstring)."""

    NAME = "sdy-ref-make-partitionable"

    def run(self, op: Operation, ctx: PassContext) -> None:
        table = symbol_table(op)
        erase_dead_collectives(op)
        name_replicated_sources(op)
        for nested in list(op.walk()):
            if nested.parent is not None and nested is not op:
                make_partitionable(nested, table)
