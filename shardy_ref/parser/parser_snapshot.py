"""A fast start-up snapshot of the built Lark parser (its rules, terminals and LALR table).

The conformance harnesses start ``shardy-ref-opt`` / ``shardy-ref-translate`` once per test
chunk, thousands of times per run, so loading the parser is paid thousands of times. Lark's
own cache (``cache=True``) stores the parser in its JSON-like serialized form and rebuilds
every rule and table entry in Python on load (~90 ms). This snapshot pickles the already
built rules and terminals instead, which the C unpickler restores quickly; the transformer
(our IR builder) is attached after loading, exactly as ``Lark._load`` does.

A small module touches a few dozen of the table's 1400-odd states, so the rest of the
loaded parser is built on first use rather than up front:

* the parse table is stored as one packed array of ints per state and each state's row
  (``{terminal or rule name: (Shift, state) or (Reduce, rule)}``) is decoded when the
  parser first asks for it (:class:`_Rows`);
* the contextual lexer makes each state's lexer when it is first asked for
  (:class:`_StateLexers`), exactly as Lark's ``ContextualLexer`` would have made it;
* each rule's callback (child filter around the transformer method) is made on its first
  reduction (:class:`_RuleCallbacks`), by Lark's own ``ParseTreeBuilder``.

The snapshot is keyed by the grammar text, the start symbol and the Lark and Python
versions, and lives in the user's cache directory (``$XDG_CACHE_HOME/shardy-ref`` or
``~/.cache/shardy-ref``), written atomically. It relies on Lark 1.x internals; anything
unexpected (another Lark, an unreadable or stale file, an unwritable directory) falls back
to building with Lark as before, so it can only ever cost the fallback's time.
"""
from __future__ import annotations

import gc
import hashlib
import os
import pickle
import re
import sys
import tempfile
from array import array
from copy import copy
from functools import cached_property
from pathlib import Path

from lark.lexer import ContextualLexer

from shardy_ref.user_cache import cache_dir

_FORMAT = 2  # bump when the pickled tuple changes
_CODE = "i"  # array type of a packed row: symbol index, action code; ...




def _path(grammar: str, start: str) -> Path:
    import lark

    key = "\0".join([grammar, start, lark.__version__, sys.version, str(_FORMAT)])
    return Path(cache_dir()) / f"parser-{hashlib.sha256(key.encode()).hexdigest()[:24]}.pickle"


def pack_table(states: dict, rules: list) -> tuple[tuple, tuple]:
    """``(symbol names, packed rows)`` of a parse table whose states are ``0..n-1``: a row
    is ``symbol index, code`` pairs in the row's order, the code being the target state
    of a shift or ``~i`` for a reduction by ``rules[i]`` (the same object)."""
    from lark.parsers.lalr_analysis import Reduce, Shift

    if list(states) != list(range(len(states))):
        raise ValueError("parse table states are not 0..n-1")
    rule_index = {id(rule): i for i, rule in enumerate(rules)}
    symbols: dict[str, int] = {}
    rows = []
    for row in states.values():
        packed = array(_CODE)
        for symbol, (action, arg) in row.items():
            if type(symbol) is not str:
                raise TypeError(f"parse table symbol {symbol!r}")
            code = arg if action is Shift else ~rule_index[id(arg)] if action is Reduce else None
            if code is None or (action is Shift and type(arg) is not int):
                raise TypeError(f"parse table action {action!r}")
            packed += array(_CODE, (symbols.setdefault(symbol, len(symbols)), code))
        rows.append(packed.tobytes())
    return tuple(symbols), tuple(rows)


class _Rows(dict):
    """A parse table's states: state -> its row, decoded from the packed table on first
    access. Whole-table reads (iteration, ``len``, ``in``, ``get``, views) decode every
    row first, so to any reader it is the table Lark built."""

    def __init__(self, symbols: tuple, rows: tuple, rules: list) -> None:
        super().__init__()
        self._symbols, self._rows, self._rules = symbols, rows, rules
        self._in_order = False

    def __missing__(self, state):
        if type(state) is not int or not 0 <= state < len(self._rows):
            raise KeyError(state)
        from lark.parsers.lalr_analysis import Reduce, Shift

        packed = array(_CODE)
        packed.frombytes(self._rows[state])
        symbols, rules = self._symbols, self._rules
        row = self[state] = {symbols[packed[i]]: (Shift, code) if code >= 0 else
                             (Reduce, rules[~code])
                             for i, code in zip(range(0, len(packed), 2), packed[1::2])}
        return row

    def decoded(self) -> _Rows:
        """This table with every row decoded, in state order (as Lark's)."""
        if not self._in_order:
            rows = [self[state] for state in range(len(self._rows))]
            dict.clear(self)
            dict.update(self, enumerate(rows))
            self._in_order = True
        return self

    def __iter__(self):
        return dict.__iter__(self.decoded())

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, state) -> bool:
        return dict.__contains__(self.decoded(), state)

    def get(self, state, default=None):
        return dict.get(self.decoded(), state, default)

    def keys(self):
        return dict.keys(self.decoded())

    def values(self):
        return dict.values(self.decoded())

    def items(self):
        return dict.items(self.decoded())

    def __reduce__(self):
        return dict, (dict(self.items()),)


class _StateLexers(dict):
    """Parser state -> its lexer, made on first access as Lark's ``ContextualLexer``
    makes it: one basic lexer per set of acceptable terminals, shared by the states that
    accept the same set."""

    def __init__(self, conf, states: _Rows, basic_lexer: type) -> None:
        super().__init__()
        self.conf, self.states, self.basic_lexer = conf, states, basic_lexer
        self.by_tokens: dict[frozenset, object] = {}

    def __missing__(self, state):
        accepts = self.states[state].keys()
        key = frozenset(accepts)
        lexer = self.by_tokens.get(key)
        if lexer is None:
            conf = self.conf
            names = set(accepts) | set(conf.ignore)
            lexer_conf = copy(conf)
            lexer_conf.terminals = [conf.terminals_by_name[n] for n in names
                                    if n in conf.terminals_by_name]
            lexer = self.by_tokens[key] = self.basic_lexer(lexer_conf, None)
        self[state] = lexer
        return lexer


class LazyContextualLexer(ContextualLexer):
    """Lark's contextual lexer (no postlexer, terminals already validated) whose state
    lexers and root lexer are made on first use (``ContextualLexer.__init__``, not called,
    would make them all)."""

    def __init__(self, conf, states: _Rows) -> None:
        if not conf.skip_validation:
            raise ValueError("a lazy contextual lexer needs validated terminals")
        self._conf = copy(conf)
        self._conf.terminals = list(conf.terminals)
        self.lexers = _StateLexers(self._conf, states, self.BasicLexer)

    @cached_property
    def root_lexer(self):
        return self.BasicLexer(self._conf, None)


class _RuleCallbacks(dict):
    """Lark's parser callbacks: a rule's callback is made by Lark's ``ParseTreeBuilder``
    on its first lookup; the lexer (terminal-name) callbacks are all there from the start.
    Truthy as the full dict would be (Lark's parser calls no callbacks if it is empty)."""

    def __init__(self, rules: list, transformer, tree_options: tuple, lexer_callbacks: dict):
        super().__init__(lexer_callbacks)
        self._rules, self._transformer, self._tree_options = rules, transformer, tree_options
        self._known: set | None = None

    def __missing__(self, rule):
        from lark.parse_tree_builder import ParseTreeBuilder

        if self._known is None:
            self._known = set(self._rules)
        if rule not in self._known:
            raise KeyError(rule)
        builder = ParseTreeBuilder([rule], *self._tree_options)
        callback = self[rule] = builder.create_callback(self._transformer)[rule]
        return callback

    def __bool__(self) -> bool:
        return bool(self._rules) or dict.__len__(self) > 0


class _Pickler(pickle.Pickler):
    """Pickles Lark's ``Shift``/``Reduce`` action markers by reference: the parser tells
    them apart by identity, so a copy would be read as neither."""

    def reducer_override(self, obj):
        from lark.parsers.lalr_analysis import Action, Reduce, Shift

        if isinstance(obj, Action):
            return "Shift" if obj is Shift else "Reduce" if obj is Reduce else NotImplemented
        return NotImplemented


def save(parser, grammar: str, start: str) -> None:
    """Write ``parser``'s snapshot (best effort: an OSError, or a parser this format
    cannot hold, leaves no file behind)."""
    lexer_conf, table = parser.lexer_conf, parser.parser.parser._parse_table
    path = _path(grammar, start)
    try:
        symbols, rows = pack_table(table.states, parser.rules)
        state = (parser.rules, list(lexer_conf.terminals), list(lexer_conf.ignore),
                 lexer_conf.g_regex_flags, lexer_conf.lexer_type,
                 parser.parser.parser_conf.start, type(table), table.start_states,
                 table.end_states, symbols, rows)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".parser-")
        try:
            with os.fdopen(fd, "wb") as f:
                _Pickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError, ValueError, KeyError):
        return


def load(grammar: str, start: str, transformer, options: dict):
    """The parser from its snapshot with ``transformer`` attached, or None if there is no
    usable snapshot."""
    try:
        with open(_path(grammar, start), "rb") as f:
            parts = _unpickled(f)
        return _assemble(*parts, transformer, options)
    except Exception:  # a missing, stale or foreign snapshot: build the parser instead
        return None


def _unpickled(f):
    """``pickle.load(f)`` with the cyclic GC paused: the thousands of rule objects it makes
    are never garbage, and a collection triggered halfway (in a fresh process, possibly a
    full one over every imported module) cost more than the load itself (measured: ~8 ms
    against ~4 ms). A pause some other code made is left alone."""
    if not gc.isenabled():
        return pickle.load(f)
    gc.disable()
    try:
        return pickle.load(f)
    finally:
        gc.enable()


def _assemble(rules, terminals, ignore, flags, lexer_type, starts, table_class, start_states,
              end_states, symbols, rows, transformer, options):
    """What ``Lark._load`` and ``_deserialize_parsing_frontend`` do with deserialized parts,
    with the table rows, state lexers and rule callbacks made on first use."""
    from lark import Lark
    from lark.common import LexerConf, ParserConf
    from lark.lark import LarkOptions
    from lark.parser_frontends import ParsingFrontend
    from lark.parsers.lalr_parser import LALR_Parser, _Parser

    lark_options = LarkOptions({**options, "transformer": transformer})
    if lexer_type != "contextual" or lark_options.postlex is not None:
        raise ValueError(f"snapshot of a {lexer_type!r} lexer")
    lexer_conf = LexerConf(terminals, re, ignore, g_regex_flags=flags, skip_validation=True)
    lexer_conf.lexer_type = lexer_type
    parser = Lark.__new__(Lark)
    parser.options, parser.rules, parser.source_path = lark_options, rules, "<snapshot>"
    parser.lexer_conf, parser.terminals = lexer_conf, lexer_conf.terminals
    parser._callbacks = _callbacks(parser, transformer)
    parser._terminals_dict = {t.name: t for t in terminals}
    table = table_class(_Rows(symbols, rows, rules), start_states, end_states)
    lalr = LALR_Parser.__new__(LALR_Parser)
    lalr._parse_table = table
    lalr.parser = _Parser(table, parser._callbacks, False)
    parser_conf = ParserConf(rules, parser._callbacks, starts)
    parser_conf.parser_type = "lalr"
    frontend = ParsingFrontend.__new__(ParsingFrontend)
    frontend.parser_conf, frontend.lexer_conf, frontend.options = parser_conf, lexer_conf, \
        lark_options
    frontend.parser, frontend.skip_lexer = lalr, False
    frontend.lexer = LazyContextualLexer(lexer_conf, table.states)
    parser.parser = frontend
    return parser


def _callbacks(parser, transformer) -> _RuleCallbacks:
    """``Lark._prepare_callbacks`` (for a tree-building LALR parser), made lazy."""
    from lark import Tree
    from lark.parser_frontends import _get_lexer_callbacks

    options = parser.options
    if options.ambiguity == "forest":
        raise ValueError("snapshot of a forest-building parser")
    tree_options = (options.tree_class or Tree, options.propagate_positions,
                    options.parser != "lalr" and options.ambiguity == "explicit",
                    options.maybe_placeholders)
    return _RuleCallbacks(parser.rules, transformer, tree_options,
                          _get_lexer_callbacks(transformer, parser.terminals))
