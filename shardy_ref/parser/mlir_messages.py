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
_OP_NAME_LINE = re.compile(r'^\s*(?:%[^=]*=\s*)?("?)([A-Za-z_][\w.$]*)')


def expected_message(names: set[str], text: str, pos: int) -> str | None:
    """MLIR's "expected ..." for an unexpected token at ``pos`` where our grammar accepted
    the terminals described by ``names``, or None when no MLIR rule applies."""
    if names and names <= _TYPE_STARTS | {"'('", "')'"} and len(names & _TYPE_STARTS) >= 4:
        return "expected non-function type"
    if names == {"','", "':'", "'='"}:
        return "expected '=' after SSA name"
    if names in ({"'}'", "identifier", "string"}, {"identifier", "string"}):
        return "expected attribute name"
    if names == {"','", "'='", "'}'"} or names == {"','", "'}'"} and _in_attr_dict(text, pos):
        return "expected '}' in attribute dictionary"
    if names == {"SSA value"}:
        return "expected SSA operand"
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
    line) and the op each belongs to, read from the line that opens it."""
    stack = ["builtin"]
    depth_kinds: list[bool] = []  # per open '{': is it a region?
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[{}]', text[:pos]):
        token = m.group(0)
        if token == "{":
            line_start = text.rfind("\n", 0, m.start()) + 1
            line_end = text.find("\n", m.end())
            after = text[m.end():line_end if line_end >= 0 else len(text)]
            region = after.strip() == "" or after.strip().startswith("//")
            depth_kinds.append(region)
            if region:
                stack.append(_region_dialect(text[line_start:m.start()], stack[-1]))
        elif token == "}" and depth_kinds:
            if depth_kinds.pop():
                stack.pop()
    return stack[-1]


def _region_dialect(line: str, outer: str) -> str:
    m = _OP_NAME_LINE.match(line)
    if m is None or line.lstrip().startswith("}"):
        return ""
    quoted, name = m.groups()
    if quoted:
        return outer  # a generic op pushes no default dialect
    if name in ("module", "builtin.module"):
        return "builtin"
    if name in ("func.func", "func"):
        return "func"
    return ""
