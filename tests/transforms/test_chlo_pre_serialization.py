"""StableHLO's ``chlo-pre-serialization-pipeline``, as its and JAX's interpret tests run it:
``stablehlo-opt --chlo-pre-serialization-pipeline -inline FILE | stablehlo-translate
--interpret``, here with our two tools."""
from __future__ import annotations

import subprocess
import sys

import pytest

from shardy_ref.ir.diagnostics import PassError
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassManager, parse_pipeline

T = "tensor<4xf32>"
PROGRAM = f"""func.func @main() -> {T} {{
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : {T}
  %0 = chlo.square %c : {T} -> {T}
  %1 = func.call @twice(%0) : ({T}) -> {T}
  check.expect_almost_eq_const %1, dense<[2.0, 8.0, 18.0, 32.0]> : {T}
  return %1 : {T}
}}
func.func private @twice(%x: {T}) -> {T} {{
  %0 = chlo.broadcast_add %x, %x : ({T}, {T}) -> {T}
  return %0 : {T}
}}
"""


def _run(text: str, pipeline: str, **parse) -> str:
    module = parse_module(text, "t.mlir", **parse)
    PassManager(parse_pipeline(pipeline, anchored=True)).run(module, PassContext())
    return print_module(module, generic_dialects=("check",))


def test_lowers_chlo_as_chlo_legalize_to_stablehlo_does():
    ours = _run(PROGRAM, "builtin.module(chlo-pre-serialization-pipeline)")
    assert "chlo." not in ours
    assert ours == _run(PROGRAM, "builtin.module(func.func(chlo-legalize-to-stablehlo))")


def test_opt_then_translate_runs_the_program(tmp_path):
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    lowered = subprocess.run(
        [sys.executable, "-m", "shardy_ref.tools.opt", "--chlo-pre-serialization-pipeline",
         "-inline", str(src)], capture_output=True, text=True, check=True).stdout
    assert "call" not in lowered and "chlo." not in lowered
    done = subprocess.run([sys.executable, "-m", "shardy_ref.tools.translate", "--interpret"],
                          input=lowered, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("op", [
    '%0 = "shape.const_shape"() {shape = []} : () -> tensor<0xindex>',
    "%0 = arith.constant 3 : index",
])
def test_shape_and_index_computations_are_refused_with_a_location(op):
    text = f"func.func @f() {{\n  {op}\n  return\n}}\n"
    with pytest.raises(PassError) as e:
        _run(text, "builtin.module(chlo-pre-serialization-pipeline)",
             allow_unregistered=True)
    assert e.value.location.line == 2
    assert "cannot legalize" in str(e.value)
