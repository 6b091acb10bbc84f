"""Hypothesis properties of the rules of the pointwise, collective, broadcast/concat/
transpose, dot, reshape and custom-call families: every rule verifies on its op; the sizes
of the factors of a dimension multiply to the dimension size (where the family maps
dimensions exactly; concatenate's concatenated dimension is the exception upstream makes);
reshape rules are the same both ways round; the populate pass is idempotent."""
from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.sdy_rules import OpShardingRule
from shardy_ref.ir.verify.rules import verify_op_sharding_rule
from shardy_ref.propagate.rules import create_op_sharding_rule, tensor_shape

from ..pass_helpers import assert_idempotent
from .rule_helpers import func_ops, single_op

PROPS = settings(max_examples=40, deadline=None)
dims = st.integers(1, 12)
shapes = st.lists(dims, max_size=4).map(tuple)


def _t(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>" if shape else "tensor<f32>"


@st.composite
def pointwise_ops(draw):
    shape = draw(st.lists(st.integers(0, 6), max_size=4))
    op = draw(st.sampled_from(["add", "multiply", "maximum", "atan2"]))
    t = _t(shape)
    return single_op(f"%0 = stablehlo.{op} %arg0, %arg1 : {t}", [t, t], [t])


@st.composite
def all_gather_ops(draw):
    shape = draw(st.lists(dims, min_size=1, max_size=4))
    dim = draw(st.integers(0, len(shape) - 1))
    out = list(shape)
    out[dim] *= draw(st.integers(1, 4))
    return single_op(f'%0 = "stablehlo.all_gather"(%arg0) {{all_gather_dim = {dim} : i64, '
                     "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "
                     f"({_t(shape)}) -> {_t(out)}", [_t(shape)], [_t(out)])


@st.composite
def broadcast_ops(draw):
    out = draw(st.lists(dims, max_size=4))
    kept = sorted(draw(st.sets(st.integers(0, len(out) - 1))) if out else [])
    shape = [draw(st.sampled_from([out[d], 1])) for d in kept]
    return single_op(f"%0 = stablehlo.broadcast_in_dim %arg0, dims = {kept} : "
                     f"({_t(shape)}) -> {_t(out)}", [_t(shape)], [_t(out)])


@st.composite
def transpose_ops(draw):
    shape = draw(shapes)
    perm = draw(st.permutations(range(len(shape))))
    out = [shape[p] for p in perm]
    return single_op(f"%0 = stablehlo.transpose %arg0, dims = {list(perm)} : "
                     f"({_t(shape)}) -> {_t(out)}", [_t(shape)], [_t(out)])


@st.composite
def concat_ops(draw):
    shape = draw(st.lists(dims, min_size=1, max_size=3))
    dim = draw(st.integers(0, len(shape) - 1))
    sizes = draw(st.lists(dims, min_size=1, max_size=3))
    ins = [[*shape[:dim], s, *shape[dim + 1:]] for s in sizes]
    out = [*shape[:dim], sum(sizes), *shape[dim + 1:]]
    args = ", ".join(f"%arg{i}" for i in range(len(ins)))
    types = ", ".join(_t(s) for s in ins)
    return single_op(f"%0 = stablehlo.concatenate {args}, dim = {dim} : ({types}) -> {_t(out)}",
                     [_t(s) for s in ins], [_t(out)])


@st.composite
def dot_general_ops(draw):
    kinds = draw(st.lists(st.sampled_from("bcLR"), max_size=5))
    sizes = [draw(dims) for _ in kinds]
    lhs = [i for i, k in enumerate(kinds) if k in "bcL"]
    rhs = [i for i, k in enumerate(kinds) if k in "bcR"]
    lhs, rhs = draw(st.permutations(lhs)), draw(st.permutations(rhs))

    def where(order, kind):
        return [order.index(i) for i, k in enumerate(kinds) if k == kind]

    out = ([sizes[i] for i, k in enumerate(kinds) if k == "b"]
           + [sizes[i] for i in lhs if kinds[i] == "L"]
           + [sizes[i] for i in rhs if kinds[i] == "R"])
    t_l, t_r = _t([sizes[i] for i in lhs]), _t([sizes[i] for i in rhs])
    return single_op(
        f"%0 = stablehlo.dot_general %arg0, %arg1, batching_dims = {where(lhs, 'b')} x "
        f"{where(rhs, 'b')}, contracting_dims = {where(lhs, 'c')} x {where(rhs, 'c')} : "
        f"({t_l}, {t_r}) -> {_t(out)}", [t_l, t_r], [_t(out)])


@st.composite
def reshape_shapes(draw):
    """Two shapes with the same number of elements: the same prime factors, grouped into
    dimensions in two random ways, with size-1 dimensions sprinkled in."""
    primes = draw(st.lists(st.sampled_from([2, 2, 3, 5]), max_size=6))

    def group():
        order = draw(st.permutations(primes))
        cuts = sorted(draw(st.sets(st.integers(1, max(len(order) - 1, 1)), max_size=3)))
        bounds = [0, *[c for c in cuts if c < len(order)], len(order)]
        out = [math.prod(order[a:b]) for a, b in itertools.pairwise(bounds) if b > a]
        for _ in range(draw(st.integers(0, 2))):
            out.insert(draw(st.integers(0, len(out))), 1)
        return out

    return group(), group()


def _reshape(in_shape, out_shape) -> str:
    return single_op(f"%0 = stablehlo.reshape %arg0 : ({_t(in_shape)}) -> {_t(out_shape)}",
                     [_t(in_shape)], [_t(out_shape)])


@st.composite
def reshape_ops(draw):
    return _reshape(*draw(reshape_shapes()))


@st.composite
def topk_ops(draw):
    shape = draw(st.lists(dims, min_size=1, max_size=3))
    out = [*shape[:-1], draw(st.integers(1, shape[-1]))]
    return single_op(f"%0:2 = stablehlo.custom_call @mhlo.topk(%arg0) : ({_t(shape)}) -> "
                     f"({_t(out)}, {_t(out).replace('f32', 'i32')})", [_t(shape)],
                     [_t(out), _t(out).replace("f32", "i32")])


@st.composite
def convolution_ops(draw):
    """Convolutions in ``[b, 0.., f]x[0.., i, o]->[b, 0.., f]`` layout, stride 1, no
    padding, with feature or batch groups."""
    n_spatial = draw(st.integers(1, 2))
    groups = draw(st.integers(1, 3))
    feature_groups, batch_groups = (groups, 1) if draw(st.booleans()) else (1, groups)
    batch, in_feat, out_feat = (draw(dims) for _ in range(3))
    lhs_batch, out_batch = batch * batch_groups, batch
    spatial = [draw(dims) for _ in range(n_spatial)]
    window = [draw(st.integers(1, s)) for s in spatial]
    out_spatial = [s - w + 1 for s, w in zip(spatial, window, strict=True)]
    lhs = _t([lhs_batch, *spatial, in_feat * feature_groups])
    rhs = _t([*window, in_feat, out_feat * groups])
    out = _t([out_batch, *out_spatial, out_feat * groups])
    layout = ", ".join(map(str, range(n_spatial)))
    return single_op(
        f"%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, {layout}, f]x"
        f"[{layout}, i, o]->[b, {layout}, f], window = {{}} {{batch_group_count = "
        f"{batch_groups} : i64, feature_group_count = {feature_groups} : i64}} : "
        f"({lhs}, {rhs}) -> {out}", [lhs, rhs], [out])


EXACT = st.one_of(pointwise_ops(), all_gather_ops(), broadcast_ops(), transpose_ops(),
                  dot_general_ops(), reshape_ops())
ANY = st.one_of(EXACT, concat_ops(), topk_ops(), convolution_ops())


def _rule(text: str, conservative: bool = False) -> tuple[object, OpShardingRule]:
    op = func_ops(text)[-1]
    rule = create_op_sharding_rule(op, conservative)
    assert rule is not None
    return op, rule


def _dim_products(op, rule: OpShardingRule):
    """(tensor shape, per-dim product of factor sizes) for each operand then result."""
    types = [*op.operand_types, *op.result_types]
    mappings = [*rule.operand_mappings, *rule.result_mappings]
    for type_, mapping in zip(types, mappings, strict=True):
        yield tensor_shape(type_), [math.prod(rule.factor_sizes[f] for f in d.factor_indices)
                                    for d in mapping.dim_mappings]


@PROPS
@given(ANY, st.booleans())
def test_every_rule_verifies(text, conservative):
    op, rule = _rule(text, conservative)
    verify_op_sharding_rule(op, rule)


@PROPS
@given(EXACT, st.booleans())
def test_factor_sizes_multiply_to_dim_sizes(text, conservative):
    op, rule = _rule(text, conservative)
    for shape, products in _dim_products(op, rule):
        assert list(shape) == products, (text, rule)


@PROPS
@given(topk_ops())
def test_topk_maps_operand_dims_exactly(text):
    op, rule = _rule(text)
    shape, products = next(_dim_products(op, rule))
    assert list(shape) == products


@PROPS
@given(concat_ops(), st.booleans())
def test_concat_dim_is_the_only_inexact_one(text, conservative):
    op, rule = _rule(text, conservative)
    concat_dim = op.attributes["dimension"].value
    for i, (shape, products) in enumerate(_dim_products(op, rule)):
        for d, (size, product) in enumerate(zip(shape, products, strict=True)):
            if d != concat_dim:
                assert size == product
            elif conservative:
                assert product == 1
            else:
                is_result = i == len(op.operands)
                assert product == tensor_shape(op.result_types[0])[d]
                assert is_result or product >= size


@PROPS
@given(convolution_ops(), st.booleans())
def test_convolution_factors_never_exceed_dims(text, conservative):
    """Spatial dimensions get window factors capped by the input size, so a dimension's
    factors never multiply to more than its size (conservative: they multiply to 1)."""
    op, rule = _rule(text, conservative)
    nums = op.attributes["dimension_numbers"]
    for i, (shape, products) in enumerate(_dim_products(op, rule)):
        spatial = (nums.input_spatial_dimensions, nums.kernel_spatial_dimensions,
                   nums.output_spatial_dimensions)[i]
        for d, (size, product) in enumerate(zip(shape, products, strict=True)):
            if d not in spatial:
                assert size == product
            elif conservative:
                assert product == 1
            else:
                assert product <= size


def _factor_layout(rule: OpShardingRule, swap: bool) -> set[tuple]:
    """Each factor as (size, where it is mapped), names forgotten; ``swap`` exchanges
    operand and result sides."""
    sides = [rule.operand_mappings, rule.result_mappings]
    if swap:
        sides.reverse()
    places: dict[int, list] = {f: [] for f in range(rule.num_factors)}
    for side, mappings in enumerate(sides):
        for t, mapping in enumerate(mappings):
            for d, dim in enumerate(mapping.dim_mappings):
                for pos, f in enumerate(dim.factor_indices):
                    places[f].append((side, t, d, pos))
    return {(rule.factor_sizes[f], tuple(p)) for f, p in places.items()}


@PROPS
@given(reshape_shapes())
def test_reshape_rule_is_the_same_both_ways(pair):
    in_shape, out_shape = pair
    _, forward = _rule(_reshape(in_shape, out_shape))
    _, backward = _rule(_reshape(out_shape, in_shape))
    assert _factor_layout(forward, False) == _factor_layout(backward, True)


@settings(max_examples=25, deadline=None)
@given(ANY)
def test_populate_is_idempotent(text):
    assert_idempotent(text, "func.func(sdy-populate-op-sharding-rules)")
