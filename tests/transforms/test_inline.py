"""MLIR's ``inline`` pass, as StableHLO's test pipelines run it before the interpreter
(``stablehlo-opt -inline FILE | stablehlo-translate --interpret``)."""
from __future__ import annotations

import subprocess
import sys

from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

T = "tensor<4xf32>"
CALLS = f"""func.func @main() {{
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : {T}
  %0 = call @twice(%c) : ({T}) -> {T}
  %i = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.while(%k = %i, %v = %0) : tensor<i32>, {T}
  cond {{
    %two = stablehlo.constant dense<2> : tensor<i32>
    %lt = stablehlo.compare LT, %k, %two : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %k1 = stablehlo.add %k, %one : tensor<i32>
    %v1 = func.call @twice(%v) : ({T}) -> {T}
    stablehlo.return %k1, %v1 : tensor<i32>, {T}
  }}
  check.expect_eq_const %1#1, dense<[8.0, 16.0, 24.0, 32.0]> : {T}
  func.return
}}
func.func private @twice(%x: {T}) -> {T} {{
  %0 = call @add(%x, %x) : ({T}, {T}) -> {T}
  return %0 : {T}
}}
func.func private @add(%x: {T}, %y: {T}) -> {T} {{
  %0 = stablehlo.add %x, %y : {T}
  return %0 : {T}
}}
"""


def inline(text: str, options: str = "") -> str:
    module = parse_module(text)
    pipeline = f"builtin.module(inline{{{options}}})" if options else "builtin.module(inline)"
    PassManager(parse_pipeline(pipeline, anchored=True)).run(module, PassContext())
    return print_module(module)


def test_calls_are_inlined_transitively_and_dead_private_functions_go():
    out = inline(CALLS)
    assert "call" not in out and "@twice" not in out and "@add" not in out
    assert out.count("stablehlo.add %") >= 2


def test_recursive_functions_keep_their_calls():
    text = f"""func.func @main(%x: {T}) -> {T} {{
  %0 = call @f(%x) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%x: {T}) -> {T} {{
  %0 = call @f(%x) : ({T}) -> {T}
  return %0 : {T}
}}
"""
    out = inline(text, "default-pipeline=")
    assert out.count("call @f") == 2


def test_inline_then_interpret_as_stablehlos_pipelines_do(tmp_path):
    """``shardy-ref-opt -inline FILE | shardy-ref-translate --interpret``."""
    path = tmp_path / "calls.mlir"
    path.write_text(CALLS)
    bin_dir = f"{sys.prefix}/bin"
    done = subprocess.run(f"{bin_dir}/shardy-ref-opt -inline {path} | "
                          f"{bin_dir}/shardy-ref-translate --interpret",
                          shell=True, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    wrong = CALLS.replace("32.0]>", "33.0]>")
    path.write_text(wrong)
    done = subprocess.run(f"{bin_dir}/shardy-ref-opt -inline {path} | "
                          f"{bin_dir}/shardy-ref-translate --interpret",
                          shell=True, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "check.expect_eq_const" in done.stderr
