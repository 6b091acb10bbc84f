"""``op_symbol_uses``: the symbols an op and its nested ops refer to, memoised per attribute
object while a pipeline runs (symbol-dce runs several times in the propagation pipeline)."""
from __future__ import annotations

from shardy_ref.ir.run_memo import pipeline_memos
from shardy_ref.ir.symbols import op_symbol_uses
from shardy_ref.parser import parse_module

TEXT = ('sdy.mesh @mesh = <["a"=2]>\n'
        'sdy.mesh @other = <["b"=2]>\n'
        "func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  return %x : tensor<4xf32>\n}\n"
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        '  %1 = stablehlo.add %0, %0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, '
        '[{"a"}]>]>} : tensor<4xf32>\n'
        "  return %1 : tensor<4xf32>\n}\n")


def _func(module, name):
    return next(op for op in module.walk() if op.name == "func.func"
                and op.attributes["sym_name"].value == name)


def test_symbol_uses_are_the_same_with_the_pipeline_memo():
    module = parse_module(TEXT)
    plain = op_symbol_uses(_func(module, "f"))
    with pipeline_memos():
        first = op_symbol_uses(_func(module, "f"))
        again = op_symbol_uses(_func(module, "f"))
    assert plain == first == again == {"g", "mesh"}


def test_memoised_symbol_uses_follow_a_replaced_attribute():
    """The memo is keyed by the attribute object: a pass that sets a new attribute (here,
    a sharding on the other mesh) is seen at once."""
    module = parse_module(TEXT)
    add = next(op for op in module.walk() if op.name == "stablehlo.add")
    other = parse_module(TEXT.replace("<@mesh, ", "<@other, "))
    with pipeline_memos():
        assert "mesh" in op_symbol_uses(_func(module, "f"))
        add.attributes["sdy.sharding"] = next(
            op for op in other.walk() if op.name == "stablehlo.add").attributes["sdy.sharding"]
        uses = op_symbol_uses(_func(module, "f"))
    assert uses == {"g", "other"}
