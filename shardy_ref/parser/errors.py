"""Turn Lark's parse errors into located ParseErrors with messages in MLIR's style.

MLIR reports "expected X" where the missing token should have been: just after the
previous token, skipping back over blanks and comments (``emitWrongTokenError``). Other
errors point at the offending token itself.
"""
from __future__ import annotations

import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.ir.location import Location

# What to call a terminal in "expected ..." messages.
_TERMINAL_NAMES = {
    "VALUE": "SSA value", "SYMBOL": "symbol name", "STRING": "string", "INT": "integer",
    "FLOAT": "float", "BARE_ID": "identifier", "CARET_ID": "block name",
    "TENSOR_TYPE": "type", "INT_TYPE": "type", "FLOAT_TYPE": "type", "HASH_ID": "attribute",
    "DENSE_LITERAL": "dense elements", "ARRAY_LITERAL": "array", "$END": "end of input",
}
_OP_TERMINAL = re.compile(r"^(SDY_|SHLO_|FUNC_|MODULE$|RETURN$)")


def _describe(name: str, parser_terminals) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    if _OP_TERMINAL.match(name):
        return "operation"
    term = parser_terminals.get(name)
    if term is not None and term.pattern.type == "str":
        return f"'{term.pattern.value}'"
    return name.lower()


def _expected_text(expected, terminals) -> str:
    if "STRING" in expected and "RBRACE" in expected and any(
            _OP_TERMINAL.match(n) for n in expected):
        return "expected operation name in quotes"
    names = sorted({_describe(n, terminals) for n in expected})
    if len(names) == 1:
        return f"expected {names[0]}"
    if len(names) <= 10:
        return "expected one of " + ", ".join(names)
    return "unexpected token"


def translate_lark_error(e: UnexpectedInput, text: str, filename: str,
                         line_offset: int) -> ParseError:
    from shardy_ref.parser.reader import _parser

    terminals = {t.name: t for t in _parser("start").terminals}

    def at(pos: int) -> Location:
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        return Location(filename, line + line_offset, col)

    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        return ParseError(at(e.pos_in_stream), f"unexpected character '{ch}'")
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken)
                                        and e.token.type == "$END"):
        expected = getattr(e, "expected", None) or getattr(e, "accepts", None) or ()
        return ParseError(at(_after_previous_token(text, len(text))),
                          _expected_text(expected, terminals))
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = e.accepts or e.expected
        if tok.type == "BARE_ID" and any(_OP_TERMINAL.match(n) for n in expected):
            return ParseError(at(tok.start_pos), _unknown_op(str(tok)))
        message = _expected_text(expected, terminals)
        if message.startswith("expected") and not message.startswith("expected one of"):
            return ParseError(at(_after_previous_token(text, tok.start_pos)), message)
        return ParseError(at(tok.start_pos), f"{message}, got '{tok}'")
    line = getattr(e, "line", 1)
    return ParseError(Location(filename, line + line_offset, getattr(e, "column", 1)),
                      str(e).splitlines()[0])


def _unknown_op(name: str) -> str:
    """MLIR's message for a pretty op name it does not know."""
    from shardy_ref.ir.opdefs import op_def
    if op_def(name) is not None:
        return f"custom op '{name}' has no custom assembly form"
    if "." in name:
        return f"custom op '{name}' is unknown"
    return f"custom op '{name}' is unknown (tried 'func.{name}' as well)"


def _after_previous_token(text: str, pos: int) -> int:
    """The position just after the last token before ``pos``, skipping blanks, newlines
    and ``//`` comments, as MLIR's ``emitWrongTokenError`` does."""
    while True:
        start = pos
        while pos > 0 and text[pos - 1] in " \t":
            pos -= 1
        if pos > 0 and text[pos - 1] in "\r\n":
            pos -= 1
            line_start = text.rfind("\n", 0, pos) + 1
            comment = _comment_start(text[line_start:pos])
            if comment is not None:
                pos = line_start + comment
            continue
        if pos == start:
            return pos


def _comment_start(line: str) -> int | None:
    """Index of a ``//`` comment in ``line`` outside string literals, or None."""
    in_string = False
    i = 0
    while i < len(line) - 1:
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "/" and line[i + 1] == "/":
            return i
        i += 1
    return None
