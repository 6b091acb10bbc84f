"""Work that must stay linear in the module's size (issue 15: a 100k-op module parses,
verifies and propagates in linear time; ``benchmarks/scale.py`` measures it). Each test
counts the operation that used to be repeated per op or per function, so it fails on the
quadratic code without timing anything."""
from __future__ import annotations

import pytest

from shardy_ref.ir import symbols
from shardy_ref.ir.operation import Value
from tests.propagate.pass_helpers import run_pipeline

T = "tensor<8x8xf32>"
MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
FUNCTIONS = 40


def _count(monkeypatch, cls, name: str) -> list[int]:
    """Count calls of ``cls.name`` (a method or a property getter)."""
    calls = [0]
    original = cls.__dict__[name]
    getter = original.fget if isinstance(original, property) else original

    def counted(*args, **kwargs):
        calls[0] += 1
        return getter(*args, **kwargs)

    monkeypatch.setattr(cls, name, property(counted) if isinstance(original, property)
                        else counted)
    return calls


def _functions_with_reshards() -> str:
    funcs = "".join(
        f'func.func @f{i}(%arg0: {T} {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}})'
        f" -> {T} {{\n"
        f'  %0 = sdy.reshard %arg0 <@mesh, [{{}}, {{"y"}}]> : {T}\n'
        f"  %1 = stablehlo.add %0, %0 : {T}\n"
        f"  return %1 : {T}\n}}\n" for i in range(FUNCTIONS))
    return MESH + funcs


@pytest.mark.parametrize("pipeline", [
    "sdy-insert-explicit-reshards", "sdy-reshard-to-collectives", "sdy-verify-unreduced-axes",
    "builtin.module(func.func(sdy-reshard-to-collectives))"])
def test_function_pass_builds_the_module_symbol_table_once(monkeypatch, pipeline):
    calls = _count(monkeypatch, symbols.SymbolTable, "__init__")
    run_pipeline(_functions_with_reshards(), pipeline)
    assert calls[0] < 5  # the verifier's, the pass's: not one per function


def test_symbol_table_is_not_shared_outside_a_nested_pass():
    from shardy_ref.parser import parse_module

    module = parse_module(MESH)
    assert symbols.symbol_table(module) is not symbols.symbol_table(module)
    with symbols.symbols_fixed(module):
        assert symbols.symbol_table(module) is symbols.symbol_table(module)
        inner = module.regions[0].blocks[0].first_op
        assert symbols.symbol_table(inner) is not symbols.symbol_table(inner)


def test_constant_splitter_finds_sharding_groups_once_per_constant(monkeypatch):
    users = 200
    ops = "".join(f"  %a{i} = stablehlo.add %c, %arg0 : {T}\n" for i in range(users))
    text = (f"func.func @main(%arg0: {T}) -> {T} {{\n"
            f"  %c = stablehlo.constant dense<1.0> : {T}\n"
            f"  sdy.sharding_group %c group_id = 0 : {T}\n{ops}"
            f"  return %a{users - 1} : {T}\n}}\n")
    calls = _count(monkeypatch, Value, "users")
    out = run_pipeline(text, "sdy-constant-or-scalar-splitter")
    assert out.count("sdy.sharding_group") == users  # a clone per user, the original gone
    assert calls[0] < users // 4
