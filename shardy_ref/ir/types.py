"""MLIR types used by StableHLO and Shardy programs, as immutable values.

Each type's ``__str__`` is the exact text MLIR's printer writes for it (``tensor<8x?xf32>``,
``complex<f32>``, ``!stablehlo.token``), so printing a type never needs a printer object.
See https://mlir.llvm.org/docs/Dialects/Builtin/#types and the StableHLO spec's "Types".
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


class Type:
    """Base class of all types; subclasses are frozen, slotted dataclasses."""

    __slots__ = ()
    replace = dataclasses.replace


@dataclass(frozen=True, slots=True)
class IntegerType(Type):
    """``i32`` (signless), ``si32`` (signed) or ``ui32`` (unsigned) of any bit width."""

    width: int
    signedness: str = "signless"  # "signless" | "signed" | "unsigned"

    def __str__(self) -> str:
        prefix = {"signless": "i", "signed": "si", "unsigned": "ui"}[self.signedness]
        return f"{prefix}{self.width}"

    @property
    def is_signless(self) -> bool:
        return self.signedness == "signless"

    @property
    def is_unsigned(self) -> bool:
        return self.signedness == "unsigned"


# Float type names MLIR knows, with (mantissa bits incl. implicit bit, total bits): the
# precision is what float printing needs (MLIR prints floats with LLVM's APFloat semantics).
FLOAT_TYPES: dict[str, tuple[int, int]] = {
    "f16": (11, 16), "bf16": (8, 16), "f32": (24, 32), "f64": (53, 64), "tf32": (11, 19),
    "f80": (64, 80), "f128": (113, 128),
    "f8E5M2": (3, 8), "f8E4M3": (4, 8), "f8E4M3FN": (4, 8), "f8E5M2FNUZ": (3, 8),
    "f8E4M3FNUZ": (4, 8), "f8E4M3B11FNUZ": (4, 8), "f8E3M4": (5, 8), "f8E8M0FNU": (1, 8),
    "f4E2M1FN": (2, 4), "f6E2M3FN": (4, 6), "f6E3M2FN": (3, 6),
}


@dataclass(frozen=True, slots=True)
class FloatType(Type):
    """A builtin floating-point type such as ``f32``, ``bf16`` or ``f8E4M3FN``."""

    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def width(self) -> int:
        return FLOAT_TYPES[self.name][1]

    @property
    def precision(self) -> int:
        return FLOAT_TYPES[self.name][0]


@dataclass(frozen=True, slots=True)
class IndexType(Type):
    """The builtin ``index`` type."""

    def __str__(self) -> str:
        return "index"


@dataclass(frozen=True, slots=True)
class NoneType(Type):
    """The builtin ``none`` type."""

    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True)
class ComplexType(Type):
    """``complex<f32>``: a complex number of a float (or integer) element type."""

    element_type: Type

    def __str__(self) -> str:
        return f"complex<{self.element_type}>"


@dataclass(frozen=True, slots=True)
class RankedTensorType(Type):
    """``tensor<8x?xf32[, encoding]>``; ``None`` in ``shape`` is a dynamic (``?``) dimension."""

    shape: tuple[int | None, ...]
    element_type: Type
    encoding: object = None  # an Attribute, e.g. ``#stablehlo.bounds<...>``
    # the printed text, computed on first use (printing meets each type many times)
    _text: str | None = field(default=None, init=False, compare=False, repr=False)

    def __str__(self) -> str:
        text = self._text
        if text is None:
            dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
            enc = f", {self.encoding}" if self.encoding is not None else ""
            text = f"tensor<{dims}{self.element_type}{enc}>"
            object.__setattr__(self, "_text", text)
        return text

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return None not in self.shape

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            if d is None:
                raise ValueError(f"{self} has a dynamic shape")
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class UnrankedTensorType(Type):
    """``tensor<*xf32>``."""

    element_type: Type

    def __str__(self) -> str:
        return f"tensor<*x{self.element_type}>"


@dataclass(frozen=True, slots=True)
class VectorType(Type):
    """``vector<4xf32>`` (parsed for completeness; StableHLO does not use it)."""

    shape: tuple[int, ...]
    element_type: Type
    scalable: tuple[bool, ...] = ()

    def __str__(self) -> str:
        dims = "".join(
            (f"[{d}]" if self.scalable and self.scalable[i] else str(d)) + "x"
            for i, d in enumerate(self.shape))
        return f"vector<{dims}{self.element_type}>"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """``tuple<a, b>``."""

    types: tuple[Type, ...]

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.types))}>"


@dataclass(frozen=True, slots=True)
class FunctionType(Type):
    """``(a, b) -> c``; a single result that is not itself a function type prints bare."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.inputs))}) -> {format_result_types(self.results)}"


def format_result_types(results: tuple[Type, ...] | list[Type]) -> str:
    """MLIR wraps a result list in parentheses unless it is one non-function type."""
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return str(results[0])
    return f"({', '.join(map(str, results))})"


@dataclass(frozen=True, slots=True)
class TokenType(Type):
    """``!stablehlo.token``: orders side-effecting StableHLO ops."""

    def __str__(self) -> str:
        return "!stablehlo.token"


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A type of a dialect we do not model (``!quant.uniform<...>``), kept as its text."""

    dialect: str
    body: str  # everything after ``!dialect``: ``.uniform<i8:f32, 1.0>`` or ``<"...">``

    def __str__(self) -> str:
        return f"!{self.dialect}{self.body}"


# Shared instances of the most common types; types compare by value, so these are only
# a convenience and an allocation saving.
I1 = IntegerType(1)
I32 = IntegerType(32)
I64 = IntegerType(64)
F32 = FloatType("f32")
F64 = FloatType("f64")
INDEX = IndexType()
TOKEN = TokenType()
NONE = NoneType()


def tensor_rank(type_: Type) -> int:
    """Upstream ``getTensorRank``: the rank of a shaped type, 0 for anything
    else (tokens, tuples, unranked tensors)."""
    shape = getattr(type_, "shape", None)
    return len(shape) if shape is not None else 0
