"""Memory effects of registered ops, and MLIR's trivially-dead test built on them.

MLIR erases an unused op only when it is provably free of side effects
(``mlir/lib/Interfaces/SideEffectInterfaces.cpp``: ``wouldOpBeTriviallyDead``): the op must
implement ``MemoryEffectOpInterface`` with nothing but reads (``Pure`` and
``NoMemoryEffect`` declare no effects at all), or carry ``RecursiveMemoryEffects`` with every
nested op free of effects. An op without either (``sdy.sharding_constraint``,
``sdy.data_flow_edge``, ``sdy.sharding_group``, the sdy collectives, ``stablehlo.all_reduce``,
``func.call``, unregistered ops) conservatively has effects and is never erased. Terminators
and symbols (``func.func``, ``sdy.mesh``) are never trivially dead.

The tables below transcribe the traits of sdy's ``ir/ops.td`` and StableHLO's
``stablehlo/dialect/StablehloOps.td`` at the pinned commits, plus ``func``/``arith``/``builtin``
(https://mlir.llvm.org/docs/Dialects/). ``OpDef.pure`` in ``opdefs.py`` predates this table;
this module is the one the rewriter consults.
"""
from __future__ import annotations

from collections.abc import Callable

from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation

NO_EFFECTS: tuple[str, ...] = ()  # MemoryEffectOpInterface with no effects (Pure, NoMemoryEffect)
RECURSIVE = "recursive"  # HasRecursiveMemoryEffects: the op's effects are its nested ops'
READ_WRITE = ("read", "write")

_STABLEHLO_NO_EFFECTS = """abs add after_all and atan2 batch_norm_grad batch_norm_inference
batch_norm_training bitcast_convert broadcast broadcast_in_dim cbrt ceil cholesky clamp compare
complex concatenate constant convert convolution cosine count_leading_zeros create_token
cross-replica-sum divide dot dot_general dynamic_broadcast_in_dim dynamic_conv dynamic_gather
dynamic_iota dynamic_pad dynamic_reshape dynamic_slice dynamic_update_slice einsum exponential
exponential_minus_one fft floor gather get_dimension_size get_tuple_element imag iota is_finite
log log_plus_one logistic maximum minimum multiply negate not optimization_barrier or pad
partition_id popcnt power real real_dynamic_slice reduce_precision remainder replica_id reshape
return reverse rng_bit_generator round_nearest_afz round_nearest_even rsqrt select
set_dimension_size shift_left shift_right_arithmetic shift_right_logical sign sine slice sqrt
subtract tan tanh torch_index_select transpose triangular_solve tuple unary_einsum
uniform_dequantize uniform_quantize xor""".split()
_STABLEHLO_RECURSIVE = "case if map reduce reduce_window scatter select_and_scatter sort while"
_STABLEHLO_READ_WRITE = "infeed outfeed recv send"


def _custom_call_effects(op: Operation) -> tuple[str, ...]:
    """``CustomCallOp::getEffects``: allocate/free/write/read when ``has_side_effect``."""
    flag = op.attributes.get("has_side_effect")
    if isinstance(flag, IntegerAttr) and flag.value:  # a BoolAttr (i1)
        return ("allocate", "free", "write", "read")
    return NO_EFFECTS


# op name -> its effects: a tuple of effect kinds, RECURSIVE, or a function of the op.
# Ops missing here declare no effect interface: they may have any effect.
EFFECTS: dict[str, tuple[str, ...] | str | Callable[[Operation], tuple[str, ...]]] = {
    **{f"stablehlo.{name}": NO_EFFECTS for name in _STABLEHLO_NO_EFFECTS},
    **{f"stablehlo.{name}": RECURSIVE for name in _STABLEHLO_RECURSIVE.split()},
    **{f"stablehlo.{name}": READ_WRITE for name in _STABLEHLO_READ_WRITE.split()},
    "stablehlo.custom_call": _custom_call_effects,
    # sdy ir/ops.td: Pure ops, and the region ops with RecursiveMemoryEffects
    "sdy.reshard": NO_EFFECTS,
    "sdy.return": NO_EFFECTS,
    "sdy.constant": NO_EFFECTS,
    "sdy.propagation_barrier": NO_EFFECTS,
    "sdy.manual_computation": RECURSIVE,
    "sdy.named_computation": RECURSIVE,
    "func.return": NO_EFFECTS,
    "func.constant": NO_EFFECTS,
    "arith.constant": NO_EFFECTS,
    "builtin.unrealized_conversion_cast": NO_EFFECTS,
}

# ConstantLike ops -> the attribute their folder returns (``m_Constant``).
CONSTANT_LIKE: dict[str, str] = {"stablehlo.constant": "value", "arith.constant": "value"}


def op_effects(op: Operation) -> tuple[str, ...] | str | None:
    """The op's declared memory effects, ``RECURSIVE``, or None (no effect interface)."""
    effects = EFFECTS.get(op.name)
    return effects(op) if callable(effects) else effects


def is_terminator(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and d.terminator


def is_symbol(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and d.symbol


def is_constant_like(op: Operation) -> bool:
    return op.name in CONSTANT_LIKE


def constant_value(op: Operation):
    """``matchPattern(op, m_Constant(&attr))``: the folded value of a ConstantLike op."""
    name = CONSTANT_LIKE.get(op.name)
    return op.attributes.get(name) if name is not None else None


def would_op_be_trivially_dead(op: Operation) -> bool:
    """MLIR ``wouldOpBeTriviallyDead``: erasable if its results were unused."""
    if is_terminator(op) or is_symbol(op):
        return False
    stack = [op]
    while stack:
        current = stack.pop()
        effects = op_effects(current)
        if effects == RECURSIVE:
            for region in current.regions:
                for block in region.blocks:
                    stack.extend(block)
            continue
        if effects is None:
            return False
        if any(kind != "read" for kind in effects):
            return False
    return True


def is_op_trivially_dead(op: Operation) -> bool:
    """MLIR ``isOpTriviallyDead``: no result is used and the op has no side effects."""
    return not any(r.has_uses for r in op.results) and would_op_be_trivially_dead(op)
