"""``custom_call`` rules by call target: pointwise targets, the linear-algebra and top-k
targets, ``X64Combine`` with and without an ``rng_bit_generator`` user, targets left
without a rule on purpose, and unknown targets (no rule, one warning)."""
from __future__ import annotations

import pytest

from shardy_ref.pass_manager import PassContext
from shardy_ref.propagate.rules import create_op_sharding_rule
from shardy_ref.propagate.rules.registry import reset_warnings_once

from .rule_helpers import case, check_case, func_ops, single_op


def _call(name, target, args, results, expected, operands="%arg0"):
    types = f"({', '.join(args)}) -> ({', '.join(results)})"
    lhs = "%0" if len(results) == 1 else f"%0:{len(results)}"
    return case(name, f"{lhs} = stablehlo.custom_call @{target}({operands}) : {types}",
                args, results, expected)


CASES = [
    _call("move_to_host_pointwise", "MoveToHost", ["tensor<4x6xf32>"], ["tensor<4x6xf32>"],
          "([i, j])->([i, j]) {i=4, j=6}"),
    _call("spmd_multi_rotate_pointwise", "_SPMDInternalOp_MultiRotate", ["tensor<8xf32>"],
          ["tensor<8xf32>", "tensor<8xf32>"], "([i])->([i], [i]) {i=8}"),
    _call("callback_has_no_rule", "xla_ffi_python_cpu_callback", ["tensor<8xf32>"],
          ["tensor<8xf32>"], None),
    _call("eigh_unbatched", "Eigh", ["tensor<6x6xf32>"], ["tensor<6x6xf32>", "tensor<6xf32>"],
          "([i, j])->([i, j], [j]) {i=6, j=6}"),
    _call("qr_batched_wide", "Qr", ["tensor<2x3x5xf32>"],
          ["tensor<2x3x5xf32>", "tensor<2x3xf32>"],
          "([i, j, k])->([i, j, k], [i, l]) {i=2, j=3, k=5, l=3} need_replication={j, k, l}"),
    _call("householder_unbatched", "ProductOfElementaryHouseholderReflectors",
          ["tensor<5x3xf32>", "tensor<3xf32>"], ["tensor<5x3xf32>"],
          "([i, j], [k])->([i, j]) {i=5, j=3, k=3} need_replication={i, j, k}",
          operands="%arg0, %arg1"),
    _call("topk_last_dim", "mhlo.topk", ["tensor<4x16xf32>"],
          ["tensor<4x2xf32>", "tensor<4x2xi32>"],
          "([i, j])->([i, j], [i, j]) {i=4, j=16} need_replication={j} "
          "blocked_propagation={j}"),
    _call("approx_topk_first_dim", "ApproxTopK",
          ["tensor<16x4xf32>", "tensor<16x4xi32>", "tensor<f32>", "tensor<i32>"],
          ["tensor<2x4xf32>", "tensor<2x4xi32>"],
          "([i, k], [i, k], [], [])->([j, k], [j, k]) {i=16, j=2, k=4} need_replication={j} "
          "blocked_propagation={j}", operands="%arg0, %arg1, %arg2, %arg3"),
    _call("x64_combine_pointwise", "X64Combine", ["tensor<2xui32>", "tensor<2xui32>"],
          ["tensor<2xui64>"], "([i], [i])->([i]) {i=2}", operands="%arg0, %arg1"),
    _call("unknown_target", "my_kernel", ["tensor<8xf32>"], ["tensor<8xf32>"], None),
]


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_rule(c):
    check_case(c)


def test_x64_combine_feeding_rng_bit_generator_is_blocked():
    text = ("func.func @f(%a: tensor<2xui32>) -> tensor<4xui32> {\n"
            "  %c = stablehlo.custom_call @X64Combine(%a, %a) : "
            "(tensor<2xui32>, tensor<2xui32>) -> tensor<2xui64>\n"
            "  %s, %o = stablehlo.rng_bit_generator %c, algorithm = DEFAULT : "
            "(tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)\n"
            "  return %o : tensor<4xui32>\n}\n")
    rule = create_op_sharding_rule(func_ops(text)[0])
    assert rule.params() == ("<([i], [i])->([i]) {i=2} need_replication={i} "
                             "blocked_propagation={i}>")


def test_unknown_target_warns_once_per_process():
    reset_warnings_once()
    text = single_op("%0 = stablehlo.custom_call @my_kernel(%arg0) : "
                     "(tensor<8xf32>) -> tensor<8xf32>", ["tensor<8xf32>"], ["tensor<8xf32>"])
    ctx = PassContext()
    for _ in range(2):
        assert create_op_sharding_rule(func_ops(text)[0], ctx=ctx) is None
    assert [(d.severity, d.message) for d in ctx.diagnostics] == [
        ("warning", "custom call @my_kernel is unknown to SDY sharding rule registry")]
    reset_warnings_once()

