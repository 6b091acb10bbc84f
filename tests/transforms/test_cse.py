"""MLIR's ``cse`` pass: equivalent pure ops merged within dominance, dead ops dropped; the
same output as the oracle's ``sdy_opt -cse`` on random programs with duplicated ops."""
from __future__ import annotations

import subprocess

import pytest

from shardy_ref.ir.op_traits import NO_EFFECTS, is_terminator, op_effects
from shardy_ref.ir.operation import Operation
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

T = "tensor<4xf32>"


def cse(text: str) -> str:
    module = parse_module(text)
    PassManager(parse_pipeline("builtin.module(cse)", anchored=True)).run(module, PassContext())
    return print_module(module)


def test_equivalent_ops_merge_and_dead_ones_go():
    text = f"""func.func @main(%arg0: {T}) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  %1 = stablehlo.negate %arg0 : {T}
  %2 = stablehlo.abs %arg0 : {T}
  %3 = stablehlo.add %0, %1 : {T}
  return %3 : {T}
}}"""
    out = cse(text)
    assert out.count("stablehlo.negate") == 1 and "stablehlo.abs" not in out
    assert "stablehlo.add %0, %0" in out


def test_a_region_sees_the_ops_before_its_op_and_not_after():
    text = f"""func.func @main(%arg0: {T}, %p: tensor<i1>) -> {T} {{
  %0 = stablehlo.negate %arg0 : {T}
  %1 = "stablehlo.if"(%p) ({{
    %2 = stablehlo.negate %arg0 : {T}
    %3 = stablehlo.abs %arg0 : {T}
    stablehlo.return %2 : {T}
  }}, {{
    %4 = stablehlo.abs %arg0 : {T}
    stablehlo.return %4 : {T}
  }}) : (tensor<i1>) -> {T}
  %5 = stablehlo.abs %arg0 : {T}
  %6 = stablehlo.add %0, %1 : {T}
  %7 = stablehlo.add %6, %5 : {T}
  return %7 : {T}
}}"""
    out = cse(text)
    assert out.count("stablehlo.negate") == 1  # the one in the branch reuses the outer one
    assert out.count("stablehlo.abs") == 2  # the dead one is dropped; after the if: kept


def test_ops_with_different_attributes_or_types_stay():
    text = f"""func.func @main(%arg0: {T}) -> ({T}, {T}) {{
  %0 = stablehlo.constant dense<1.0> : {T}
  %1 = stablehlo.constant dense<2.0> : {T}
  %2 = stablehlo.add %arg0, %0 : {T}
  %3 = stablehlo.add %arg0, %1 : {T}
  return %2, %3 : {T}, {T}
}}"""
    assert cse(text).count("stablehlo.add") == 2


def duplicated(text: str) -> str:
    """``text`` with every pure, region-free op computed twice (the copy used by half of
    the uses): what CSE must undo."""
    module = parse_module(text)
    for op in list(module.walk()):
        if op.regions or is_terminator(op) or op_effects(op) != NO_EFFECTS or not op.results:
            continue
        copy: Operation = op.clone()
        op.parent.insert_before(op, copy)
        for result, twin in zip(op.results, copy.results, strict=True):
            for use in list(result.uses)[::2]:
                use.owner.set_operand(use.index, twin)
    return print_module(module)


@pytest.mark.oracle
def test_matches_the_oracle_on_programs_with_duplicates(tmp_path):
    from shardy_ref.testing.programs import random_program
    from tests.conftest import SHARED

    oracle = SHARED / "oracle" / "sdy_opt"
    compared = 0
    for seed in range(8):
        text = duplicated(random_program(seed))
        path = tmp_path / f"p{seed}.mlir"
        path.write_text(text)
        theirs = subprocess.run([str(oracle), str(path), "-cse"], capture_output=True,
                                text=True, check=False)
        assert theirs.returncode == 0, theirs.stderr
        assert cse(text) == theirs.stdout, seed
        compared += text != cse(text)
    assert compared >= 6  # the duplicates were there to remove
