# ruff: noqa: E501  (MLIR programs)
"""``sdy-pad-for-divisibility``: padded types, what each pattern emits, its errors, and a
property: on random matmul programs with non-divisible shardings every value left in the
program divides by its sharding, and the interpreter computes the same results as before."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute.api import run
from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import IntegerType, RankedTensorType
from shardy_ref.parser import parse_attribute, parse_module
from shardy_ref.partition.export.pad_for_divisibility import is_legal
from shardy_ref.partition.export.pad_for_divisibility.infer import windowed_size
from shardy_ref.partition.export.pad_for_divisibility.padding import padded_type
from tests.propagate.pass_helpers import run_pipeline

PASS = "func.func(sdy-pad-for-divisibility)"
MESH = 'sdy.mesh @mesh = <["x"=4, "y"=3]>\n'
I32 = IntegerType(32)


def table_for(text: str) -> SymbolTable:
    return SymbolTable(parse_module(text))


@pytest.mark.parametrize(("shape", "dims", "expected"), [
    ((7, 8), '[{"x"}, {}]', (8, 8)),
    ((8, 8), '[{"x"}, {}]', (8, 8)),
    ((5, 2), '[{"x", "y"}, {}]', (12, 2)),
    ((5, 2), '[{"x":(1)2}, {"y"}]', (6, 3)),
    ((None, 5), '[{"x"}, {"y"}]', (None, 6)),
])
def test_padded_type_rounds_each_dim_up_to_its_shard_count(shape, dims, expected):
    table = table_for(MESH)
    sharding = parse_attribute(f"#sdy.sharding<@mesh, {dims}>")
    t = RankedTensorType(shape, I32)
    assert padded_type(t, sharding, table).shape == expected
    assert padded_type(t, None, table) is t


def _func(body: str, args: str, result: str) -> str:
    return MESH + f"func.func @main({args}) -> {result} {{\n{body}\n}}\n"


def test_function_io_must_be_divisible():
    text = _func("  return %arg0 : tensor<7xi32>",
                 '%arg0: tensor<7xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}',
                 "tensor<7xi32>")
    with pytest.raises(ShardyRefError, match="argument #0 has a non-divisible sharding") as e:
        run_pipeline(text, PASS)
    assert "failed to legalize operation 'func.func'" in e.value.others[0].message
    text = _func("  return %arg0 : tensor<7xi32>", "%arg0: tensor<7xi32>",
                 '(tensor<7xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>})')
    with pytest.raises(ShardyRefError, match="result #0 has a non-divisible sharding"):
        run_pipeline(text, PASS)


def ops_of(text: str) -> list:
    module = parse_module(text)
    return [op for op in module.walk() if op.dialect in ("stablehlo", "sdy")]


def test_all_slice_pads_with_zero_and_the_gather_slices_back():
    text = _func('  %0 = sdy.all_slice [{"y"}] %arg0 out_sharding=<@mesh, [{"y"}]> : tensor<5xi32>\n'
                 '  %1 = sdy.all_gather [{"y"}] %0 out_sharding=<@mesh, [{}]> : tensor<5xi32>\n'
                 '  return %1 : tensor<5xi32>', "%arg0: tensor<5xi32>", "tensor<5xi32>")
    names = [(op.name, op.results[0].type.shape) for op in ops_of(run_pipeline(text, PASS))
             if op.results and op.name != "sdy.mesh"]
    assert names == [("stablehlo.constant", ()), ("stablehlo.pad", (6,)),
                     ("sdy.all_slice", (6,)), ("sdy.all_gather", (6,)),
                     ("stablehlo.slice", (5,))]


DOT = """  %0 = sdy.all_slice [{{}}, {{"x"}}] %arg0 out_sharding=<@mesh, [{{}}, {{"x"}}]> : tensor<2x5xi32>
  %1 = {lhs}
  %2 = sdy.all_slice [{{"x"}}, {{}}] %arg1 out_sharding=<@mesh, [{{"x"}}, {{}}]> : tensor<5x3xi32>
  %3 = stablehlo.dot_general %1, %2, contracting_dims = [1] x [0] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{}}]>]>}} : (tensor<2x5xi32>, tensor<5x3xi32>) -> tensor<2x3xi32>
  return %3 : tensor<2x3xi32>"""


@pytest.mark.parametrize(("lhs", "selects"), [
    # all_slice pads with zeros: the contracting dim needs no mask
    ('sdy.all_slice [{}, {}] %0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<2x5xi32>', 0),
    # an elementwise op leaves its padding unknown: mask it to zero before contracting
    ('stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>}'
     " : tensor<2x5xi32>", 1),
])
def test_dot_general_masks_contracting_padding_unless_known_zero(lhs, selects):
    text = _func(DOT.format(lhs=lhs), "%arg0: tensor<2x5xi32>, %arg1: tensor<5x3xi32>",
                 "tensor<2x3xi32>")
    out = run_pipeline(text, PASS)
    assert sum(op.name == "stablehlo.select" for op in ops_of(out)) == selects
    x = np.arange(10, dtype=np.int32).reshape(2, 5) - 3
    y = np.arange(15, dtype=np.int32).reshape(5, 3) + 1
    assert np.array_equal(run(out, x, y)[0], run(text, x, y)[0])


PAD = """  %0 = sdy.all_slice [{{"x"}}] %arg0 out_sharding=<@mesh, [{{"x"}}]> : tensor<7xi32>
  %c = stablehlo.constant dense<-1> : tensor<i32>
  %1 = stablehlo.pad %0, %c, low = [{low}], high = [{high}], interior = [{interior}] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}]>]>}} : (tensor<7xi32>, tensor<i32>) -> tensor<{n}xi32>
  %2 = sdy.all_gather [{{"x"}}] %1 out_sharding=<@mesh, [{{}}]> : tensor<{n}xi32>
  return %2 : tensor<{n}xi32>"""


# Pads as resolve-permutation-factors leaves them on a sharded dim (each result shard
# within its operand shard), plus interior padding, where upstream always masks. Upstream
# masks the operand's padding only when the high edge padding shrinks, so a pad shifting
# data across shards (``low = [1], high = [2]``) would keep the operand's padding inside
# the result; like upstream, this pass expects such pads to be resolved before it.
@pytest.mark.parametrize(("low", "high", "interior", "masked"), [
    (0, 1, 0, True),    # the operand's padding lands in the result: mask it
    (0, -1, 0, False),  # ... or is cut off
    (0, -3, 0, True),   # the high edge shrinks below the operand's: masked, harmlessly
    (1, 1, 1, True),    # interior padding makes the padded operand too long: mask it
])
def test_pad_result_is_padded_and_values_survive(low, high, interior, masked):
    n = 7 + low + high + 6 * interior
    text = _func(PAD.format(low=low, high=high, interior=interior, n=n),
                 "%arg0: tensor<7xi32>", f"tensor<{n}xi32>")
    out = run_pipeline(text, PASS)
    assert any(op.name == "stablehlo.select" for op in ops_of(out)) == masked
    x = np.arange(7, dtype=np.int32) + 10
    assert np.array_equal(run(out, x)[0], run(text, x)[0])


def test_slice_that_needs_communication_is_an_error():
    text = _func('  %0 = stablehlo.slice %arg0 [1:8] {sdy.sharding = #sdy.sharding_per_value'
                 '<[<@mesh, [{"x"}]>]>} : (tensor<8xi32>) -> tensor<7xi32>\n'
                 '  %1 = sdy.all_gather [{"x"}] %0 out_sharding=<@mesh, [{}]> : tensor<7xi32>\n'
                 "  return %1 : tensor<7xi32>",
                 '%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}',
                 "tensor<7xi32>")
    with pytest.raises(ShardyRefError, match="needs communication"):
        run_pipeline(text, PASS)


def test_strided_slice_keeps_the_limit_of_its_unpadded_dim():
    # only dim 0 is padded (7 -> 8); the strided dim 1 (0:5:2, 3 elements) must keep its limit
    text = _func('  %0 = stablehlo.slice %arg0 [0:7, 0:5:2] {sdy.sharding = #sdy.sharding_per_value'
                 '<[<@mesh, [{"x"}, {}]>]>} : (tensor<8x5xi32>) -> tensor<7x3xi32>\n'
                 '  %1 = sdy.all_gather [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {}]> : tensor<7x3xi32>\n'
                 "  return %1 : tensor<7x3xi32>",
                 '%arg0: tensor<8x5xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}',
                 "tensor<7x3xi32>")
    out = run_pipeline(text, PASS)
    for op in ops_of(out):
        if op.name == "stablehlo.slice":
            start, limit, stride = (op.attributes[k].value for k in
                                    ("start_indices", "limit_indices", "strides"))
            assert op.results[0].type.shape == tuple(
                -(-(hi - lo) // st) for lo, hi, st in zip(start, limit, stride))
    x = np.arange(40, dtype=np.int32).reshape(8, 5)
    assert np.array_equal(run(out, x)[0], run(text, x)[0])


CONV = MESH + """func.func @main(%arg0: tensor<1x{w}x1xf32>, %arg1: tensor<3x1x1xf32>) -> tensor<1x{o}x1xf32> {{
  %0 = sdy.all_slice [{{}}, {{"x"}}, {{}}] %arg0 out_sharding=<@mesh, [{{}}, {{"x"}}, {{}}]> : tensor<1x{w}x1xf32>
  %1 = stablehlo.convolution(%0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {{stride = [1], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64, sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{{out}}}, {{}}]>]>}} : (tensor<1x{w}x1xf32>, tensor<3x1x1xf32>) -> tensor<1x{o}x1xf32>
  return %1 : tensor<1x{o}x1xf32>
}}
"""


def test_convolution_slices_spatial_output_back_or_refuses():
    text = CONV.format(w=7, o=5, out="")
    out = run_pipeline(text, PASS)
    x = np.arange(7, dtype=np.float32).reshape(1, 7, 1)
    k = np.array([1, 2, 4], dtype=np.float32).reshape(3, 1, 1)
    assert np.array_equal(run(out, x, k)[0], run(text, x, k)[0])
    # the output needs 8 rows to divide by x, the padded input only gives 6
    with pytest.raises(ShardyRefError, match=r"failed to legalize operation "
                                             r"'stablehlo\.convolution'"):
        run_pipeline(CONV.format(w=7, o=5, out='"x"'), PASS)


def test_window_shape_rule():
    assert windowed_size(8, 3, 2, 1, 1, 0, 0) == 3
    assert windowed_size(7, 3, 1, 1, 2, 1, 1) == 5
    assert windowed_size(2, 5, 1, 1, 1, 0, 0) == 0


def test_legal_consumer_of_a_padded_value_gets_a_cast():
    text = _func('  %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<7xi32>\n'
                 '  "test.use"(%0) : (tensor<7xi32>) -> ()\n'
                 '  return %arg0 : tensor<7xi32>', "%arg0: tensor<7xi32>", "tensor<7xi32>")
    out = run_pipeline(text, PASS, allow_unregistered=True)
    names = [op.name for op in parse_module(out, allow_unregistered=True).walk()]
    assert "builtin.unrealized_conversion_cast" in names


def test_padding_a_sharded_dim_goes_through_a_gather():
    """Padding a dim already split 4 ways up to 12 would move rows between devices: the
    value is gathered along it, padded, and sliced again (upstream pads it in place)."""
    text = _func(
        '  %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<8xi32>\n'
        '  %1 = sdy.all_slice [{"y"}] %0 out_sharding=<@mesh, [{"x", "y"}]> : tensor<8xi32>\n'
        '  %2 = sdy.all_gather [{"x", "y"}] %1 out_sharding=<@mesh, [{}]> : tensor<8xi32>\n'
        '  return %2 : tensor<8xi32>', "%arg0: tensor<8xi32>", "tensor<8xi32>")
    ops = [op for op in parse_module(run_pipeline(text, PASS)).walk()
           if op.name in ("sdy.all_gather", "sdy.all_slice", "stablehlo.pad")]
    names = [op.name for op in ops]
    at = names.index("stablehlo.pad")
    assert names[at - 1:at + 2] == ["sdy.all_gather", "stablehlo.pad", "sdy.all_slice"]
    assert str(ops[at - 1].attributes["out_sharding"]).endswith("[{}]>")
    assert ops[at].results[0].type.shape == (12,)


def test_trimming_a_sharded_dim_goes_through_a_gather():
    """Slicing 12 back to 8 when gathering only "y" would move rows between devices: the
    value is gathered along the dim, sliced, and sliced into shards again."""
    text = _func(
        '  %0 = sdy.all_slice [{"x", "y"}] %arg0 out_sharding=<@mesh, [{"x", "y"}]> : tensor<8xi32>\n'
        '  %1 = sdy.all_gather [{"y"}] %0 out_sharding=<@mesh, [{"x"}]> : tensor<8xi32>\n'
        '  %2 = sdy.all_gather [{"x"}] %1 out_sharding=<@mesh, [{}]> : tensor<8xi32>\n'
        '  return %2 : tensor<8xi32>', "%arg0: tensor<8xi32>", "tensor<8xi32>")
    names = [op.name for op in parse_module(run_pipeline(text, PASS)).walk()
             if op.name in ("sdy.all_gather", "sdy.all_slice", "stablehlo.slice")]
    at = names.index("stablehlo.slice")
    assert names[at - 1:at + 2] == ["sdy.all_gather", "stablehlo.slice", "sdy.all_slice"]


def test_collective_permute_moves_the_padded_tensor():
    text = MESH.replace('"y"=3', '"y"=4') + """func.func @main(%arg0: tensor<7x5xi32>) -> tensor<7x5xi32> {
  %0 = sdy.all_slice [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<7x5xi32>
  %1 = sdy.collective_permute %0 out_sharding=<@mesh, [{"y"}, {"x"}]> : tensor<7x5xi32>
  %2 = sdy.all_gather [{"y"}, {"x"}] %1 out_sharding=<@mesh, [{}, {}]> : tensor<7x5xi32>
  return %2 : tensor<7x5xi32>
}
"""
    out = run_pipeline(text, PASS)
    permute = next(op for op in ops_of(out) if op.name == "sdy.collective_permute")
    assert permute.operands[0].type.shape == permute.results[0].type.shape == (8, 8)
    x = np.arange(35, dtype=np.int32).reshape(7, 5)
    assert np.array_equal(run(out, x)[0], x)


# -- property ---------------------------------------------------------------------------

MESHES = [(("a", 2), ("b", 3)), (("a", 4), ("b", 2), ("c", 3)), (("a", 3),)]


@st.composite
def matmul_programs(draw):
    """``f(all_slice(x)) @ g(all_slice(y))`` then gathered, on a random mesh, where ``f``
    and ``g`` are the identity or ``not`` (which turns zero padding into -1): the axes of
    the row, contracting and column dims are disjoint, their sizes need not divide."""
    mesh = draw(st.sampled_from(MESHES))
    roles = draw(st.lists(st.sampled_from("pkqn"), min_size=len(mesh), max_size=len(mesh)))
    roles[0] = "k"  # the contracting dim is always sharded, its padding must not count
    axes = {r: ", ".join(f'"{name}"' for (name, _), role in zip(mesh, roles) if role == r)
            for r in "pkq"}
    a, k, c = (draw(st.integers(1, 7)) for _ in range(3))
    k = draw(st.sampled_from([k, 5, 7]))  # mostly not divisible
    lhs, rhs, res = (f'[{{{axes[i]}}}, {{{axes[j]}}}]' for i, j in ("pk", "kq", "pq"))
    nots = draw(st.sampled_from([(True, True), (True, True), (True, False), (False, True),
                                 (False, False)]))
    mesh_text = ", ".join(f'"{n}"={s}' for n, s in mesh)
    gather = f'[{{{axes["p"]}}}, {{{axes["q"]}}}]'
    text = f"""sdy.mesh @mesh = <[{mesh_text}]>
func.func @main(%arg0: tensor<{a}x{k}xi32>, %arg1: tensor<{k}x{c}xi32>) -> tensor<{a}x{c}xi32> {{
  %0 = sdy.all_slice {lhs} %arg0 out_sharding=<@mesh, {lhs}> : tensor<{a}x{k}xi32>
  %1 = stablehlo.not %0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {lhs}>]>}} : tensor<{a}x{k}xi32>
  %2 = sdy.all_slice {rhs} %arg1 out_sharding=<@mesh, {rhs}> : tensor<{k}x{c}xi32>
  %3 = stablehlo.not %2 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {rhs}>]>}} : tensor<{k}x{c}xi32>
  %4 = stablehlo.dot_general %{1 if nots[0] else 0}, %{3 if nots[1] else 2}, contracting_dims = [1] x [0] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, {res}>]>}} : (tensor<{a}x{k}xi32>, tensor<{k}x{c}xi32>) -> tensor<{a}x{c}xi32>
  %5 = sdy.all_gather {gather} %4 out_sharding=<@mesh, [{{}}, {{}}]> : tensor<{a}x{c}xi32>
  return %5 : tensor<{a}x{c}xi32>
}}
"""
    return text, (a, k, c), nots


@settings(max_examples=25, deadline=None)
@given(matmul_programs(), st.integers(0, 2**16))
def test_padding_divides_every_value_and_keeps_the_results(program, seed):
    text, (a, k, c), nots = program
    out = run_pipeline(text, PASS)
    module = parse_module(out)
    table = SymbolTable(module)
    assert all(is_legal(op, table) for op in module.walk())
    assert run_pipeline(out, PASS) == out  # nothing left to pad
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (a, k), dtype=np.int32)
    y = rng.integers(-50, 50, (k, c), dtype=np.int32)
    lhs, rhs = (~v if flip else v for v, flip in zip((x, y), nots))
    assert np.array_equal(run(out, x, y)[0], lhs.astype(np.int64) @ rhs)


RESHAPE = MESH + """func.func @main(%arg0: tensor<{n}x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<{out}xi32> {{
  %0 = stablehlo.slice %arg0 [0:{m}, 0:2] {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}, {{}}]>]>}} : (tensor<{n}x2xi32>) -> tensor<{m}x2xi32>
  %1 = stablehlo.reshape %0 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{res}]>]>}} : (tensor<{m}x2xi32>) -> tensor<{out}xi32>
  %2 = sdy.all_gather [{gather}] %1 out_sharding=<@mesh, [{free}]> : tensor<{out}xi32>
  return %2 : tensor<{out}xi32>
}}
"""


def test_reshape_whose_padding_changes_its_element_count_is_an_error():
    # a size-1 row sharded on "x" (its factor is not in the result) pads to 4 rows, the
    # replicated result stays 2 elements: upstream's reshape verifier rejects this
    bad = RESHAPE.format(n=4, m=1, out=2, res="{}", gather="{}", free="{}")
    with pytest.raises(ShardyRefError, match=r"number of output elements \(2\) doesn't match "
                                             r"expected number of elements \(8\)"):
        run_pipeline(bad, PASS)
    # both sides padded alike (7x2 -> 8x2 on each side): still a valid reshape
    good = RESHAPE.format(n=8, m=7, out="7x2", res='{"x"}, {}', gather='{"x"}, {}',
                          free="{}, {}")
    out = run_pipeline(good, PASS)
    x = np.arange(16, dtype=np.int32).reshape(8, 2)
    assert np.array_equal(run(out, x)[0], run(good, x)[0])


REDUCE = MESH + """func.func @main(%arg0: tensor<4x2xi32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<2xi32> {{
  %0 = {source}
  %c = stablehlo.constant dense<{init}> : tensor<i32>
  %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.{fn} across dimensions = [0] : (tensor<{m}x2xi32>, tensor<i32>) -> tensor<2xi32>
  %2 = sdy.all_reduce {{"x"}} %1 out_sharding=<@mesh, [{{}}]> : tensor<2xi32>
  return %2 : tensor<2xi32>
}}
"""
# a size-1 slice sharded 4 ways is extended to the 4 real rows; an all_slice pads with zeros
SLICED = ('stablehlo.slice %arg0 [0:1, 0:2] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, '
          '[{"x"}, {}]>]>} : (tensor<4x2xi32>) -> tensor<1x2xi32>')
ALL_SLICED = ('stablehlo.slice %arg0 [0:3, 0:2] : (tensor<4x2xi32>) -> tensor<3x2xi32>\n'
              '  %9 = sdy.all_slice [{"x"}, {}] %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<3x2xi32>')


@pytest.mark.parametrize(("source", "m", "init", "fn"), [
    (SLICED, 1, 0, "add"),
    (ALL_SLICED, 3, 0, "add"),
    (ALL_SLICED, 3, -100, "maximum"),
    (ALL_SLICED, 3, 100, "minimum"),
])
def test_reduce_over_a_padded_dim_masks_the_padding_with_its_init(source, m, init, fn):
    """The padding a reduction reads (the real rows an extended slice reads in, or zeros)
    is replaced by the init value, the body's identity, so it adds nothing."""
    text = REDUCE.format(source=source, m=m, init=init, fn=fn)
    if ALL_SLICED in text:
        text = text.replace("(%0 init", "(%9 init")
    out = run_pipeline(text, PASS)
    x = np.arange(8, dtype=np.int32).reshape(4, 2) - 3
    assert np.array_equal(run(out, x)[0], run(text, x)[0])


def test_concatenating_operands_padded_along_the_dim_is_an_error():
    # each 3-row operand pads to 4 on "x"; the padding would sit between the operands
    text = _func('  %0 = sdy.all_slice [{"x"}] %arg0 out_sharding=<@mesh, [{"x"}]> : tensor<3xi32>\n'
                 '  %1 = stablehlo.concatenate %0, %0, dim = 0 {sdy.sharding = #sdy.sharding_per_value'
                 '<[<@mesh, [{"x"}]>]>} : (tensor<3xi32>, tensor<3xi32>) -> tensor<6xi32>\n'
                 '  %2 = sdy.all_gather [{"x"}] %1 out_sharding=<@mesh, [{}]> : tensor<6xi32>\n'
                 "  return %2 : tensor<6xi32>", "%arg0: tensor<3xi32>", "tensor<6xi32>")
    with pytest.raises(ShardyRefError, match=r"'stablehlo\.concatenate' operand padded along"):
        run_pipeline(text, PASS)
