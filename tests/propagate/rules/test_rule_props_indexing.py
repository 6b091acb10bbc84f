"""Properties of the gather/scatter, slicing, reduce and linalg rule families on random
valid ops (``strategies_indexing``): every rule verifies on its op; factor sizes fit the
dimensions; populating twice equals populating once; and, against real Shardy, the same
rules in both propagation modes."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.verify.rules import verify_op_sharding_rule
from shardy_ref.propagate.rules import create_op_sharding_rule, tensor_shape
from tests.propagate.pass_helpers import assert_idempotent

from .rule_helpers import func_ops, oracle_rules, our_rules
from .strategies_indexing import FAMILY_OPS

ANY_OP = st.one_of(*FAMILY_OPS.values())


def _the_op(text: str):
    return next(op for op in func_ops(text) if not op.name.endswith("constant"))


def _check_factor_sizes(op, rule: OpShardingRule) -> None:
    """A dimension's factor sizes multiply to its size, except for a dimension made of a
    single permutation or need-replication factor: those are sized from the other side of
    a dimension the op slices, pads, windows or reshapes (upstream's mismatch factors)."""
    mismatch_ok = set(rule.permutation_factors) | set(rule.need_replication_factors)
    for types, mappings in ((op.operand_types, rule.operand_mappings),
                            (op.result_types, rule.result_mappings)):
        for type_, mapping in zip(types, mappings, strict=True):
            shape = tensor_shape(type_)
            assert mapping.rank == len(shape)
            for size, dim in zip(shape, mapping.dim_mappings, strict=True):
                factors = dim.factor_indices
                if len(factors) == 1 and factors[0] in mismatch_ok:
                    continue
                assert math.prod(rule.factor_sizes[f] for f in factors) == size, (
                    f"{op.name}: dim of size {size} mapped to {dim.params()} in {rule}")


@settings(max_examples=50, deadline=None)
@given(ANY_OP, st.booleans())
def test_rules_verify_and_fit_dimension_sizes(text, conservative):
    op = _the_op(text)
    rule = create_op_sharding_rule(op, conservative)
    assert rule is not None
    verify_op_sharding_rule(op, rule)
    _check_factor_sizes(op, rule)
    # blocked factors only ever come from the conservative option or fixed upstream choices
    if not conservative and op.name in ("stablehlo.slice", "stablehlo.pad",
                                        "stablehlo.reduce_window"):
        assert not rule.blocked_propagation_factors


@settings(max_examples=30, deadline=None)
@given(ANY_OP, st.booleans())
def test_populate_is_idempotent(text, conservative):
    option = "{conservative-propagation=true}" if conservative else ""
    out = assert_idempotent(text, f"sdy-populate-op-sharding-rules{option}")
    assert "sdy.sharding_rule" in out


@pytest.mark.oracle
@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
@pytest.mark.parametrize("family", sorted(FAMILY_OPS))
def test_random_ops_like_real_shardy(family, conservative):
    texts = []

    @settings(max_examples=25, deadline=None, derandomize=True, database=None)
    @given(FAMILY_OPS[family])
    def collect(text):
        texts.append(text)

    collect()
    for text, expected in zip(texts, oracle_rules(texts, conservative), strict=True):
        assert our_rules(text, conservative) == expected, text
