"""Turn Lark's parse errors into located ParseErrors with messages in MLIR's style."""
from __future__ import annotations

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


def _describe(name: str, parser_terminals) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    term = parser_terminals.get(name)
    if term is not None and term.pattern.type == "str":
        return f"'{term.pattern.value}'"
    if name.startswith(("SDY_", "SHLO_", "FUNC_", "MODULE", "RETURN")):
        return "operation"
    return name.lower()


def _expected_text(expected, terminals) -> str:
    names = sorted({_describe(n, terminals) for n in expected})
    if len(names) == 1:
        return f"expected {names[0]}"
    if len(names) <= 6:
        return "expected one of " + ", ".join(names)
    return "unexpected token"


def translate_lark_error(e: UnexpectedInput, text: str, filename: str,
                         line_offset: int) -> ParseError:
    from shardy_ref.parser.reader import _parser

    terminals = {t.name: t for t in _parser().terminals}
    line, col = getattr(e, "line", 0), getattr(e, "column", 0)
    if (isinstance(e, UnexpectedToken) and e.token.type == "$END") or isinstance(e, UnexpectedEOF):
        line, col = _end_position(text)
        expected = getattr(e, "expected", None) or getattr(e, "accepts", None) or ()
        return ParseError(Location(filename, line + line_offset, col),
                          f"{_expected_text(expected, terminals)}, but reached the end of input")
    loc = Location(filename, line + line_offset, col)
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        return ParseError(loc, f"unexpected character '{ch}'")
    if isinstance(e, UnexpectedToken):
        tok = e.token
        expected = e.accepts or e.expected
        if tok.type == "BARE_ID" and "." in tok and _expects_op(expected):
            return ParseError(loc, f"custom op '{tok}' is unknown (tried 'func.{tok}' as well)")
        return ParseError(loc, f"{_expected_text(expected, terminals)}, got '{tok}'")
    return ParseError(loc, str(e).splitlines()[0])


def _expects_op(expected) -> bool:
    return any(n.startswith(("SDY_", "SHLO_")) for n in expected)


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    return len(lines), len(lines[-1]) + 1
