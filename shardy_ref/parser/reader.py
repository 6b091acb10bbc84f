"""``parse_module(text)``: MLIR text to a ``builtin.module`` op, or a located ParseError.

The Lark LALR parser is loaded once per process from a snapshot of its tables
(:mod:`shardy_ref.parser.parser_snapshot`; start-up matters, the harnesses start the tools
once per test chunk), with the IR builder applied as rules reduce. The cyclic garbage
collector is paused while parsing: the parser allocates many small objects that are never
garbage, and collection passes over them cost more than the parse itself on large modules
(measured: about 2x faster parsing with the collector paused).

Parsing is re-entrant and thread-safe: the shared Lark parser keeps no per-parse state
(lark 1.3's LALR frontend makes a fresh ``LexerThread``/``ParserState`` per ``parse``, and
its lexers only ever cache compiled regexes), and every call gets its own builder, which
the shared rule callbacks reach through a thread-local slot (:class:`_Forwarding`).
"""
from __future__ import annotations

import threading
from functools import cache

from shardy_ref.ir.diagnostics import ParseError, ShardyRefError
from shardy_ref.ir.gc_pause import collector_paused
from shardy_ref.ir.location import Location
from shardy_ref.ir.operation import Operation

UNREGISTERED_MESSAGE = ("operation being parsed with an unregistered dialect. If this is intended, "
                        "please use -allow-unregistered-dialect with the MLIR tool used")

# Levels of nested regions a module may have. MLIR has no limit, but its tools overflow the
# stack (sdy_opt crashes on 3000 nested stablehlo.case ops); our walks recurse a few frames
# per level, and the command lines give them room for this many (shardy_ref/tools/stack.py).
MAX_NESTING = 4096

_BUILD_LOCK = threading.Lock()  # one thread builds each start symbol's parser
_active = threading.local()  # .builder: the builder of the parse running in this thread


@cache
def _builder_class() -> type:
    from shardy_ref.parser.builder import CoreBuilder
    from shardy_ref.parser.builder_check import CheckBuilder
    from shardy_ref.parser.builder_chlo import ChloBuilder
    from shardy_ref.parser.builder_sdy import SdyBuilder
    from shardy_ref.parser.builder_stablehlo import StablehloBuilder

    class IRBuilder(SdyBuilder, StablehloBuilder, CheckBuilder, ChloBuilder, CoreBuilder):
        """All dialects' callbacks in one transformer."""

    return IRBuilder


def _forward(method):
    """A rule callback calling ``method`` of this thread's current builder."""
    def callback(children, method=method, active=_active):
        return method(active.builder, children)
    callback.__name__ = method.__name__
    callback.forwards_to = method  # what fast_lalr calls directly with the parse's builder
    return callback


class _Forwarding:
    """The transformer the shared parser is built with: each rule callback forwards to the
    same-named method of the builder of the parse running in the calling thread, so the
    builder's state (aliases, pending operands, diagnostics) belongs to one call. Lark
    looks callbacks up by name only; a rule without one builds a ``Tree``, as before."""

    def __init__(self, builder_class: type):
        self._builder_class = builder_class

    def __getattr__(self, name: str):
        method = getattr(self._builder_class, name, None)
        if name.startswith("_") or not callable(method):
            raise AttributeError(name)
        return _forward(method)


_parsers: dict[str, object] = {}

# whether the fused loop reads repeated op lines and attr-dicts whole (:mod:`.op_shortcut`),
# in texts of at least this many characters: the shortcuts only repay their learning over
# repeated lines (measured on generated modules: up to 6% slower below about 5k characters,
# 0.75-0.86x the time at about 10k); the tests change both to compare
SHORTCUTS = True
SHORTCUTS_FROM_CHARS = 4096


def _parser(start: str = "start"):
    """The LALR parser for one start symbol; each has its own (smaller) cached tables."""
    parser = _parsers.get(start)
    if parser is None:
        with _BUILD_LOCK:
            parser = _parsers.get(start)
            if parser is None:
                parser = _parsers[start] = _build_parser(start)
    return parser


def _build_parser(start: str):
    """From the start-up snapshot if there is one (:mod:`shardy_ref.parser.parser_snapshot`),
    else built by Lark (from Lark's own cache if there is one) and snapshotted."""
    from shardy_ref.parser import lazy_scanner, parser_snapshot
    from shardy_ref.parser.grammar import grammar_text
    lazy_scanner.install()
    grammar = grammar_text()
    options = {"parser": "lalr", "lexer": "contextual", "start": start,
               "maybe_placeholders": True, "propagate_positions": False}
    transformer = _Forwarding(_builder_class())
    parser = parser_snapshot.load(grammar, start, transformer, options)
    if parser is None:
        from lark import Lark

        parser = Lark(grammar, transformer=transformer, cache=True, **options)
        parser_snapshot.save(parser, grammar, start)
    return parser


def parse_module(text: str, filename: str = "<stdin>", line_offset: int = 0,
                 diagnostics: list | None = None, *,
                 allow_unregistered: bool = False, implicit_module: bool = True) -> Operation:
    """Parse MLIR text into a ``builtin.module`` op (wrapping top-level ops if needed).

    ``line_offset`` shifts reported line numbers, for chunks cut out of a larger file.
    Diagnostics that upstream emits without failing the parse are appended to
    ``diagnostics`` (they are dropped if it is None). An op of a dialect we do not
    register is an error, as in MLIR's parser, unless ``allow_unregistered`` (mlir-opt's
    ``-allow-unregistered-dialect``); so are regions nested deeper than :data:`MAX_NESTING`.
    Without ``implicit_module`` (mlir-opt's ``--no-implicit-module``) the text must hold
    exactly one top-level op, which is returned as it is.
    """
    module = _parse(text, "start", filename, line_offset, diagnostics, implicit_module)
    if not allow_unregistered:
        check_registered(module)
    check_nesting(module)
    return module


def check_nesting(module: Operation) -> None:
    """Reject a module whose regions nest more than :data:`MAX_NESTING` levels deep, at
    the first op (in text order) that is too deep."""
    stack = [module._nested_ops()]
    while stack:
        op = next(stack[-1], None)
        if op is None:
            stack.pop()
        elif op.regions:
            if len(stack) >= MAX_NESTING:
                raise ParseError(op.location, f"nesting too deep: regions nested more than "
                                 f"{MAX_NESTING} levels (a shardy_ref limit)")
            stack.append(op._nested_ops())


def check_registered(module: Operation) -> None:
    """MLIR's parser rejects an op of an unregistered dialect unless the context allows
    them (``OperationParser::parseGenericOperation``); the error points after the quoted
    op name."""
    from shardy_ref.ir.opdefs import is_registered_dialect

    for op in module.walk():
        if not is_registered_dialect(op.dialect):
            loc = op.location
            raise ParseError(Location(loc.file, loc.line, loc.col + len(op.name) + 2),
                             UNREGISTERED_MESSAGE)


def parse_attribute(text: str, filename: str = "<string>"):
    """Parse one attribute (``#sdy.sharding<@mesh, [{"x"}]>``, ``dense<1> : tensor<2xi32>``)."""
    return _parse(text, "attr_value", filename, 0)


def _run(parser, builder, text: str, start: str):
    """The parse through :mod:`.fast_lalr`'s loop; any error there is redone by Lark's
    own loop (from a reset builder), which raises the error the translators expect."""
    from shardy_ref.parser import fast_lalr

    tables = _fast_tables(parser)
    if tables is not None:
        shortcuts = _shortcuts(builder, tables) \
            if SHORTCUTS and len(text) >= SHORTCUTS_FROM_CHARS else ()
        try:
            return fast_lalr.parse(tables, text, start, parser._callbacks, builder, shortcuts)
        except fast_lalr.Fallback:
            implicit_module = builder.implicit_module
            builder.reset(builder.filename, builder.line_offset, text)
            builder.implicit_module = implicit_module
    return parser.parse(text)


def _shortcuts(builder, tables) -> tuple:
    """The shortcuts of one parse (imported only for a text long enough to use them: a
    tool's start-up parses a small one)."""
    from shardy_ref.parser.op_shortcut import AttrDictShortcut, OpShortcut

    return OpShortcut(builder, tables), AttrDictShortcut(builder)


def _fast_tables(parser):
    """:func:`fast_lalr.prepare` of ``parser``, once per parser object (None: not
    supported, use Lark's loop)."""
    from shardy_ref.parser import fast_lalr

    tables = getattr(parser, "_shardy_fast_tables", False)
    if tables is False:
        try:
            tables = fast_lalr.prepare(parser)
        except NotImplementedError:
            tables = None
        parser._shardy_fast_tables = tables
    return tables


def parse_type(text: str, filename: str = "<string>"):
    """Parse one type (``tensor<8x?xf32>``, ``!stablehlo.token``)."""
    return _parse(text, "type", filename, 0)


def _parse(text: str, start: str, filename: str, line_offset: int,
           diagnostics: list | None = None, implicit_module: bool = True):
    from lark.exceptions import UnexpectedInput

    from shardy_ref.parser.errors import translate_lark_error

    parser = _parser(start)
    builder = _builder_class()()
    builder.reset(filename, line_offset, text)
    builder.implicit_module = implicit_module
    outer = getattr(_active, "builder", None)
    _active.builder = builder
    try:
        with collector_paused():
            return _run(parser, builder, text, start)
    except ShardyRefError:
        raise
    except UnexpectedInput as e:
        raise translate_lark_error(e, text, filename, line_offset) from None
    except RecursionError:
        raise ParseError(Location(filename, 1 + line_offset, 1),
                         "input is nested too deeply to parse") from None
    finally:
        _active.builder = outer
        if diagnostics is not None:
            diagnostics.extend(builder.nonfatal)
