"""``sdy-manual-axes-cleanup``: manual axes sorted in mesh order, unused manual axes
replicated by every in/out sharding. Upstream's pass is idempotent (a cleaned-up
computation already satisfies both)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.sharding_walker import mesh_ops
from shardy_ref.parser import parse_module
from shardy_ref.propagate.import_.manual_axes_cleanup import MANUAL_COMPUTATION

from .pass_helpers import assert_idempotent, assert_like_oracle, examples, run_pipeline
from .strategies_meshes import manual_computation_modules

PASS = "sdy-manual-axes-cleanup"
MESHES = 'sdy.mesh @mesh = <["b"=4, "a"=2]>\nsdy.mesh @empty = <[]>\n'


def manual(in_sharding: str, out_sharding: str, axes: str, local: str = "tensor<4xf32>",
           operand: str = "tensor<16xf32>") -> str:
    return MESHES + f"""func.func @f(%arg0: {operand}) -> {operand} {{
  %0 = sdy.manual_computation(%arg0) in_shardings=[{in_sharding}]
      out_shardings=[{out_sharding}] manual_axes={{{axes}}} (%arg1: {local}) {{
    sdy.return %arg1 : {local}
  }} : ({operand}) -> {operand}
  return %0 : {operand}
}}
"""


def cleaned(text: str) -> str:
    out = run_pipeline(text, PASS)
    return next(line.strip() for line in out.splitlines() if "manual_computation" in line)


def test_sorts_manual_axes_in_mesh_order_and_replicates_unused():
    line = cleaned(manual('<@mesh, [{"b"}]>', '<@mesh, [{"b"}], replicated={"a"}>', '"a", "b"'))
    assert ('in_shardings=[<@mesh, [{"b"}], replicated={"a"}>] '
            'out_shardings=[<@mesh, [{"b"}], replicated={"a"}>] manual_axes={"b", "a"}') in line


def test_partly_used_axis_adds_the_missing_sub_axes_merged():
    line = cleaned(manual('<@mesh, [{"b":(1)2}]>', '<@mesh, [{"b":(1)2}]>', '"b"',
                          local="tensor<8xf32>"))
    assert 'in_shardings=[<@mesh, [{"b":(1)2}], replicated={"b":(2)2}>]' in line


def test_empty_mesh_sharding_rebound_to_the_common_mesh():
    line = cleaned(manual("<@empty, [{}]>", '<@mesh, [{"a"}]>', '"a"',
                          local="tensor<16xf32>", operand="tensor<16xf32>")
                   .replace("(%arg1: tensor<16xf32>) {\n    sdy.return %arg1 : tensor<16xf32>",
                            "(%arg1: tensor<16xf32>) {\n    %1 = stablehlo.slice %arg1 [0:8] : "
                            "(tensor<16xf32>) -> tensor<8xf32>\n    sdy.return %1 : "
                            "tensor<8xf32>"))
    assert 'in_shardings=[<@mesh, [{}], replicated={"a"}>] out_shardings=[<@mesh, [{"a"}]>]' \
        in line


def test_nothing_to_do_when_every_manual_axis_is_used():
    text = manual('<@mesh, [{"b", "a"}]>', '<@mesh, [{"b", "a"}]>', '"b", "a"',
                  local="tensor<2xf32>")
    assert run_pipeline(text, PASS) == run_pipeline(text, "")


NO_IO = """func.func @f() {{
  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={{{axes}}} () {{
{body}    sdy.return
  }} : () -> ()
  return
}}
"""
CONSTANT = "    %0 = sdy.constant dense<1.0> : tensor<8xf32>\n"


def test_no_inputs_or_outputs_with_manual_axes_needs_an_empty_body():
    assert "manual_axes={\"a\"}" in run_pipeline(
        MESHES + NO_IO.format(axes='"a"', body=""), PASS)
    run_pipeline(MESHES + NO_IO.format(axes="", body=CONSTANT), PASS)
    with pytest.raises(PassError, match=r"op has manual_axes when there are no in/out shardings"
                       r" and the body is not empty. This isn't allowed") as info:
        run_pipeline(MESHES + NO_IO.format(axes='"a"', body=CONSTANT), PASS)
    assert info.value.location.line == 4


def test_every_failing_computation_is_reported():
    text = MESHES + NO_IO.format(axes='"a"', body=CONSTANT) + NO_IO.format(
        axes='"b"', body=CONSTANT).replace("@f", "@g")
    with pytest.raises(PassError) as info:
        run_pipeline(text, PASS)
    assert [e.location.line for e in (info.value, *info.value.others)] == [4, 11]


@settings(max_examples=50, deadline=None)
@given(manual_computation_modules())
def test_idempotent_and_verifies(text):
    out = assert_idempotent(text, PASS)
    module = parse_module(out, "t")
    op = next(op for op in module.walk() if op.name == MANUAL_COMPUTATION)
    manual_axes = list(op.attributes["manual_axes"])
    mesh_order = [a.name for a in mesh_ops(module)[0].attributes["mesh"].axes]
    assert manual_axes == [a for a in mesh_order if a in manual_axes]
    for attr in ("in_shardings", "out_shardings"):
        for sharding in op.attributes[attr]:
            used = {a.name for a in sharding.all_axes()}
            assert set(manual_axes) <= used


@pytest.mark.oracle
def test_random_modules_like_real_shardy():
    texts = examples(manual_computation_modules(), 40)
    assert_like_oracle(texts, PASS)
