"""The whole-op shortcut of the fused loop (shardy_ref/parser/op_shortcut.py) changes
nothing but speed: with it and without it, every text gives the same ops, locations,
operand bindings, diagnostics and errors."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.ir.location import FileLineColLoc, Location, NameLoc
from shardy_ref.ir.operation import Block, Operation, Region
from shardy_ref.ir.types import F32
from shardy_ref.parser import fast_lalr, op_shortcut, reader
from shardy_ref.parser.printer import print_module
from shardy_ref.testing.programs import programs
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
MLIR_FILES = sorted(p for d in ("examples", "docs", "tests") for p in (ROOT / d).rglob("*.mlir"))
sys.path.insert(0, str(ROOT / "benchmarks"))
import parse_print  # noqa: E402  (the benchmark's module of transformer-like layers)


def _outcome(text: str, shortcuts: bool, unregistered: bool = False) -> str:
    """The module printed with locations, every op's position, and the diagnostics of
    ``text``; or its error. Either way, whether the fused loop had Lark's redo the parse
    (a shortcut's misreading could hide behind that)."""
    diagnostics: list = []
    fallbacks = []
    fast_parse = fast_lalr.parse

    def parse(*args):
        try:
            return fast_parse(*args)
        except fast_lalr.Fallback:
            fallbacks.append(True)
            raise
    with pytest.MonkeyPatch.context() as m:
        m.setattr(reader, "SHORTCUTS", shortcuts)
        m.setattr(reader, "SHORTCUTS_FROM_CHARS", 0)
        m.setattr(fast_lalr, "parse", parse)
        try:
            module = reader.parse_module(text, "in.mlir", diagnostics=diagnostics,
                                         allow_unregistered=unregistered)
        except Exception as e:
            return f"{type(e).__name__}: {e}\nLark redid it: {bool(fallbacks)}"
    positions = [f"{op.name}@{op.location}" for op in module.walk()]
    return "\n".join([print_module(module, debug_info=True), print_module(module, generic=True),
                      *positions, *map(str, diagnostics), f"Lark redid it: {bool(fallbacks)}"])


def _read_by_shortcut(text: str, monkeypatch, shortcut=op_shortcut.OpShortcut) -> int:
    """How many phrases (ops by default) of ``text`` the ``shortcut`` class read."""
    read = shortcut.read
    count = 0

    def counting(self, *args):
        nonlocal count
        phrase = read(self, *args)
        count += phrase is not None
        return phrase
    with monkeypatch.context() as m:
        m.setattr(shortcut, "read", counting)
        m.setattr(reader, "SHORTCUTS_FROM_CHARS", 0)
        reader.parse_module(text)
    return count


def test_benchmark_layers_are_read_by_the_shortcut_and_parse_identically(monkeypatch):
    text, _ = parse_print.generate(200)
    layers = text.count("func.func")
    # per layer from the third (the first two are noted, then learnt from): its 18 ops
    # with a result but the last (a return follows it)
    assert _read_by_shortcut(text, monkeypatch) == 17 * (layers - 2)
    # and its three attr-dicts of arguments and result (the op's one is in its line)
    assert _read_by_shortcut(text, monkeypatch, op_shortcut.AttrDictShortcut) == \
        3 * (layers - 2)
    assert _outcome(text, True) == _outcome(text, False)


def test_repository_mlir_files_parse_identically(monkeypatch):
    read = 0
    for path in MLIR_FILES:
        text = path.read_text()
        for chunk in [text, *text.split("// -----")] if "// -----" in text else [text]:
            assert _outcome(chunk, True, True) == _outcome(chunk, False, True), path
            read += _read_by_shortcut(chunk, monkeypatch) if "stablehlo." in chunk else 0
    assert read > 100


def _repeated(line: str, last: str | None = None, args: str = "%a: tensor<f32>") -> str:
    """A function of ``line`` three times (``{n}``: a fresh result number), so its shape
    is learnt, then ``last`` (another ``line`` by default) and a ``return``."""
    body = "".join(f"  {line.format(n=n)}\n" for n in range(3))
    last = line.format(n=3) if last is None else last
    return f"func.func @f({args}) {{\n{body}  {last}\n  return\n}}\n"


def _functions(attrs: str) -> str:
    """Functions whose arguments and results have the attr-dict ``attrs``."""
    t = "tensor<" + "x".join(["1"] * 17 + ["2"]) + "xf32>"
    head = '#s = #sdy.sharding<@m, [{"x"}]>\nsdy.mesh @m = <["x"=2]>\n'
    return head + "".join(
        f"func.func @f{i}(%a: {t} {attrs}, %b: {t} {attrs}) -> ({t} {attrs}) {{\n"
        f"  return %a : {t}\n}}\n" for i in range(3))


ADD = "%{n} = stablehlo.add %a, %a : tensor<f32>"
_FACTORS = [chr(c) for c in range(ord("i"), ord("z"))]  # the 17 factors before `z`
_T = "tensor<" + "x".join(["1"] * len(_FACTORS) + ["2"]) + "xf32>"
EDGE_CASES = [
    # errors raised while rebuilding, or found after: as the loop raises them
    _repeated(ADD, "%3#1 = stablehlo.add %a, %a : tensor<f32>"),
    _repeated(ADD, "%3 = stablehlo.add %zz, %a : tensor<f32>"),
    _repeated(ADD, "%3 = stablehlo.add %b, %a : tensor<f32>", "%a: tensor<f32>, %b: tensor<i32>"),
    _repeated(ADD, "%2 = stablehlo.add %a, %a : tensor<f32>"),
    _repeated(ADD, "%3 = stablehlo.add %a, %a : tensor<f32>\n  $"),
    _repeated(ADD, "%3 = stablehlo.add %a : tensor<f32>"),
    _repeated("%{n} = stablehlo.add %a : tensor<f32>"),
    # what may still belong to the op, or makes the shape say less than the op
    _repeated(ADD, "%3 = stablehlo.add %a, %a : tensor<f32>\n  loc(\"x\":1:2)"),
    _repeated(ADD, "%3 = stablehlo.add %a, %a : tensor<f32> // c\n  loc(#l)") +
    "#l = loc(\"y\":3:4)\n",
    _repeated(ADD, "%3 = stablehlo.add %a, %a : tensor<f32>, tensor<f32>"),
    _repeated(ADD, "%3 = stablehlo.add %a,\n  %a : tensor<f32>"),
    _repeated("%{n} = stablehlo.add %a, %a : tensor<f32> loc(\"x\":{n}:2)"),
    _repeated("%{n} = stablehlo.add %a, %a : tensor<f32> // %a, %{n}"),
    _repeated("%{n} = stablehlo.add %a, %a : tensor<f32> // a comment"),
    _repeated("%{n} = stablehlo.add %a,\n  %a : tensor<f32>"),
    _repeated("%{n} = stablehlo.add %a, %a\n    : tensor<f32>",
              "%3 = stablehlo.add %a, %a\n  %4 = stablehlo.add %a, %a : tensor<f32>"),
    _repeated("%{n} = stablehlo.add %a, %a : tensor<f32> \"stablehlo.return\"() : () -> ()"),
    _repeated("%{n}0 = stablehlo.add %a, %a : tensor<f32> %{n}1 = stablehlo.add %a, %a : "
              "tensor<f32>"),
    _repeated("%{n} = stablehlo.custom_call @foo(%a) {{backend_config = \"%a\"}} : "
              "(tensor<f32>) -> tensor<f32>"),
    _repeated("%{n} = \"stablehlo.add\"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>"),
    _repeated("%{n}:2 = \"stablehlo.two\"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)"),
    _repeated("%{n}, %x{n} = \"stablehlo.two\"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)"),
    _repeated("%{n} = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = "
              "[0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>", None,
              "%a: tensor<2xf32>, %c: tensor<f32>"),
    _repeated("%{n} = stablehlo.multiply %a, %a {{sdy.sharding = #sdy.sharding_per_value<[<@m"
              ", [{{\"x\"}}]>]>}} : tensor<2xf32>", None, "%a: tensor<2xf32>"),
    _repeated("%{n} = sdy.sharding_constraint %a <@m, [{{\"x\", ?}}]> : tensor<2xf32>", None,
              "%a: tensor<2xf32>"),
    # a diagnostic that does not stop the parse (test_sdy_parse_errors.py), once per op
    _repeated("%{n} = stablehlo.abs %a {{sdy.sharding_rule = #sdy.op_sharding_rule<(["
              + ", ".join(_FACTORS) + ", z_9223372036854775808])->([" + ", ".join(_FACTORS)
              + ", z]) {{" + ", ".join(f"{f}=1" for f in _FACTORS) + ", z=2}}>}} : " + _T,
              None, "%a: " + _T),
    "%0 = stablehlo.constant dense<1> : tensor<i32>\n%1 = stablehlo.constant dense<1> : "
    "tensor<i32>\n%2 = stablehlo.constant dense<1> : tensor<i32>\n",
    # attr-dicts read before: nested, with braces in strings, aliases, diagnostics, lines
    *[_functions(attrs) for attrs in (
        '{a = 1 : i32, b = "x"}',
        '{a = {b = {c = 1 : i32}}}',
        '{a = "}", b = "{{", c = "\\"}"}',
        '{sdy.sharding = #s}',
        '{sdy.sharding = #sdy.sharding<@m, [{"x", ?}]>, a = [1, {b = 2}]}',
        '{a = 1 : i32,\n b = 2 : i32}',
        '{a = 1 : i32} loc("x":1:1)',
        '{a = 1 : i32, a = 2 : i32}',
        '{sdy.sharding_rule = #sdy.op_sharding_rule<([' + ", ".join(_FACTORS)
        + ', z_9223372036854775808])->([' + ", ".join(_FACTORS) + ", z]) {"
        + ", ".join(f"{f}=1" for f in _FACTORS) + ", z=2}>}")],
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_give_the_same_outcome(text):
    assert _outcome(text, True) == _outcome(text, False)


@settings(max_examples=examples(25), deadline=None)
@given(programs(max_ops=12, sharding_groups=True, manual_computations=True,
                control_flow=True, calls=True, priorities=True, ops=True))
def test_random_programs_parse_identically(text):
    assert _outcome(text, True) == _outcome(text, False)


def _broken(text: str, rng: random.Random) -> str:
    """``text`` with one character deleted, doubled or replaced (in an op line, mostly)."""
    starts = [i for i in range(len(text)) if text.startswith("%", i)] or [0]
    i = min(rng.choice(starts) + rng.randrange(40), len(text) - 1)
    return rng.choice((text[:i] + text[i + 1:], text[:i] + text[i] + text[i:],
                       text[:i] + rng.choice("%@#<>{}()[]:,=x-\"/ \n0") + text[i + 1:]))


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_broken_op_lines_give_the_same_errors(seed):
    rng = random.Random(seed)
    text, _ = parse_print.generate(40)
    for _ in range(3):
        broken = _broken(text, rng)
        assert _outcome(broken, True) == _outcome(broken, False)


def _shortcut(text: str):
    """An OpShortcut over ``text``'s builder, and its line starts."""
    builder = reader._builder_class()()
    builder.reset("in.mlir", 0, text)
    reader.parse_module("")
    tables = reader._fast_tables(reader._parser("start"))
    return op_shortcut.OpShortcut(builder, tables), fast_lalr._Lines(text)


def test_places_are_only_in_the_text_around_the_operands():
    text = "%0 = stablehlo.add %a, %bb : tensor<f32>\n"
    shortcut, lines = _shortcut(text)
    places = op_shortcut._Places(shortcut.builder, lines, 2, [(19, 21), (23, 26)], 41)
    assert places.of(Location("in.mlir", 1, 6)) == (0, 3)  # the op name
    assert places.of(Location("in.mlir", 1, 24)) is None  # in %bb
    assert places.of(Location("in.mlir", 1, 28)) == (2, 1)  # ':'
    assert places.of(Location("other.mlir", 1, 6)) is None
    assert places.of(Location("in.mlir", 2, 1)) is None
    assert places.of_debug(None) is None
    assert places.of_debug(FileLineColLoc("in.mlir", 1, 28)) == (2, 1)
    assert places.of_debug(NameLoc("x", None)) is False


def test_regions_using_outer_values_or_read_from_the_text_are_not_templates():
    text = "%0 = test.op %a : tensor<f32>\n"
    shortcut, lines = _shortcut(text)
    places = op_shortcut._Places(shortcut.builder, lines, 2, [(13, 15)], 29)
    outer = Operation("test.def", result_types=[F32])
    block = Block([F32])
    inner = Operation("test.inner", [block.args[0]], [F32], location=Location("in.mlir", 1, 6))
    block.append(inner)
    op = Operation("test.op", regions=[Region([block])], location=Location("in.mlir", 1, 6))
    assert shortcut._nested(op, places) == (op, [((0, 3), None)])
    inner.set_operands([outer.result])
    assert shortcut._nested(op, places) is False
    inner.set_operands([block.args[0]])
    shortcut.builder.result_defs[inner] = []
    assert shortcut._nested(op, places) is False
