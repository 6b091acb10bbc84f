"""Decoding of literal tokens: element types, tensor types, strings, numbers, ``dense<>``.

These are the hot paths of parsing (every op has a type, many have constants), so each
works on a whole token with regular expressions and caches immutable results.
"""
from __future__ import annotations

import re
from functools import cache

from shardy_ref.ir.types import (
    FLOAT_TYPES,
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    RankedTensorType,
    Type,
)

_INT_TYPE = re.compile(r"(si|ui|i)([0-9]+)")


@cache
def element_type(text: str) -> Type:
    """``i32``/``si8``/``ui64``/``f32``/``bf16``/``index``/``complex<f32>`` to a Type."""
    m = _INT_TYPE.fullmatch(text)
    if m:
        sign = {"i": "signless", "si": "signed", "ui": "unsigned"}[m.group(1)]
        return IntegerType(int(m.group(2)), sign)
    if text in FLOAT_TYPES:
        return FloatType(text)
    if text == "index":
        return IndexType()
    if text.startswith("complex<") and text.endswith(">"):
        return ComplexType(element_type(text[8:-1]))
    raise ValueError(f"unknown element type {text!r}")


@cache
def tensor_type(text: str) -> RankedTensorType:
    """``tensor<8x?xf32>`` (the lexer's fast-path token) to a RankedTensorType."""
    body = text[7:-1]
    *dims, elem = _split_dims(body)
    return RankedTensorType(tuple(None if d == "?" else int(d) for d in dims), element_type(elem))


def _split_dims(body: str) -> list[str]:
    parts: list[str] = []
    i = 0
    while True:
        j = body.find("x", i)
        head = body[i:j] if j >= 0 else ""
        if j < 0 or not (head.isdigit() or head == "?"):
            parts.append(body[i:])
            return parts
        parts.append(head)
        i = j + 1


def dims(text: str) -> tuple[int | None, ...]:
    """A DIM_LIST token ``8x?x`` to ``(8, None)``."""
    return tuple(None if d == "?" else int(d) for d in text.split("x")[:-1])


class LiteralError(ValueError):
    """A malformed literal; the caller attaches the token's location (plus ``offset``)."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}


def unquote(token: str) -> str:
    """The value of a string literal token, escapes (``\\n``, ``\\22``) decoded."""
    body = token[1:-1]
    if "\\" not in body:
        return body
    raw = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        raw += body[pos:m.start()].encode("utf-8")
        if m.group(1):
            raw.append(int(m.group(1), 16))
        elif m.group(2) in _SIMPLE_ESCAPES:
            raw += _SIMPLE_ESCAPES[m.group(2)].encode("utf-8")
        else:
            raise LiteralError("unknown escape in string literal", 1 + m.start())
        pos = m.end()
    raw += body[pos:].encode("utf-8")
    return raw.decode("utf-8", "surrogateescape")


def symbol_name(token: str) -> str:
    """``@name`` or ``@"quoted name"`` to the bare name."""
    body = token[1:]
    return unquote(body) if body.startswith('"') else body


_DENSE_TOKEN = re.compile(
    r'\(|\)|\[|\]|,|true|false|"[^"]*"|0x[0-9a-fA-F]+|[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|inf|nan|\S')


def dense_body_tokens(body: str) -> list[str]:
    return _DENSE_TOKEN.findall(body)


def parse_dense(body: str, type_):
    """The body of ``dense<...>`` for a statically shaped ``type_``, as MLIR reads it."""
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr
    from shardy_ref.ir.dense import from_bytes
    from shardy_ref.ir.types import UnrankedTensorType

    shape = getattr(type_, "shape", None)
    et = getattr(type_, "element_type", None)
    if isinstance(type_, UnrankedTensorType):
        raise LiteralError("elements literal type must have static shape")
    if shape is None or et is None:
        raise LiteralError("elements literal must be a shaped type")
    if None in shape:
        raise LiteralError("elements literal type must have static shape")
    count = 1
    for d in shape:
        count *= d
    body = body.strip()
    if body.startswith('"'):
        hexstr = body[1:-1]
        if not hexstr.startswith("0x"):
            raise LiteralError("expected a hex string for the elements literal")
        try:
            data = bytes.fromhex(hexstr[2:])
            values = from_bytes(data, et, count)
        except (ValueError, KeyError) as e:
            raise LiteralError(f"invalid hex elements literal: {e}") from None
        if len(values) == 1 and count != 1:
            return DenseElementsAttr(type_, values, True)
        if len(values) != count:
            raise LiteralError(f"elements hex data size is invalid for provided type: '{type_}'")
        return DenseElementsAttr.from_values(type_, values)
    if not body:
        if count != 0:
            raise LiteralError(f"parsed zero elements, but type ({type_}) expected at least 1")
        return DenseElementsAttr(type_, ())
    tokens = dense_body_tokens(body)
    pos, tree = _dense_tree(tokens, 0)
    if pos != len(tokens):
        raise LiteralError(f"unexpected '{tokens[pos]}' in elements literal")
    convert = _scalar_converter(et)
    if not isinstance(tree, list):
        return DenseElementsAttr(type_, (convert(tree),), True)
    inferred, flat = _flatten(tree)
    if inferred != tuple(shape):
        raise LiteralError(
            f"inferred shape of elements literal ([{_join(inferred)}]) does not match "
            f"type ([{_join(shape)}])")
    return DenseElementsAttr.from_values(type_, (convert(v) for v in flat))


def _join(values) -> str:
    return ", ".join(map(str, values))


def _dense_tree(tokens: list[str], pos: int):
    tok = tokens[pos] if pos < len(tokens) else ""
    if tok == "[":
        items = []
        pos += 1
        if pos < len(tokens) and tokens[pos] == "]":
            return pos + 1, items
        while True:
            pos, item = _dense_tree(tokens, pos)
            items.append(item)
            if pos >= len(tokens):
                raise LiteralError("expected ']' in elements literal")
            if tokens[pos] == "]":
                return pos + 1, items
            if tokens[pos] != ",":
                raise LiteralError(f"expected ',' or ']', got '{tokens[pos]}'")
            pos += 1
    if tok == "(":
        pos, re_ = _dense_tree(tokens, pos + 1)
        if pos >= len(tokens) or tokens[pos] != ",":
            raise LiteralError("expected ',' in complex literal")
        pos, im = _dense_tree(tokens, pos + 1)
        if pos >= len(tokens) or tokens[pos] != ")":
            raise LiteralError("expected ')' in complex literal")
        return pos + 1, ("complex", re_, im)
    if tok in ("", ",", "]", ")"):
        raise LiteralError(f"expected an element literal, got '{tok or 'end'}'")
    return pos + 1, tok


def _flatten(tree) -> tuple[tuple[int, ...], list]:
    if not isinstance(tree, list):
        return (), [tree]
    if not tree:
        return (0,), []
    shapes, flat = set(), []
    for item in tree:
        s, f = _flatten(item)
        shapes.add(s)
        flat.extend(f)
    if len(shapes) != 1:
        raise LiteralError("tensor literal is invalid; ranks are not consistent between elements")
    return (len(tree), *shapes.pop()), flat


def _scalar_converter(et):
    from shardy_ref.ir.floatfmt import bits_to_float, round_float

    if isinstance(et, IntegerType):
        if et.width == 1:
            def to_bool(tok):
                if tok in ("true", "1"):
                    return True
                if tok in ("false", "0"):
                    return False
                raise LiteralError(f"expected i1 value, got '{tok}'")
            return to_bool

        lo = 0 if et.is_unsigned else -(1 << (et.width - 1))
        hi = (1 << et.width) - 1 if et.is_unsigned or et.is_signless else (1 << (et.width - 1)) - 1

        def to_int(tok):
            if not isinstance(tok, str) or not re.fullmatch(r"[-+]?[0-9]+|0x[0-9a-fA-F]+", tok):
                raise LiteralError("expected integer elements, but parsed floating-point")
            v = int(tok, 16) if tok.startswith("0x") else int(tok)
            if not lo <= v <= hi:
                raise LiteralError("integer constant out of range for type")
            if et.is_signless and v > (1 << (et.width - 1)) - 1:
                v -= 1 << et.width  # signless values print as signed
            return v
        return to_int
    if isinstance(et, FloatType):
        name = et.name

        def to_float(tok):
            if not isinstance(tok, str):
                raise LiteralError("expected a float element")
            if tok.startswith("0x"):
                return bits_to_float(int(tok, 16), name)
            try:
                return round_float(float(tok), name)
            except ValueError:
                raise LiteralError(f"expected a float element, got '{tok}'") from None
        return to_float
    if isinstance(et, ComplexType):
        part = _scalar_converter(et.element_type)

        def to_complex(tok):
            if not (isinstance(tok, tuple) and tok[0] == "complex"):
                raise LiteralError("expected '(' for complex element")
            return complex(part(tok[1]), part(tok[2]))
        return to_complex
    if isinstance(et, IndexType):
        return lambda tok: int(tok)
    raise LiteralError(f"unsupported element type {et} in elements literal")


_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def strip_comments(text: str) -> str:
    """``text`` with ``// ...`` comments blanked out (strings kept), positions unchanged."""
    return _COMMENT_OR_STRING.sub(
        lambda m: m.group(0) if m.group(0).startswith('"') else " " * len(m.group(0)), text)
