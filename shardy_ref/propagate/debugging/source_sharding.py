"""Propagation debugging: where each axis of a sharding came from (``sdy.sharding_origins``)
and which propagation step moved it along which edge (``sdy.propagation_edges``). Upstream
``transforms/propagation/debugging/source_sharding.cc``; the options are
``debug-sharding-origins`` / ``debug-propagation-edge-sharding`` (see
https://openxla.org/shardy/sdy_propagation_passes#-sdy-aggressive-propagate).

A :class:`SourceShardingHandler` lives for one pass run. The pass creates it with
:func:`create_handler` (None when both options are off, so the propagator's hook costs one
None check), the propagator calls :meth:`SourceShardingHandler.record` after every step that
updated a sharding, and the pass calls :meth:`SourceShardingHandler.save_on_module` at the
end to write the attributes. Origins are user shardings: a function input/output
(``"input: 1"``, ``"output: 0"``), a constraint (``"constraint_0"``) or a manual
computation's in/out sharding (``"mc_0_input: 1"``); a user sharding's own axes say
``"self"``. Edges are recorded on the op whose step moved the axis, always between its
operands and results (``{"a" = operand-0 -> [result-0]}``).
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import ArrayAttr, DictionaryAttr, StringAttr
from shardy_ref.ir.func_attrs import set_attrs
from shardy_ref.ir.operation import BlockArgument, Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_debug import (
    AxisToPropagationDetails,
    EdgeValueRef,
    PropagationEdges,
    PropagationOneStep,
)
from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.value_sharding import (
    get_func_result_sharding,
    get_sharding,
    owning_op,
    shardable_value,
)
from shardy_ref.propagate.sharding_projection import (
    PrefixStatus,
    ShardingProjection,
    axis_list_prefix_status,
)

SHARDING_ORIGINS = "sdy.sharding_origins"
SHARDING_ORIGIN_NAME = "sdy.sharding_origin_name"
PROPAGATION_EDGES = "sdy.propagation_edges"
FUNC_OP = "func.func"

# per tensor (operands then results): factor index -> its axes
Snapshot = tuple[list[dict[int, tuple[AxisRef, ...]]], list[dict[int, tuple[AxisRef, ...]]]]
AxisEdges = dict[AxisRef, list["PropagationEdge"]]


class OriginType(enum.Enum):
    """Upstream ``OriginShardingType``: which kind of user sharding an axis came from."""

    INPUT = 0
    CONSTRAINT = 1
    OUTPUT = 2
    MC_INPUT = 3
    MC_OUTPUT = 4


@dataclass(frozen=True, slots=True)
class OriginSharding:
    """A user sharding: its kind, the operand/result index and, for constraints and manual
    computations, the module-wide id in their ``sdy.sharding_origin_name``."""

    type: OriginType
    index: int
    source_id: int = 0

    def name(self) -> str:
        """Upstream ``shardingOriginToString``."""
        if self.type is OriginType.CONSTRAINT:
            return f"constraint_{self.source_id}"
        if self.type is OriginType.MC_INPUT:
            return f"mc_{self.source_id}_input: {self.index}"
        if self.type is OriginType.MC_OUTPUT:
            return f"mc_{self.source_id}_output: {self.index}"
        kind = "input" if self.type is OriginType.INPUT else "output"
        return f"{kind}: {self.index}"


@dataclass(frozen=True, slots=True)
class PropagationEdge:
    """One axis moved from ``source`` to ``target`` (operands/results of one op) in
    propagation step ``step``."""

    source: EdgeValueRef
    target: EdgeValueRef
    step: int


def snapshot(projection: ShardingProjection) -> Snapshot:
    """The axes of every factor of every tensor, to compare after a propagation step (the
    projection itself is updated in place)."""
    def one(tensors):
        return [{f: tuple(s.axis_refs) for f, s in t.factor_index_to_sharding.items()}
                for t in tensors]
    return one(projection.operands), one(projection.results)


def _axis_key(axis: AxisRef) -> str:
    """Upstream prints ``AxisRefAttr::toString`` without its quotes: ``c:(1)2``."""
    return axis.params().replace('"', "")


def _find_source(new_axes: Sequence[AxisRef], factor: int,
                 old_tensors: list[dict[int, tuple[AxisRef, ...]]]) -> int | None:
    """Upstream ``findNewAxisRefMatch``: the first tensor whose old axes along ``factor``
    start with ``new_axes``."""
    for index, factors in enumerate(old_tensors):
        old = factors.get(factor)
        if old is not None and \
                axis_list_prefix_status(new_axes, old) is not PrefixStatus.NOT_A_PREFIX:
            return index
    return None


class _EdgeCollector:
    """Upstream ``createSourceMap``: per operand and result, the newly introduced axes of
    one step and the edge each came along."""

    def __init__(self, old: Snapshot, new: Snapshot, rule: OpShardingRule, mesh: Mesh,
                 step: int):
        self.old, self.new, self.rule, self.mesh, self.step = old, new, rule, mesh, step

    def collect(self) -> tuple[list[dict[AxisRef, PropagationEdge]],
                               list[dict[AxisRef, PropagationEdge]]]:
        sides = []
        for kind, side, mappings in (("operand", 0, self.rule.operand_mappings),
                                     ("result", 1, self.rule.result_mappings)):
            maps = []
            for index, mapping in enumerate(mappings):
                target = EdgeValueRef(kind, index)
                maps.append(self._visit(self.old[side][index], self.new[side][index],
                                        mapping, target))
            sides.append(maps)
        return sides[0], sides[1]

    def _visit(self, old, new, mapping, target: EdgeValueRef) -> dict[AxisRef, PropagationEdge]:
        out: dict[AxisRef, PropagationEdge] = {}
        for dim_mapping in mapping.dim_mappings:
            previous: AxisRef | None = None
            for factor in dim_mapping.factor_indices:
                old_axes, new_axes = old.get(factor, ()), new.get(factor, ())
                if old_axes == new_axes or not new_axes:
                    continue
                last = new_axes[-1]
                if previous is not None and previous.can_merge(last):
                    out.pop(previous, None)
                    last = previous.merge(last, self.mesh)
                previous = new_axes[-1]
                introduced = (*new_axes[:-1], last)
                source = self._source(new_axes, factor)
                if source is not None:
                    self._save(introduced, old_axes, PropagationEdge(source, target, self.step),
                               out)
        return out

    def _source(self, new_axes, factor: int) -> EdgeValueRef | None:
        for kind, tensors in (("operand", self.old[0]), ("result", self.old[1])):
            index = _find_source(new_axes, factor, tensors)
            if index is not None:
                return EdgeValueRef(kind, index)
        return None

    @staticmethod
    def _save(new_axes, old_axes, edge: PropagationEdge, out: dict) -> None:
        """Only the last old axis (it may have grown into a larger sub-axis) and the axes
        after the old ones are new."""
        last_old = len(old_axes) - 1
        if old_axes and last_old < len(new_axes) and old_axes[last_old] != new_axes[last_old]:
            out.setdefault(new_axes[last_old], edge)
        for axis in new_axes[len(old_axes):]:
            out.setdefault(axis, edge)


class SourceShardingHandler:
    """The debug mappings of one pass run (upstream ``ShardingDebugMappings`` and
    ``SourceShardingHandler``)."""

    def __init__(self, module: Operation, origins: bool, edges: bool):
        self.module = module
        self.origins = origins
        self.edges = edges
        self.value_origins: dict[Value, dict[AxisRef, OriginSharding]] = {}
        self.op_edges: dict[Operation, AxisEdges] = {}
        self.func_result_edges: dict[Operation, list[AxisEdges]] = {}
        self.step = _max_step(module) + 1
        if origins:
            self._prepare_origins()
        if edges:
            for func in _funcs(module):
                self.func_result_edges[func] = [{} for _ in func_results(func)]

    # -- initial origins -----------------------------------------------------------------
    def _save_origins(self, sharding: TensorSharding | None, origin: OriginSharding,
                      value: Value) -> None:
        """Upstream ``saveShardingOrigins``: every axis of ``sharding`` came from ``origin``
        (unless an earlier origin claimed it)."""
        if sharding is None:
            return
        key = shardable_value(value)
        if key is None:
            return
        for dim in sharding.dim_shardings:
            for axis in dim.axes:
                self.value_origins.setdefault(key, {}).setdefault(axis, origin)

    def _prepare_origins(self) -> None:
        """Upstream ``prepareShardingOriginsHandler``: constraints, then manual computations
        (each numbered module-wide, in walk order), then function inputs and outputs, the
        first to claim an axis of a value winning."""
        ops = list(self.module.walk(post_order=True))
        constraints = [op for op in ops if op.name == "sdy.sharding_constraint"]
        for source_id, op in enumerate(constraints):
            origin = OriginSharding(OriginType.CONSTRAINT, 0, source_id)
            self._save_origins(op.attributes["sharding"], origin, op.results[0])
            op.attributes[SHARDING_ORIGIN_NAME] = StringAttr(origin.name())
            self._save_origins(get_sharding(op.operands[0]), origin, op.operands[0])
        manuals = [op for op in ops if op.name == "sdy.manual_computation"]
        for source_id, op in enumerate(manuals):
            self._prepare_manual_computation(op, source_id)
        for func in _funcs(self.module):
            for arg in _func_args(func):
                self._save_origins(get_sharding(arg), OriginSharding(OriginType.INPUT, arg.index),
                                   arg)
            for index, value in enumerate(func_results(func)):
                self._save_origins(get_func_result_sharding(func, index),
                                   OriginSharding(OriginType.OUTPUT, index), value)

    def _prepare_manual_computation(self, op: Operation, source_id: int) -> None:
        """A manual computation's in-shardings are the origins of its block arguments' edges
        (and of its sharded operands), its out-shardings those of its results' edges."""
        from shardy_ref.ir.utils import lookup_data_flow_edge
        from shardy_ref.propagate.data_flow import edge_sources
        args = op.regions[0].blocks[0].args
        for i, sharding in enumerate(op.attributes["in_shardings"].shardings):
            origin = OriginSharding(OriginType.MC_INPUT, i, source_id)
            edge = lookup_data_flow_edge(args[i])
            if edge is None:
                continue
            self._save_origins(sharding, origin, edge.results[0])
            source = edge_sources(edge)[0]
            self._save_origins(get_sharding(source), origin, source)
        for i, sharding in enumerate(op.attributes["out_shardings"].shardings):
            edge = lookup_data_flow_edge(op.results[i])
            if edge is not None:
                self._save_origins(sharding, OriginSharding(OriginType.MC_OUTPUT, i, source_id),
                                   edge.results[0])
        op.attributes[SHARDING_ORIGIN_NAME] = StringAttr(f"mc_{source_id}")

    # -- the hook ------------------------------------------------------------------------
    def record(self, op: Operation, operands: Sequence[Value], results: Sequence[Value],
               mesh: Mesh, rule: OpShardingRule, old: Snapshot, new: Snapshot) -> None:
        """A step of ``op`` updated some shardings (upstream ``SourceShardingHandler``'s
        action handler): record the new axes' edges and origins, and count the step."""
        operand_edges, result_edges = _EdgeCollector(old, new, rule, mesh, self.step).collect()
        self.step += 1
        tensors = {"operand": operands, "result": results}
        for values, per_value in ((operands, operand_edges), (results, result_edges)):
            for i, axis_edges in enumerate(per_value):
                for axis, edge in axis_edges.items():
                    if self.edges:
                        self._edges_of(op, i).setdefault(axis, []).append(edge)
                    if self.origins:
                        source = tensors[edge.source.type][edge.source.index]
                        self._add_origin(values[i], axis, source)

    def _edges_of(self, op: Operation, index: int) -> AxisEdges:
        """Func results keep their edges per result index (``index`` is always 0 there:
        upstream's b/391840483); other ops keep them per op."""
        if op.name == FUNC_OP:
            per_result = self.func_result_edges.setdefault(op, [])
            while len(per_result) <= index:
                per_result.append({})
            return per_result[index]
        return self.op_edges.setdefault(op, {})

    def _add_origin(self, target: Value, axis: AxisRef, source: Value) -> None:
        origin = self._lookup_origin(source, axis)
        key = shardable_value(target)
        if origin is not None and key is not None:
            self.value_origins.setdefault(key, {}).setdefault(axis, origin)

    def _lookup_origin(self, value: Value, axis: AxisRef) -> OriginSharding | None:
        """Upstream ``lookUpValueOriginSharding``: the axis's origin on ``value``, else that
        of an axis containing it or contained in it (a reshape split or merged it)."""
        key = shardable_value(value)
        origins = self.value_origins.get(key) if key is not None else None
        if not origins:
            return None
        if axis in origins:
            return origins[axis]
        for other, origin in origins.items():
            if other.contains(axis) or axis.contains(other):
                return origin
        return None

    # -- writing the attributes ----------------------------------------------------------
    def save_on_module(self) -> None:
        """Upstream ``saveOnModule``. Function argument and result attributes are written
        once per function (one rebuild of its attribute arrays, not one per value)."""
        if self.origins:
            func_attrs: dict[tuple[Operation, str], dict[int, DictionaryAttr]] = {}
            for value, origins in self.value_origins.items():
                _save_value_origins(value, origins, func_attrs)
            for (func, kind), values in func_attrs.items():
                set_attrs(func, kind, SHARDING_ORIGINS, values)
            _override_origins_to_self(self.module)
        if self.edges:
            for op, axis_edges in self.op_edges.items():
                attr = propagation_edges_attr(axis_edges)
                if attr.value:
                    op.attributes[PROPAGATION_EDGES] = attr
            for func, per_result in self.func_result_edges.items():
                values = {index: attr for index, axis_edges in enumerate(per_result)
                          if (attr := propagation_edges_attr(axis_edges)).value}
                if values:
                    set_attrs(func, "result", PROPAGATION_EDGES, values)


def create_handler(module: Operation, origins: bool, edges: bool) -> SourceShardingHandler | None:
    """The handler for a pass run with these debug options, None when both are off."""
    return SourceShardingHandler(module, origins, edges) if origins or edges else None


# -- helpers -------------------------------------------------------------------------------
def _funcs(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].blocks[0].ops if op.name == FUNC_OP] \
        if module.regions else []


def _func_args(func: Operation) -> list[BlockArgument]:
    return list(func.regions[0].blocks[0].args) if func.regions[0].blocks else []


def func_results(func: Operation) -> list[Value]:
    """The returned values (none for a declaration)."""
    if not func.regions or not func.regions[0].blocks:
        return []
    return list(func.regions[0].blocks[0].terminator.operands)


def _max_step(module: Operation) -> int:
    """Upstream ``maximumPropagationStep``: steps continue from a previous pass's edges."""
    steps = [step.step_index for op in module.walk()
             if isinstance(attr := op.attributes.get(PROPAGATION_EDGES), PropagationEdges)
             for step in attr.value]
    return max(steps, default=-1)


def _origins_dict(origins: dict[AxisRef, OriginSharding]) -> DictionaryAttr:
    return DictionaryAttr.of({_axis_key(a): StringAttr(o.name()) for a, o in origins.items()})


def _enclosing_func(op: Operation) -> Operation | None:
    while op is not None and op.name != FUNC_OP:
        op = op.parent_op
    return op


def _save_value_origins(value: Value, origins: dict[AxisRef, OriginSharding],
                        func_attrs: dict[tuple[Operation, str], dict[int, DictionaryAttr]]
                        ) -> None:
    """Upstream ``saveShardingOriginsOnModule`` for one value: on the function result it
    is returned as, and on the argument, constraint, edge or op result it is. Function
    attributes go to ``func_attrs`` with upstream's ``overrideOriginsToSelf`` already
    applied (``"input: i"`` on argument i and ``"output: i"`` on result i say ``"self"``)."""
    op = owning_op(value)
    if op is None:
        return
    entries = _origins_dict(origins)
    func = _enclosing_func(op)
    if func is not None and func.regions[0].blocks:
        terminator = func.regions[0].blocks[0].terminator
        for use in value.uses:
            if use.owner is terminator:
                name = OriginSharding(OriginType.OUTPUT, use.index).name()
                func_attrs.setdefault((func, "result"), {})[use.index] = \
                    _to_self(entries, name)
                break
    if op.name == FUNC_OP:
        name = OriginSharding(OriginType.INPUT, value.index).name()
        func_attrs.setdefault((op, "arg"), {})[value.index] = _to_self(entries, name)
    elif op.name in ("sdy.sharding_constraint", "sdy.data_flow_edge"):
        op.attributes[SHARDING_ORIGINS] = entries
    else:
        current = op.attributes.get(SHARDING_ORIGINS)
        dicts = list(current.value) if isinstance(current, ArrayAttr) else \
            [DictionaryAttr(())] * op.num_results
        dicts[value.index] = entries
        op.attributes[SHARDING_ORIGINS] = ArrayAttr(tuple(dicts))


def _to_self(entries, name: str) -> DictionaryAttr | None:
    if not isinstance(entries, DictionaryAttr):
        return None
    return DictionaryAttr(tuple((k, StringAttr("self") if v == StringAttr(name) else v)
                                for k, v in entries.value))


def _op_origins_to_self(op: Operation | None, name: str) -> None:
    if op is not None:
        new = _to_self(op.attributes.get(SHARDING_ORIGINS), name)
        if new is not None:
            op.attributes[SHARDING_ORIGINS] = new


def _override_origins_to_self(module: Operation) -> None:
    """Upstream ``overrideOriginsToSelf`` for constraints and manual computations (the
    function attributes were written with it applied): a user sharding's own axes say
    ``"self"``."""
    from shardy_ref.ir.utils import lookup_data_flow_edge
    for op in module.walk():
        name = op.attributes.get(SHARDING_ORIGIN_NAME)
        if not isinstance(name, StringAttr):
            continue
        if op.name == "sdy.sharding_constraint":
            _op_origins_to_self(op, name.value)
        elif op.name == "sdy.manual_computation":
            for arg in op.regions[0].blocks[0].args:
                _op_origins_to_self(lookup_data_flow_edge(arg),
                                    f"{name.value}_input: {arg.index}")
            for result in op.results:
                _op_origins_to_self(lookup_data_flow_edge(result),
                                    f"{name.value}_output: {result.index}")


def propagation_edges_attr(axis_edges: AxisEdges) -> PropagationEdges:
    """Upstream ``createPropagationEdges``: per axis, source and target the earliest step,
    grouped by step; targets sorted, entries sorted by axis, steps sorted."""
    earliest: dict[tuple[AxisRef, EdgeValueRef, EdgeValueRef], PropagationEdge] = {}
    for axis, edges in axis_edges.items():
        for edge in edges:
            key = (axis, edge.source, edge.target)
            if key not in earliest or edge.step < earliest[key].step:
                earliest[key] = edge
    per_step: dict[int, dict[tuple[AxisRef, EdgeValueRef], list[EdgeValueRef]]] = {}
    for (axis, source, target), edge in earliest.items():
        per_step.setdefault(edge.step, {}).setdefault((axis, source), []).append(target)
    steps = []
    for step in sorted(per_step):
        entries = [AxisToPropagationDetails(axis, source, tuple(sorted(
                       targets, key=lambda t: (t.type != "operand", t.index))))
                   for (axis, source), targets in per_step[step].items()]
        entries.sort(key=lambda e: e.axis_name)
        steps.append(PropagationOneStep(step, tuple(entries)))
    return PropagationEdges(tuple(steps))


def sink_debug_info(owners: Sequence[Value], op: Operation, origins: bool, edges: bool,
                    kind: str) -> None:
    """Upstream ``saveDebugInfoDictsFromDataFlowEdges``: before the edges of ``owners`` (the
    block arguments, ``kind="block_arg"``, or results, ``kind="result"``, of data-flow op
    ``op``) are sunk, gather their debug attributes into arrays on ``op``. Edges without
    origins or with no propagation edges add no entry (as upstream)."""
    if not origins and not edges:
        return
    from shardy_ref.ir.utils import lookup_data_flow_edge
    origin_dicts, edge_attrs = [], []
    for owner in owners:
        edge = lookup_data_flow_edge(owner)
        if edge is None:
            continue
        found = edge.attributes.get(SHARDING_ORIGINS)
        if isinstance(found, DictionaryAttr):
            origin_dicts.append(found)
        found = edge.attributes.get(PROPAGATION_EDGES)
        if isinstance(found, PropagationEdges) and found.value:
            edge_attrs.append(found)
    if origins:
        op.attributes[f"sdy.{kind}_sharding_origins"] = ArrayAttr(tuple(origin_dicts))
    if edges:
        op.attributes[f"sdy.{kind}_propagation_edges"] = ArrayAttr(tuple(edge_attrs))
