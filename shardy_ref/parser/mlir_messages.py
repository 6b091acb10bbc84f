"""MLIR's wording for a token our grammar did not expect, from the set of terminals it
expected there (``errors.translate_lark_error`` asks). Each rule is the MLIR parser
function that would have failed at that point (mlir/lib/AsmParser: ``parseToken``'s
"expected 'X'", ``parseNonFunctionType``, ``parseTensorType``, ``parseAttributeDict``,
``parseOperation``'s result list, ``parseCustomOperationName``).
"""
from __future__ import annotations

import re

# what _describe calls the terminals that can start a type
_TYPE_STARTS = frozenset({"'complex'", "'index'", "'none'", "'tensor'", "'tuple'", "'vector'",
                          "bang_id", "type"})
# what may follow a complete element in a list: MLIR checks for it with consumeIf, so a
# missing closer is reported alone ("expected ')'")
_OPTIONAL_NEXT = frozenset({"','", "'{'", "loc"})
_SHAPED_KEYWORDS = ("tensor", "vector", "complex", "tuple")
_GLUED_KEYWORD = re.compile(r"\b(tensor|vector|complex|tuple|memref|index|none)[\w$.]*$")


def expected_message(names: set[str], text: str, pos: int) -> str | None:
    """MLIR's "expected ..." for an unexpected token at ``pos`` where our grammar accepted
    the terminals described by ``names``, or None when no MLIR rule applies; the first
    rule that applies wins."""
    return (_type_message(names, text, pos) or _attribute_message(names, text, pos)
            or _operand_message(names) or _single_token_message(names, text, pos))


def _type_message(names: set[str], text: str, pos: int) -> str | None:
    """``parseNonFunctionType`` and ``parseFunctionType``."""
    if names and names <= _TYPE_STARTS | {"'('", "')'", "SSA value"} and \
            len(names & _TYPE_STARTS) >= 4:
        return "expected non-function type"
    if _innermost_opener(text, pos) == ("<", "tensor") and \
            re.search(r"<\s*$", text[:pos]) is not None:
        return "expected non-function type"  # the element type of ``tensor<``
    if names == {"'->'"}:
        return "expected '->' in function type"
    return None


def _attribute_message(names: set[str], text: str, pos: int) -> str | None:
    """``parseCustomOperationName``, ``parseAttribute`` and ``parseAttributeDict``."""
    if "operation" in names and "string" in names:
        return "expected operation name in quotes"
    if {"dense elements", "string", "integer"} <= names:
        return "expected attribute value"
    if "opaque_body" in names and names <= {"opaque_body", "attribute", "','", "'}'"}:
        return "expected '<'"  # an sdy attribute's parameters
    if names in ({"'}'", "identifier", "string"}, {"identifier", "string"}):
        return "expected attribute name"
    if names == {"','", "'='", "'}'"} or (names == {"','", "'}'"} and _in_attr_dict(text, pos)):
        return "expected '}' in attribute dictionary"
    return None


def _operand_message(names: set[str]) -> str | None:
    """``parseSSAUse`` and ``parseOperation``'s result list."""
    if "SSA value" in names and names <= {"SSA value", "identifier", "string"}:
        return "expected SSA operand"
    if names == {"','", "':'", "'='"}:
        return "expected '=' after SSA name"
    if names == {"SSA value"}:
        return "expected SSA operand"
    return None


def _single_token_message(names: set[str], text: str, pos: int) -> str | None:
    """``parseToken``'s "expected 'X'" when one token other than an optional next one was
    expected."""
    rest = names - _OPTIONAL_NEXT
    if len(rest) != 1:
        return None
    token = next(iter(rest))
    if token == "'>'" and _innermost_opener(text, pos) == ("<", "tensor"):
        return "expected '>' in tensor type"
    if token == "'<'":
        word = re.search(r"([\w$.]+)\s*$", text[:pos])
        if word is not None and word.group(1) in _SHAPED_KEYWORDS:
            return f"expected '<' in {word.group(1)} type"
    if token.startswith("'"):
        return f"expected {token}"
    return None


def symbol_name_message(names: set[str], text: str, pos: int) -> str | None:
    """A custom op's ``parseSymbolName`` failing (reported at the current token)."""
    if not names or not names <= {"symbol name", "visibility"}:
        return None
    m = _OP_BEFORE.search(text, 0, pos)
    if m is None:
        return None
    return f"custom op '{m.group(1)}' expected valid '@'-identifier for symbol name"


_OP_BEFORE = re.compile(r"([a-z_]+\.[a-z_]+)\s+(?:(?:private|public|nested)\s+)?$")


def lexer_error_after(text: str, pos: int) -> tuple[int, str] | None:
    """MLIR lexes one token ahead: consuming the token at ``pos`` lexes the next one, so a
    lone ``.`` there is reported first (``expected three consecutive dots...``)."""
    m = re.compile(r"[\w$.]+\s*").match(text, pos)
    if m is None or not text.startswith(".", m.end()) or text.startswith("...", m.end()):
        return None
    return m.end() + 1, "expected three consecutive dots for an ellipsis"


def glued_type_keyword(text: str, pos: int) -> int | None:
    """Where a type keyword starts that our lexer split from the identifier characters at
    ``pos`` (``tensor4xf32``): MLIR lexes the whole word as one bare identifier, which is
    no type. None when ``pos`` does not continue such a keyword."""
    if pos >= len(text) or not (text[pos].isalnum() or text[pos] in "_$."):
        return None
    m = _GLUED_KEYWORD.search(text, 0, pos)
    return m.start() if m is not None else None


def _innermost_opener(text: str, pos: int) -> tuple[str, str] | None:
    """The innermost bracket still open at ``pos`` and the word just before it."""
    stack: list[tuple[str, int]] = []
    i = 0
    closers = {">": "<", "]": "[", ")": "(", "}": "{"}
    while i < pos:
        c = text[i]
        if c == '"':
            end = text.find('"', i + 1)
            while end > 0 and text[end - 1] == "\\":
                end = text.find('"', end + 1)
            i = pos if end < 0 else end + 1
            continue
        if c == "-" and text.startswith(">", i + 1):
            i += 2
            continue
        if c in "<[({":
            stack.append((c, i))
        elif c in closers and stack and stack[-1][0] == closers[c]:
            stack.pop()
        i += 1
    if not stack:
        return None
    c, at = stack[-1]
    word = re.search(r"([\w$.]*)\s*$", text[:at])
    return c, word.group(1) if word else ""


def _in_attr_dict(text: str, pos: int) -> bool:
    opener = _innermost_opener(text, pos)
    return opener is not None and opener[0] == "{"


def unknown_op(name: str, text: str, pos: int, registered) -> str:
    """MLIR's ``parseCustomOperationName`` + ``parseCustomOperation`` for a pretty op name
    no dialect defines: a name without a dialect prefix (``foo``, ``sdy.``) is tried in
    the default dialect of the enclosing op (``builtin`` at the top level and in a module,
    ``func`` in a function, none in other custom ops' regions, the outer one in a generic
    op's); a prefix that names no dialect is reported as such."""
    dialect, _, rest = name.partition(".")
    if rest:
        if registered(dialect):
            return f"custom op '{name}' is unknown"
        return f"Dialect `{dialect}' not found for custom op '{name}' "
    default = default_dialect(text, pos)
    if not default:
        return f"Dialect `' not found for custom op '{name}'  (tried '.{name}' as well)"
    return f"custom op '{name}' is unknown (tried '{default}.{name}' as well)"


def default_dialect(text: str, pos: int) -> str:
    """The default dialect at ``pos``: the regions still open there (a ``{`` ending its
    line) and the op that opened each, the last op name starting a line at that depth."""
    stack = ["builtin"]
    owners: dict[int, tuple[str, str]] = {}  # region depth -> (quote, op name) last seen
    braces: list[bool] = []  # per open '{': is it a region?
    for m in _DIALECT_SCAN.finditer(text, 0, pos):
        if m.group("op") is not None:
            owners[len(stack)] = (m.group("quote"), m.group("op"))
            continue
        token = m.group(0)
        if token == "{":
            line_end = text.find("\n", m.end())
            after = text[m.end():line_end if line_end >= 0 else len(text)].strip()
            region = after == "" or after.startswith("//")
            braces.append(region)
            if region:
                stack.append(_region_dialect(owners.get(len(stack)), stack[-1]))
        elif token == "}" and braces:
            if braces.pop():
                owners.pop(len(stack), None)
                stack.pop()
    return stack[-1]


# an op name starting a line (a custom op's name has a dialect prefix; an attribute name
# is followed by '='), a string, a comment, or a brace
_DIALECT_SCAN = re.compile(
    r'(?m)^[ \t]*(?:%[^=\n]*=[ \t]*)?(?P<quote>"?)(?P<op>[A-Za-z_][\w$]*\.[\w$.]+|module)'
    r'(?=["\s({@<])(?![ \t]*=)|"(?:[^"\\\n]|\\.)*"|//[^\n]*|[{}]')


def _region_dialect(owner: tuple[str, str] | None, outer: str) -> str:
    if owner is None:
        return ""
    quoted, name = owner
    if quoted:
        return outer  # a generic op pushes no default dialect
    if name in ("module", "builtin.module"):
        return "builtin"
    if name == "func.func":
        return "func"
    return ""
