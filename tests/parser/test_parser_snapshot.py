"""The parser's start-up snapshot (shardy_ref/parser/parser_snapshot.py) parses exactly as
the parser Lark builds, and a missing, corrupt or unwritable snapshot only costs time."""
from __future__ import annotations

import gc
from functools import partial
from pathlib import Path

import pytest

from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.parser import parser_snapshot, reader
from shardy_ref.parser.printer import print_module
from tests.parser import test_errors

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [ROOT / "examples" / "mlp.mlir", *sorted((ROOT / "examples" / "jax").glob("*.mlir"))]


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "shardy-ref"


def _printed_with(parser, monkeypatch, text: str, start: str = "start") -> str:
    monkeypatch.setitem(reader._parsers, start, parser)
    return print_module(reader.parse_module(text, "sample.mlir"))


def test_snapshot_parses_as_the_built_parser(cache_home, monkeypatch):
    built = reader._build_parser("start")  # no snapshot yet: Lark builds it, then it is saved
    assert built.source_path != "<snapshot>"
    assert len(list(cache_home.glob("parser-*.pickle"))) == 1
    loaded = reader._build_parser("start")
    assert loaded.source_path == "<snapshot>"
    for path in SAMPLES:
        text = path.read_text()
        assert _printed_with(loaded, monkeypatch, text) == _printed_with(built, monkeypatch, text)


def test_snapshot_reports_syntax_errors_as_the_built_parser(cache_home, monkeypatch):
    built = reader._build_parser("start")
    loaded = reader._build_parser("start")
    bad = "func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n  return %arg0 tensor<8xf32>\n}"
    messages = []
    for parser in (built, loaded):
        monkeypatch.setitem(reader._parsers, "start", parser)
        with pytest.raises(ParseError) as e:
            reader.parse_module(bad, "bad.mlir")
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "bad.mlir:2:" in messages[0]


def test_corrupt_snapshot_falls_back_and_is_replaced(cache_home):
    reader._build_parser("start")
    (path,) = cache_home.glob("parser-*.pickle")
    path.write_bytes(b"not a pickle")
    parser = reader._build_parser("start")
    assert parser.source_path != "<snapshot>"
    assert reader._build_parser("start").source_path == "<snapshot>"


def test_unwritable_cache_directory_still_parses(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file: no directory under it
    parser = reader._build_parser("start")
    assert _printed_with(parser, monkeypatch, "module {\n}\n") == "module {\n}\n"


def test_snapshot_key_changes_with_the_grammar():
    assert parser_snapshot._path("a", "start") != parser_snapshot._path("b", "start")
    assert parser_snapshot._path("a", "start") != parser_snapshot._path("a", "type")


# The snapshot's parser builds its table rows, state lexers and rule callbacks on first use
# (parser_snapshot._Rows, _StateLexers, _RuleCallbacks): all of them must equal what Lark
# builds up front, and Lark's own loop (the error path) must parse and fail the same.
BAD = [case[0] for case in test_errors.CASES] + [
    "func.func @f() {\n  return ` \n}\n",  # no terminal matches
    "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %a :",
    "module {\n  func.func @f() {\n    return\n  }\n",
    "#sdy.sharding<@m, [{\"a\"}]",
    "",
]


@pytest.fixture(scope="module")
def parsers(tmp_path_factory):
    """(Lark's parser, the snapshot's parser), both for ``start``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        built = reader._build_parser("start")
        loaded = reader._build_parser("start")
    assert loaded.source_path == "<snapshot>" != built.source_path
    return built, loaded


def _outcome(parser, monkeypatch, text: str, lark_loop: bool) -> str:
    monkeypatch.setitem(reader._parsers, "start", parser)
    if lark_loop:
        monkeypatch.setattr(reader, "_fast_tables", lambda _parser: None)
    try:
        return print_module(reader.parse_module(text, "t.mlir", allow_unregistered=True))
    except ParseError as e:
        return f"error: {e}"


@pytest.mark.parametrize("lark_loop", [False, True])
@pytest.mark.parametrize("text", [*BAD, *(path.read_text() for path in SAMPLES[:4])])
def test_lazy_parts_parse_and_fail_as_the_built_parser(parsers, monkeypatch, text, lark_loop):
    built, _ = parsers
    loaded = reader._build_parser("start")  # fresh: nothing built lazily yet
    with pytest.MonkeyPatch.context() as patch:
        want = _outcome(built, patch, text, lark_loop)
    assert _outcome(loaded, monkeypatch, text, lark_loop) == want


def test_table_rows_decode_to_the_built_table(parsers):
    built, loaded = parsers
    want, rows = built.parser.parser._parse_table.states, loaded.parser.parser._parse_table.states
    index = {id(rule): i for rules in (built.rules, loaded.rules) for i, rule in enumerate(rules)}

    def described(row):
        return [(symbol, action, arg if type(arg) is int else ("rule", index[id(arg)]))
                for symbol, (action, arg) in row.items()]
    assert [described(rows[state]) for state in reversed(range(len(want)))] == \
        [described(want[state]) for state in reversed(range(len(want)))]
    assert isinstance(rows, parser_snapshot._Rows)
    assert len(rows) == len(want) and list(rows) == list(want) and (3 in rows) == (3 in want)
    assert rows.get(len(want)) is None and rows.get(0) is rows[0]
    with pytest.raises(KeyError):
        rows[len(want)]
    with pytest.raises(KeyError):
        rows[-1]


def test_packed_table_refuses_what_it_cannot_hold():
    from lark.parsers.lalr_analysis import Reduce, Shift

    with pytest.raises(ValueError, match="are not"):
        parser_snapshot.pack_table({1: {"A": (Shift, 0)}}, [])
    with pytest.raises(TypeError):
        parser_snapshot.pack_table({0: {"A": (Shift, "x")}}, [])
    with pytest.raises(KeyError):  # a reduction by a rule that is not in the list
        parser_snapshot.pack_table({0: {"A": (Reduce, object())}}, [])


def _lexer(lexer) -> tuple:
    return ([t.name for t in lexer.terminals], lexer.ignore_types, lexer.newline_types)


def test_state_lexers_are_the_contextual_lexers_lark_builds(parsers):
    built, loaded = parsers
    want, lazy = built.parser.lexer, loaded.parser.lexer
    assert isinstance(lazy, parser_snapshot.LazyContextualLexer)
    states = range(len(built.parser.parser._parse_table.states))
    for state in states:
        assert _lexer(lazy.lexers[state]) == _lexer(want.lexers[state]), state

    def sharing(lexers):
        first: dict[int, int] = {}
        return [first.setdefault(id(lexers[state]), state) for state in states]
    assert sharing(lazy.lexers) == sharing(want.lexers)
    assert _lexer(lazy.root_lexer) == _lexer(want.root_lexer)


def _callback(f) -> tuple:
    """What a Lark rule callback does, as comparable data."""
    if isinstance(f, partial):
        return ("partial", _callback(f.func), f.args)
    if hasattr(f, "node_builder"):
        return (type(f).__name__, getattr(f, "to_include", None),
                getattr(f, "append_none", None), _callback(f.node_builder))
    return (getattr(f, "__qualname__", type(f).__qualname__), getattr(f, "forwards_to", None))


def test_rule_callbacks_are_the_ones_lark_builds(parsers):
    built, _ = parsers
    loaded = reader._build_parser("start")
    callbacks = loaded._callbacks
    assert callbacks and not dict.__len__(callbacks)  # truthy before any rule is built
    assert not any(isinstance(key, str) for key in built._callbacks)
    for mine, theirs in zip(loaded.rules, built.rules, strict=True):
        assert _callback(callbacks[mine]) == _callback(built._callbacks[theirs]), mine
    with pytest.raises(KeyError):
        callbacks[object()]


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_leaves_the_collector_as_it_was(parsers, enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert reader._build_parser("start").source_path == "<snapshot>"
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
