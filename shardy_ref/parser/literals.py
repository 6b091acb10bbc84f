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


def fit_integer(magnitude: int, negative: bool, et: Type) -> int | None:
    """MLIR's ``buildAttributeAPInt``: the value an integer literal (``magnitude`` and sign)
    has as an ``et`` (integer or index), or None when it does not fit. A literal that fits
    the width unsigned wraps to the type's view of those bits (``255 : i8`` is -1, ``-1`` as
    ``ui8`` is 255); a negated value must have its sign bit set, so ``-0`` does not fit.
    ``i1`` values are 0 or 1."""
    is_index = isinstance(et, IndexType)
    width = 64 if is_index else getattr(et, "width", 64)
    if magnitude >> width:
        return None
    mask = (1 << width) - 1
    bits = -magnitude & mask if negative else magnitude
    sign_bit = width > 0 and bool(bits >> (width - 1))
    if negative and not sign_bit:
        return None
    if not negative and sign_bit and (is_index or getattr(et, "signedness", "") == "signed"):
        return None
    if width == 1 or getattr(et, "is_unsigned", False) or not sign_bit:
        return bits
    return bits - (1 << width)


class LiteralError(ValueError):
    """A malformed literal; the caller attaches the token's location (plus ``offset``)."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}


def unquote(token: str) -> str:
    """The value of a string literal token, escapes (``\\n``, ``\\22``) decoded; bytes of
    the input that are not UTF-8 (lone surrogates, :mod:`shardy_ref.tools.source`) are
    kept as they were."""
    body = token[1:-1]
    if "\\" not in body:
        return body
    raw = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        raw += body[pos:m.start()].encode("utf-8", "surrogateescape")
        if m.group(1):
            raw.append(int(m.group(1), 16))
        elif m.group(2) in _SIMPLE_ESCAPES:
            raw += _SIMPLE_ESCAPES[m.group(2)].encode("utf-8")
        else:
            raise LiteralError("unknown escape in string literal", 1 + m.start())
        pos = m.end()
    raw += body[pos:].encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "surrogateescape")


def symbol_name(token: str) -> str:
    """``@name`` or ``@"quoted name"`` to the bare name."""
    body = token[1:]
    return unquote(body) if body.startswith('"') else body


_DENSE_TOKEN = re.compile(
    r'\(|\)|\[|\]|,|true|false|"[^"]*"|-?0x[0-9a-fA-F]+'
    r'|[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|inf|nan|\S')


def dense_body_tokens(body: str) -> list[str]:
    return _DENSE_TOKEN.findall(body)


def _at_number(token: str, message: str) -> LiteralError:
    """An error about an element token: MLIR reports it at the number, after any ``-``
    (the offset is relative to the token; the caller adds where the token is)."""
    return LiteralError(message, token.startswith("-"))


class _TokenError(LiteralError):
    """An error at token ``index`` of a ``dense<...>`` body, ``offset`` into that token."""

    def __init__(self, message: str, index: int, offset: int = 0):
        super().__init__(message, offset)
        self.index = index


def parse_dense(body: str, type_, base: int = 0):
    """The body of ``dense<...>`` for a statically shaped ``type_``, as MLIR reads it.
    An error about one element carries the offset ``base`` + its offset in ``body``;
    other errors carry offset 0 (the literal itself)."""
    try:
        return _parse_dense(body, type_)
    except _TokenError as e:
        starts = [m.start() for m in _DENSE_TOKEN.finditer(body)]
        raise LiteralError(str(e), base + starts[e.index] + e.offset) from None


def _parse_dense(body: str, type_):
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr

    shape, et, count = _static_shape(type_)
    stripped = body.strip()
    if stripped.startswith('"'):
        return _parse_dense_hex(stripped[1:-1], type_, et, count)
    if not stripped:
        if count != 0:
            raise LiteralError(f"parsed zero elements, but type ({type_}) expected at least 1")
        return DenseElementsAttr(type_, ())
    tokens = dense_body_tokens(body)
    pos, tree = _dense_tree(tokens, 0)
    if pos != len(tokens):
        raise _TokenError(f"unexpected '{tokens[pos]}' in elements literal", pos)
    convert = _scalar_converter(et)
    if not isinstance(tree, list):
        return DenseElementsAttr(type_, (_convert(convert, tokens, tree),), True)
    inferred, flat = _flatten(tree)
    if inferred != tuple(shape):
        raise LiteralError(
            f"inferred shape of elements literal ([{_join(inferred)}]) does not match "
            f"type ([{_join(shape)}])")
    return DenseElementsAttr.from_values(type_, (_convert(convert, tokens, i) for i in flat))


def _static_shape(type_):
    """The shape, element type and element count of a ``dense<...>`` literal's type,
    which must be statically shaped."""
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
    return shape, et, count


def _parse_dense_hex(hexstr: str, type_, et, count: int):
    """A hex string body (``"0x..."``): the raw data of ``count`` elements, or of one
    element for a splat."""
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr
    from shardy_ref.ir.dense import from_bytes

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


def _convert(convert, tokens: list[str], leaf):
    """One element: a token index, or ``("complex", re, im, index of '(')``."""
    try:
        if type(leaf) is int:
            return convert(tokens[leaf])
        return convert(("complex", tokens[leaf[1]], tokens[leaf[2]]))
    except _TokenError:
        raise
    except LiteralError as e:
        raise _TokenError(str(e), leaf if type(leaf) is int else leaf[3], e.offset) from None


def _join(values) -> str:
    return ", ".join(map(str, values))


def _dense_tree(tokens: list[str], pos: int):
    """The nested lists of a ``dense<...>`` body, with token indices as leaves."""
    tok = tokens[pos] if pos < len(tokens) else ""
    if tok == "[":
        return _dense_list(tokens, pos + 1)
    if tok == "(":
        return _dense_complex(tokens, pos)
    if tok in ("", ",", "]", ")"):
        at = min(pos, len(tokens) - 1)
        raise _TokenError(f"expected an element literal, got '{tok or 'end'}'", at)
    return pos + 1, pos


def _dense_list(tokens: list[str], pos: int):
    """The items of a ``[...]`` list whose first item is at ``pos``."""
    items = []
    if pos < len(tokens) and tokens[pos] == "]":
        return pos + 1, items
    while True:
        pos, item = _dense_tree(tokens, pos)
        items.append(item)
        if pos >= len(tokens):
            raise _TokenError("expected ']' in elements literal", pos - 1,
                              len(tokens[pos - 1]))
        if tokens[pos] == "]":
            return pos + 1, items
        if tokens[pos] != ",":  # MLIR reports a wrong token just after the previous one
            raise _TokenError("expected ']'", pos - 1, len(tokens[pos - 1]))
        pos += 1


def _dense_complex(tokens: list[str], start: int):
    """A complex element ``(re, im)`` whose ``(`` is at ``start``: a
    ``("complex", re, im, start)`` leaf."""
    pos, re_ = _dense_tree(tokens, start + 1)
    if pos >= len(tokens) or tokens[pos] != ",":
        raise _TokenError("expected ',' in complex literal", start)
    pos, im = _dense_tree(tokens, pos + 1)
    if pos >= len(tokens) or tokens[pos] != ")":
        raise _TokenError("expected ')' in complex literal", start)
    return pos + 1, ("complex", re_, im, start)


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


_INT_LITERAL = re.compile(r"(-?)(0x[0-9a-fA-F]+|[0-9]+)")


def _int_converter(et):
    """Integer, ``i1`` or ``index`` elements (MLIR ``getIntAttrElements``)."""
    is_bool = getattr(et, "width", None) == 1
    unsigned = getattr(et, "is_unsigned", False)
    width = getattr(et, "width", 64)
    # the values that read as themselves (i0 holds only 0)
    lo = 0 if unsigned or width == 0 else -(1 << (width - 1))
    hi = (1 << width) - 1 if unsigned or width == 0 else (1 << (width - 1)) - 1

    def to_int(tok):
        try:
            value = int(tok)
        except (TypeError, ValueError):
            pass
        else:
            if lo <= value <= hi and (value or tok[0] != "-"):
                return bool(value) if is_bool else value
        return _checked_int(tok, et, is_bool, unsigned)
    return to_int


def _checked_int(tok, et, is_bool: bool, unsigned: bool):
    """An integer element that is not a plain in-range decimal: ``true``/``false``, hex,
    wrapping or out-of-range values, and the errors for the rest."""
    if type(tok) is tuple:
        raise LiteralError("expected integer elements, but parsed floating-point")
    if tok in ("true", "false"):
        if not is_bool:
            raise LiteralError("expected i1 type for 'true' or 'false' values")
        return tok == "true"
    m = _INT_LITERAL.fullmatch(tok)
    if m is None:
        raise _at_number(tok, "expected integer elements, but parsed floating-point")
    negative = bool(m.group(1))
    if negative and unsigned:
        raise _at_number(tok, "expected unsigned integer elements, but parsed negative value")
    digits = m.group(2)
    magnitude = int(digits, 16) if digits.startswith("0x") else int(digits)
    value = fit_integer(magnitude, negative, et)
    if value is None:
        raise _at_number(tok, "integer constant out of range for type")
    return bool(value) if is_bool else value


def _float_converter(name: str):
    from shardy_ref.ir.floatfmt import bits_to_float, round_float

    def to_float(tok):
        if type(tok) is tuple:
            raise LiteralError("expected a float element")
        if tok.startswith("0x"):
            return bits_to_float(int(tok, 16), name)
        if "." in tok or "n" in tok:  # a float literal, inf or nan
            try:
                return round_float(float(tok), name)
            except ValueError:
                pass
        if tok.startswith("-0x"):
            raise _at_number(tok, "hexadecimal float literal should not have a leading minus")
        if tok in ("true", "false"):
            raise LiteralError("expected floating point literal")
        if _INT_LITERAL.fullmatch(tok):
            raise _at_number(tok, "unexpected decimal integer literal for a floating point value")
        try:
            return round_float(float(tok), name)
        except ValueError:
            raise _at_number(tok, f"expected a float element, got '{tok}'") from None
    return to_float


def _scalar_converter(et):
    if isinstance(et, (IntegerType, IndexType)):
        return _int_converter(et)
    if isinstance(et, FloatType):
        return _float_converter(et.name)
    if isinstance(et, ComplexType):
        part = _scalar_converter(et.element_type)

        def to_complex(tok):
            if type(tok) is not tuple:
                raise LiteralError("expected '(' for complex element")
            return complex(part(tok[1]), part(tok[2]))
        return to_complex
    raise LiteralError(f"unsupported element type {et} in elements literal")


def parse_dense_array(body: str, base: int = 0) -> tuple[Type, tuple]:
    """The element type and values of ``array<T: a, b>`` from its body ``T: a, b`` (MLIR
    ``parseDenseArrayAttr``); errors carry ``base`` + their offset into ``body``."""
    type_text, _, elems = body.partition(":")
    name = type_text.strip()
    at_type = base + len(type_text) - len(type_text.lstrip())
    try:
        et = element_type(name)
    except ValueError:
        raise LiteralError(f"expected integer or float type, got: {name}", at_type) from None
    if not isinstance(et, (IntegerType, FloatType)):
        raise LiteralError(f"expected integer or float type, got: '{et}'", at_type)
    width = et.width if isinstance(et, IntegerType) else FLOAT_TYPES[et.name][1]
    if width != 1 and width % 8:
        raise LiteralError("element type bitwidth must be a multiple of 8", at_type)
    if not elems.strip():
        return et, ()
    if isinstance(et, FloatType):
        convert = _float_converter(et.name)
    else:
        convert = _array_bool if width == 1 else _array_int(et)
    values = []
    offset = base + len(type_text) + 1
    for item in elems.split(","):
        try:
            values.append(convert(item.strip()))
        except LiteralError as e:
            raise LiteralError(str(e), offset + len(item) - len(item.lstrip()) + e.offset) \
                from None
        offset += len(item) + 1
    return et, tuple(values)


def _array_bool(tok: str) -> bool:
    """An ``array<i1: ...>`` element: only ``true`` and ``false``."""
    if tok not in ("true", "false"):
        raise LiteralError("expected 'true' or 'false' values for i1 type", len(tok))
    return tok == "true"


def _array_int(et):
    """An integer element of ``array<...>`` (MLIR ``DenseArrayElementParser``)."""
    def to_int(tok: str) -> int:
        if tok in ("true", "false"):
            raise LiteralError("expected i1 type for 'true' or 'false' values")
        m = _INT_LITERAL.fullmatch(tok)
        if m is None:
            raise _at_number(tok, "expected integer literal")
        digits = m.group(2)
        magnitude = int(digits, 16) if digits.startswith("0x") else int(digits)
        value = fit_integer(magnitude, bool(m.group(1)), et)
        if value is None:
            raise LiteralError("integer constant out of range", len(tok))
        return value
    return to_int


_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*')


def strip_comments(text: str) -> str:
    """``text`` with ``// ...`` comments blanked out (strings kept), positions unchanged."""
    return _COMMENT_OR_STRING.sub(
        lambda m: m.group(0) if m.group(0).startswith('"') else " " * len(m.group(0)), text)
