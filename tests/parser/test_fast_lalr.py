"""The fused lexer and LALR loop (shardy_ref/parser/fast_lalr.py) parses exactly as Lark's
own loop: the same printed modules, diagnostics and error messages, and the same tokens."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from lark.lexer import Token
from lark.parsers.lalr_parser import _Parser

from shardy_ref.parser import fast_lalr, reader
from shardy_ref.parser.printer import print_module
from shardy_ref.testing.programs import programs

ROOT = Path(__file__).resolve().parents[2]
MLIR_FILES = sorted(p for d in ("examples", "docs", "tests") for p in (ROOT / d).rglob("*.mlir"))


def _outcome(text: str, unregistered: bool = False) -> str:
    """The printed module and diagnostics of ``text``, or its error."""
    diagnostics: list = []
    try:
        module = reader.parse_module(text, "in.mlir", diagnostics=diagnostics,
                                     allow_unregistered=unregistered)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return print_module(module) + "\n" + "\n".join(map(str, diagnostics))


def _both(text: str, monkeypatch, unregistered: bool = False, tables=None) -> tuple[str, str]:
    """``text`` parsed by the fast loop (with ``tables``, else fresh ones) and by Lark's."""
    parser = reader._parser("start")
    with monkeypatch.context() as m:
        m.setattr(parser, "_shardy_fast_tables", tables or fast_lalr.prepare(parser),
                  raising=False)
        fast = _outcome(text, unregistered)
    with monkeypatch.context() as m:
        m.setattr(parser, "_shardy_fast_tables", None, raising=False)
        slow = _outcome(text, unregistered)
    return fast, slow


def _chunks(path: Path) -> list[str]:
    text = path.read_text()
    return [text, *text.split("// -----")] if "// -----" in text else [text]


@pytest.mark.parametrize("hot_after", [0, 10**9])  # compiled state regexes, single regexes
def test_repository_mlir_files_parse_identically(hot_after, monkeypatch):
    monkeypatch.setattr(fast_lalr, "HOT_AFTER", hot_after)
    tables = fast_lalr.prepare(reader._parser("start"))
    assert len(MLIR_FILES) > 50
    for path in MLIR_FILES:
        for chunk in _chunks(path):
            fast, slow = _both(chunk, monkeypatch, unregistered=True, tables=tables)
            assert fast == slow, path


@settings(max_examples=25, deadline=None)
@given(programs(max_ops=12, sharding_groups=True, manual_computations=True,
                control_flow=True, calls=True, priorities=True, ops=True))
def test_random_programs_parse_identically(text):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(fast_lalr, "HOT_AFTER", 0)
        fast, slow = _both(text, monkeypatch)
    assert fast == slow
    assert not fast.startswith(("ParseError", "Verification"))


def _broken(text: str, rng: random.Random) -> str:
    """``text`` cut short, or with one character deleted, doubled or replaced."""
    i = rng.randrange(len(text))
    return rng.choice((text[:i], text[:i] + text[i + 1:], text[:i] + text[i] + text[i:],
                       text[:i] + rng.choice("%@#<>{}()[]:,=x\"/ ") + text[i + 1:]))


def test_broken_inputs_give_lark_s_errors(monkeypatch):
    rng = random.Random(30)
    texts = [(ROOT / "examples" / "mlp.mlir").read_text(), 'func.func @f() {\n  return\n}\n',
             '#a = #sdy.sharding<@m, [{}]>\nfunc.func @f(%x: tensor<2xf32> {sdy.sharding = #a})'
             ' -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}\n']
    tables = fast_lalr.prepare(reader._parser("start"))
    errors = 0
    for text in texts:
        for _ in range(60):
            fast, slow = _both(_broken(text, rng), monkeypatch, tables=tables)
            assert fast == slow
            errors += fast.startswith("ParseError")
    assert errors > 50


def test_errors_raised_while_building_are_unchanged(monkeypatch):
    for text in ("func.func @f() {\n  %0 = stablehlo.add %y, %y : tensor<f32>\n}\n",
                 "func.func @f(%a: tensor<2xf32> {x = #undefined}) {\n  return\n}\n",
                 "func.func @f() -> tensor<2xf32> {\n  return\n}\n  %", ""):
        fast, slow = _both(text, monkeypatch)
        assert fast == slow


def _recording_callbacks(dropped: frozenset) -> dict:
    """Per rule: a callback recording its children (tokens as all their fields)."""
    def child(c):
        if isinstance(c, Token):
            if c.type in dropped:
                return ("dropped", str(c))
            return (c.type, str(c), c.value, c.start_pos, c.end_pos, c.line, c.column,
                    c.end_line, c.end_column)
        return ("dropped", c) if isinstance(c, str) else c

    def make(rule):
        return lambda children: (rule.origin.name, tuple(map(child, children)))

    return {rule: make(rule) for rule in reader._parser("start").rules}


def test_token_streams_are_lark_s():
    parser = reader._parser("start")
    tables = fast_lalr.prepare(parser)
    callbacks = _recording_callbacks(tables.dropped)
    inner = parser.parser.parser.parser
    for path in MLIR_FILES[::4]:
        text = path.read_text()
        if "// -----" in text or "expected-error" in text:
            continue
        fast = fast_lalr.parse(tables, text, "start", callbacks)
        lark_loop = _Parser(inner.parse_table, callbacks, False)
        slow = lark_loop.parse(parser.parser._make_lexer_thread(text), "start")
        assert fast == slow, path


def test_errors_and_token_callbacks_fall_back():
    parser = reader._parser("start")
    tables = fast_lalr.prepare(parser)
    callbacks = _recording_callbacks(tables.dropped)
    assert fast_lalr.parse(tables, "func.func @f() {}", "start", callbacks)
    with pytest.raises(fast_lalr.Fallback):
        fast_lalr.parse(tables, "func.func @f( {", "start", callbacks)
    with pytest.raises(fast_lalr.Fallback):
        fast_lalr.parse(tables, "func.func @f() {} \x01", "start", callbacks)
    with pytest.raises(fast_lalr.Fallback):
        fast_lalr.parse(tables, "", "start", {"WS": str})
