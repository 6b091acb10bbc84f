"""Op traits live on the op definitions (``OpDef.traits``, ``OpDef.syntax``): the lists
derived from them equal the facts they encode (StablehloOps.td), and every op with a trait
has what the trait promises elsewhere (a kernel, a sharding rule, a verifier spec)."""
from __future__ import annotations

import pytest

from shardy_ref.execute.registry import load_kernels
from shardy_ref.ir import op_traits
from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.opdefs import ops_with_trait, registered_ops
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import IntegerType
from shardy_ref.ir.verify.stablehlo_elementwise_shape import SPECS
from shardy_ref.parser import print_stablehlo
from shardy_ref.parser.stablehlo_formats import FORMATS, Format
from shardy_ref.partition.export.pad_for_divisibility import infer
from shardy_ref.propagate.rules import pointwise
from shardy_ref.propagate.rules.registry import RULES
from shardy_ref.transforms import chlo_legalize
from shardy_ref.transforms.common import op_properties


def _stablehlo(names: str) -> set[str]:
    return {f"stablehlo.{n}" for n in names.split()}


UNARY = _stablehlo("""abs ceil floor not negate popcnt count_leading_zeros sign
    round_nearest_afz round_nearest_even imag real convert uniform_quantize uniform_dequantize""")
UNARY_WITH_ACCURACY = _stablehlo("""cbrt cosine exponential exponential_minus_one log
    log_plus_one logistic rsqrt sine sqrt tan tanh""")
BINARY = _stablehlo("""add atan2 divide maximum minimum multiply power remainder shift_left
    shift_right_arithmetic shift_right_logical subtract and or xor""")
FUNCTIONAL = _stablehlo("""is_finite reshape bitcast_convert dynamic_update_slice
    dynamic_reshape real_dynamic_slice dynamic_pad""")
# ``StableHLO_UnaryElementwiseOp``'s and ``reduce_precision``: speculatable if every static
# result dimension is static in the operand
UNARY_ELEMENTWISE = UNARY | UNARY_WITH_ACCURACY | _stablehlo("is_finite reduce_precision")
# ``StableHLO_BinaryElementwiseOp``'s, ``compare``, and the broadcasting clamp and select
NARY_ELEMENTWISE = BINARY | _stablehlo("complex compare clamp select")
COMMUTATIVE = _stablehlo("add multiply maximum minimum and or xor")
NO_EFFECTS = _stablehlo("""abs add after_all and atan2 batch_norm_grad batch_norm_inference
    batch_norm_training bitcast_convert broadcast broadcast_in_dim cbrt ceil cholesky clamp
    compare complex concatenate constant convert convolution cosine count_leading_zeros
    create_token cross-replica-sum divide dot dot_general dynamic_broadcast_in_dim dynamic_conv
    dynamic_gather dynamic_iota dynamic_pad dynamic_reshape dynamic_slice dynamic_update_slice
    einsum exponential exponential_minus_one fft floor gather get_dimension_size
    get_tuple_element imag iota is_finite log log_plus_one logistic maximum minimum multiply
    negate not optimization_barrier or pad partition_id popcnt power real real_dynamic_slice
    reduce_precision remainder replica_id reshape return reverse rng_bit_generator
    round_nearest_afz round_nearest_even rsqrt select set_dimension_size shift_left
    shift_right_arithmetic shift_right_logical sign sine slice sqrt subtract tan tanh
    torch_index_select transpose triangular_solve tuple unary_einsum uniform_dequantize
    uniform_quantize xor""") | {
    "sdy.reshard", "sdy.return", "sdy.constant", "sdy.propagation_barrier", "func.return",
    "arith.constant"}
RECURSIVE = _stablehlo("case if map reduce reduce_window scatter select_and_scatter sort while") \
    | {"sdy.manual_computation", "sdy.named_computation", "chlo.scan"}
READ_WRITE = _stablehlo("infeed outfeed recv send")


def _op(name: str, **attributes) -> Operation:
    return Operation(name, [], [], attributes)


def test_elementwise_ops_are_the_unary_and_nary_element_wise_ops():
    elementwise = {*ops_with_trait("Elementwise"), *ops_with_trait("BroadcastingElementwise")}
    assert elementwise == UNARY_ELEMENTWISE | NARY_ELEMENTWISE


def test_speculatability_of_element_wise_ops_follows_their_class():
    assert set(ops_with_trait("SpeculatableIfStaticDimInOutputIsStaticInInput")) \
        & (UNARY_ELEMENTWISE | NARY_ELEMENTWISE) == UNARY_ELEMENTWISE
    assert set(ops_with_trait("SpeculatableIfAllInputsStatic")) \
        & (UNARY_ELEMENTWISE | NARY_ELEMENTWISE) == NARY_ELEMENTWISE


def test_memory_effects():
    ops = registered_ops()
    assert {n for n in ops if op_traits.op_effects(_op(n)) == op_traits.NO_EFFECTS} \
        == NO_EFFECTS | {n for n in ops if n.startswith("chlo.") and n != "chlo.scan"} \
        | {"stablehlo.custom_call"}  # without has_side_effect
    assert {n for n in ops if op_traits.op_effects(_op(n)) == op_traits.RECURSIVE} == RECURSIVE
    assert {n for n in ops if op_traits.op_effects(_op(n)) == ("read", "write")} == READ_WRITE
    effect_free_or_not = {n for n in ops if op_traits.op_effects(_op(n)) is not None}
    assert effect_free_or_not == NO_EFFECTS | RECURSIVE | READ_WRITE | {"stablehlo.custom_call"} \
        | {n for n in ops if n.startswith("chlo.")}
    side_effect = IntegerAttr(1, IntegerType(1))
    assert op_traits.op_effects(_op("stablehlo.custom_call")) == op_traits.NO_EFFECTS
    assert op_traits.op_effects(_op("stablehlo.custom_call", has_side_effect=side_effect)) == \
        ("allocate", "free", "write", "read")
    assert op_traits.op_effects(_op("builtin.unrealized_conversion_cast")) == ()
    assert op_traits.op_effects(_op("foo.bar")) is None


def test_constant_like_ops():
    assert ops_with_trait("ConstantLike") == ("arith.constant", "chlo.constant",
                                              "stablehlo.constant")


def test_pointwise_sharding_rule_ops_are_the_elementwise_ops_but_quantization():
    assert set(pointwise.POINTWISE_OPS) == (UNARY_ELEMENTWISE | NARY_ELEMENTWISE) - \
        _stablehlo("clamp select uniform_quantize uniform_dequantize")
    assert len(pointwise.POINTWISE_OPS) == 44


def test_every_element_wise_op_has_a_rule_a_kernel_and_a_verifier_spec():
    kernels = load_kernels()
    pointwise_rule = RULES["stablehlo.add"]
    quantization = _stablehlo("uniform_quantize uniform_dequantize")  # no rule, no ODS spec
    for name in UNARY_ELEMENTWISE | NARY_ELEMENTWISE:
        assert name in kernels, name
        if name not in quantization:
            assert name in RULES, name
            assert name.removeprefix("stablehlo.") in SPECS, name
    assert all(RULES[name] is pointwise_rule for name in pointwise.POINTWISE_OPS)


def test_ops_inferring_their_first_operand_type():
    same_as_first = {n for n, fn in infer.INFER.items() if fn.__name__ == "_same_as_first"}
    assert same_as_first == (UNARY_WITH_ACCURACY | BINARY | _stablehlo(
        """ceil count_leading_zeros floor not negate popcnt round_nearest_afz round_nearest_even
        sign reverse dynamic_update_slice cholesky reduce_precision select_and_scatter
        collective_permute"""))


def test_shared_formats_come_from_the_syntax_families():
    ops = registered_ops()
    accuracy = {"result_accuracy": FORMATS["stablehlo.cbrt"].defaults["result_accuracy"]}
    for family, names, fmt in (("unary", UNARY, Format(1)),
                               ("unary", UNARY_WITH_ACCURACY, Format(1, defaults=accuracy)),
                               ("binary", BINARY, Format(2)),
                               ("functional", FUNCTIONAL, Format("*", sig="functional"))):
        for name in names:
            assert ops[name].syntax == family and FORMATS[name] == fmt, name
    assert {n for n, d in ops.items() if d.syntax} == UNARY | UNARY_WITH_ACCURACY | BINARY | \
        FUNCTIONAL
    assert {n for n, d in ops.items() if "result_accuracy" in d.inherent} == UNARY_WITH_ACCURACY


def test_compact_reduce_printing_takes_the_commutative_ops():
    assert print_stablehlo._COMMUTATIVE == COMMUTATIVE


def test_catalog_element_wise_kinds_are_element_wise_ops():
    from shardy_ref.testing.catalog import elementwise

    names = {f"stablehlo.{n}" for n in (*elementwise.FLOAT_UNARY, *elementwise.FLOAT_BINARY,
                                        *elementwise.INT_UNARY, *elementwise.INT_BINARY)}
    assert names <= set(ops_with_trait("Elementwise", "stablehlo"))


def test_supported_reduction_ops_are_commutative():
    assert op_properties.REDUCTION_OPS | op_properties.LOGICAL_REDUCTION_OPS <= COMMUTATIVE


def test_chlo_broadcasting_ops_legalize_to_their_non_broadcasting_op():
    assert chlo_legalize._BINARY == {
        **{f"chlo.broadcast_{n}": f"stablehlo.{n}" for n in """add and atan2 complex compare
        divide maximum minimum multiply or power remainder shift_left shift_right_arithmetic
        shift_right_logical subtract xor""".split()},
        **{f"chlo.broadcast_{n}": f"chlo.{n}" for n in ("next_after", "polygamma", "zeta")}}


@pytest.mark.parametrize("name", sorted(UNARY_ELEMENTWISE | NARY_ELEMENTWISE))
def test_element_wise_ops_are_pure_by_their_speculatability(name):
    from shardy_ref.parser import parse_module

    unary = name in UNARY_ELEMENTWISE
    module = parse_module("func.func @f(%a: tensor<?xf32>) { return }")
    block = module.regions[0].blocks[0].first_op.regions[0].blocks[0]
    dynamic = block.args[0]
    op = Operation(name, [dynamic] * (1 if unary else 2), [dynamic.type], {})
    # a dynamic operand: a result dimension as dynamic keeps a unary op speculatable
    assert op_properties.is_pure(op) is unary
    assert op_properties.is_elementwise(op)


def test_slice_rule_constants_are_the_constant_like_ops_and_sdy_constant():
    from shardy_ref.propagate.rules.slicing import CONSTANT_LIKE_OPS

    assert CONSTANT_LIKE_OPS == {"sdy.constant", "stablehlo.constant", "arith.constant",
                                 "mhlo.constant", "chlo.constant"}
