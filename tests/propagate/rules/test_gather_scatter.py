"""Gather and scatter: offset / batch / collapsed / index-vector dimensions, and how a
scatter's update computation decides between reduction and need-replication factors."""
from __future__ import annotations

import pytest

from shardy_ref.propagate.rules.gather_scatter import common_supported_reduction_op

from .rule_helpers import func_ops, rule_of, single_op
from .strategies_indexing import region, tensor


def _gather(dims: str, slice_sizes: str, operand: str, indices: str, result: str) -> str:
    return single_op(
        f'%0 = "stablehlo.gather"(%arg0, %arg1) <{{dimension_numbers = #stablehlo.gather<'
        f"{dims}>, indices_are_sorted = false, slice_sizes = array<i64: {slice_sizes}>}}> : "
        f"({operand}, {indices}) -> {result}", [operand, indices], [result])


def test_gather_sliced_offset_dim_is_blocked_need_replication():
    text = _gather("offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], "
                   "index_vector_dim = 1", "1, 3, 4", "tensor<8x6x4xf32>", "tensor<5x1xi32>",
                   "tensor<5x3x4xf32>")
    # dim 1 (6 -> 3) is one blocked factor; dim 2 is unsliced; collapsed dim 0 (size 8) is
    # a reduction factor; the index vector dim needs replication
    assert rule_of(text) == ("([l, j, k], [i, m])->([i, j, k]) {i=5, j=6, k=4, l=8, m=1} "
                             "reduction={l} need_replication={j, m} blocked_propagation={j}")


def test_gather_size_one_slice_and_collapsed_dim():
    text = _gather("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
                   "index_vector_dim = 1", "1, 1", "tensor<1x6xf32>", "tensor<5xi32>",
                   "tensor<5x1xf32>")
    # the offset dim sliced to size 1: the operand dim is a reduction factor and the result
    # dim its own need-replication factor; the size-1 collapsed dim needs replication
    assert rule_of(text) == ("([l, j], [i])->([i, k]) {i=5, j=6, k=1, l=1} reduction={j} "
                             "need_replication={k, l}")


def test_gather_explicit_batching_dim_is_shared_by_all_three():
    text = _gather("offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], "
                   "start_indices_batching_dims = [1], start_index_map = [1], "
                   "index_vector_dim = 2", "1, 1, 4", "tensor<3x7x4xf32>", "tensor<2x3x1xi32>",
                   "tensor<2x3x4xf32>")
    assert rule_of(text) == ("([j, l, k], [i, j, m])->([i, j, k]) {i=2, j=3, k=4, l=7, m=1} "
                             "reduction={l} need_replication={m}")


def _scatter(lines: list[str], rets: list[str], element: str = "f32", n: int = 1) -> str:
    scalar = tensor((), element)
    params = [(f"%a{i}", scalar) for i in range(n)] + [(f"%b{i}", scalar) for i in range(n)]
    inputs = [tensor((4, 6), element)] * n
    types = [*inputs, "tensor<3x1xi32>", *[tensor((3, 6), element)] * n]
    operands = ", ".join(f"%arg{i}" for i in range(len(types)))
    result = "%0" if n == 1 else f"%0:{n}"
    return single_op(
        f'{result} = "stablehlo.scatter"({operands}) <{{indices_are_sorted = false, '
        "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
        "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
        "index_vector_dim = 1>, unique_indices = false}> "
        f"{region(params, lines, [(r, scalar) for r in rets])} : ({', '.join(types)}) -> "
        f"({', '.join(inputs)})", types, inputs)


REDUCING = "([k, j], [i, l], [i, j])->([k, j]) {i=3, j=6, k=4, l=1} reduction={i} " \
           "need_replication={l}"
NOT_REDUCING = "([k, j], [i, l], [i, j])->([k, j]) {i=3, j=6, k=4, l=1} " \
               "need_replication={i, l}"


@pytest.mark.parametrize(("lines", "rets", "element", "expected"), [
    (["%r = stablehlo.add %a0, %b0 : tensor<f32>"], ["%r"], "f32", REDUCING),
    (["%r = stablehlo.maximum %b0, %a0 : tensor<f32>"], ["%r"], "f32", REDUCING),
    (["%r = stablehlo.or %a0, %b0 : tensor<i1>"], ["%r"], "i1", REDUCING),
    (["%r = stablehlo.and %a0, %b0 : tensor<i32>"], ["%r"], "i32", NOT_REDUCING),
    (["%r = stablehlo.subtract %a0, %b0 : tensor<f32>"], ["%r"], "f32", NOT_REDUCING),
    (["%r = stablehlo.add %a0, %a0 : tensor<f32>"], ["%r"], "f32", NOT_REDUCING),
    ([], ["%b0"], "f32", NOT_REDUCING),
], ids=["add", "swapped_max", "or_i1", "and_i32", "subtract", "same_arg_twice", "replace"])
def test_scatter_implicit_batch_dim_type(lines, rets, element, expected):
    """The indices/updates-only batch dim (i) is a reduction factor only when the update
    computation is a supported reduction of (input, update)."""
    assert rule_of(_scatter(lines, rets, element)) == expected


def test_scatter_two_inputs_need_one_common_reduction():
    same = _scatter(["%r0 = stablehlo.minimum %a0, %b0 : tensor<f32>",
                     "%r1 = stablehlo.minimum %a1, %b1 : tensor<f32>"], ["%r0", "%r1"], n=2)
    mixed = _scatter(["%r0 = stablehlo.minimum %a0, %b0 : tensor<f32>",
                      "%r1 = stablehlo.add %a1, %b1 : tensor<f32>"], ["%r0", "%r1"], n=2)
    crossed = _scatter(["%r0 = stablehlo.add %a0, %b1 : tensor<f32>",
                        "%r1 = stablehlo.add %a1, %b0 : tensor<f32>"], ["%r0", "%r1"], n=2)
    prefix = "([k, j], [k, j], [i, l], [i, j], [i, j])->([k, j], [k, j]) {i=3, j=6, k=4, l=1}"
    assert rule_of(same) == prefix + " reduction={i} need_replication={l}"
    assert rule_of(mixed) == prefix + " need_replication={i, l}"
    assert rule_of(crossed) == prefix + " need_replication={i, l}"
    assert common_supported_reduction_op(func_ops(same)[0]).name == "stablehlo.minimum"
    assert common_supported_reduction_op(func_ops(mixed)[0]) is None
