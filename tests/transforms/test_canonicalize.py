"""``canonicalize`` with sdy's canonicalization patterns (upstream ``ir/canonicalization.td``
and ``.cc``): each pattern's edge cases, and properties: the output verifies and a second
run changes nothing (canonicalize iterates to a fixpoint; upstream is idempotent)."""
# ruff: noqa: E501  (the inputs are MLIR lines, kept whole to stay readable)
from __future__ import annotations

import random

import corpus
import pytest
from hypothesis import given, settings

from shardy_ref.pass_manager import PassContext
from tests.propagate.pass_helpers import assert_idempotent, run_pipeline

from .strategies_canonicalize import (
    collective_module,
    collective_modules,
    reshard_module,
    reshard_modules,
)

T = "tensor<16x8xf32>"
MESHES = ('sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>\nsdy.mesh @mesh1 = <["a"=2, "b"=1]>\n'
          'sdy.mesh @rev = <["x"=2, "y"=2, "z"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>\n')


def canon(body: str, arg_sharding: str | None = '<@mesh, [{"x"}, {}]>', results: str = T,
          ctx: PassContext | None = None, allow_unregistered: bool = False) -> str:
    """Canonicalize ``func @f(%arg0: T) -> results {body}`` and return the func body."""
    attr = f" {{sdy.sharding = #sdy.sharding{arg_sharding}}}" if arg_sharding else ""
    text = f"{MESHES}func.func @f(%arg0: {T}{attr}) -> ({results}) {{\n{body}\n}}\n"
    out = run_pipeline(text, "canonicalize", ctx, allow_unregistered=allow_unregistered)
    return out[out.index("{\n", out.index("func.func")) + 2:]


def lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip() not in ("}", "")]


# -- no-op collectives --------------------------------------------------------------------

@pytest.mark.parametrize("op", [
    'sdy.all_gather [{}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]>',
    'sdy.all_slice [{}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]>',
    'sdy.all_reduce {} %arg0 out_sharding=<@mesh, [{"x"}, {}]>',
    'sdy.reduce_scatter [{}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]>',
    'sdy.collective_permute %arg0 out_sharding=<@mesh, [{"x", ?}, {}]>',
])
def test_no_op_collectives_fold_into_their_operand(op):
    out = canon(f"  %0 = {op} : {T}\n  return %0 : {T}")
    assert lines(out) == [f"return %arg0 : {T}"]


def test_collective_permute_to_another_mesh_or_order_is_kept():
    for out_sharding in ('<@mesh, [{"y"}, {}]>', '<@rev, [{"x"}, {}]>'):
        out = canon(f"  %0 = sdy.collective_permute %arg0 out_sharding={out_sharding} : {T}\n"
                    f"  return %0 : {T}")
        assert "sdy.collective_permute" in out


def test_non_empty_gather_is_kept_and_unused_collectives_stay():
    out = canon(f"""  %0 = sdy.all_gather [{{"x"}}, {{}}] %arg0 out_sharding=<@mesh, [{{}}, {{}}]> : {T}
  return %arg0 : {T}""")
    assert "sdy.all_gather" in out  # collectives are not trivially dead


# -- collective of collective -------------------------------------------------------------

def test_all_slice_of_all_gather_needs_equal_axes():
    body = """  %0 = sdy.all_gather [{{"x"}}, {{}}] %arg0 out_sharding=<@mesh, [{{}}, {{}}]> : {T}
  %1 = sdy.all_slice {axes} %0 out_sharding=<@mesh, {dims}> : {T}
  return %1 : {T}"""
    out = canon(body.format(axes='[{"x"}, {}]', dims='[{"x"}, {}]', T=T))
    assert lines(out)[-1] == f"return %arg0 : {T}"
    out = canon(body.format(axes='[{}, {"x"}]', dims='[{}, {"x"}]', T=T))
    assert "sdy.all_slice" in out


def test_all_reduce_of_replicated_to_unreduced_with_same_axes():
    out = canon(f"""  %0 = sdy.replicated_to_unreduced {{"y"}} %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}], unreduced={{"y"}}> : {T}
  %1 = sdy.all_reduce {{"y"}} %0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : {T}
  return %1 : {T}""")
    assert lines(out)[-1] == f"return %arg0 : {T}"


@pytest.mark.parametrize(("reduction", "unreduced", "fused"), [
    ('{"x", "y"}', "", True), ('{"x"}', ', unreduced={"y"}', False)])
def test_all_reduce_of_sharded_to_unreduced_needs_all_sorted_axes(reduction, unreduced, fused):
    out = canon(f"""  %0 = sdy.sharded_to_unreduced [{{"y"}}, {{"x"}}] %arg0 out_sharding=<@mesh, [{{}}, {{}}], unreduced={{"x", "y"}}> : {T}
  %1 = sdy.all_reduce {reduction} %0 out_sharding=<@mesh, [{{}}, {{}}]{unreduced}> : {T}
  return %1 : {T}""", arg_sharding='<@mesh, [{"y"}, {"x"}]>')
    assert ('sdy.all_gather [{"y"}, {"x"}] %arg0' in out) is fused


T4 = "tensor<16x16x16x16xf32>"


@pytest.mark.parametrize(("second", "fused"), [
    ('[{"z"}: 2->3] %0 out_sharding=<@mesh, [{}, {"x"}, {}, {"z"}]>', True),
    ('[{"x"}: 1->0] %0 out_sharding=<@mesh, [{"x"}, {}, {"z"}, {}]>', False)])
def test_all_to_all_fusion_needs_disjoint_dims(second, fused):
    text = f"""{MESHES}func.func @f(%arg0: {T4} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}, {{"z"}}, {{}}]>}}) -> {T4} {{
  %0 = sdy.all_to_all [{{"x"}}: 0->1] %arg0 out_sharding=<@mesh, [{{}}, {{"x"}}, {{"z"}}, {{}}]> : {T4}
  %1 = sdy.all_to_all {second} : {T4}
  return %1 : {T4}
}}
"""
    out = run_pipeline(text, "canonicalize")
    assert out.count("sdy.all_to_all") == (1 if fused else 2)
    assert ('[{"x"}: 0->1, {"z"}: 2->3] %arg0' in out) is fused


def test_all_to_all_fusion_sorts_params_and_drops_the_unused_inner_op():
    t = "tensor<16x16x16x16xf32>"
    text = f"""{MESHES}func.func @f(%arg0: {t} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{"y"}}, {{}}, {{}}]>}}) -> {t} {{
  %0 = sdy.all_to_all [{{"y"}}: 1->3] %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}, {{}}, {{"y"}}]> : {t}
  %1 = sdy.all_to_all [{{"x"}}: 0->2] %0 out_sharding=<@mesh, [{{}}, {{}}, {{"x"}}, {{"y"}}]> : {t}
  return %1 : {t}
}}
"""
    out = run_pipeline(text, "canonicalize")
    assert out.count("sdy.all_to_all") == 1
    assert 'sdy.all_to_all [{"x"}: 0->2, {"y"}: 1->3] %arg0' in out


REDUCE = ('  %0 = sdy.all_reduce {{"y", "z"}} %arg0 out_sharding=<@mesh, [{{"x"}}, {{}}]> : {T}\n')


def _slice(name: str, operand: str, axes: str, dims: str) -> str:
    return f"  {name} = sdy.all_slice {axes} {operand} out_sharding=<@mesh, {dims}> : {T}\n"


def test_reduce_scatter_fusion_with_residual_slice():
    out = canon(REDUCE.format(T=T) + _slice("%1", "%0", '[{"y"}, {"z"}]', '[{"x", "y"}, {"z"}]')
                + f"  return %1 : {T}")
    assert lines(out) == [
        f'%0 = sdy.reduce_scatter [{{"y"}}, {{"z"}}] %arg0 out_sharding=<@mesh, '
        f'[{{"x", "y"}}, {{"z"}}]> : {T}', f"return %0 : {T}"]


def test_reduce_scatter_fusion_requires_all_users_identical():
    base = REDUCE.format(T=T) + _slice("%1", "%0", '[{"y"}, {"z"}]', '[{"x", "y"}, {"z"}]')
    same = canon(base + _slice("%2", "%0", '[{"y"}, {"z"}]', '[{"x", "y"}, {"z"}]')
                 + f"  return %1, %2 : {T}, {T}", results=f"{T}, {T}")
    assert lines(same)[-1] == f"return %0, %0 : {T}, {T}" and "all_reduce" not in same
    other = canon(base + _slice("%2", "%0", '[{"z"}, {"y"}]', '[{"x", "z"}, {"y"}]')
                  + f"  return %1, %2 : {T}, {T}", results=f"{T}, {T}")
    assert "sdy.all_reduce" in other and "reduce_scatter" not in other


def test_reduce_scatter_fusion_needs_every_reduction_axis_as_a_prefix():
    out = canon(REDUCE.format(T=T) + _slice("%1", "%0", '[{}, {"y"}]', '[{"x"}, {"y"}]')
                + f"  return %1 : {T}")
    assert "sdy.all_reduce" in out and "reduce_scatter" not in out


# -- manual computation --------------------------------------------------------------------

def mc(operands: str, in_sh: str, out_sh: str, axes: str, args: str, body: str,
       types: str) -> str:
    return (f"  %0 = sdy.manual_computation({operands}) in_shardings=[{in_sh}] "
            f"out_shardings=[{out_sh}] manual_axes={{{axes}}} ({args}) {{\n{body}\n  }} : {types}\n")


def test_unused_manual_computation_inputs_are_dropped():
    body = mc("%arg0, %arg0", '<@mesh1, [{"a"}, {}]>, <@mesh1, [{}, {}]>', '<@mesh1, [{"a"}, {}]>',
              '"a"', f"%arg1: tensor<8x8xf32>, %arg2: {T}", "    sdy.return %arg1 : tensor<8x8xf32>",
              f"({T}, {T}) -> {T}")
    out = canon(body + f"  return %0 : {T}", arg_sharding=None)
    assert 'sdy.manual_computation(%arg0) in_shardings=[<@mesh1, [{"a"}, {}]>]' in out
    assert "(%arg1: tensor<8x8xf32>)" in out


def test_manual_computation_over_size_one_axes_is_inlined():
    body = mc("%arg0", '<@mesh1, [{"b"}, {}]>', '<@mesh1, [{"b"}, {}]>', '"b"', f"%arg1: {T}",
              f"    %1 = stablehlo.abs %arg1 : {T}\n    sdy.return %1 : {T}", f"({T}) -> {T}")
    out = canon(body + f"  return %0 : {T}", arg_sharding=None)
    assert lines(out) == [f"%0 = stablehlo.abs %arg0 : {T}", f"return %0 : {T}"]


def test_empty_manual_computation_without_values_is_erased():
    body = ("  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={\"a\"} () {\n"
            "    sdy.return\n  } : () -> ()\n")
    assert lines(canon(body + f"  return %arg0 : {T}", arg_sharding=None)) == \
        [f"return %arg0 : {T}"]


def test_inlining_an_unregistered_op_fails_with_upstreams_message():
    """Ops without an inliner interface cannot be inlined: the pattern reports upstream's
    error and leaves the op (canonicalize itself does not fail)."""
    body = mc("%arg0", '<@mesh1, [{"b"}, {}]>', '<@mesh1, [{"b"}, {}]>', '"b"', f"%arg1: {T}",
              f'    %1 = "test.foo"(%arg1) : ({T}) -> {T}\n    sdy.return %1 : {T}',
              f"({T}) -> {T}")
    ctx = PassContext()
    out = canon(body + f"  return %0 : {T}", arg_sharding=None, ctx=ctx,
                allow_unregistered=True)
    assert "sdy.manual_computation" in out
    assert [d.message for d in ctx.diagnostics] == [
        "'sdy.manual_computation' op failed to inline redundant ManualComputationOp."]


# -- reshard ----------------------------------------------------------------------------------

def test_reshard_of_reshard_drops_discardable_attributes_and_needs_one_use():
    out = canon(f"""  %0 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{}}]> : {T}
  %1 = sdy.reshard %0 <@mesh, [{{}}, {{"x"}}]> {{foo = 1 : i32}} : {T}
  return %1 : {T}""")
    assert lines(out) == [f'%0 = sdy.reshard %arg0 <@mesh, [{{}}, {{"x"}}]> : {T}',
                          f"return %0 : {T}"]
    kept = canon(f"""  %0 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{}}]> : {T}
  %1 = sdy.reshard %0 <@mesh, [{{}}, {{"x"}}]> : {T}
  return %0, %1 : {T}, {T}""", results=f"{T}, {T}")
    assert kept.count("sdy.reshard") == 2


def test_reshard_cse_reuses_the_earlier_equivalent_reshard_across_a_reshape():
    out = canon(f"""  %0 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{}}]> : {T}
  %1 = stablehlo.reshape %arg0 : ({T}) -> tensor<128xf32>
  %2 = sdy.reshard %1 <@mesh, [{{"y"}}]> : tensor<128xf32>
  return %0, %2 : {T}, tensor<128xf32>""", results=f"{T}, tensor<128xf32>")
    assert lines(out) == [f'%0 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{}}]> : {T}',
                          f"%1 = stablehlo.reshape %0 : ({T}) -> tensor<128xf32>",
                          f"return %0, %1 : {T}, tensor<128xf32>"]


def test_reshard_cse_ignores_later_and_nested_reshards():
    out = canon(f"""  %0 = sdy.named_computation<"n">(%arg0) (%arg1: {T}) {{
    %1 = sdy.reshard %arg1 <@mesh, [{{"y"}}, {{}}]> : {T}
    sdy.return %1 : {T}
  }} : ({T}) -> {T}
  %2 = sdy.reshard %arg0 <@mesh, [{{"y"}}, {{}}]> : {T}
  return %0, %2 : {T}, {T}""", results=f"{T}, {T}")
    assert out.count("sdy.reshard") == 2


# -- properties ----------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(reshard_modules)
def test_reshard_programs_canonicalize_idempotently(text):
    assert_idempotent(text, "canonicalize")


@settings(max_examples=30, deadline=None)
@given(collective_modules)
def test_collective_programs_canonicalize_idempotently(text):
    assert_idempotent(text, "canonicalize")


@pytest.mark.oracle
@pytest.mark.parametrize("generator", [reshard_module, collective_module])
def test_random_programs_canonicalize_like_real_shardy(generator):
    texts = [generator(random.Random(seed), funcs=20) for seed in range(4)]
    refs = corpus.oracle_print([(t, False) for t in texts],
                               pipeline="builtin.module(canonicalize)")
    for text, ref in zip(texts, refs):
        assert ref["ok"]
        assert run_pipeline(text, "canonicalize") == ref["out"]
