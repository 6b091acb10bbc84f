"""``parse_module(text)``: MLIR text to a ``builtin.module`` op, or a located ParseError.

The Lark LALR parser is built once per process from the cached grammar (Lark's
``cache=True`` keeps the compiled tables on disk, so start-up stays small), with the IR
builder applied as rules reduce. The cyclic garbage collector is paused while parsing:
the parser allocates many small objects that are never garbage, and collection passes
over them cost more than the parse itself on large modules (``../shared/STYLE.md``).
"""
from __future__ import annotations

import gc
from functools import cache

from shardy_ref.ir.diagnostics import ParseError, ShardyRefError
from shardy_ref.ir.location import Location
from shardy_ref.ir.operation import Operation


@cache
def _builder():
    from shardy_ref.parser.builder import CoreBuilder
    from shardy_ref.parser.builder_check import CheckBuilder
    from shardy_ref.parser.builder_chlo import ChloBuilder
    from shardy_ref.parser.builder_sdy import SdyBuilder
    from shardy_ref.parser.builder_stablehlo import StablehloBuilder

    class IRBuilder(SdyBuilder, StablehloBuilder, CheckBuilder, ChloBuilder, CoreBuilder):
        """All dialects' callbacks in one transformer."""

    return IRBuilder()


@cache
def _parser(start: str = "start"):
    """The LALR parser for one start symbol; each has its own (smaller) cached tables."""
    from lark import Lark

    from shardy_ref.parser import lazy_scanner
    from shardy_ref.parser.grammar import grammar_text
    lazy_scanner.install()
    return Lark(grammar_text(), parser="lalr", lexer="contextual", transformer=_builder(),
                start=start, cache=True, maybe_placeholders=True, propagate_positions=False)


def parse_module(text: str, filename: str = "<stdin>", line_offset: int = 0,
                 diagnostics: list | None = None) -> Operation:
    """Parse MLIR text into a ``builtin.module`` op (wrapping top-level ops if needed).

    ``line_offset`` shifts reported line numbers, for chunks cut out of a larger file.
    Diagnostics that upstream emits without failing the parse are appended to
    ``diagnostics`` (they are dropped if it is None).
    """
    return _parse(text, "start", filename, line_offset, diagnostics)


def parse_attribute(text: str, filename: str = "<string>"):
    """Parse one attribute (``#sdy.sharding<@mesh, [{"x"}]>``, ``dense<1> : tensor<2xi32>``)."""
    return _parse(text, "attr_value", filename, 0)


def parse_type(text: str, filename: str = "<string>"):
    """Parse one type (``tensor<8x?xf32>``, ``!stablehlo.token``)."""
    return _parse(text, "type", filename, 0)


def _parse(text: str, start: str, filename: str, line_offset: int,
           diagnostics: list | None = None):
    from lark.exceptions import UnexpectedInput

    from shardy_ref.parser.errors import translate_lark_error

    builder = _builder()
    builder.reset(filename, line_offset, text)
    parser = _parser(start)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return parser.parse(text)
    except ShardyRefError:
        raise
    except UnexpectedInput as e:
        raise translate_lark_error(e, text, filename, line_offset) from None
    except RecursionError:
        raise ParseError(Location(filename, 1 + line_offset, 1),
                         "input is nested too deeply to parse") from None
    finally:
        if diagnostics is not None:
            diagnostics.extend(builder.nonfatal)
        builder.reset(filename)
        if gc_was_enabled:
            gc.enable()
