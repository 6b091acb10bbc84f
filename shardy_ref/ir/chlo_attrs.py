"""CHLO attributes as immutable values: the ``comparison_direction``, ``comparison_type`` and
``precision`` enums (``#chlo<comparison_direction LT>``) and the dimension numbers of
``chlo.ragged_dot`` (``#chlo.ragged_dot<lhs_batching_dimensions = [0], ...>``).

Each ``__str__`` prints exactly what CHLO's printer writes; :func:`parse_chlo_attr` reads
the same text back with upstream's diagnostics (``ChloOps.cpp``: ``parseStruct``). See
https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/dialect/ChloEnums.td
and ``ChloOps.td`` (``CHLO_RaggedDotDimensionNumbers``).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import Attribute

# The `#chlo<kind VALUE>` enums: mnemonic -> values in C++ order (ChloEnums.td).
ENUMS: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
}
# C++ enum type names, for upstream's "expected X to be one of" message
_CPP_NAMES = {"comparison_direction": "ComparisonDirection",
              "comparison_type": "ComparisonType", "precision": "Precision"}


@dataclass(frozen=True, slots=True)
class ChloEnum(Attribute):
    """A CHLO enum attribute; prints ``#chlo<comparison_direction LT>``."""

    kind: str  # the mnemonic, a key of ENUMS
    value: str  # the keyword, e.g. "LT"

    def __post_init__(self):
        if self.value not in ENUMS.get(self.kind, ()):
            raise ValueError(f"{self.value!r} is not a CHLO {self.kind!r} "
                             f"(one of {ENUMS.get(self.kind, 'no such enum')})")

    def __str__(self) -> str:
        return f"#chlo<{self.kind} {self.value}>"


@dataclass(frozen=True, slots=True)
class RaggedDotDimensionNumbers(Attribute):
    """The dimension numbers of ``chlo.ragged_dot``: dot_general's batching and contracting
    dimensions plus the lhs ragged dimension and the rhs group dimension. Prints
    ``#chlo.ragged_dot<...>`` with the empty lists left out (``printStruct``)."""

    MNEMONIC: ClassVar[str] = "ragged_dot"
    lhs_batching_dimensions: tuple[int, ...] = ()
    rhs_batching_dimensions: tuple[int, ...] = ()
    lhs_contracting_dimensions: tuple[int, ...] = ()
    rhs_contracting_dimensions: tuple[int, ...] = ()
    lhs_ragged_dimensions: tuple[int, ...] = ()
    rhs_group_dimensions: tuple[int, ...] = ()

    def __post_init__(self):
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, tuple(int(v) for v in getattr(self, f.name)))

    def params(self) -> str:
        parts = [f"{f.name} = [{', '.join(map(str, getattr(self, f.name)))}]"
                 for f in dataclasses.fields(self) if getattr(self, f.name)]
        return "<" + ", ".join(parts) + ">"

    def __str__(self) -> str:
        return f"#chlo.{self.MNEMONIC}{self.params()}"


FIELDS = tuple(f.name for f in dataclasses.fields(RaggedDotDimensionNumbers))


class ChloAttrSyntaxError(Exception):
    """A parse error at character ``offset`` of ``name + body``."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


_TOKEN = re.compile(r"\s*(?:(?P<int>-?[0-9]+)|(?P<id>[A-Za-z_][A-Za-z0-9_$.]*)|(?P<q>\?)|"
                    r"(?P<p>[<>\[\],=]))")


class _Lexer:
    def __init__(self, text: str, start: int):
        self.text, self.pos = text, start

    def peek(self) -> tuple[str, str, int]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            at = self.pos + len(self.text[self.pos:]) - len(self.text[self.pos:].lstrip())
            return ("eof" if at >= len(self.text) else "bad", self.text[at:at + 1], at)
        kind = m.lastgroup
        return kind, m.group(kind), m.start(kind)

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        m = _TOKEN.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
        return tok

    def expect(self, text: str) -> None:
        _, value, at = self.peek()
        if value != text:
            raise ChloAttrSyntaxError(at, f"expected '{text}'")
        self.take()


def parse_chlo_attr(name: str, body: str | None) -> Attribute:
    """The attribute written as ``name`` (``#chlo``, ``#chlo.ragged_dot``) and its ``<...>``
    ``body``; raises :class:`ChloAttrSyntaxError` with an offset into ``name + body``."""
    text = name + (body or "")
    if name == "#chlo" and body is not None:
        return _parse_enum(text, len(name))
    if name == "#chlo.ragged_dot" and body is not None:
        return _parse_ragged_dot(text, len(name))
    raise ChloAttrSyntaxError(min(len(name), 6), "unknown chlo attribute")


def _parse_enum(text: str, start: int) -> ChloEnum:
    lex = _Lexer(text, start)
    lex.expect("<")
    _, mnemonic, at = lex.take()
    if mnemonic not in ENUMS:
        raise ChloAttrSyntaxError(at, "unknown chlo attribute")
    _, value, at = lex.take()
    if value not in ENUMS[mnemonic]:
        raise ChloAttrSyntaxError(at, f"expected ::mlir::chlo::{_CPP_NAMES[mnemonic]} to be "
                                  f"one of: {', '.join(ENUMS[mnemonic])}")
    lex.expect(">")
    return ChloEnum(mnemonic, value)


def _parse_ragged_dot(text: str, start: int) -> RaggedDotDimensionNumbers:
    lex = _Lexer(text, start)
    lex.expect("<")
    values: dict[str, tuple[int, ...]] = {}
    while lex.peek()[1] != ">":
        _, key, at = lex.take()
        if key not in FIELDS:
            raise ChloAttrSyntaxError(at, "expected one of: " +
                                      ", ".join(f"`{f}`" for f in FIELDS))
        if key in values:
            raise ChloAttrSyntaxError(lex.peek()[2], f"duplicated `{key}` entry")
        lex.expect("=")
        values[key] = _dims(lex)
        if lex.peek()[1] != ",":
            break
        lex.take()
    lex.expect(">")
    return RaggedDotDimensionNumbers(**values)


def _dims(lex: _Lexer) -> tuple[int, ...]:
    """``[1, 2]`` (``hlo::parseDimSizes``; ``?`` is INT64_MIN, ShapedType::kDynamic)."""
    lex.expect("[")
    out: list[int] = []
    while lex.peek()[1] != "]":
        kind, value, at = lex.take()
        if kind == "int":
            out.append(int(value))
        elif kind == "q":
            out.append(-(1 << 63))
        else:
            raise ChloAttrSyntaxError(at, "expected integer value")
        if lex.peek()[1] != ",":
            break
        lex.take()
    lex.expect("]")
    return tuple(out)


def enum_value(attr, default: str | None = None) -> str | None:
    """The keyword of a ChloEnum (or StableHLO enum) attribute, or ``default``."""
    return getattr(attr, "value", default) if attr is not None else default


def compare_attrs_of(op) -> dict:
    """``stablehlo.compare``'s attributes for a ``chlo.broadcast_compare`` op (empty for
    other broadcast ops): what its legalization emits and its kernel runs."""
    if op.name != "chlo.broadcast_compare":
        return {}
    from shardy_ref.ir.stablehlo_attrs import compare_attrs

    compare_type = op.attributes.get("compare_type")
    return compare_attrs(op.attributes["comparison_direction"].value,
                         compare_type.value if compare_type is not None else None)


def ragged_prefix_dims(dims: RaggedDotDimensionNumbers, ragged: int) -> list[int]:
    """The lhs dimensions the leading dimensions of ``group_sizes`` stand for, given the
    lhs ragged dimension (ChloOps.cpp ``checkRaggedDotConstraints``)."""
    batch, contracting = list(dims.lhs_batching_dimensions), list(dims.lhs_contracting_dimensions)
    if ragged in batch:
        return batch[:batch.index(ragged)]
    if ragged in contracting:
        return batch + contracting[:contracting.index(ragged)]
    return batch + [d for d in range(ragged) if d not in batch and d not in contracting]
