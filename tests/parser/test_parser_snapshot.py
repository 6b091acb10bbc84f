"""The parser's start-up snapshot (shardy_ref/parser/parser_snapshot.py) parses exactly as
the parser Lark builds, and a missing, corrupt or unwritable snapshot only costs time."""
from __future__ import annotations

from pathlib import Path

import pytest

from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.parser import parser_snapshot, reader
from shardy_ref.parser.printer import print_module

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
