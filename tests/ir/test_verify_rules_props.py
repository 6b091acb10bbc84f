"""Properties of the op-sharding-rule and propagation-edge verifiers (spec 003 §3.6, §3.13,
§3.14, §3.17; shardy_ref/ir/verify/rules.py).

A random valid rule attached to an op whose operand and result types match it always
verifies; a single-point mutation that breaks one rule is always rejected, first, with
that rule's upstream message. Ops are built in memory, so rules the parser cannot express
(an empty dimension mapping, no operands at all) are covered too.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir import Block, Operation, StringAttr, VerifyError
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis
from shardy_ref.ir.sdy_debug import EdgeValueRef, PropagationEdges
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping, factor_symbol
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.types import F32, RankedTensorType, UnrankedTensorType
from shardy_ref.ir.verify import VerifyContext, _load_rules, verify_op
from shardy_ref.testing.strategies import (
    propagation_edges,
    rule_tensor_types,
    verifiable_op_sharding_rules,
)

# generating a rule takes ~25 ms, so each property gets a small budget (whole file: ~5 s)
FAST = settings(max_examples=25, deadline=None)
PER_MUTATION = settings(max_examples=10, deadline=None)


@dataclasses.dataclass
class Case:
    """A rule with the operand and result types of the op carrying it."""

    rule: OpShardingRule
    operands: list
    results: list

    def with_rule(self, **changes) -> Case:
        return Case(dataclasses.replace(self.rule, **changes), self.operands, self.results)

    def values(self, kind: str) -> tuple[list, tuple[TensorMapping, ...]]:
        if kind == "operand":
            return self.operands, self.rule.operand_mappings
        return self.results, self.rule.result_mappings

    def with_value(self, kind: str, index: int, type_, mapping: TensorMapping) -> Case:
        types, mappings = self.values(kind)
        types = [type_ if i == index else t for i, t in enumerate(types)]
        mappings = tuple(mapping if i == index else m for i, m in enumerate(mappings))
        if kind == "operand":
            return Case(dataclasses.replace(self.rule, operand_mappings=mappings),
                        types, self.results)
        return Case(dataclasses.replace(self.rule, result_mappings=mappings),
                    self.operands, types)

    def add_factor(self, size: int) -> tuple[Case, int]:
        """The case with a new factor of ``size`` (not yet used anywhere) and its index."""
        return self.with_rule(factor_sizes=(*self.rule.factor_sizes, size)), \
            self.rule.num_factors


def _op(case: Case) -> Operation:
    """``stablehlo.custom_call @foo`` on values of the case's types, carrying its rule."""
    block = Block(case.operands)
    return Operation("stablehlo.custom_call", block.args, case.results,
                     {"call_target_name": StringAttr("foo"), "sdy.sharding_rule": case.rule})


def _errors_of(op: Operation) -> str | None:
    """The message of the first error of ``op``'s attributes and invariants, every
    registered rule module loaded (as the verifier itself runs them), or None."""
    _load_rules()
    try:
        verify_op(op, VerifyContext(op))
    except VerifyError as e:
        return e.message
    return None


@st.composite
def cases(draw) -> Case:
    rule = draw(verifiable_op_sharding_rules())
    operands, results = rule_tensor_types(rule)
    return Case(rule, operands, results)


def _prefix(kind: str, count: int, index: int) -> str:
    """Upstream's ``getEmitValueInRangeErrorFn`` prefix: ``operand 1 - `` or ``result - ``."""
    return f"{kind} - " if count == 1 else f"{kind} {index} - "


def _pick_value(data, case: Case, nonscalar: bool = False) -> tuple[str, int]:
    choices = [(kind, i) for kind in ("operand", "result")
               for i, m in enumerate(case.values(kind)[1]) if not nonscalar or m.rank]
    if not choices:
        choices = [("operand", 0)]
    return data.draw(st.sampled_from(choices))


def _append_dim(case: Case, kind: str, index: int, dim: DimMapping, size: int) -> Case:
    types, mappings = case.values(kind)
    type_ = RankedTensorType((*types[index].shape, size), F32)
    mapping = TensorMapping((*mappings[index].dim_mappings, dim))
    return case.with_value(kind, index, type_, mapping)


def _msg(text: str) -> str:
    return f"'stablehlo.custom_call' op {text}"


# -- mutations: each returns the broken case and the message it must be rejected with -----

def extra_value(data, case: Case):
    """OSR-1: one more operand (or result) than mappings."""
    kind = data.draw(st.sampled_from(["operand", "result"]))
    types, mappings = case.values(kind)
    extra = [*types, RankedTensorType((2,), F32)]
    case = Case(case.rule, extra, case.results) if kind == "operand" else \
        Case(case.rule, case.operands, extra)
    return case, f"number of {kind}s and mappings must match: {len(extra)} != {len(mappings)}"


def no_values(data, case: Case):
    """OSR-2: a rule for an op without operands (or results)."""
    kind = data.draw(st.sampled_from(["operand", "result"]))
    if kind == "operand":
        case = Case(dataclasses.replace(case.rule, operand_mappings=()), [], case.results)
    else:
        case = Case(dataclasses.replace(case.rule, result_mappings=()), case.operands, [])
    return case, (f"number of {kind}s mappings cannot be 0. Op sharding rules can only be "
                  "defined on operations with at least one operand and result.")


def dynamic_type(data, case: Case):
    """A mapped value must be a static-shaped ranked tensor."""
    kind, index = _pick_value(data, case)
    types, mappings = case.values(kind)
    shape = types[index].shape
    type_ = RankedTensorType((None, *shape[1:]), F32) if shape else UnrankedTensorType(F32)
    case = case.with_value(kind, index, type_, mappings[index])
    return case, (f"{_prefix(kind, len(types), index)}expected a ranked tensor with a static "
                  f"shape. type: '{type_}'")


def rank_mismatch(data, case: Case):
    """OSR-3: the value has one more dimension than its mapping."""
    kind, index = _pick_value(data, case)
    types, mappings = case.values(kind)
    type_ = RankedTensorType((*types[index].shape, 1), F32)
    rank = mappings[index].rank
    case = case.with_value(kind, index, type_, mappings[index])
    return case, f"{_prefix(kind, len(types), index)}mapping rank must match: {rank} != {rank + 1}"


def empty_dim(data, case: Case):
    """DIMMAP-1: a dimension mapped to no factor."""
    kind, index = _pick_value(data, case)
    count = len(case.values(kind)[0])
    case = _append_dim(case, kind, index, DimMapping(()), 1)
    return case, f"{_prefix(kind, count, index)}dim mapping must have at least one factor"


def factor_out_of_range(data, case: Case):
    """DIMMAP-2: a factor index outside [0, num_factors)."""
    kind, index = _pick_value(data, case)
    count = len(case.values(kind)[0])
    n = case.rule.num_factors
    bad = data.draw(st.one_of(st.integers(n, n + 40), st.integers(-5, -1)))
    case = _append_dim(case, kind, index, DimMapping((bad,)), 2)
    return case, (f"{_prefix(kind, count, index)}expecting factor indices to be within "
                  f"0<=...<num_factors; received: {bad}, num_factors: {n}")


def size_one_in_multi_factor_dim(data, case: Case):
    """DIMMAP-3: a size-1 factor next to another factor in one dimension."""
    kind, index = _pick_value(data, case)
    count = len(case.values(kind)[0])
    case, one = case.add_factor(1)
    case, other = case.add_factor(data.draw(st.sampled_from([2, 4, 8])))
    dim = (one, other) if data.draw(st.booleans()) else (other, one)
    case = _append_dim(case, kind, index, DimMapping(dim), case.rule.factor_sizes[other])
    return case, (f"{_prefix(kind, count, index)}dim mapping can't have a factor of size 1 "
                  "if there are multiple factors")


def reused_factor(data, case: Case):
    """DIMMAP-4 / TMAP-2: a factor used twice by one value."""
    kind, index = _pick_value(data, case, nonscalar=True)
    types, mappings = case.values(kind)
    if not mappings[index].rank:
        case, factor = case.add_factor(2)
        case = _append_dim(case, kind, index, DimMapping((factor,)), 2)
        types, mappings = case.values(kind)
    used = [f for d in mappings[index].dim_mappings for f in d.factor_indices]
    factor = data.draw(st.sampled_from(used))
    case = _append_dim(case, kind, index, DimMapping((factor,)), case.rule.factor_sizes[factor])
    return case, (f"{_prefix(kind, len(types), index)}cannot reuse factors for the same "
                  "tensor value")


def unused_factor(data, case: Case):
    """Every factor must be used by some operand or result."""
    size = data.draw(st.sampled_from([1, 2, 3, 8]))
    case, factor = case.add_factor(size)
    return case, (f"has factor {factor_symbol(factor)}={size} that isn't used in operand and "
                  "result mappings")


SPECIAL_SETS = ("reduction_factors", "need_replication_factors", "permutation_factors",
                "blocked_propagation_factors")


def _special_set_mutation(how: str) -> Callable:
    """OSR-4 and the sortedness rule: one special factor set made unsorted, non-unique,
    negative or out of bound (upstream ``indicesSortedUniqueInBound``)."""

    def mutate(data, case: Case):
        name = data.draw(st.sampled_from(SPECIAL_SETS))
        factors = getattr(case.rule, name)
        n = case.rule.num_factors
        if how == "unsorted":
            if n < 2:
                case, _ = case.add_factor(2)
                case = _append_dim(case, "operand", 0, DimMapping((n,)), 2)
                n += 1
            factors = tuple(sorted({*factors, 0, n - 1}, reverse=True))
            return case.with_rule(**{name: factors}), "indices of special factors must be sorted"
        if how == "duplicate":
            repeated = data.draw(st.sampled_from(factors or (0,)))
            factors = tuple(sorted((*factors, repeated))) if factors else (0, 0)
            return case.with_rule(**{name: factors}), "indices of special factors must be unique"
        if how == "negative":
            bad = data.draw(st.integers(-10, -1))
            return case.with_rule(**{name: (bad, *factors)}), "index must be non-negative"
        bad = data.draw(st.integers(n, n + 40))
        return case.with_rule(**{name: (*factors, bad)}), \
            f"index must be less than {n}, got: {bad}"

    mutate.__name__ = f"special_factors_{how}"
    return mutate


def factor_in_two_sets(data, case: Case):
    """OSR-5: a factor both in two of the reduction / need-replication / permutation sets."""
    rule = case.rule
    first, second = data.draw(st.permutations(SPECIAL_SETS[:3]))[:2]
    source = getattr(rule, first)
    factor = data.draw(st.sampled_from(source)) if source else 0
    changes = {second: tuple(sorted({*getattr(rule, second), factor}))}
    if not source:
        changes[first] = (factor,)
    return case.with_rule(**changes), ("a factor can only be in one of the reduction, need "
                                       "replication, or permutation factor sets")


def reduction_in_result(data, case: Case):
    """Reduction factors may not appear in result mappings."""
    index = data.draw(st.integers(0, len(case.results) - 1))
    case, factor = case.add_factor(2)
    case = _append_dim(case, "result", index, DimMapping((factor,)), 2)
    return case.with_rule(reduction_factors=(*case.rule.reduction_factors, factor)), \
        "reduction factor cannot be in result mappings"


MUTATIONS = [extra_value, no_values, dynamic_type, rank_mismatch, empty_dim,
             factor_out_of_range, size_one_in_multi_factor_dim, reused_factor, unused_factor,
             *(_special_set_mutation(how) for how in ("unsorted", "duplicate", "negative",
                                                       "out_of_bound")),
             factor_in_two_sets, reduction_in_result]


@FAST
@given(cases())
def test_valid_rule_on_matching_op_verifies(case):
    assert _errors_of(_op(case)) is None


@FAST
@given(cases(), st.data())
def test_upstream_accepts_what_it_does_not_check(case, data):
    """Upstream checks neither dimension sizes against factor sizes nor blocked factors
    against the factor types, so neither makes a rule invalid."""
    operands = [RankedTensorType(tuple(d * 3 for d in t.shape), F32) for t in case.operands]
    blocked = tuple(sorted({*case.rule.blocked_propagation_factors,
                            *case.rule.reduction_factors,
                            *data.draw(st.sets(st.integers(0, case.rule.num_factors - 1)))}))
    case = Case(dataclasses.replace(case.rule, blocked_propagation_factors=blocked),
                operands, case.results)
    assert _errors_of(_op(case)) is None


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.__name__)
@PER_MUTATION
@given(case=cases(), data=st.data())
def test_single_mutation_is_rejected_with_its_message(mutation, case, data):
    broken, message = mutation(data, case)
    assert _errors_of(_op(broken)) == _msg(message)


def test_wrong_attribute_type_is_rejected():
    op = Operation("stablehlo.custom_call", (), (), {"sdy.sharding_rule": Mesh()})
    assert _errors_of(op) == _msg("should have a sharding rule attribute of type "
                                  "OpShardingRuleAttr for attr named 'sdy.sharding_rule'")


# -- propagation edges (spec 003 §3.14, §3.8) ---------------------------------------------

MESH = Mesh((MeshAxis("a", 2), MeshAxis("b", 2)))


@st.composite
def edge_ops(draw):
    """An op with 1-3 operands and 1-2 results, all sharded on ``MESH``, and valid
    propagation edges over axes of ``MESH``."""
    num_operands, num_results = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    edges = draw(propagation_edges(num_operands, num_results, ("a", "b")))
    sharding = TensorSharding(MESH, (DimensionSharding((), False),))
    return num_operands, num_results, edges, sharding


def _edge_op(num_operands: int, num_results: int, edges, sharding) -> Operation:
    """The op carrying ``edges``, its operands produced by one op; every value is sharded
    ``sharding`` (when given)."""
    t = RankedTensorType((8,), F32)

    def shardings(n: int) -> dict:
        return {} if sharding is None else \
            {"sdy.sharding": TensorShardingPerValue((sharding,) * n)}

    producer = Operation("test.producer", (), [t] * num_operands, shardings(num_operands))
    return Operation("stablehlo.custom_call", producer.results, [t] * num_results,
                     {"call_target_name": StringAttr("f"), "sdy.propagation_edges": edges,
                      **shardings(num_results)})


def _edit_entry(edges: PropagationEdges, step: int, entry: int, **changes) -> PropagationEdges:
    steps = list(edges.value)
    entries = list(steps[step].axis_entries)
    entries[entry] = dataclasses.replace(entries[entry], **changes)
    steps[step] = dataclasses.replace(steps[step], axis_entries=tuple(entries))
    return PropagationEdges(tuple(steps))


@FAST
@given(edge_ops())
def test_valid_edges_verify(args):
    assert args[2].verify_params() is None
    assert _errors_of(_edge_op(*args)) is None


@FAST
@given(edge_ops(), st.data())
def test_broken_edges_are_rejected(args, data):
    num_operands, num_results, edges, sharding = args
    step = data.draw(st.integers(0, len(edges.value) - 1))
    entry_index = data.draw(st.integers(0, len(edges.value[step].axis_entries) - 1))
    entry = edges.value[step].axis_entries[entry_index]
    index = edges.value[step].step_index
    how = data.draw(st.sampled_from(["negative", "duplicate_step", "source_is_target",
                                     "duplicate_target"]))
    if how == "negative":
        bad = PropagationEdges((dataclasses.replace(edges.value[0], step_index=-index - 1),
                                *edges.value[1:]))
        message = f"propagation edges have negative step index: {-index - 1}"
    elif how == "duplicate_step":
        bad = PropagationEdges((*edges.value, edges.value[step]))
        message = f"propagation edges have duplicate step index: {index}"
    elif how == "source_is_target":
        bad = _edit_entry(edges, step, entry_index, targets=(*entry.targets, entry.source))
        message = "propagation edges have a source that is the same as a target"
    else:
        bad = _edit_entry(edges, step, entry_index, targets=(*entry.targets, entry.targets[0]))
        message = (f"propagation edges have duplicate targets for step index: {index} and "
                   f"axis: {entry.axis_name.name}")
    assert bad.verify_params() == message
    assert _errors_of(_edge_op(num_operands, num_results, bad, sharding)) == message


@FAST
@given(edge_ops(), st.data())
def test_edges_on_op_need_sharding_mesh_axis_and_index(args, data):
    num_operands, num_results, edges, sharding = args
    how = data.draw(st.sampled_from(["no_sharding", "axis", "operand_index", "result_index"]))
    entry = edges.value[0].axis_entries[0]
    if how == "no_sharding":
        op, message = _edge_op(num_operands, num_results, edges, None), \
            "expected propagation edges attr to reference a sharding."
    elif how == "axis":
        bad = _edit_entry(edges, 0, 0, axis_name=AxisRef("zz"))
        op, message = _edge_op(num_operands, num_results, bad, sharding), \
            "expected axis ref to be in one of the meshes"
    else:
        kind = how.split("_")[0]
        count = num_operands if kind == "operand" else num_results
        target = EdgeValueRef(kind, count + data.draw(st.integers(0, 5)))
        bad = _edit_entry(edges, 0, 0, targets=(*entry.targets, target))
        op = _edge_op(num_operands, num_results, bad, sharding)
        article = "an" if kind == "operand" else "a"
        message = (f"expected a value ref to have {article} {kind} index in range "
                   f"[0, {count}), got: {target.index}")
    assert _errors_of(op) == f"'stablehlo.custom_call' op {message}"
