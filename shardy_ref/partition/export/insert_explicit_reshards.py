"""``sdy-insert-explicit-reshards``: make the partitioning explicit where operand and result
shardings of an op do not fit its sharding rule (upstream
``export/insert_explicit_reshards.cc`` and ``explicit_reshards_util.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-insert-explicit-reshards).

The full version (``enable-full-version=true``; always for calls and for concatenates whose
operands are sharded unlike the result) reshards operands and results to common axes per
factor (:mod:`shardy_ref.partition.export.explicit_reshards_util.common_axes`) and
all-reduces sharded reduction factors.
The minimal version, which ``sdy-propagation-pipeline`` runs, only handles unreduced axes
(all-reduce where a user needs them reduced, ``replicated_to_unreduced`` /
``sharded_to_unreduced`` where it needs more), reduction factors of results that keep
unreduced axes, and the dot whose result conflicts with its operands in one factor.
Ops sharded onto a single device are handled by
:mod:`shardy_ref.partition.export.explicit_reshards_util.single_device`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from shardy_ref.ir.axis_lists import axis_set_diff, sort_and_merge_axes
from shardy_ref.ir.call_graph import CALL_OP, callee_name
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.func_attrs import function_type
from shardy_ref.ir.op_traits import is_terminator
from shardy_ref.ir.operation import BlockArgument, Operation, OpOperand, Value
from shardy_ref.ir.sdy_axes import AxisRefList, Mesh
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable, symbol_table
from shardy_ref.ir.types import tensor_rank
from shardy_ref.ir.utils import (
    func_arg_shardings,
    mesh_or_lookup,
    non_maximal_mesh_or_ref,
)
from shardy_ref.ir.value_sharding import (
    DATA_FLOW_OPS,
    add_free_axes,
    erase_manual_axes,
    get_func_result_sharding,
    get_sharding,
    set_sharding,
)
from shardy_ref.ir.verify import op_error
from shardy_ref.ir.verify.sharding import sharding_bypassing_barriers
from shardy_ref.partition.export.explicit_reshards_util.common_axes import find_common_axes
from shardy_ref.partition.export.explicit_reshards_util.factor_reshards import (
    common_mesh_name,
    reshard_tensors,
)
from shardy_ref.partition.export.explicit_reshards_util.single_device import (
    process_single_device_operation,
)
from shardy_ref.partition.export.explicit_reshards_util.unreduced_collectives import (
    all_reduce_attrs,
    collective,
    insert_all_reduce_if_unreduced_to_replicated,
    insert_unreduced_collectives,
    make_explicit_reduction_operand_partial,
    reshard,
)
from shardy_ref.partition.export.lowering import common_reduction_op
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.rules.registry import get_or_create_sharding_rule
from shardy_ref.propagate.sharding_projection import (
    FactorSharding,
    ShardingProjection,
    UpdateTensorShardings,
    distribute_axes_across_factors,
)
from shardy_ref.propagate.utils import is_equivalent_or_replicated

# explicit collectives that sum their operand's partial values themselves
_EXPLICIT_REDUCTIONS = frozenset({"sdy.all_reduce", "sdy.reduce_scatter"})

def _after(value: Value) -> Operation:
    """The op a new op goes before to sit right after ``value``
    (``setInsertionPointAfterValue``)."""
    if isinstance(value, BlockArgument):
        return value.parent_block.first_op
    return value.op.next_op


def _is_single_device(sharding: TensorSharding | None, table: SymbolTable) -> bool:
    return sharding is not None and mesh_or_lookup(table, sharding.mesh_or_ref).is_maximal


class Inserter:
    """One function's explicit reshards."""

    def __init__(self, func: Operation, module: Operation, full: bool):
        self.func, self.module, self.full = func, module, full
        self.table = symbol_table(module)

    # -- reshards towards a target sharding ----------------------------------------------
    def to_target(self, use: OpOperand, target: TensorSharding | None, anchor: Operation,
                  on_full: bool) -> None:
        """Upstream ``insertExplicitReshardsToTargetSharding``."""
        source = get_sharding(use.value)
        if source is not None:
            source = insert_all_reduce_if_unreduced_to_replicated(use, source, target,
                                                                  self.table, anchor)
        new = insert_unreduced_collectives(use, target, self.table, anchor)
        if new is not None:
            source = new
        if on_full and not is_equivalent_or_replicated(source, target):
            reshard_to = target if target is not None else TensorSharding.fully_closed(
                source.mesh_or_ref, source.rank)
            use.set(reshard(use.value, reshard_to, anchor).results[0])

    def on_data_flow_op(self, op: Operation, on_full: bool) -> None:
        """Upstream ``insertExplicitReshardsOnDataFlowOp``: sources towards their owner."""
        flow = DATA_FLOW_OPS[op.name]
        owners = list(op.results)
        if flow.block_arg_shardings is not None:
            owners += list(op.regions[0].blocks[0].args)
        for owner in owners:
            sharding = get_sharding(owner)
            if sharding is not None:
                sharding = _transform(op, owner, sharding)
            for use in _edge_source_uses(op, owner):
                self.to_target(use, sharding, _after(use.value), on_full)

    def on_call(self, call: Operation, on_full: bool) -> None:
        """Upstream ``insertExplicitReshardsOnCallOp``: operands towards the callee's
        argument shardings (fully closed ones if only the operands are sharded)."""
        func = self.table.lookup(callee_name(call))
        # no callee: a call outlined alone by sdy-per-instruction-partitioning
        shardings = func_arg_shardings(func, self.table) if func is not None else None
        if shardings is None:
            mesh_or_ref = non_maximal_mesh_or_ref(
                call.num_operands, self.table, lambda i: get_sharding(call.operands[i]))
            if mesh_or_ref is None:
                return
            shardings = [TensorSharding.fully_closed(mesh_or_ref, tensor_rank(v.type))
                         for v in call.operands]
        for sharding, use in zip(shardings, list(call.op_operands), strict=True):
            self.to_target(use, sharding, _after(use.value), on_full)

    def on_func_return(self, terminator: Operation) -> None:
        for index, use in enumerate(list(terminator.op_operands)):
            self.to_target(use, get_func_result_sharding(self.func, index), terminator,
                           self.full)

    # -- ops with a sharding rule ---------------------------------------------------------
    def all_reduce_on_op_if_unreduced_to_replicated(self, op: Operation) -> None:
        """Upstream ``insertAllReduceOnOpIfUnreducedToReplicated``, except on an
        ``sdy.all_reduce`` or ``sdy.reduce_scatter``: it reduces its operand's unreduced
        axes itself (upstream adds a second all-reduce before it when the pass runs again,
        e.g. the full version after ``sdy-propagation-pipeline``, and the sum is taken
        twice)."""
        if not op.results or op.name in _EXPLICIT_REDUCTIONS:
            return
        first = get_sharding(op.results[0])
        for use in list(op.op_operands):
            source = get_sharding(use.value)
            if source is not None:
                insert_all_reduce_if_unreduced_to_replicated(use, source, first, self.table,
                                                             op)

    def process_op(self, op: Operation, projection: ShardingProjection,
                   in_shardings: Sequence, out_shardings: Sequence, rule: OpShardingRule,
                   mesh_name, mesh: Mesh, on_full: bool) -> list | None:
        """Upstream ``processOp``: in the full version, reshard operands and results to the
        common axes per factor (returned); else only the dot special case."""
        if not on_full:
            if op.name in _DOTS:
                _process_dot(op, projection, out_shardings, rule, mesh_name, mesh)
            return None
        update = projection.tensors_containing_overflow_axes()
        if update.any() and op.name == "stablehlo.reshape":
            return self.reshape_with_overflow_axes(op, projection, out_shardings, rule,
                                                   mesh_name, mesh)
        common = find_common_axes(projection, rule, _tensor_sizes(op), mesh)
        for factor, axes in enumerate(common):
            update |= projection.update_sharding(factor, axes, [])
        self.reshard_tensors(op, in_shardings, out_shardings, projection, update, rule,
                             mesh_name, mesh)
        return common

    def reshard_tensors(self, op: Operation, in_shardings: Sequence, out_shardings: Sequence,
                        projection: ShardingProjection, update: UpdateTensorShardings,
                        rule: OpShardingRule, mesh_name, mesh: Mesh) -> None:
        reshard_tensors(op, in_shardings, out_shardings, projection, update, rule, mesh_name,
                        mesh, self.table)

    def reshape_with_overflow_axes(self, op: Operation, projection: ShardingProjection,
                                   out_shardings: Sequence, rule: OpShardingRule, mesh_name,
                                   mesh: Mesh) -> list:
        """Upstream ``processReshapeWithOverflowAxes``: redistribute the axes of the more
        sharded side over the factors of both sides, keep what they then agree on."""
        inp, out = projection.operands[0], projection.results[0]
        best = inp if inp.sharding_size(mesh) >= out.sharding_size(mesh) else out
        all_axes = []
        for factor in range(rule.num_factors):
            sharding = best.factor_index_to_sharding.get(factor)
            if sharding is not None:
                all_axes += [*sharding.axis_refs, *sharding.overflow_axes]
        _redistribute(inp, rule.operand_mappings[0], rule.factor_sizes, mesh, all_axes)
        _redistribute(out, rule.result_mappings[0], rule.factor_sizes, mesh, all_axes)
        built_in = inp.to_tensor_sharding(rule.operand_mappings[0], rule.factor_sizes,
                                          mesh_name, mesh)
        built_out = out.to_tensor_sharding(rule.result_mappings[0], rule.factor_sizes,
                                           mesh_name, mesh)
        legal = ShardingProjection.build([built_in], [built_out], rule, mesh)
        common = legal.greatest_common_prefix_axes(rule.num_factors)
        for factor in range(rule.num_factors):
            projection.update_sharding(factor, common[factor], [])
        update = UpdateTensorShardings.empty(1, 1)
        new_in = projection.operands[0].to_tensor_sharding(
            rule.operand_mappings[0], rule.factor_sizes, mesh_name, mesh)
        update.update_operands[0] = not is_equivalent_or_replicated(
            get_sharding(op.operands[0]), new_in)
        new_out = projection.results[0].to_tensor_sharding(
            rule.result_mappings[0], rule.factor_sizes, mesh_name, mesh)
        update.update_results[0] = not is_equivalent_or_replicated(new_out, out_shardings[0])
        self.reshard_tensors(op, [get_sharding(v) for v in op.operands], out_shardings,
                             projection, update, rule, mesh_name, mesh)
        return common

    def all_reduces_for_reduction_factors(self, op: Operation, projection: ShardingProjection,
                                          common: list | None, rule: OpShardingRule,
                                          mesh_name, mesh: Mesh,
                                          kind: ReductionOp | None = None) -> None:
        """Upstream ``insertAllReducesForReductionFactors``: all-reduce the axes of sharded
        reduction factors that the result does not keep unreduced (in the minimal version
        only when the result keeps some, which must then match the reduction factors').
        ``kind`` is the op's own reduction (:func:`reduction_kind`): a max/min body is
        all-reduced with max/min where upstream takes the sharding's op (sum by default),
        which computes a wrong value."""
        if not op.results:
            return
        result_unreduced = _unreduced(get_sharding(op.results[0]))
        reduction_axes = []
        if common is not None:
            for factor in rule.reduction_factors:
                reduction_axes += common[factor]
        elif not result_unreduced:
            return
        for factor in rule.reduction_factors if common is None else ():
            axes = _compatible_factor_sharding(projection, factor)
            if axes is None:
                raise PassError(op.location, f"For the operation {op.name}, the result has "
                                "unreduced axes while the operand has incompatible sharding "
                                "along reduction factors.")
            reduction_axes += axes
        if common is not None:
            self.unreduce_uncomputed_axes(op, reduction_axes, result_unreduced, mesh)
        axes = axis_set_diff(reduction_axes, result_unreduced, mesh)
        if not axes:
            return
        axes = sort_and_merge_axes(axes, mesh)
        anchor = op.next_op
        for result in op.results:
            sharding = get_sharding(result) or TensorSharding.fully_closed(
                mesh_name, tensor_rank(result.type))
            op_kind = kind if kind not in (None, ReductionOp.SUM) else sharding.reduction_op
            reduce = collective("sdy.all_reduce", result, sharding, anchor,
                                **all_reduce_attrs(axes, op_kind))
            result.replace_uses_with_if(reduce.results[0],
                                        lambda use, r=reduce: use.owner is not r)

    def unreduce_uncomputed_axes(self, op: Operation, reduction_axes: list,
                                 result_unreduced: list, mesh: Mesh) -> None:
        """Our addition to the full version: a result unreduced along axes that no sharded
        reduction factor or unreduced operand axis even overlaps (each device holds
        the whole value, which the axes would sum once per device) becomes partial with a
        ``replicated_to_unreduced`` after the op. Upstream keeps the op as is, and the
        partitioned program computes the value times the axes' size."""
        partial = [*reduction_axes, *(a for v in op.operands for a in _unreduced(get_sharding(v)))]
        missing = [a for a in result_unreduced if not any(a.overlaps(b) for b in partial)]
        if not missing:
            return
        anchor = op.next_op
        for result in op.results:
            sharding = get_sharding(result)
            kept = tuple(axis_set_diff(sharding.unreduced_axes, missing, mesh))
            set_sharding(result, sharding.replace(unreduced_axes=kept))
            new = collective("sdy.replicated_to_unreduced", result, sharding, anchor,
                             axes=AxisRefList(tuple(sort_and_merge_axes(missing, mesh))))
            result.replace_uses_with_if(new.results[0], lambda use, r=new: use.owner is not r)

    def unreduce_constant(self, op: Operation, out_shardings: Sequence) -> None:
        """Our addition to the full version: an op without operands (a constant) whose
        result is unreduced holds the whole value on every device, which the unreduced axes
        would sum once per device; it becomes partial as in
        :meth:`unreduce_uncomputed_axes` (upstream keeps it, and the value is multiplied)."""
        sharding = out_shardings[0] if out_shardings else None
        if sharding is None or not sharding.unreduced_axes \
                or sharding.reduction_op != ReductionOp.SUM:
            return
        mesh = mesh_or_lookup(self.table, sharding.mesh_or_ref)
        if mesh is not None and not mesh.is_maximal:
            self.unreduce_uncomputed_axes(op, [], list(sharding.unreduced_axes), mesh)

    def run(self) -> None:
        func, table = self.func, self.table
        block = func.regions[0].blocks[0]
        for i, arg in enumerate(block.args):
            if _is_single_device(get_sharding(arg), table):
                raise op_error(func, f"function argument {i} cannot have a single-device "
                                     "(maximal) sharding attribute")
        for i in range(len(function_type(func).results)):
            if _is_single_device(get_func_result_sharding(func, i), table):
                raise op_error(func, f"function result {i} cannot have a single-device "
                                     "(maximal) sharding attribute")
        for op in list(func.walk(post_order=True)):
            if op is func or op.parent is None or is_terminator(op):
                continue
            self.process(op)
        self.on_func_return(block.terminator)

    def convert_reshard_to_unreduced_collectives(self, op: Operation) -> bool:
        """Upstream ``convertReshardToUnreducedCollectives``: an ``sdy.reshard`` that only
        adds unreduced axes becomes the unreduced collectives; whether it was replaced."""
        if op.name != "sdy.reshard":
            return False
        use = op.op_operands[0]
        if not insert_unreduced_collectives(use, op.attributes["sharding"], self.table, op):
            return False
        op.results[0].replace_all_uses_with(use.value)
        op.erase()
        return True

    def get_mesh(self, in_shardings: Sequence, out_shardings: Sequence):
        """Upstream ``getMesh``: the name and mesh of the most common mesh, or None if the
        shardings have no common mesh (device ids ignored) or it is maximal."""
        mesh_name = common_mesh_name(in_shardings, out_shardings, self.table)
        if mesh_name is None:
            return None
        mesh = mesh_or_lookup(self.table, mesh_name)
        if mesh.is_maximal:
            return None
        return mesh_name, mesh

    def process(self, op: Operation) -> None:
        """The body of the op walk in upstream ``runOnOperation``."""
        on_full = _is_on_full_version(op, self.full)
        if op.name in DATA_FLOW_OPS:
            self.on_data_flow_op(op, on_full)
            return
        if op.name == CALL_OP:
            self.on_call(op, on_full)
            return
        if self.convert_reshard_to_unreduced_collectives(op):
            return
        if on_full and op.name in _EXPLICIT_REDUCTIONS:
            make_explicit_reduction_operand_partial(op, self.table)
        self.all_reduce_on_op_if_unreduced_to_replicated(op)
        in_shardings = [sharding_bypassing_barriers(v) for v in op.operands]
        out_shardings = [sharding_bypassing_barriers(v) for v in op.results]
        if any(_is_single_device(s, self.table) for s in out_shardings):
            process_single_device_operation(op, out_shardings, self.table, self.module)
            return
        rule = get_or_create_sharding_rule(op, False, set_sharding_rule_on_op=False)
        if rule is None or rule.is_custom_rule:
            if on_full and not op.operands:
                self.unreduce_constant(op, out_shardings)
            return
        if not on_full and not _minimal_version_acts_on(op):
            return  # what follows would find a mesh and project, then change nothing
        kind = reduction_kind(op)
        rule = _replicate_reduction_factors_if_unsummable(rule, kind)
        found = self.get_mesh(in_shardings, out_shardings)
        if found is None:
            return
        mesh_name, mesh = found
        projection = ShardingProjection.build(in_shardings, out_shardings, rule, mesh,
                                              closed_if_missing=True)
        common = self.process_op(op, projection, in_shardings, out_shardings, rule, mesh_name,
                                 mesh, on_full)
        self.all_reduces_for_reduction_factors(op, projection, common, rule, mesh_name, mesh,
                                               kind)


def _minimal_version_acts_on(op: Operation) -> bool:
    """Whether the minimal version (not :func:`_is_on_full_version`) may change anything
    for ``op``: :meth:`Inserter.process_op` only handles dots there, and
    :meth:`Inserter.all_reduces_for_reduction_factors` only a first result with unreduced
    axes."""
    return op.name in _DOTS or bool(op.results and _unreduced(get_sharding(op.results[0])))


def _replicate_reduction_factors_if_unsummable(rule: OpShardingRule,
                                              kind: ReductionOp | None) -> OpShardingRule:
    """``rule`` with its reduction factors made need-replication when the op's partial
    results cannot be combined (``kind`` None, see :func:`reduction_kind`)."""
    if kind is None and rule.reduction_factors:
        rule = replace(rule, need_replication_factors=tuple(sorted(
            {*rule.need_replication_factors, *rule.reduction_factors})),
            reduction_factors=())
    return rule


_BODY_KINDS = {"stablehlo.add": ReductionOp.SUM, "stablehlo.maximum": ReductionOp.MAX,
               "stablehlo.minimum": ReductionOp.MIN}


def reduction_kind(op: Operation) -> ReductionOp | None:
    """How partial results of ``op``'s reduction factors combine across devices: a sum
    for contractions; for a ``stablehlo.reduce`` or ``stablehlo.scatter`` the op of its body
    when that is one add, max or min, and None for any other body (a product, an argmax, a
    scatter that replaces...) or for a reduce summing from init values that are not
    constant zeros (every device would add them in once more; max and min may take them any
    number of times). With None the reduction factors are replicated before the op rather
    than all-reduced after it (our deviation: upstream all-reduces with the sharding's op,
    a sum, and the result is wrong; see ``tests/known_differences.md``)."""
    if op.name not in ("stablehlo.reduce", "stablehlo.scatter"):
        return ReductionOp.SUM
    count = len(op.operands) // 2 if op.name == "stablehlo.reduce" \
        else (len(op.operands) - 1) // 2
    kind = _BODY_KINDS.get(common_reduction_op(op, count))
    if op.name == "stablehlo.reduce" and kind is ReductionOp.SUM and \
            not all(_is_zero(v) for v in op.operands[count:]):
        return None
    return kind


def _is_zero(value: Value) -> bool:
    """Whether ``value`` is a constant of zeros."""
    const = value.defining_op
    return const is not None and const.name in ("stablehlo.constant", "sdy.constant") \
        and all(v == 0 for v in const.attributes["value"].values)


def _tensor_sizes(op: Operation) -> list[int]:
    """Upstream ``getTensorSizes``: elements per operand and result (0 if dynamic)."""
    sizes = []
    for t in (*op.operand_types, *op.result_types):
        shape = getattr(t, "shape", None)
        sizes.append(_num_elements(t) if shape is not None and None not in shape else 0)
    return sizes


def _redistribute(tensor, mapping, factor_sizes, mesh: Mesh, all_axes) -> None:
    """Upstream ``redistributeAxes``: ``all_axes`` over the tensor's factors, major first."""
    factors = [f for d in mapping.dim_mappings for f in d.factor_indices
               if f in tensor.factor_index_to_sharding]
    flat = [FactorSharding([], s.is_closed, s.is_minor_most, [])
            for s in (tensor.factor_index_to_sharding[f] for f in factors)]
    distribute_axes_across_factors(flat, [factor_sizes[f] for f in factors], all_axes, mesh)
    for f, new in zip(factors, flat, strict=True):
        tensor.factor_index_to_sharding[f].axis_refs = new.axis_refs
        tensor.factor_index_to_sharding[f].overflow_axes = new.overflow_axes


_DOTS = ("stablehlo.dot", "stablehlo.dot_general")


def _unreduced(sharding: TensorSharding | None):
    return list(sharding.unreduced_axes) if sharding is not None else []


def _transform(op: Operation, owner: Value, sharding: TensorSharding) -> TensorSharding:
    """``transformTargetSharding(owner, ..., kBeforeEdgePropagation)`` of a data-flow op."""
    if op.name != "sdy.manual_computation":
        return sharding
    manual = tuple(op.attributes.get("manual_axes") or ())
    if isinstance(owner, BlockArgument):
        return add_free_axes(op.attributes["in_shardings"][owner.index], sharding, manual)
    return erase_manual_axes(sharding, manual)


def _edge_source_uses(op: Operation, owner: Value) -> list[OpOperand]:
    """``getEdgeSources(owner)`` as operand uses."""
    n = owner.index
    if op.name == "stablehlo.while":
        return [op.op_operands[n], op.regions[1].blocks[0].terminator.op_operands[n]]
    if op.name == "stablehlo.case":
        return [r.blocks[0].terminator.op_operands[n] for r in op.regions]
    if op.name == "stablehlo.optimization_barrier" or isinstance(owner, BlockArgument):
        return [op.op_operands[n]]
    return [op.regions[0].blocks[0].terminator.op_operands[n]]


def _is_on_full_version(op: Operation, full: bool) -> bool:
    """Upstream ``isOnFullVersion``: the full version for calls, ``mhlo.ragged_dot`` and
    concatenates whose operands are sharded unlike the result."""
    if full or op.name in (CALL_OP, "mhlo.ragged_dot"):
        return True
    if op.name == "stablehlo.concatenate":
        result = get_sharding(op.results[0])
        return any(get_sharding(v) != result for v in op.operands)
    return False


def _factor_axes(tensor, factor: int):
    sharding = tensor.factor_index_to_sharding.get(factor)
    return None if sharding is None else sharding.axis_refs


def _compatible_factor_sharding(projection: ShardingProjection, factor: int):
    """Upstream ``getCompatibleFactorSharding``: the factor's axes if every tensor having
    it agrees, else None."""
    found = None
    for tensor in projection.tensors():
        axes = _factor_axes(tensor, factor)
        if axes is None:
            continue
        if found is None:
            found = axes
        elif axes != found:
            return None
    return found if found is not None else []


def _num_elements(type_) -> int:
    n = 1
    for d in type_.shape:
        n *= d
    return n


def _overlaps_seen(axes, seen: list) -> bool:
    """Whether ``axes`` of a non-contracting factor overlap those of an earlier one (the
    axes are added to ``seen`` up to the first overlap)."""
    for axis in axes:
        if any(a.overlaps(axis) for a in seen):
            return True
        seen.append(axis)
    return False


@dataclass(frozen=True, slots=True)
class _DotConflict:
    """The one factor a dot's result is sharded unlike its operands in: the operands'
    axes for it, and the axes of the contracting factors."""
    factor: int
    operand_axes: list
    reduction_axes: list


def _find_dot_conflict(op: Operation, projection: ShardingProjection,
                       rule: OpShardingRule) -> _DotConflict | None:
    """The factor loop of upstream ``processDot``: None unless the operands agree and the
    result conflicts with them in exactly one factor, sharded in the operands and no
    larger than the operand(s) having it."""
    lhs, rhs = projection.operands[0], projection.operands[1]
    result = projection.results[0]
    lhs_size, rhs_size = _num_elements(op.operands[0].type), _num_elements(op.operands[1].type)
    result_size = _num_elements(op.results[0].type)
    conflicting, conflicting_axes = None, []
    reduction_axes, seen = [], []
    for factor in range(rule.num_factors):
        lhs_axes, rhs_axes = _factor_axes(lhs, factor), _factor_axes(rhs, factor)
        if lhs_axes is not None and rhs_axes is not None:
            operand_axes, max_size = lhs_axes, max(lhs_size, rhs_size)
            if lhs_axes != rhs_axes:
                return None
            if factor in rule.reduction_factors:
                reduction_axes += operand_axes
                continue
        else:
            operand_axes = lhs_axes if lhs_axes is not None else rhs_axes
            max_size = lhs_size if lhs_axes is not None else rhs_size
            if _overlaps_seen(operand_axes, seen):
                return None
        if _factor_axes(result, factor) != operand_axes:
            if not operand_axes or conflicting is not None or result_size > max_size:
                return None
            conflicting, conflicting_axes = factor, operand_axes
    if conflicting is None:
        return None
    return _DotConflict(conflicting, conflicting_axes, reduction_axes)


def _process_dot(op: Operation, projection: ShardingProjection, out_shardings: Sequence,
                 rule: OpShardingRule, mesh_name, mesh: Mesh) -> None:
    """Upstream ``processDot``: when the operands agree and the result conflicts with them
    in exactly one (non-contracting or batching) factor, sharded by the contraction axes,
    compute the dot in the operands' sharding and reshard the (smaller) result."""
    if not out_shardings or out_shardings[0] is None:
        return
    conflict = _find_dot_conflict(op, projection, rule)
    if conflict is None:
        return
    result = projection.results[0]
    res_axes = result.factor_index_to_sharding[conflict.factor].axis_refs
    if not res_axes or res_axes != conflict.reduction_axes:
        return
    result.factor_index_to_sharding[conflict.factor].axis_refs = list(conflict.operand_axes)
    value = op.results[0]
    set_sharding(value, result.to_tensor_sharding(rule.result_mappings[0], rule.factor_sizes,
                                                  mesh_name, mesh))
    new = reshard(value, out_shardings[0], op.next_op)
    value.replace_uses_with_if(new.results[0], lambda use: use.owner is not new)


@register_pass
@dataclass(frozen=True, slots=True)
class InsertExplicitReshardsPass(Pass):
    """Inserts explicit reshards (and the collectives unreduced axes need) where an op's
    operand and result shardings are incompatible with its sharding rule."""

    NAME = "sdy-insert-explicit-reshards"
    ANCHOR = "func.func"
    enable_full_version: bool = field(default=False, metadata={"help": (
        "Enable full version for every op (else only for calls, ragged dots, some concatenates)")})

    def run(self, op: Operation, ctx: PassContext) -> None:
        if not op.regions or op.regions[0].is_empty:
            return  # a declaration has nothing to reshard (upstream reads its missing block)
        module = op.parent_op
        Inserter(op, module, self.enable_full_version).run()
