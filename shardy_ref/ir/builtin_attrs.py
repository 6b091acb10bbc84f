"""MLIR builtin attributes as immutable values, each printing itself as MLIR does.

Covers what StableHLO/Shardy programs use: integers, floats, strings, unit, arrays,
``array<i64: ...>``, ``dense<...>`` elements, dictionaries, symbol references, types as
attributes, and an opaque fallback for dialect attributes we do not model.
See https://mlir.llvm.org/docs/Dialects/Builtin/#attributes.
"""
from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from dataclasses import dataclass

from shardy_ref.ir.floatfmt import format_float
from shardy_ref.ir.types import (
    I1,
    I64,
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    Type,
)


class Attribute:
    """Base class of all attributes; subclasses are frozen, slotted dataclasses."""

    __slots__ = ()
    replace = dataclasses.replace


@dataclass(frozen=True, slots=True)
class IntegerAttr(Attribute):
    """``5 : i32``; an ``i1`` prints as ``true``/``false`` without its type."""

    value: int
    type: Type

    def __str__(self) -> str:
        if self.type == I1:
            return "true" if self.value else "false"
        return f"{self.value} : {self.type}"


TRUE = IntegerAttr(1, I1)
FALSE = IntegerAttr(0, I1)


def bool_attr(value: bool) -> IntegerAttr:
    return TRUE if value else FALSE


@dataclass(frozen=True, slots=True)
class FloatAttr(Attribute):
    """``1.000000e+00 : f32``."""

    value: float
    type: FloatType

    def __str__(self) -> str:
        return f"{format_float(self.value, self.type)} : {self.type}"


@dataclass(frozen=True, slots=True)
class StringAttr(Attribute):
    """``"text"``; non-printable bytes print as ``\\XX`` escapes (MLIR ``printEscapedString``)."""

    value: str
    type: Type | None = None

    def __str__(self) -> str:
        s = quote_string(self.value)
        return f"{s} : {self.type}" if self.type is not None else s


def quote_string(value: str) -> str:
    """MLIR's escaped string literal: printable ASCII stays, ``"``/``\\`` and others become hex."""
    out = ['"']
    for b in value.encode("utf-8", "surrogateescape"):
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif 0x20 <= b <= 0x7E and c != '"':
            out.append(c)
        else:
            out.append(f"\\{b:02X}")
    out.append('"')
    return "".join(out)


@dataclass(frozen=True, slots=True)
class UnitAttr(Attribute):
    """The unit attribute: present-or-absent flags such as ``use_global_device_ids``."""

    def __str__(self) -> str:
        return "unit"


UNIT = UnitAttr()


@dataclass(frozen=True, slots=True)
class ArrayAttr(Attribute):
    """``[a, b, c]``: a list of attributes."""

    value: tuple[Attribute, ...]

    def __str__(self) -> str:
        return format_nested(self)

    def __eq__(self, other) -> bool:
        return nested_equal(self, other)

    def __hash__(self) -> int:
        return nested_hash(self)

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __getitem__(self, i):
        return self.value[i]


def _format_array_element(attr: Attribute) -> str:
    """Inside ``[...]`` MLIR may elide an ``i64``/``f64`` type (not after a hex float)."""
    if isinstance(attr, IntegerAttr) and attr.type == I64:
        return str(attr.value)
    if isinstance(attr, FloatAttr) and attr.type.name == "f64":
        text = format_float(attr.value, attr.type)
        return text if not text.startswith(("0x", "-0x")) else f"{text} : f64"
    return str(attr)


@dataclass(frozen=True, slots=True)
class DenseArrayAttr(Attribute):
    """``array<i64: 1, 2>`` (``array<i64>`` when empty): a packed list of scalars."""

    element_type: Type
    value: tuple

    def __str__(self) -> str:
        if not self.value:
            return f"array<{self.element_type}>"
        items = ", ".join(format_scalar(v, self.element_type) for v in self.value)
        return f"array<{self.element_type}: {items}>"

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)

    def __getitem__(self, i):
        return self.value[i]


# --mlir-elide-elementsattrs-if-larger=N: while set (by the printer), a non-splat
# DenseElementsAttr of more than N elements prints as MLIR's ``dense_resource<__elided__>``.
ELIDE_ELEMENTS_LARGER_THAN: ContextVar[int | None] = ContextVar("elide_elements", default=None)


@dataclass(frozen=True, slots=True)
class DenseElementsAttr(Attribute):
    """``dense<...> : tensor<...>``: the elements of a statically shaped tensor, row-major.

    ``values`` holds one Python scalar per element (``bool``, ``int``, ``float`` or
    ``complex``); a splat keeps a single value, as MLIR stores it.
    """

    type: Type  # a RankedTensorType (or vector)
    values: tuple
    is_splat: bool = False

    @staticmethod
    def from_values(type_: Type, values) -> DenseElementsAttr:
        """Elements in row-major order; all-equal values are stored as a splat, as MLIR does
        (so ``[[1, 1], [1, 1]]`` prints ``dense<1>``)."""
        values = tuple(values)
        if len(values) > 1 and all(_same_bits(v, values[0]) for v in values):
            return DenseElementsAttr(type_, values[:1], True)
        return DenseElementsAttr(type_, values, len(values) == 1)

    def __str__(self) -> str:
        limit = ELIDE_ELEMENTS_LARGER_THAN.get()
        if limit is not None and not self.is_splat and len(self.values) > limit:
            return f"dense_resource<__elided__> : {self.type}"
        from shardy_ref.ir.dense import format_dense
        return f"dense<{format_dense(self)}> : {self.type}"

    @property
    def element_type(self) -> Type:
        return self.type.element_type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    def flat_values(self) -> tuple:
        if self.is_splat:
            n = 1
            for d in self.type.shape:
                n *= d
            return self.values * n
        return self.values


def _same_bits(a, b) -> bool:
    """Equal as stored bits: 0.0 and -0.0 differ, a NaN equals the same NaN."""
    if isinstance(a, float) or isinstance(b, float):
        return repr(a) == repr(b)
    return a == b and type(a) is type(b)


@dataclass(frozen=True, slots=True)
class DenseResourceElementsAttr(Attribute):
    """``dense_resource<name> : tensor<...>``: elements kept in a module-level resource blob."""

    type: Type
    handle: str

    def __str__(self) -> str:
        return f"dense_resource<{self.handle}> : {self.type}"


@dataclass(frozen=True, slots=True)
class DictionaryAttr(Attribute):
    """``{a = 1 : i64, b}``: named attributes, kept sorted by name as MLIR does."""

    value: tuple[tuple[str, Attribute], ...]

    def __post_init__(self):
        if any(self.value[i][0] >= self.value[i + 1][0] for i in range(len(self.value) - 1)):
            object.__setattr__(self, "value", tuple(sorted(dict(self.value).items())))

    @staticmethod
    def of(items: dict[str, Attribute]) -> DictionaryAttr:
        return DictionaryAttr(tuple(sorted(items.items())))

    def __str__(self) -> str:
        return format_nested(self)

    def __eq__(self, other) -> bool:
        return nested_equal(self, other)

    def __hash__(self) -> int:
        return nested_hash(self)

    def get(self, name: str, default=None):
        for k, v in self.value:
            if k == name:
                return v
        return default

    def as_dict(self) -> dict[str, Attribute]:
        return dict(self.value)

    def __len__(self) -> int:
        return len(self.value)


def format_attr_dict(items) -> str:
    """``{a = 1 : i64, flag}`` for (name, attribute) pairs, in the order given."""
    return _format_parts(_dict_parts(items))


def format_named_attr(name: str, value: Attribute) -> str:
    key = format_attr_name(name)
    if isinstance(value, UnitAttr):
        return key
    return f"{key} = {format_nested(value)}"


def format_nested(attr: Attribute) -> str:
    """``str(attr)``, written with a stack rather than recursion through nested arrays and
    dictionaries, so hundreds of levels print (MLIR has no nesting limit)."""
    return _format_parts([attr])


def _format_parts(parts: list) -> str:
    """Concatenate text and attributes, expanding arrays and dictionaries in place."""
    out: list[str] = []
    todo = parts[::-1]  # text, or attributes still to print; the next one last
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, ArrayAttr):
            todo.extend(reversed(_array_parts(item)))
        elif isinstance(item, DictionaryAttr):
            todo.extend(reversed(_dict_parts(item.value)))
        else:
            out.append(str(item))
    return "".join(out)


def _children(attr) -> list:
    """The attributes directly inside an array or dictionary (MLIR nests them unboundedly, so
    equality and hashing walk them with a stack, not recursion)."""
    if isinstance(attr, ArrayAttr):
        return list(attr.value)
    return [v for _, v in attr.value]


def nested_equal(a: Attribute, b: object) -> bool:
    """``a == b`` for arrays and dictionaries, however deeply nested."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if not isinstance(x, (ArrayAttr, DictionaryAttr)):
            if x != y:
                return False
            continue
        if len(x.value) != len(y.value):
            return False
        if isinstance(x, DictionaryAttr) and any(
                kx != ky for (kx, _), (ky, _) in zip(x.value, y.value, strict=True)):
            return False
        todo.extend(zip(_children(x), _children(y), strict=True))
    return True


def nested_hash(attr: Attribute) -> int:
    """``hash(attr)`` for arrays and dictionaries, however deeply nested: children first."""
    order, todo = [], [attr]
    while todo:
        x = todo.pop()
        order.append(x)
        todo.extend(c for c in _children(x) if isinstance(c, (ArrayAttr, DictionaryAttr)))
    hashes: dict[int, int] = {}

    def of(c) -> int:
        return hashes[id(c)] if isinstance(c, (ArrayAttr, DictionaryAttr)) else hash(c)
    for x in reversed(order):
        if isinstance(x, ArrayAttr):
            hashes[id(x)] = hash(("array", tuple(of(c) for c in x.value)))
        else:
            hashes[id(x)] = hash(("dict", tuple((k, of(v)) for k, v in x.value)))
    return hashes[id(attr)]


def _array_parts(attr: ArrayAttr) -> list:
    parts: list = ["["]
    for i, v in enumerate(attr.value):
        if i:
            parts.append(", ")
        parts.append(v if isinstance(v, (ArrayAttr, DictionaryAttr)) else _format_array_element(v))
    parts.append("]")
    return parts


def _dict_parts(items) -> list:
    parts: list = ["{"]
    for i, (k, v) in enumerate(items):
        if i:
            parts.append(", ")
        key = format_attr_name(k)
        if isinstance(v, UnitAttr):
            parts.append(key)
        else:
            parts.append(key + " = ")
            parts.append(v if isinstance(v, (ArrayAttr, DictionaryAttr)) else str(v))
    parts.append("}")
    return parts


def format_attr_name(name: str) -> str:
    """An attribute name prints bare when it is a valid bare identifier, else quoted."""
    if is_bare_identifier(name):
        return name
    return quote_string(name)


_BARE_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_BARE_REST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789$.")


def is_bare_identifier(name: str) -> bool:
    return bool(name) and name[0] in _BARE_START and all(c in _BARE_REST for c in name[1:])


def format_symbol_name(name: str) -> str:
    """``@name``, or ``@"quoted name"`` when it is not a bare identifier."""
    if is_bare_identifier(name):
        return "@" + name
    return "@" + quote_string(name)


@dataclass(frozen=True, slots=True)
class SymbolRefAttr(Attribute):
    """``@root`` or ``@root::@nested``: a reference to a symbol (func, mesh, ...)."""

    root: str
    nested: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "::".join(format_symbol_name(n) for n in (self.root, *self.nested))


@dataclass(frozen=True, slots=True)
class TypeAttr(Attribute):
    """A type used as an attribute (``function_type = (i32) -> i32``)."""

    value: Type

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class OpaqueAttr(Attribute):
    """A dialect attribute we do not model (``#foo.bar<...>``), kept as its normalized text."""

    text: str

    def __str__(self) -> str:
        return self.text


def format_scalar(v, element_type: Type) -> str:
    """A scalar as MLIR prints it inside ``dense<>`` / ``array<>``: no type suffix."""
    if isinstance(element_type, IntegerType):
        if element_type.width == 1:
            return "true" if v else "false"
        return str(int(v))
    if isinstance(element_type, IndexType):
        return str(int(v))
    if isinstance(element_type, FloatType):
        return format_float(v, element_type)
    if isinstance(element_type, ComplexType):
        et = element_type.element_type
        return f"({format_scalar(v.real, et)},{format_scalar(v.imag, et)})"
    return str(v)
