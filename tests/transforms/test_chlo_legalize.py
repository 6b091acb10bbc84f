"""``chlo-legalize-to-stablehlo`` and ``stablehlo-legalize-composite-to-call``: a legalized
program computes what the CHLO program computes (our interpreter on both: the CHLO kernels
against the StableHLO kernels the rewrite emits), every legalizable op is gone afterwards,
the others stay, and the passes run from ``shardy-ref-opt`` on the interpreter tests."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import make_pass
from tests.conftest import SHARED
from tests.execute.chlo_programs import legalize_with_ours, program, random_array, ttype
from tests.execute.oracle import assert_same, ours


def _legalized(text: str) -> str:
    (out,) = legalize_with_ours([text])
    verify_module(parse_module(out))
    return out


def _same_results(text: str, rtol: float = 0.0) -> str:
    out = _legalized(text)
    assert_same(ours(out), ours(text), rtol=rtol, atol=rtol, context=out)
    return out


_INTS = ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_INTS), st.integers(0, 2**32 - 1))
def test_mulhi_decomposition(et, seed):
    rng = np.random.default_rng(seed)
    t = ttype((5,), et)
    text = program([(random_array(rng, (5,), et), et), (random_array(rng, (5,), et), et)],
                   f"  %r0 = chlo.mulhi %c0, %c1 : {t}, {t} -> {t}", [t])
    assert "chlo." not in _same_results(text)


_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "atan2", "power", "divide",
           "compare", "complex"]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(_BINARY), st.integers(0, 2**32 - 1), st.booleans())
def test_broadcast_decomposition(name, seed, explicit):
    rng = np.random.default_rng(seed)
    out = tuple(int(d) for d in rng.integers(1, 4, 3))
    small = out[1:] if rng.random() < 0.5 else (out[0], 1, out[2])
    if explicit and len(small) == 2:  # the small operand's dims go to dims 0 and 2
        small, dims = (out[0], out[2]), " {broadcast_dimensions = array<i64: 0, 2>}"
    else:
        dims = ""
    rt = ttype(out, "i1" if name == "compare" else "complex<f32>" if name == "complex" else
               "f32")
    attrs = dims
    if name == "compare":
        attrs = dims[:-1] + ", " if dims else " {"
        attrs += "comparison_direction = #chlo<comparison_direction GE>}"
    body = (f"  %r0 = chlo.broadcast_{name} %c0, %c1{attrs} : ({ttype(small, 'f32')}, "
            f"{ttype(out, 'f32')}) -> {rt}")
    text = program([(random_array(rng, small, "f32", 0.5, 3), "f32"),
                    (random_array(rng, out, "f32", 0.5, 3), "f32")], body, [rt])
    assert "chlo." not in _same_results(text)


def test_select_constants_and_simple_ops():
    x = np.array([-2.0, -0.5, 0.0, 0.25, 3.0], np.float32)
    t, p = "tensor<5xf32>", "tensor<5xi1>"
    body = "\n".join([
        f"  %s = chlo.square %c0 : {t} -> {t}",
        f"  %inf = chlo.is_inf %s : {t} -> {p}",
        f"  %pos = chlo.is_pos_inf %c0 : {t} -> {p}",
        f"  %neg = chlo.is_neg_inf %c0 : {t} -> {p}",
        f"  %atan = chlo.atan %c0 : {t} -> {t}",
        f"  %tan = chlo.tan %c0 : {t} -> {t}",
        f"  %conj = chlo.conj %c0 : {t} -> {t}",
        f"  %like = \"chlo.constant_like\"(%c0) <{{value = 4.0 : f32}}> : ({t}) -> {t}",
        "  %k = chlo.constant dense<1.5> : tensor<f32>",
        f"  %r0 = chlo.broadcast_select %inf, %like, %k : ({p}, {t}, tensor<f32>) -> {t}",
        f"  %r1 = chlo.broadcast_add %atan, %tan : ({t}, {t}) -> {t}",
        f"  %r2 = chlo.broadcast_and %pos, %neg : ({p}, {p}) -> {p}",
        f"  %r3 = chlo.broadcast_subtract %s, %conj : ({t}, {t}) -> {t}"])
    text = program([(x, "f32")], body, [t, t, p, t])
    # stablehlo.tan/atan2 on f32 are NumPy's float32 functions (within an ulp of the
    # reference's double-rounded value, which the CHLO kernels compute)
    assert "chlo." not in _same_results(text, rtol=1e-6)


def test_complex_square_and_conj():
    z = np.array([1 + 2j, -3 + 3j, 0.5 - 0.25j], np.complex64)
    t = "tensor<3xcomplex<f32>>"
    body = (f"  %a = chlo.square %c0 : {t} -> {t}\n  %b = chlo.conj %c0 : {t} -> {t}\n"
            f"  %r0 = chlo.broadcast_multiply %a, %b : ({t}, {t}) -> {t}")
    lines = [f"  %c0 = stablehlo.constant dense<[(1.0, 2.0), (-3.0, 3.0), (0.5, -0.25)]> : {t}",
             body]
    text = f"func.func @main() -> {t} {{\n" + "\n".join(lines) + f"\n  return %r0 : {t}\n}}"
    assert "chlo." not in _same_results(text)
    assert z.size == 3


def test_atanh_within_rounding():
    x = np.linspace(-1.5, 1.5, 13)
    t = "tensor<13xf32>"
    text = program([(x, "f32")], f"  %r0 = chlo.atanh %c0 : {t} -> {t}", [t])
    assert "chlo." not in _same_results(text, rtol=1e-6)


@pytest.mark.parametrize("et", ["f32", "i32", "ui8"])
def test_top_k_decomposition(et):
    rng = np.random.default_rng(5)
    x = np.round(random_array(rng, (3, 6), et, -3, 3)) + (0.0 if et == "f32" else 0)
    vt, it = ttype((3, 4), et), ttype((3, 4), "i32")
    text = program([(x, et)], f"  %r0, %r1 = chlo.top_k(%c0, k = 4) : {ttype((3, 6), et)} -> "
                              f"({vt}, {it})", [vt, it])
    assert "stablehlo.sort" in _same_results(text)


_MODES = [
    ((2, 5, 3), (3, 2, 3, 4), (2, 3), (2, 5, 4),
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions"
     " = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], "
     "rhs_group_dimensions = [0]"),
    ((5, 4), (3, 4, 2), (3,), (5, 2),
     "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
     "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]"),
    ((2, 5, 6), (2, 6, 3), (2, 3), (3, 2, 5, 3),
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions"
     " = [2], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [2]"),
    ((4, 2, 3), (4, 3, 5), (2,), (4, 2, 5),
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions"
     " = [2], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0]"),
]


@pytest.mark.parametrize("mode", range(len(_MODES)))
def test_ragged_dot_decomposition(mode):
    lhs, rhs, gs, out, dims = _MODES[mode]
    rng = np.random.default_rng(mode)
    total = lhs[[1, 0, 2, 0][mode]]  # the ragged dimension's size
    sizes = rng.integers(0, total, gs)
    body = (f'  %r0 = "chlo.ragged_dot"(%c0, %c1, %c2) {{ragged_dot_dimension_numbers = '
            f"#chlo.ragged_dot<{dims}>}} : ({ttype(lhs, 'f32')}, {ttype(rhs, 'f32')}, "
            f"{ttype(gs, 'i64')}) -> {ttype(out, 'f32')}")
    text = program([(rng.integers(-3, 4, lhs), "f32"), (rng.integers(-3, 4, rhs), "f32"),
                    (sizes, "i64")], body, [ttype(out, "f32")])
    assert "chlo." not in _same_results(text)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_decomposition(reverse):
    rng = np.random.default_rng(7)
    attrs = " attributes {is_reverse = true}" if reverse else ""
    body = (f"  %r0, %r1, %r2 = chlo.scan(%c0, %c1) inits(%c2) dimension=1{attrs} {{\n"
            "  ^bb0(%x: tensor<2xi32>, %y: tensor<2xi32>, %acc: tensor<2xi32>):\n"
            "    %s = stablehlo.add %x, %acc : tensor<2xi32>\n"
            "    %m = stablehlo.multiply %s, %y : tensor<2xi32>\n"
            "    stablehlo.return %s, %m, %m : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>\n"
            "  } : (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, "
            "tensor<2x3xi32>, tensor<2xi32>)")
    consts = [(rng.integers(-3, 4, (2, 3)), "i32"), (rng.integers(-3, 4, (2, 3)), "i32"),
              (rng.integers(-3, 4, (2,)), "i32")]
    text = program(consts, body, ["tensor<2x3xi32>", "tensor<2x3xi32>", "tensor<2xi32>"])
    out = _same_results(text)
    assert "stablehlo.while" in out and "chlo." not in out


def test_ops_without_a_legalization_stay():
    t = "tensor<4xf32>"
    body = "\n".join([f"  %e = chlo.erf %c0 : {t} -> {t}",
                      f"  %z = chlo.broadcast_zeta %c0, %c0 : ({t}, {t}) -> {t}",
                      f"  %r0 = chlo.broadcast_add %e, %z : ({t}, {t}) -> {t}"])
    text = program([(np.array([1.5, 2.0, 3.0, 4.0]), "f32")], body, [t])
    out = _same_results(text)
    assert "chlo.erf" in out and "chlo.zeta %" in out
    assert "chlo.broadcast" not in out


COMPOSITE = """func.func @add_n.impl(%arg0: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.add %arg0, %0 : tensor<i64>
  func.return %1 : tensor<i64>
}

func.func @main() -> (tensor<i64>, tensor<i64>) {
  %0 = stablehlo.constant dense<1> : tensor<i64>
  %1 = stablehlo.composite "stablehlo.add_n" %0 {
    composite_attributes = { n = 2 : i64 },
    decomposition = @add_n.impl
  } : (tensor<i64>) -> tensor<i64>
  %2 = stablehlo.composite "keep.me" %1 {decomposition = @add_n.impl} : (tensor<i64>) -> tensor<i64>
  func.return %1, %2 : tensor<i64>, tensor<i64>
}"""


def test_composite_to_call():
    module = parse_module(COMPOSITE)
    make_pass("stablehlo-legalize-composite-to-call").run(module, None)
    verify_module(module)
    printed = print_module(module)
    assert "%0 = call @add_n.impl(%c) : (tensor<i64>) -> tensor<i64>" in printed
    assert "stablehlo.composite" not in printed
    assert [int(v.data) for v in ours(printed)] == [3, 5]
    kept = parse_module(COMPOSITE)
    make_pass("stablehlo-legalize-composite-to-call", "except=keep.me").run(kept, None)
    assert print_module(kept).count("stablehlo.composite") == 1


@pytest.mark.conformance
def test_opt_runs_the_interpreter_tests_preprocessing():
    corpus = SHARED / "conformance" / "corpus-stablehlo" / "stablehlo" / "tests" / "interpret"
    for name in ("chlo/mulhi.mlir", "chlo/scan.mlir", "chlo/ragged_dot.mlir"):
        proc = subprocess.run([sys.executable, "-m", "shardy_ref.tools.opt",
                               "--chlo-legalize-to-stablehlo", "--split-input-file",
                               str(corpus / name)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "chlo." not in proc.stdout and "check.expect" in proc.stdout
