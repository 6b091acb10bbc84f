"""The printer's fast paths and per-print memos write exactly what the plain paths write.

``print_stablehlo.print_plain`` (formats without words or clauses), the signature memo
of ``Printer.functional_type``, ``Printer.params_text`` and ``NameState``'s use-text
memo are each checked against the unoptimised code on every example and a generated
module.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from shardy_ref.ir.types import format_result_types
from shardy_ref.parser import parse_module, print_module
from shardy_ref.parser import print_stablehlo as ps
from shardy_ref.parser.names import NameState
from shardy_ref.parser.printer import Printer

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = """\
sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<?xf32>, %p: tensor<4xi1>,
             %z: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.add %a, %c : (tensor<4xf32>, tensor<?xf32>) -> tensor<4xf32>
  %2 = stablehlo.select %p, %0, %1 : tensor<4xi1>, tensor<4xf32>
  %3 = stablehlo.negate %2 {foo = 1 : i32} : tensor<4xf32>
  %4 = stablehlo.real %z : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %5 = stablehlo.complex %4, %3 : tensor<4xcomplex<f32>>
  %6 = stablehlo.abs %5 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %7 = stablehlo.compare LT, %6, %3, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %8:2 = stablehlo.optimization_barrier %7, %6 : tensor<4xi1>, tensor<4xf32>
  %9 = sdy.sharding_constraint %8#1 <@mesh, [{"x"}]> : tensor<4xf32>
  %10 = sdy.sharding_constraint %9 <@mesh, [{"x"}]> : tensor<4xf32>
  %11 = stablehlo.reshape %10 : (tensor<4xf32>) -> tensor<2x2xf32>
  %12 = stablehlo.reshape %11 : (tensor<2x2xf32>) -> tensor<4xf32>
  return %12 : tensor<4xf32>
}
"""


def _inputs() -> list[str]:
    import sys
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    from parse_print import generate

    texts = [EDGE_CASES, generate(300)[0]]
    texts += [p.read_text() for p in sorted((ROOT / "examples").rglob("*.mlir"))]
    return texts


def _plain_functional_type(self, op) -> str:
    ins = ", ".join(str(o.value.type) for o in op.op_operands)
    return f"({ins}) -> {format_result_types([r.type for r in op.results])}"


@pytest.fixture
def unoptimised(monkeypatch):
    """Switch the fast paths and memos off."""
    prepared = ps._prepared
    monkeypatch.setattr(ps, "_prepared", lambda name: (*prepared(name)[:3], False))
    monkeypatch.setattr(Printer, "functional_type", _plain_functional_type)
    monkeypatch.setattr(Printer, "params_text", lambda self, attr: attr.params())
    monkeypatch.setattr(NameState, "use", NameState._use_text)


def _prints(text: str) -> list[str]:
    module = parse_module(text)
    return [print_module(module, **kw) for kw in
            ({}, {"generic": True}, {"debug_info": True},
             {"debug_info": True, "local_scope": True})]


def test_fast_paths_print_the_same_text(request):
    texts = _inputs()
    fast = [_prints(t) for t in texts]
    request.getfixturevalue("unoptimised")
    assert [_prints(t) for t in texts] == fast


def test_plain_printer_is_taken_for_elementwise_ops():
    """The fast path is really used (else the comparison above checks nothing)."""
    from shardy_ref.parser.printer import PRINTERS

    Printer(parse_module(""))  # registers the printers
    for name in ("stablehlo.add", "stablehlo.negate", "stablehlo.reshape", "stablehlo.real"):
        assert PRINTERS[name] is ps.print_plain
    assert PRINTERS["stablehlo.compare"] is ps.print_common


def test_signature_memo_tells_apart_equal_shapes_of_other_types():
    module = parse_module(EDGE_CASES)
    p = Printer(module)
    ops = [op for op in module.walk() if op.name == "stablehlo.reshape"]
    texts = [p.functional_type(op) for op in ops * 2]
    assert texts == [_plain_functional_type(p, op) for op in ops * 2]
    assert len(set(texts)) == 2 and len(p.signatures) == 2


def test_use_memo_matches_the_uncached_names():
    module = parse_module(EDGE_CASES)
    p = Printer(module)
    p.print_op(module)
    values = [v for op in module.walk() for v in (*op.results, *op.operands)]
    assert [p.names.use(v) for v in values] == [p.names._use_text(v) for v in values]
    assert "%8#1" in {p.names.use(v) for v in values}


def test_an_unnumbered_value_used_before_its_op_prints_keeps_the_result_list_text():
    """A use of a value the printer did not number must not stand in for its op's result
    list (``%<<UNKNOWN SSA VALUE>>`` there, without ``%`` as a use)."""
    root = parse_module(EDGE_CASES)
    other = parse_module(EDGE_CASES)
    op = next(o for o in other.walk() if o.name == "stablehlo.negate")
    p = Printer(root)
    assert p.names.use(op.results[0]) == "<<UNKNOWN SSA VALUE>>"
    p.print_op(op)
    assert p.text().startswith("%<<UNKNOWN SSA VALUE>> = stablehlo.negate")
