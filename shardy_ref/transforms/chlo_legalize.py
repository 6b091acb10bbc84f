"""``chlo-legalize-to-stablehlo``: rewrite CHLO ops into StableHLO ops, as upstream's
``ChloLegalizeToStablehlo.cpp`` and its DRR patterns (``ChloDecompositionPatterns.td``) do.

Legalized (statically shaped operands):

- ``broadcast_*`` binary ops and ``broadcast_select``: ``broadcast_in_dim`` of the operands
  whose shape differs from the result's (``broadcast_dimensions`` honoured, not only the
  numpy prefix padding upstream accepts), then the StableHLO op (``broadcast_compare``
  keeps its direction and type); ``broadcast_next_after``/``polygamma``/``zeta`` become the
  non-broadcasting CHLO op;
- ``constant``, ``constant_like``, ``square``, ``conj``, ``tan``, real ``atan`` and
  ``atanh``, ``is_inf``/``is_pos_inf``/``is_neg_inf``, ``mulhi`` (all widths; 64-bit with
  32-bit limbs as upstream);
- ``scan`` (a ``while`` loop over the scan dimension), ``top_k`` (``iota`` + ``sort`` +
  ``slice``) and ``ragged_dot`` (masked ``dot_general`` per group) in
  :mod:`shardy_ref.transforms.chlo_legalize_structured`.

Not legalized (they stay, and our interpreter runs them directly): the special functions
(``erf``, ``erfc``, ``erf_inv``, ``lgamma``, ``digamma``, ``polygamma``, ``zeta``,
``bessel_i1e``), ``next_after``, ``acos``/``acosh``/``asin``/``asinh``/``cosh``/``sinh``,
complex ``atan``/``atanh``, ``_asin_acos_kernel``, and any op with dynamic shapes. Upstream
lowers the first group to long polynomial approximations and fails on what it cannot
convert; this pass leaves such ops in place without an error.
See https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/transforms/ChloLegalizeToStablehlo.cpp
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shardy_ref.ir.builtin_attrs import DenseArrayAttr, DenseElementsAttr
from shardy_ref.ir.chlo_attrs import compare_attrs_of
from shardy_ref.ir.chlo_families import BINARY as CHLO_BINARY
from shardy_ref.ir.chlo_families import BROADCAST_BINARY
from shardy_ref.ir.operation import Block, Operation, Value
from shardy_ref.ir.types import (
    I1,
    I64,
    ComplexType,
    FloatType,
    IntegerType,
    RankedTensorType,
)
from shardy_ref.pass_manager import Pass, register_pass

# chlo op name -> fn(op, emitter) -> replacement values, or None (not legalized)
LEGALIZATIONS: dict[str, Callable] = {}


def legalize(*names: str):
    """Register the decorated function as the rewrite of each CHLO op name."""
    def register(fn):
        for name in names:
            LEGALIZATIONS[name] = fn
        return fn
    return register


class Emitter:
    """Creates StableHLO ops before ``anchor`` (or at the end of ``block``), with the
    anchor's location: the rewriter of one pattern application."""

    def __init__(self, anchor: Operation | None = None, block: Block | None = None,
                 location=None):
        self.anchor = anchor
        self.block = block if block is not None else anchor.parent
        self.location = location if location is not None else anchor.location

    def op(self, name: str, operands=(), result_types=(), attrs: dict | None = None,
           regions=()) -> Operation:
        op = Operation(name, list(operands), list(result_types), dict(attrs or {}),
                       list(regions), location=self.location)
        if self.anchor is not None:
            self.block.insert_before(self.anchor, op)
        else:
            self.block.append(op)
        return op

    def value(self, name: str, operands, result_type, attrs: dict | None = None) -> Value:
        return self.op(name, operands, [result_type], attrs).results[0]

    def const(self, value, type_: RankedTensorType) -> Value:
        """A splat ``stablehlo.constant`` of ``value`` (converted to the element kind)."""
        attr = DenseElementsAttr.from_values(type_, [scalar(value, type_.element_type)])
        return self.op("stablehlo.constant", (), [type_], {"value": attr}).results[0]

    def like(self, value, like: Value) -> Value:
        """``getConstantLike``: a splat of ``value`` with ``like``'s type."""
        return self.const(value, like.type)

    def binary(self, name: str, lhs: Value, rhs: Value) -> Value:
        return self.value(f"stablehlo.{name}", [lhs, rhs], lhs.type)

    def unary(self, name: str, x: Value, result_type=None) -> Value:
        return self.value(f"stablehlo.{name}", [x], result_type or x.type)

    def convert(self, x: Value, element_type) -> Value:
        return self.value("stablehlo.convert", [x], x.type.replace(element_type=element_type))

    def compare(self, direction: str, lhs: Value, rhs: Value, compare_type: str | None = None
                ) -> Value:
        from shardy_ref.ir.stablehlo_attrs import compare_attrs

        return self.value("stablehlo.compare", [lhs, rhs], lhs.type.replace(element_type=I1),
                          compare_attrs(direction, compare_type))

    def select(self, pred: Value, on_true: Value, on_false: Value) -> Value:
        return self.value("stablehlo.select", [pred, on_true, on_false], on_true.type)

    def broadcast_in_dim(self, x: Value, result_type: RankedTensorType, dims) -> Value:
        return self.value("stablehlo.broadcast_in_dim", [x], result_type,
                          {"broadcast_dimensions": i64_array(dims)})

    def reshape(self, x: Value, shape) -> Value:
        return self.value("stablehlo.reshape", [x], x.type.replace(shape=tuple(shape)))


def scalar(value, element_type):
    """``value`` as the Python scalar a DenseElementsAttr of ``element_type`` holds."""
    if isinstance(element_type, ComplexType):
        return complex(value)
    if isinstance(element_type, FloatType):
        return float(value)
    if isinstance(element_type, IntegerType) and element_type.width == 1:
        return bool(value)
    return int(value)


def i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(int(v) for v in values))


def static(*types) -> bool:
    return all(isinstance(t, RankedTensorType) and t.has_static_shape for t in types)


# -- broadcasting ops ----------------------------------------------------------------------

def _unbroadcast(name: str) -> str:
    """``chlo.broadcast_X`` -> the non-broadcasting ``chlo.X`` if CHLO has one, else
    ``stablehlo.X``."""
    base = name.removeprefix("chlo.broadcast_")
    return f"chlo.{base}" if f"chlo.{base}" in CHLO_BINARY else f"stablehlo.{base}"


_BINARY = {name: _unbroadcast(name) for name in BROADCAST_BINARY}


def _broadcast_to(emit: Emitter, x: Value, shape: tuple, dims) -> Value:
    """``x`` broadcast to ``shape`` (its dimension i to ``dims[i]``), or ``x`` itself."""
    if tuple(x.type.shape) == tuple(shape):
        return x
    return emit.broadcast_in_dim(x, x.type.replace(shape=tuple(shape)), dims)


def _trailing(rank: int, out_rank: int) -> list[int]:
    return list(range(out_rank - rank, out_rank))


@legalize(*_BINARY)
def broadcast_binary(op: Operation, emit: Emitter):
    lhs, rhs = op.operands
    result = op.result_types[0]
    if not static(lhs.type, rhs.type, result):
        return None
    shape, out_rank = result.shape, len(result.shape)
    lhs_dims, rhs_dims = _trailing(lhs.type.rank, out_rank), _trailing(rhs.type.rank, out_rank)
    explicit = op.attributes.get("broadcast_dimensions")
    if explicit is not None:
        small_is_lhs = not lhs.type.rank > rhs.type.rank
        if small_is_lhs:
            lhs_dims = list(explicit.value)
        else:
            rhs_dims = list(explicit.value)
    operands = [_broadcast_to(emit, lhs, shape, lhs_dims),
                _broadcast_to(emit, rhs, shape, rhs_dims)]
    name = _BINARY[op.name]
    return [emit.value(name, operands, result, compare_attrs_of(op))]


@legalize("chlo.broadcast_select")
def broadcast_select(op: Operation, emit: Emitter):
    pred, on_true, on_false = op.operands
    result = op.result_types[0]
    if not static(pred.type, on_true.type, on_false.type, result):
        return None
    shape, rank = result.shape, len(result.shape)
    if pred.type.rank:  # a scalar predicate is broadcast implicitly
        pred = _broadcast_to(emit, pred, shape, _trailing(pred.type.rank, rank))
    on_true = _broadcast_to(emit, on_true, shape, _trailing(on_true.type.rank, rank))
    on_false = _broadcast_to(emit, on_false, shape, _trailing(on_false.type.rank, rank))
    return [emit.value("stablehlo.select", [pred, on_true, on_false], result)]


# -- constants and simple elementwise ops (ChloDecompositionPatterns.td) -------------------


@legalize("chlo.constant")
def constant(op: Operation, emit: Emitter):
    return [emit.value("stablehlo.constant", [], op.result_types[0],
                       {"value": op.attributes["value"]})]


@legalize("chlo.constant_like")
def constant_like(op: Operation, emit: Emitter):
    result = op.result_types[0]
    value = op.attributes["value"]
    if not static(result) or not hasattr(value, "value"):
        return None
    return [emit.const(value.value, result)]


def _is_complex(v: Value) -> bool:
    return isinstance(v.type.element_type, ComplexType)


@legalize("chlo.square")
def square(op: Operation, emit: Emitter):
    """``x * x``; complex: ``complex(|re| == |im| finite ? 0 : (re - im)(re + im),
    2 (re im))`` (ChloDecompositionPatternsMath.td)."""
    (z,) = op.operands
    if not _is_complex(z):
        return [emit.binary("multiply", z, z)]
    part = z.type.replace(element_type=z.type.element_type.element_type)
    x, y = emit.unary("real", z, part), emit.unary("imag", z, part)
    same = emit.binary("and", emit.unary("is_finite", x, x.type.replace(element_type=I1)),
                       emit.compare("EQ", emit.unary("abs", x), emit.unary("abs", y)))
    real = emit.select(same, emit.like(0, x),
                       emit.binary("multiply", emit.binary("subtract", x, y),
                                   emit.binary("add", x, y)))
    imag = emit.binary("multiply", emit.like(2, x), emit.binary("multiply", x, y))
    return [emit.value("stablehlo.complex", [real, imag], z.type)]


@legalize("chlo.conj")
def conj(op: Operation, emit: Emitter):
    (z,) = op.operands
    if not _is_complex(z):
        return [z]
    part = z.type.replace(element_type=z.type.element_type.element_type)
    real, imag = emit.unary("real", z, part), emit.unary("imag", z, part)
    return [emit.value("stablehlo.complex", [real, emit.unary("negate", imag)], z.type)]


@legalize("chlo.tan")
def tan(op: Operation, emit: Emitter):
    return [emit.unary("tan", op.operands[0], op.result_types[0])]


@legalize("chlo.atan")
def atan(op: Operation, emit: Emitter):
    (x,) = op.operands
    if _is_complex(x):
        return None
    return [emit.binary("atan2", x, emit.like(1, x))]


@legalize("chlo.atanh")
def atanh(op: Operation, emit: Emitter):
    """``|x| > 1 ? NaN : (log1p(x) - log1p(-x)) / 2``."""
    (x,) = op.operands
    if _is_complex(x):
        return None
    outside = emit.compare("GT", emit.unary("abs", x), emit.like(1, x))
    inner = emit.binary("subtract", emit.unary("log_plus_one", x),
                        emit.unary("log_plus_one", emit.unary("negate", x)))
    return [emit.select(outside, emit.like(float("nan"), x),
                        emit.binary("multiply", inner, emit.like(0.5, x)))]


def _compare_to_inf(emit: Emitter, x: Value, negative: bool) -> Value:
    return emit.compare("EQ", x, emit.like(float("-inf") if negative else float("inf"), x))


@legalize("chlo.is_inf")
def is_inf(op: Operation, emit: Emitter):
    (x,) = op.operands
    return [_compare_to_inf(emit, emit.unary("abs", x), False)]


@legalize("chlo.is_pos_inf", "chlo.is_neg_inf")
def is_signed_inf(op: Operation, emit: Emitter):
    return [_compare_to_inf(emit, op.operands[0], op.name == "chlo.is_neg_inf")]


# -- mulhi ---------------------------------------------------------------------------------


def _with_element(v: Value, element_type) -> RankedTensorType:
    return v.type.replace(element_type=element_type)


@legalize("chlo.mulhi")
def mulhi(op: Operation, emit: Emitter):
    """Below 64 bits: the product in the double width, shifted right by the width. 64-bit
    unsigned: four 32-bit limb products; 64-bit signed: the unsigned high half corrected
    by ``lhs < 0 ? rhs : 0`` and ``rhs < 0 ? lhs : 0``."""
    lhs, rhs = op.operands
    et = lhs.type.element_type
    if not isinstance(et, IntegerType) or not static(lhs.type):
        return None
    if et.width < 64:
        wide = IntegerType(2 * et.width, et.signedness)
        product = emit.binary("multiply", emit.convert(lhs, wide), emit.convert(rhs, wide))
        shift = "shift_right_logical" if et.is_unsigned else "shift_right_arithmetic"
        high = emit.binary(shift, product, emit.like(et.width, product))
        return [emit.convert(high, et)]
    if et.is_unsigned:
        return [_mulhi_u64(emit, lhs, rhs)]
    u64 = IntegerType(64, "unsigned")
    ua, ub = emit.convert(lhs, u64), emit.convert(rhs, u64)
    high = _mulhi_u64(emit, ua, ub)
    zero = emit.like(0, ua)
    high = emit.binary("subtract", high, emit.select(
        emit.compare("LT", lhs, emit.like(0, lhs)), ub, zero))
    high = emit.binary("subtract", high, emit.select(
        emit.compare("LT", rhs, emit.like(0, rhs)), ua, zero))
    return [emit.convert(high, et)]


def _mulhi_u64(emit: Emitter, a: Value, b: Value) -> Value:
    def low(x):
        return emit.binary("and", x, emit.like(0xFFFFFFFF, x))

    def high(x):
        return emit.binary("shift_right_logical", x, emit.like(32, x))

    a_hi, b_hi, a_lo, b_lo = high(a), high(b), low(a), low(b)
    p3 = emit.binary("multiply", a_hi, b_hi)
    mid1 = emit.binary("add", emit.binary("multiply", a_lo, b_hi),
                       high(emit.binary("multiply", a_lo, b_lo)))
    mid2 = emit.binary("add", emit.binary("multiply", a_hi, b_lo), low(mid1))
    return emit.binary("add", emit.binary("add", p3, high(mid1)), high(mid2))


# -- the pass ------------------------------------------------------------------------------


def _load_patterns() -> None:
    from shardy_ref.transforms import chlo_legalize_structured  # noqa: F401


def legalize_op(op: Operation) -> bool:
    """Rewrite one CHLO op in place if it has a legalization that applies."""
    _load_patterns()
    fn = LEGALIZATIONS.get(op.name)
    if fn is None or op.parent is None:
        return False
    replacement = fn(op, Emitter(op))
    if replacement is None:
        return False
    op.replace_all_uses_with(replacement)
    op.erase()
    return True


@register_pass
@dataclass(frozen=True, slots=True)
class ChloLegalizeToStablehloPass(Pass):
    """Legalizes CHLO ops to StableHLO (and leaves those it cannot, see the module
    docstring). Ops a rewrite creates (``chlo.mulhi`` on unsigned operands for a signed
    64-bit one, ``chlo.zeta`` for ``broadcast_zeta``) are legalized in turn."""

    NAME = "chlo-legalize-to-stablehlo"
    ANCHOR = "func.func"  # upstream: Pass<"chlo-legalize-to-stablehlo", "func::FuncOp">

    def run(self, op, ctx) -> None:
        _load_patterns()
        changed = True
        while changed:
            changed = False
            for nested in [o for o in op.walk() if o.name in LEGALIZATIONS]:
                changed |= legalize_op(nested)
