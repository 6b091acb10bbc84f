"""Whole-op fast path for the fused LALR loop: op lines like ones already read, rebuilt.

A large module repeats a few op lines with other SSA names: ``%2 = stablehlo.maximum %0,
%1 : tensor<8x512xf32>`` and ``%12 = stablehlo.maximum %10, %11 : tensor<8x512xf32>``
build the same op but for its operands and its result. Token by token, the loop of
:mod:`.fast_lalr` spends most of such a line lexing, shifting and reducing its 8-30 tokens
and running the builder's callbacks on them. :class:`OpShortcut` lets the loop read the
first line of each shape and keeps what the builder made of it as a *template* (the op's
name, operand and result types, attributes and regions); a later line of the same shape
becomes the same builder calls the loop would end with: ``op_result`` for its result,
``make_op`` with its operand tokens, ``operation``.

A line's shape is its text with the ``%name`` operands cut out, beside the parser state
the op starts in. The second line of a shape is learnt from (the first only noted, so
that a module of few repeated lines pays little), and a template is only kept when the
loop's op shows that the shape says everything about it:

* it is the line's only op, and all of the line: it is the one op the loop read before
  the next ``%name = ...`` op, which follows the line with only blanks and comments
  between;
* it has one result, named at the start of the line, and no successors, properties or
  ``loc(...)``; its regions, if any, are ones the builder made itself (``applies
  stablehlo.add``), using no value from outside them: a rebuilt op gets a copy;
* its operands are the tokens at exactly the ``%name`` spans cut out of the line;
* its locations (and those of the ops in its regions) are positions in the text around
  the operands, which the rebuilt op gets at the same places in its own line;
* reading it changed nothing else in the builder (no diagnostic, alias, location or
  block), so repeating it needs nothing else.

A line is rebuilt from a template only when the next op is ``%name = ...`` too, as it was
for the template's line. (That is for speed: were something after the line part of the
op, the loop would find a syntax error there and have Lark read the whole text again.)
Anything else is left to the loop, which also raises any error the callbacks raise.
"""
from __future__ import annotations

import re
from functools import cache

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.ir.location import FileLineColLoc, Location
from shardy_ref.parser.fast_lalr import Shortcut, Tables, make_token


@cache
def _value_pattern(value: str) -> re.Pattern:
    """``%name`` as the grammar's ``VALUE`` terminal reads it, its groups not capturing."""
    return re.compile(re.sub(r"\((?!\?)", "(?:", value))


class OpShortcut(Shortcut):
    """Rebuilds op lines from templates learnt from the loop, for one parse."""

    terminal = "VALUE"
    nonterminal = "operation"

    def __init__(self, builder, tables: Tables) -> None:
        self.values = _value_pattern(tables.terminals["VALUE"])
        self.builder = builder
        self.skip = tables.lexers.skip
        # (parser state, the line's texts around its %names) -> (op name, operand types,
        # result types, attributes, places of the op's location and debug location (see
        # _Places), and None or (the op, to copy its regions, places of their ops'))
        self.templates: dict[tuple, tuple] = {}
        self.learning: tuple | None = None  # a line the loop is reading, to learn from
        self.seen: set[tuple] = set()  # the shapes of lines read once

    def read(self, text: str, start: int, state: int, lines):
        if self.learning is not None:
            self._learn(text, start, lines)
        res_end = self.values.match(text, start).end()
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
        rest = text[res_end:line_end]
        key = (state, *self.values.split(rest))
        template = self.templates.get(key)
        if template is None:
            if key in self.seen:  # a shape seen twice is worth learning
                self._start_learning(key, start, res_end,
                                     _spans(key, self.values.findall(rest), res_end), line_end)
            else:
                self.seen.add(key)
            return None
        if not text.startswith("%", self.skip(text, line_end).end()):
            return None
        try:
            return self._rebuild(template, text, start, res_end, key,
                                 self.values.findall(rest), lines), line_end
        except ShardyRefError:
            return None  # the loop reads the op again and raises what it raises there

    def _rebuild(self, template: tuple, text: str, start: int, res_end: int, key: tuple,
                 operands: list, lines):
        name, operand_types, result_types, attributes, place, debug_place, nested = template
        b = self.builder
        results = b.op_results([b.op_result([make_token("VALUE", text, start, res_end, lines),
                                             None])])
        starts = [res_end]  # of the text around the operands
        tokens = []
        at = res_end
        for segment, operand in zip(key[1:], operands):
            at += len(segment)
            tokens.append(make_token("VALUE", text, at, at + len(operand), lines))
            at += len(operand)
            starts.append(at)
        at = starts[place[0]] + place[1]  # where the op is located, as an empty token there
        regions = [r.clone({}) for r in nested[0].regions] if nested else ()
        op = b.make_op(make_token("OP_LOCATION", text, at, at, lines), name, tokens,
                       operand_types, result_types, dict(attributes), regions)
        if debug_place is not None:
            op.debug_location = self._debug_location(starts, debug_place)
        if nested:
            inner_ops = (inner for r in op.regions for inner in r.walk())
            for inner, (inner_place, inner_debug) in zip(inner_ops, nested[1]):
                inner.location = b.loc_at(starts[inner_place[0]] + inner_place[1])
                if inner_debug is not None:
                    inner.debug_location = self._debug_location(starts, inner_debug)
        return b.operation([results, op, None])

    def _debug_location(self, starts: list, place: tuple[int, int]) -> FileLineColLoc:
        where = self.builder.loc_at(starts[place[0]] + place[1])
        return FileLineColLoc(where.file, where.line, where.col)

    # -- learning from the loop ----------------------------------------------------------
    def _start_learning(self, key: tuple, start: int, res_end: int, spans: list,
                        line_end: int) -> None:
        sizes = _builder_state(self.builder)
        # the line's op is to be the only op read before the next read
        self.learning = (key, start, res_end, spans, line_end, (sizes[0] + 1, *sizes[1:]))

    def _learn(self, text: str, next_start: int, lines) -> None:
        """Keep the template of the line being learnt if the loop's op shows that its
        shape says everything about it."""
        key, start, res_end, spans, line_end, sizes = self.learning
        self.learning = None
        b = self.builder
        if self.skip(text, line_end).end() != next_start or not b.result_defs:
            return
        op = next(reversed(b.result_defs))
        defs = b.result_defs[op]
        if not (len(defs) == 1 and defs[0][0].start_pos == start and len(op.results) == 1
                and not op.successors and op.properties is None
                and _builder_state(b) == sizes):
            return
        pending = b.pending.get(op)
        tokens = pending.tokens if pending is not None else []
        if [(t.start_pos, t.end_pos) for t in tokens] != spans:
            return
        places = _Places(b, lines, res_end, spans, line_end)
        place, debug_place = places.of(op.location), places.of_debug(op.debug_location)
        nested = self._nested(op, places) if op.regions else None
        if place is None or debug_place is False or nested is False:
            return
        self.templates[key] = (op.name, tuple(pending.types) if pending is not None else (),
                               tuple(r.type for r in op.results), dict(op.attributes),
                               place, debug_place, nested)

    def _nested(self, op, places: _Places):
        """For an op whose regions the builder made itself (``applies stablehlo.add``):
        the op, to copy its regions from, and the places of their ops' locations; False
        if the regions came from the text or use values from outside."""
        b = self.builder
        inner_ops = [inner for r in op.regions for inner in r.walk()]
        defined = {v for r in op.regions for block in r.blocks for v in block.args}
        defined.update(v for inner in inner_ops for v in inner.results)
        inner_places = []
        for inner in inner_ops:
            if inner in b.pending or inner in b.result_defs or inner.successors or \
                    not defined.issuperset(inner.operands):
                return False
            place, debug_place = places.of(inner.location), places.of_debug(inner.debug_location)
            if place is None or debug_place is False:
                return False
            inner_places.append((place, debug_place))
        return op, inner_places


class _Places:
    """Where locations are in a line being learnt, as ``(k, offset)``: ``offset`` characters
    into the ``k``-th text around its operands, which a line of the same shape repeats."""

    def __init__(self, builder, lines, res_end: int, spans: list, line_end: int) -> None:
        self.builder, self.lines = builder, lines
        self.bounds = list(zip([res_end, *(end for _, end in spans)],
                               [*(start for start, _ in spans), line_end]))

    def of(self, where) -> tuple[int, int] | None:
        """The place of a ``Location`` or ``FileLineColLoc``; None if not in that text."""
        b = self.builder
        line = where.line - b.line_offset
        if not 0 < line <= len(self.lines.starts):
            return None
        at = self.lines.starts[line - 1] + where.col - 1
        if b.loc_at(at) != Location(where.file, where.line, where.col):
            return None
        for k, (start, end) in enumerate(self.bounds):
            if start <= at < end:
                return k, at - start
        return None

    def of_debug(self, debug):
        """The place of a debug location (None: there is none; False: not a position in
        that text)."""
        if debug is None:
            return None
        if type(debug) is not FileLineColLoc:
            return False
        place = self.of(debug)
        return False if place is None else place


class AttrDictShortcut(Shortcut):
    """Reads an attr-dict (``{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}``) written on one
    line as one the loop read before in the same parser state: it is the same (immutable)
    ``DictionaryAttr``. A value is kept when the loop's next ``attr_dict`` reduction after
    the ``{`` changed nothing else in the builder (no diagnostic, alias or op). An attr-dict
    nested in it is read first: one learnt replaces the pending one, one read whole is not
    reduced."""

    terminal = "LBRACE"
    nonterminal = "attr_dict"
    observes = True

    def __init__(self, builder) -> None:
        self.builder = builder
        self.values: dict[tuple, object] = {}  # (parser state, text) -> the attr-dict
        self.learning: tuple | None = None  # (key, builder state) of one the loop reads
        self.seen: set[tuple] = set()  # the keys of attr-dicts read once

    def read(self, text: str, start: int, state: int, lines):
        end = _closing_brace(text, start)
        if end < 0:
            return None
        key = (state, text[start:end])
        value = self.values.get(key)
        if value is None:
            if key in self.seen:  # a text seen twice is worth learning
                self.learning = (key, _builder_state(self.builder))
            else:
                self.seen.add(key)
            return None
        return value, end

    def reduced(self, value) -> None:
        if self.learning is not None:
            key, state = self.learning
            self.learning = None
            if _builder_state(self.builder) == state:
                self.values[key] = value


_BRACES = re.compile(r'[{}\n]|"(?:[^"\\\n]|\\.)*"?')  # a brace, a newline or a string


def _closing_brace(text: str, start: int) -> int:
    """The offset after the ``}`` closing the ``{`` at ``start``, on the same line (braces
    in strings do not count; a dialect attribute's body has balanced brackets), or -1: an
    attr-dict over several lines is left to the loop, so that the ``{`` of a region in
    the same parser state is not scanned to its end."""
    depth = 0
    for m in _BRACES.finditer(text, start):
        c = m.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if not depth:
                return m.end()
        elif c == "\n":
            return -1
    return -1


def _builder_state(b) -> tuple:
    """What the builder holds besides the ops' results and operands, and the ops read."""
    return (b.ops_read, len(b.nonfatal), len(b.op_locs), len(b.arg_names), len(b.arg_locs),
            len(b.block_labels), len(b.successor_labels), len(b.region_starts),
            len(b.loc_aliases), len(b.attr_aliases), len(b.type_aliases), id(b.last_loc))


def _spans(key: tuple, operands: list, at: int) -> list[tuple[int, int]]:
    """Where the ``operands`` of a line are, from its key (the parser state, then the
    text around them) and where the text after its result starts."""
    spans = []
    for segment, operand in zip(key[1:], operands):
        at += len(segment)
        spans.append((at, at + len(operand)))
        at += len(operand)
    return spans

