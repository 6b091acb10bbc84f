"""A fast start-up snapshot of the built Lark parser (its rules, terminals and LALR table).

The conformance harnesses start ``shardy-ref-opt`` / ``shardy-ref-translate`` once per test
chunk, thousands of times per run, so loading the parser is paid thousands of times. Lark's
own cache (``cache=True``) stores the parser in its JSON-like serialized form and rebuilds
every rule and table entry in Python on load (~90 ms). This snapshot pickles the already
built objects instead, which the C unpickler restores in a third of that; the transformer
(our IR builder) is attached after loading, exactly as ``Lark._load`` does.

The snapshot is keyed by the grammar text, the start symbol and the Lark and Python
versions, and lives in the user's cache directory (``$XDG_CACHE_HOME/shardy-ref`` or
``~/.cache/shardy-ref``), written atomically. It relies on Lark 1.x internals; anything
unexpected (another Lark, an unreadable or stale file, an unwritable directory) falls back
to building with Lark as before, so it can only ever cost the fallback's time.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
from pathlib import Path

_FORMAT = 1  # bump when the pickled tuple changes


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shardy-ref"


def _path(grammar: str, start: str) -> Path:
    import lark

    key = "\0".join([grammar, start, lark.__version__, sys.version, str(_FORMAT)])
    return cache_dir() / f"parser-{hashlib.sha256(key.encode()).hexdigest()[:24]}.pickle"


class _Pickler(pickle.Pickler):
    """Pickles Lark's ``Shift``/``Reduce`` action markers by reference: the parser tells
    them apart by identity, so a copy would be read as neither."""

    def reducer_override(self, obj):
        from lark.parsers.lalr_analysis import Action, Reduce, Shift

        if isinstance(obj, Action):
            return "Shift" if obj is Shift else "Reduce" if obj is Reduce else NotImplemented
        return NotImplemented


def save(parser, grammar: str, start: str) -> None:
    """Write ``parser``'s snapshot (best effort: an OSError leaves no file behind)."""
    lexer_conf = parser.lexer_conf
    state = (parser.rules, list(lexer_conf.terminals), list(lexer_conf.ignore),
             lexer_conf.g_regex_flags, lexer_conf.lexer_type, parser.parser.parser_conf.start,
             parser.parser.parser._parse_table)
    path = _path(grammar, start)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".parser-")
        try:
            with os.fdopen(fd, "wb") as f:
                _Pickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        return


def load(grammar: str, start: str, transformer, options: dict):
    """The parser from its snapshot with ``transformer`` attached, or None if there is no
    usable snapshot."""
    try:
        with open(_path(grammar, start), "rb") as f:
            rules, terminals, ignore, flags, lexer_type, starts, table = pickle.load(f)
        return _assemble(rules, terminals, ignore, flags, lexer_type, starts, table,
                         transformer, options)
    except Exception:  # a missing, stale or foreign snapshot: build the parser instead
        return None


def _assemble(rules, terminals, ignore, flags, lexer_type, starts, table, transformer,
              options):
    """What ``Lark._load`` and ``_deserialize_parsing_frontend`` do with deserialized parts."""
    from lark import Lark
    from lark.common import LexerConf, ParserConf
    from lark.lark import LarkOptions
    from lark.parser_frontends import ParsingFrontend
    from lark.parsers.lalr_parser import LALR_Parser, _Parser

    lark_options = LarkOptions({**options, "transformer": transformer})
    lexer_conf = LexerConf(terminals, re, ignore, g_regex_flags=flags, skip_validation=True)
    lexer_conf.lexer_type = lexer_type
    parser = Lark.__new__(Lark)
    parser.options, parser.rules, parser.source_path = lark_options, rules, "<snapshot>"
    parser.lexer_conf, parser.terminals = lexer_conf, lexer_conf.terminals
    parser._prepare_callbacks()
    parser._terminals_dict = {t.name: t for t in terminals}
    lalr = LALR_Parser.__new__(LALR_Parser)
    lalr._parse_table = table
    lalr.parser = _Parser(table, parser._callbacks, False)
    parser_conf = ParserConf(rules, parser._callbacks, starts)
    parser_conf.parser_type = "lalr"
    parser.parser = ParsingFrontend(lexer_conf, parser_conf, lark_options, parser=lalr)
    return parser
