"""Whole-op fast path for the fused LALR loop: the commonest op lines read by one regex.

Most ops of a large module are one line of the commonest shapes, such as
``%2 = stablehlo.maximum %0, %1 : tensor<8x512xf32>``, ``%4 = stablehlo.dot_general %3,
%arg2, contracting_dims = [1] x [0] : (tensor<8x512xf32>, ...) -> tensor<8x128xf32>`` or
``%1 = stablehlo.constant dense<0.0> : tensor<8x512xf32>``. Token by token, the loop of
:mod:`.fast_lalr` spends two thirds of such a line in lexing, shifting and reducing its
8-30 tokens. :class:`OpShortcut` reads the line with one regex built from the grammar's own
terminals, makes the tokens the loop would have made, and calls the same builder callbacks
with the same children, in the same order; so the op, its diagnostics and its errors are
the ones the loop builds.

It is deliberately narrow, and says no (the loop reads the op) to anything else:

* only an op with one named result, written on one line with blanks only between its
  tokens, and not followed by what could still belong to it (``loc(...)``, ``,``: were
  it read, the loop would find a syntax error there and hand the text to Lark, which
  reads it right but slowly);
* only a ``stablehlo`` op of the shared shape (:class:`~.stablehlo_formats.Format`) with
  operands, then ``key = [ints]`` or ``key = [ints] x [ints]`` clauses, no attr-dict, and
  tensor types or one function type of tensor types; or ``stablehlo.constant`` with a
  ``dense<...>`` literal;
* only where the op name lexes, in that parser state, as the terminal the form is for
  (:func:`.fast_lalr.lexed_kinds`, once per state and name);
* an op whose building raises a ``ParseError`` is left to the loop, which raises it or
  an earlier syntax error, as it would have without the shortcut.
"""
from __future__ import annotations

import re
from functools import cache

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.parser.fast_lalr import FastToken, Shortcut, Tables, lexed_kinds

_BLANK = r"[ \t]*"


@cache
def _patterns(value: str, tensor: str, dense: str, integer: str) -> tuple:
    """The regexes of the forms read, from the grammar's terminals (all named groups are
    ours; the terminals' own groups are made non-capturing by ``(?:...)`` wrapping)."""
    v, t, d, i = (f"(?:{rx})" for rx in (value, tensor, dense, integer))
    head = re.compile(rf"(?P<res>{v}){_BLANK}(?P<eq>=){_BLANK}"
                      r"(?P<name>[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)[ \t]+")
    ints = rf"\[{_BLANK}(?:{i}(?:{_BLANK},{_BLANK}{i})*)?{_BLANK}\]"
    clause = rf"{_BLANK},{_BLANK}(?!x[ \t=])[a-z_]+{_BLANK}={_BLANK}{ints}(?:[ \t]+x[ \t]+{ints})?"
    shlo = re.compile(
        rf"(?P<operands>{v}(?:{_BLANK},{_BLANK}{v})*)(?P<clauses>(?:{clause})*)"
        rf"{_BLANK}:{_BLANK}(?P<types>{t}|\({_BLANK}(?:{t}(?:{_BLANK},{_BLANK}{t})*)?"
        rf"{_BLANK}\){_BLANK}->{_BLANK}{t})")
    constant = re.compile(rf"(?P<dense>{d}){_BLANK}:{_BLANK}(?P<type>{t})")
    tokens = re.compile(rf"(?P<VALUE>{v})|(?P<TENSOR_TYPE>{t})|(?P<INT>{i})"
                        r"|(?P<BARE_ID>[a-z_]+)|(?P<punct>->|[\[\]()x,=:])")
    return head, shlo, constant, tokens


class OpShortcut(Shortcut):
    """Reads one op line of the forms above for one parse, with that parse's builder."""

    terminal = "VALUE"
    nonterminal = "operation"

    def __init__(self, builder, tables: Tables) -> None:
        terms = tables.terminals
        self.head, self.shlo, self.constant, self.tokens = _patterns(
            terms["VALUE"], terms["TENSOR_TYPE"], terms["DENSE_LITERAL"], terms["INT"])
        self.builder, self.tables = builder, tables
        self.skip = tables.lexers.skip
        self.kinds: dict[tuple[int, str], str | None] = {}  # (state, op name) -> its kind

    def read(self, text: str, start: int, state: int, lines):
        head = self.head.match(text, start)
        if head is None:
            return None
        name = head.group("name")
        kind = self.kinds.get((state, name), False)
        if kind is False:
            kind = self.kinds[state, name] = self._name_kind(text, head, state)
        if kind == "SHLO_PRETTY":
            body = self.shlo.match(text, head.end())
        elif kind == "SHLO_CONSTANT":
            body = self.constant.match(text, head.end())
        else:
            return None
        if body is None or text.startswith(("loc(", ","), self.skip(text, body.end()).end()):
            return None
        try:
            if kind == "SHLO_PRETTY":
                op = self._shlo_op(text, head, body, lines)
            else:
                op = self._constant_op(text, head, body, lines)
        except ShardyRefError:
            return None  # the loop reads the op again and raises what it raises there
        return op, body.end()

    def _name_kind(self, text: str, head, state: int) -> str | None:
        kinds = lexed_kinds(self.tables, state, text,
                            [head.span("res"), head.span("eq"), head.span("name")])
        return None if kinds is None or kinds[0] != "VALUE" else kinds[2]

    def _token(self, kind: str, text: str, start: int, end: int, lines) -> FastToken:
        token = str.__new__(FastToken, text[start:end])
        token.type, token.value, token._lines, token.start_pos, token.end_pos = \
            kind, str(token), lines, start, end
        return token

    def _results(self, text: str, head, lines) -> list:
        b = self.builder
        return b.op_results([b.op_result([self._token("VALUE", text, *head.span("res"),
                                                      lines), None])])

    def _shlo_op(self, text: str, head, body, lines):
        b = self.builder
        results = self._results(text, head, lines)
        name = self._token("SHLO_PRETTY", text, *head.span("name"), lines)
        items = [self._token("VALUE", text, m.start(), m.end(), lines)
                 for m in self.tokens.finditer(text, *body.span("operands"))
                 if m.lastgroup == "VALUE"]
        items += self._clauses(text, body.span("clauses"), lines)
        op = b.shlo_op([name, b.shlo_items(items), None, b.types([self._type(text, body,
                                                                              lines)])])
        return b.operation([results, b.custom_op([op]), None])

    def _clauses(self, text: str, span: tuple[int, int], lines) -> list:
        """``, key = [ints]`` and ``, key = [ints] x [ints]`` as shlo_clause values."""
        b, clauses, lists = self.builder, [], None
        for m in self.tokens.finditer(text, *span):
            group, value = m.lastgroup, m.group()
            if group == "BARE_ID" and value != "x":
                clauses.append([self._token("BARE_ID", text, m.start(), m.end(), lines)])
                lists = []
            elif value == "[":
                ints: list = []
            elif group == "INT":
                ints.append(self._token("INT", text, m.start(), m.end(), lines))
            elif value == "]":
                lists.append(b.shlo_list(ints or [None]))
                if len(clauses[-1]) == 1:
                    clauses[-1].append(lists)
        return [b.shlo_clause([key, lst[0] if len(lst) == 1 else b.shlo_dims_pair(lst)])
                for key, lst in clauses]

    def _type(self, text: str, body, lines):
        """The op's one type: a tensor type or a function type of tensor types."""
        b = self.builder
        types = [b.tensor_type_fast([m.group()])
                 for m in self.tokens.finditer(text, *body.span("types"))
                 if m.lastgroup == "TENSOR_TYPE"]
        if text[body.start("types")] != "(":
            return types[0]
        inputs = b.types(types[:-1]) if len(types) > 1 else None
        return b.function_type([inputs, types[-1]])

    def _constant_op(self, text: str, head, body, lines):
        b = self.builder
        results = self._results(text, head, lines)
        name = self._token("SHLO_CONSTANT", text, *head.span("name"), lines)
        dense = self._token("DENSE_LITERAL", text, *body.span("dense"), lines)
        op = b.shlo_constant_op([name, None, dense, b.tensor_type_fast([body.group("type")])])
        return b.operation([results, b.custom_op([op]), None])
