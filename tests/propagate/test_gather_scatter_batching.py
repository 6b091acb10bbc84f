"""``sdy-explicit-gather-scatter-batching``: an implicit batch dimension 0 of a gather or
scatter whose index component comes from an iota becomes an explicit batching dimension.
Upstream's pass is idempotent: a rewritten op has batching dims, and the pattern skips
those."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.stablehlo_attrs import GatherDimensionNumbers, ScatterDimensionNumbers
from shardy_ref.parser import parse_module

from .pass_helpers import assert_idempotent, assert_like_oracle, examples, run_pipeline

PASS = "sdy-explicit-gather-scatter-batching"


def gather_func(operand: str, indices_decls: str, indices: str, indices_type: str,
                dims: str, slice_sizes: str, result: str, extra_args: str = "") -> str:
    return f"""func.func @f(%op: {operand}{extra_args}) -> {result} {{
  {indices_decls}
  %res = "stablehlo.gather"(%op, {indices}) {{dimension_numbers = #stablehlo.gather<{dims}>,
    slice_sizes = array<i64: {slice_sizes}>}} : ({operand}, {indices_type}) -> {result}
  return %res : {result}
}}"""


def concat_gather(components: list[str], start_index_map: str, collapsed: str = "0",
                  operand: str = "tensor<4x8x16xf32>", decls: str = "",
                  extra_args: str = "") -> str:
    """A gather of ``operand`` whose ``tensor<4xK>`` indices concatenate ``components``."""
    k = len(components)
    types = ", ".join(["tensor<4x1xi32>"] * k)
    rank = operand.count("x")
    slice_sizes = ", ".join(["1"] * rank)
    decls += (f"\n  %idx = stablehlo.concatenate {', '.join(components)}, dim = 1 : "
              f"({types}) -> tensor<4x{k}xi32>")
    n_offset = rank - len(collapsed.split(","))
    result = "tensor<4" + "x1" * n_offset + "xf32>"
    offset = ", ".join(str(1 + i) for i in range(n_offset))
    dims = (f"offset_dims = [{offset}], collapsed_slice_dims = [{collapsed}], "
            f"start_index_map = [{start_index_map}], index_vector_dim = 1")
    return gather_func(operand, decls, "%idx", f"tensor<4x{k}xi32>", dims, slice_sizes,
                       result, extra_args)


IOTA = "%iota = stablehlo.iota dim = 0 : tensor<4x1xi32>"
ARGS = ", %a: tensor<4x1xi32>, %b: tensor<4x1xi32>"


def gathers(text: str) -> list:
    return [op for op in parse_module(text, "t").walk() if op.name == "stablehlo.gather"]


def test_iota_component_dropped_from_concatenate():
    out = run_pipeline(concat_gather(["%a", "%iota", "%b"], "1, 0, 2", "0, 1", decls=IOTA,
                                     extra_args=ARGS), PASS)
    assert "stablehlo.iota" not in out
    assert "stablehlo.concatenate %arg1, %arg2, dim = 1" in out
    (g,) = gathers(out)
    assert g.attributes["dimension_numbers"] == GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(1,), operand_batching_dims=(0,),
        start_indices_batching_dims=(0,), start_index_map=(1, 2), index_vector_dim=1)
    assert str(g.attributes["indices_are_sorted"]) == "false"


def test_single_remaining_component_used_directly():
    out = run_pipeline(concat_gather(["%iota", "%a"], "0, 1", operand="tensor<4x8xf32>",
                                     decls=IOTA, extra_args=ARGS), PASS)
    assert "concatenate" not in out
    assert '"stablehlo.gather"(%arg0, %arg1)' in out


def test_whole_iota_indices_are_sliced():
    text = gather_func("tensor<4x4x4xf32>", "%i = stablehlo.iota dim = 0 : tensor<4x3xi32>",
                       "%i", "tensor<4x3xi32>", "collapsed_slice_dims = [0, 1, 2], "
                       "start_index_map = [1, 0, 2], index_vector_dim = 1", "1, 1, 1",
                       "tensor<4xf32>")
    out = run_pipeline(text, PASS)
    assert "stablehlo.slice %0 [0:4, 0:1]" in out
    assert "stablehlo.slice %0 [0:4, 2:3]" in out
    assert "stablehlo.concatenate %1, %2, dim = 1" in out


def test_concatenate_with_fewer_inputs_than_components_is_sliced():
    # The iota is input 0 of a 2-input concatenate of 3 components: upstream slices.
    text = gather_func("tensor<4x8x16xf32>", IOTA + "\n  %i = stablehlo.concatenate %iota, "
                       "%a, dim = 1 : (tensor<4x1xi32>, tensor<4x2xi32>) -> tensor<4x3xi32>",
                       "%i", "tensor<4x3xi32>", "offset_dims = [1], collapsed_slice_dims = "
                       "[0, 1], start_index_map = [0, 1, 2], index_vector_dim = 1",
                       "1, 1, 1", "tensor<4x1xf32>", ", %a: tensor<4x2xi32>")
    out = run_pipeline(text, PASS)
    assert "stablehlo.slice %1 [0:4, 1:3] : (tensor<4x3xi32>) -> tensor<4x2xi32>" in out
    assert "operand_batching_dims = [0]" in out


@pytest.mark.parametrize("component", [
    "%r = stablehlo.reshape %i1 : (tensor<4xi32>) -> tensor<4x1xi32>",
    "%r = stablehlo.broadcast_in_dim %i1, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>",
    "%r = stablehlo.clamp %a, %iota, %b : tensor<4x1xi32>",
    "%r = stablehlo.select %p, %a, %iota : tensor<4x1xi1>, tensor<4x1xi32>",
    # without an iota on the false branch, the true branch is followed
    "%r = stablehlo.select %p, %iota, %a : tensor<4x1xi1>, tensor<4x1xi32>",
])
def test_iota_seen_through_wrappers(component):
    decls = IOTA + "\n  %i1 = stablehlo.iota dim = 0 : tensor<4xi32>\n  " + component
    out = run_pipeline(concat_gather(["%r", "%a"], "0, 1", operand="tensor<4x8xf32>",
                                     decls=decls, extra_args=ARGS + ", %p: tensor<4x1xi1>"),
                       PASS)
    assert "operand_batching_dims = [0]" in out


@pytest.mark.parametrize(("component", "decls"), [
    ("%a", ""),                                                    # not an iota
    ("%iota", "%iota = stablehlo.iota dim = 1 : tensor<4x1xi32>"),  # iota along dim 1
    # neither branch is an iota (the true branch is followed)
    ("%r", IOTA + "\n  %r = stablehlo.select %p, %a, %b : tensor<4x1xi1>, tensor<4x1xi32>"),
    ("%r", IOTA + "\n  %r = stablehlo.clamp %iota, %a, %b : tensor<4x1xi32>"),
])
def test_non_iota_component_is_left_alone(component, decls):
    text = concat_gather([component, "%b"], "0, 1", operand="tensor<4x8xf32>", decls=decls,
                         extra_args=ARGS + ", %p: tensor<4x1xi1>")
    assert "batching" not in run_pipeline(text, PASS)


def test_already_explicit_batching_dims_unchanged():
    text = gather_func("tensor<4x4x8xf32>", IOTA + "\n  %i = stablehlo.concatenate %iota, %a,"
                       " dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>",
                       "%i", "tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = "
                       "[0], operand_batching_dims = [1], start_indices_batching_dims = [0], "
                       "start_index_map = [0, 2], index_vector_dim = 1", "1, 1, 1",
                       "tensor<4x1xf32>", ", %a: tensor<4x1xi32>")
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


@pytest.mark.parametrize("text", [
    # scalar start indices
    gather_func("tensor<4x8xf32>", "", "%i", "tensor<i32>", "offset_dims = [0], "
                "collapsed_slice_dims = [0], start_index_map = [0]", "1, 8", "tensor<8xf32>",
                ", %i: tensor<i32>"),
    # index_vector_dim of size 1
    gather_func("tensor<4x8xf32>", IOTA, "%iota", "tensor<4x1xi32>", "offset_dims = [1], "
                "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1",
                "1, 8", "tensor<4x8xf32>"),
    # implicit index_vector_dim (= rank of the indices)
    gather_func("tensor<4xf32>", "%i = stablehlo.iota dim = 0 : tensor<4xi32>", "%i",
                "tensor<4xi32>", "collapsed_slice_dims = [0], start_index_map = [0], "
                "index_vector_dim = 1", "1", "tensor<4xf32>"),
])
def test_degenerate_shapes_are_left_alone(text):
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_scalar_operand_is_left_alone():
    text = """func.func @f(%op: tensor<f32>, %i: tensor<4x0xi32>) -> tensor<4xf32> {
  %r = "stablehlo.gather"(%op, %i) {dimension_numbers = #stablehlo.gather<index_vector_dim = 1>,
    slice_sizes = array<i64>} : (tensor<f32>, tensor<4x0xi32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}"""
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


def test_mismatched_batch_size_and_uncollapsed_dim0_are_left_alone():
    text = concat_gather(["%iota", "%a"], "0, 1", collapsed="1", operand="tensor<4x8xf32>",
                         decls=IOTA, extra_args=ARGS)
    assert "batching" not in run_pipeline(text, PASS)
    text = concat_gather(["%iota", "%a"], "0, 1", operand="tensor<5x8xf32>", decls=IOTA,
                         extra_args=ARGS)
    assert "batching" not in run_pipeline(text, PASS)


SCATTER = """sdy.mesh @m = <["x"=2]>
func.func @f(%a: tensor<4x8xi32>, %b: tensor<4x8xf32>, %u0: tensor<4xi32>,
             %u1: tensor<4xf32>, %off: tensor<4x1xi32>) -> (tensor<4x8xi32>, tensor<4x8xf32>) {
  %iota = stablehlo.iota dim = 0 : tensor<4x1xi32>
  %i = stablehlo.concatenate %off, %iota, dim = 1
      : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
  %r:2 = "stablehlo.scatter"(%a, %b, %i, %u0, %u1) <{scatter_dimension_numbers =
      #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0],
      index_vector_dim = 1>, unique_indices = true}> ({
  ^bb0(%x0: tensor<i32>, %x1: tensor<f32>, %y0: tensor<i32>, %y1: tensor<f32>):
    %s = stablehlo.add %x0, %y0 : tensor<i32>
    stablehlo.return %s, %y1 : tensor<i32>, tensor<f32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x"}, {}]>, <@m, [{}, {}]>]>}
    : (tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x2xi32>, tensor<4xi32>, tensor<4xf32>)
    -> (tensor<4x8xi32>, tensor<4x8xf32>)
  return %r#0, %r#1 : tensor<4x8xi32>, tensor<4x8xf32>
}"""


def test_variadic_scatter_keeps_region_and_attributes():
    out = run_pipeline(SCATTER, PASS)
    (op,) = [o for o in parse_module(out, "t").walk() if o.name == "stablehlo.scatter"]
    assert op.attributes["scatter_dimension_numbers"] == ScatterDimensionNumbers(
        inserted_window_dims=(1,), input_batching_dims=(0,),
        scatter_indices_batching_dims=(0,), scatter_dims_to_operand_dims=(1,),
        index_vector_dim=1)
    assert str(op.attributes["unique_indices"]) == "true"
    assert str(op.attributes["indices_are_sorted"]) == "false"
    assert "sdy.sharding" in op.attributes
    assert [o.name for o in op.regions[0].blocks[0]] == ["stablehlo.add", "stablehlo.return"]
    assert op.operands[2].type.shape == (4, 1)


def test_iota_with_other_users_survives():
    text = concat_gather(["%iota", "%a"], "0, 1", operand="tensor<4x8xf32>", decls=IOTA,
                         extra_args=ARGS).replace(
        "return %res : tensor<4x1xf32>", "%t = stablehlo.add %idx, %idx : tensor<4x2xi32>\n"
        "  return %res : tensor<4x1xf32>")
    out = run_pipeline(text, PASS)
    assert "operand_batching_dims = [0]" in out
    assert "stablehlo.iota" not in out  # the add is dead: the driver erases it too


# -- properties ------------------------------------------------------------------------

@st.composite
def batched_gather_modules(draw) -> str:
    """A gather or scatter with ``tensor<BxK>`` indices (index_vector_dim 1) built from
    per-component values: iotas (along 0 or 1, possibly reshaped/broadcast/clamped/selected)
    or arguments, concatenated or as one whole iota/argument."""
    batch = draw(st.integers(1, 4))
    rank = draw(st.integers(1, 3))
    shape = [batch + draw(st.sampled_from([0, 0, 0, 1]))] + [
        draw(st.integers(1, 5)) for _ in range(rank - 1)]
    k = draw(st.integers(min(2, rank), rank))
    index_map = draw(st.permutations(range(rank)))[:k]
    if 0 not in index_map and draw(st.booleans()):  # favour an implicit batch on dim 0
        index_map[draw(st.integers(0, k - 1))] = 0
    collapsed = sorted(d for d in index_map if draw(st.booleans()) or d == 0)
    slice_sizes = [1 if d in index_map or d in collapsed else shape[d] for d in range(rank)]
    offset_shape = [slice_sizes[d] for d in range(rank) if d not in collapsed]
    args = [f"%op: tensor<{'x'.join(map(str, shape))}xf32>"]
    lines = []
    col = f"tensor<{batch}x1xi32>"
    if k == 1 or draw(st.integers(0, 2)) == 0:
        whole = f"tensor<{batch}x{k}xi32>"
        if draw(st.booleans()):
            lines.append(f"%idx = stablehlo.iota dim = {draw(st.sampled_from([0, 0, 1]))} "
                         f": {whole}")
        else:
            args.append(f"%idx: {whole}")
    else:
        names = []
        for c in range(k):
            kind = draw(st.sampled_from(["arg", "iota0", "iota0", "iota1", "reshape",
                                         "broadcast", "clamp", "select"]))
            n = f"%c{c}"
            names.append(n)
            vec = f"tensor<{batch}xi32>"
            if kind == "arg":
                args.append(f"{n}: {col}")
            elif kind in ("iota0", "iota1"):
                lines.append(f"{n} = stablehlo.iota dim = {kind[-1]} : {col}")
            elif kind in ("reshape", "broadcast"):
                lines.append(f"{n}v = stablehlo.iota dim = 0 : {vec}")
                lines.append(f"{n} = stablehlo.reshape {n}v : ({vec}) -> {col}"
                             if kind == "reshape" else
                             f"{n} = stablehlo.broadcast_in_dim {n}v, dims = [0] : "
                             f"({vec}) -> {col}")
            else:
                args.append(f"{n}a: {col}")
                lines.append(f"{n}i = stablehlo.iota dim = 0 : {col}")
                lines.append(f"{n} = stablehlo.clamp {n}a, {n}i, {n}a : {col}"
                             if kind == "clamp" else
                             f"{n} = stablehlo.select %p, {n}a, {n}i : tensor<{batch}x1xi1>,"
                             f" {col}")
        args.append(f"%p: tensor<{batch}x1xi1>")
        lines.append(f"%idx = stablehlo.concatenate {', '.join(names)}, dim = 1 : "
                     f"({', '.join([col] * k)}) -> tensor<{batch}x{k}xi32>")
    idx_type = f"tensor<{batch}x{k}xi32>"
    op_type = args[0].split(": ")[1]
    res_type = f"tensor<{'x'.join(map(str, [batch, *offset_shape]))}xf32>"
    offset = ", ".join(str(1 + i) for i in range(len(offset_shape)))
    ints = lambda xs: ", ".join(map(str, xs))  # noqa: E731
    if draw(st.booleans()):
        op = (f'%r = "stablehlo.gather"(%op, %idx) {{dimension_numbers = #stablehlo.gather<'
              f"offset_dims = [{offset}], collapsed_slice_dims = [{ints(collapsed)}], "
              f"start_index_map = [{ints(index_map)}], index_vector_dim = 1>, slice_sizes = "
              f"array<i64: {ints(slice_sizes)}>}} : ({op_type}, {idx_type}) -> {res_type}")
        ret = res_type
    else:
        args.append(f"%upd: {res_type}")
        op = (f'%r = "stablehlo.scatter"(%op, %idx, %upd) <{{scatter_dimension_numbers = '
              f"#stablehlo.scatter<update_window_dims = [{offset}], inserted_window_dims = "
              f"[{ints(collapsed)}], scatter_dims_to_operand_dims = [{ints(index_map)}], "
              f"index_vector_dim = 1>}}> ({{\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
              f"    stablehlo.return %y : tensor<f32>\n  }}) : ({op_type}, {idx_type}, "
              f"{res_type}) -> {op_type}")
        ret = op_type
    body = "\n  ".join([*lines, op, f"return %r : {ret}"])
    return f"func.func @f({', '.join(args)}) -> {ret} {{\n  {body}\n}}"


def _check_dims(text: str) -> None:
    """What upstream's gather/scatter verifier (absent from ours) would check of a
    rewritten op: one index component per mapped dim, batching dims kept apart."""
    for op in parse_module(text, "t").walk():
        if op.name == "stablehlo.gather":
            d = op.attributes["dimension_numbers"]
            idx = op.operands[1].type
            mapped, batching = d.start_index_map, d.operand_batching_dims
            collapsed = d.collapsed_slice_dims
        elif op.name == "stablehlo.scatter":
            d = op.attributes["scatter_dimension_numbers"]
            idx = op.operands[1].type
            mapped, batching = d.scatter_dims_to_operand_dims, d.input_batching_dims
            collapsed = d.inserted_window_dims
        else:
            continue
        assert idx.shape[d.index_vector_dim] == len(mapped)
        assert not set(batching) & (set(mapped) | set(collapsed))


@settings(max_examples=50, deadline=None)
@given(batched_gather_modules())
def test_output_verifies_and_pass_is_idempotent(text):
    out = assert_idempotent(text, PASS)
    _check_dims(out)


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = examples(batched_gather_modules(), 40)
    assert_like_oracle(texts, f"func.func({PASS})")
