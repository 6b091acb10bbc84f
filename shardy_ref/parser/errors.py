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

    found = _bracket_error(e, text, _error_pos(e), terminals, at)
    if found is not None:
        return found
    if isinstance(e, UnexpectedCharacters):
        return _unexpected_character(e, text, terminals, at)
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken)
                                        and e.token.type == "$END"):
        # MLIR moves an error at the end of the buffer back one character first
        expected = getattr(e, "expected", None) or getattr(e, "accepts", None) or ()
        return ParseError(at(_after_previous_token(text, max(len(text) - 1, 0))),
                          _mlir_expected(expected, terminals, text, len(text))
                          or _expected_text(expected, terminals))
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = e.accepts or e.expected
        if tok.type == "BARE_ID" and any(_OP_TERMINAL.match(n) for n in expected):
            from shardy_ref.parser.mlir_messages import lexer_error_after

            lexed = lexer_error_after(text, tok.start_pos)
            if lexed is not None:
                return ParseError(at(lexed[0]), lexed[1])
            return ParseError(at(tok.start_pos), _unknown_op(str(tok), text, tok.start_pos))
        return _unexpected(expected, terminals, text, tok.start_pos, at, str(tok))
    line = getattr(e, "line", 1)
    return ParseError(Location(filename, line + line_offset, getattr(e, "column", 1)),
                      str(e).splitlines()[0])


def _bracket_error(e: UnexpectedInput, text: str, pos: int | None, terminals,
                   at) -> ParseError | None:
    """An error at an opening bracket: an unbalanced dialect attribute or type body
    (after a dialect identifier), else the error inside a bracketed sdy slot; None if
    neither applies."""
    if pos is None or pos >= len(text) or text[pos] not in "<[{":
        return None
    found = None
    if text[pos] == "<" and _DIALECT_ID_BEFORE.search(text[max(0, pos - 200):pos]):
        found = unbalanced_dialect_body(text, pos, at)
    if text[pos] == "<" or not _wants_sdy_attr(e, terminals):
        found = found or _sdy_slot_error(e, text, pos, at)
    return found


# characters MLIR's lexer makes tokens of (Token::minus, question, star, ...) where ours
# has no terminal: an error there is the parser's, about an unexpected token
_MLIR_PUNCTUATION = frozenset("-?*+|")


def _unexpected_character(e: UnexpectedCharacters, text: str, terminals, at) -> ParseError:
    """A character our lexer has no token for: MLIR's lexer error for a lone ``.``
    (after it), else the parser's error where MLIR lexes a token."""
    pos = e.pos_in_stream
    ch = text[pos] if pos < len(text) else ""
    if ch == "." and not text.startswith("...", pos):
        return ParseError(at(pos + 1), "expected three consecutive dots for an ellipsis")
    if ch in _MLIR_PUNCTUATION and e.allowed:
        return _unexpected(e.allowed, terminals, text, pos, at, ch)
    return ParseError(at(pos), f"unexpected character '{ch}'")


def _mlir_expected(expected, terminals, text: str, pos: int) -> str | None:
    from shardy_ref.parser.mlir_messages import expected_message

    return expected_message({_describe(n, terminals) for n in expected}, text, pos)


def _unexpected(expected, terminals, text: str, pos: int, at, got: str) -> ParseError:
    """An unexpected token at ``pos``: MLIR's message for what it expected there, just
    after the previous token (``emitWrongTokenError``)."""
    from shardy_ref.parser.mlir_messages import glued_type_keyword, symbol_name_message

    symbol = symbol_name_message({_describe(n, terminals) for n in expected}, text, pos)
    if symbol is not None:
        return ParseError(at(pos), symbol)
    keyword = glued_type_keyword(text, pos)
    if keyword is not None:
        return ParseError(at(_after_previous_token(text, keyword)),
                          "expected non-function type")
    message = _mlir_expected(expected, terminals, text, pos)
    if message is not None:
        return ParseError(at(_after_previous_token(text, pos)), message)
    message = _expected_text(expected, terminals)
    if message.startswith("expected") and not message.startswith("expected one of"):
        return ParseError(at(_after_previous_token(text, pos)), message)
    return ParseError(at(pos), f"{message}, got '{got}'")


def _wants_sdy_attr(e: UnexpectedInput, terminals) -> bool:
    """Whether the grammar wanted a whole sdy attribute (``#alias`` or ``<...>``, as after
    ``sdy.mesh @m =``) rather than the bracketed slot of an sdy op."""
    expected = getattr(e, "allowed", None) or getattr(e, "accepts", None) or \
        getattr(e, "expected", None) or ()
    return {_describe(n, terminals) for n in expected} == {"attribute", "opaque_body"}


def _error_pos(e: UnexpectedInput) -> int | None:
    if isinstance(e, UnexpectedCharacters):
        return e.pos_in_stream
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        return e.token.start_pos
    return None


_DIALECT_ID_BEFORE = re.compile(r"[#!][a-zA-Z_][a-zA-Z0-9_$.\-]*\s*$")
_CLOSERS = {">": "<", "]": "[", ")": "(", "}": "{"}
_STRING_AT = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def unbalanced_dialect_body(text: str, pos: int, at) -> ParseError | None:
    """MLIR's pre-scan of the ``<...>`` body of a ``#dialect.x``/``!dialect.x`` at ``pos``
    (``parseDialectSymbolBody``): brackets must balance (``->`` and strings aside). The
    error points at MLIR's current token then: the last string lexed, else the ``<``."""
    _, current, opener = _scan_dialect_body(text, pos)
    if opener is None:
        return None
    return ParseError(at(current), f"unbalanced '{opener}' character in pretty dialect name")


def dialect_body_end(text: str, pos: int) -> int | None:
    """Where the bracket that balances the dialect body at ``pos`` ends, if one does (the
    pre-scan above then reports nothing and read nothing after that index)."""
    return _scan_dialect_body(text, pos)[0]


def _scan_dialect_body(text: str, pos: int):
    """``(end, current, opener)``: ``end`` after the balancing bracket, else the error's
    current position and unclosed bracket; all None for an unterminated string."""
    stack: list[str] = []
    current = pos
    i = pos
    while i < len(text):
        c = text[i]
        if c == '"':
            m = _STRING_AT.match(text, i)
            if m is None:
                return None, None, None  # an unterminated string: the lexer's error
            current, i = i, m.end()
            continue
        i += 1
        if c in "<[({":
            stack.append(c)
        elif c == "-" and text.startswith(">", i):
            i += 1
        elif c in _CLOSERS:
            if stack[-1] != _CLOSERS[c]:
                break
            stack.pop()
            if not stack:
                return i, None, None
    return None, current, stack[-1]


_SDY_OP_BEFORE = re.compile(r"(sdy\.[a-z_]+)(?![\w$.])")


def _sdy_slot_error(e: UnexpectedInput, text: str, pos: int, at) -> ParseError | None:
    """A stripped sdy attribute in op syntax whose brackets the grammar could not match
    (``[{"a"]``): parse it as upstream does, token by token from its first bracket, for
    upstream's error. None when that parse succeeds (the problem lies elsewhere)."""
    from shardy_ref.parser import sdy_attr_parser as sap
    from shardy_ref.parser.builder_sdy import slot_kind

    expected = getattr(e, "allowed", None) or getattr(e, "accepts", None) or \
        getattr(e, "expected", None) or ()
    if not {"OPAQUE_BODY", "SQUARE_BODY", "CURLY_BODY"} & set(expected):
        return None
    ops = list(_SDY_OP_BEFORE.finditer(text, 0, pos))
    kind = slot_kind(ops[-1].group(1), text[pos]) if ops else None
    if kind is None:
        return None
    try:
        sap.parse_stripped(kind, text, pos, len(text), whole=False)
    except sap.SdyParseError as err:
        out = [ParseError(at(offset),
                          f"custom op '{ops[-1].group(1)}' {message}" if prefixed else message)
               for offset, message, prefixed in err.errors]
        out[0].others = out[1:]
        return out[0]
    return None


def _unknown_op(name: str, text: str, pos: int) -> str:
    """MLIR's message for a pretty op name at ``pos`` it does not know."""
    from shardy_ref.ir.opdefs import is_registered_dialect, op_def
    from shardy_ref.parser.mlir_messages import unknown_op

    if op_def(name) is not None:
        return f"custom op '{name}' has no custom assembly form"
    return unknown_op(name, text, pos, is_registered_dialect)


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
