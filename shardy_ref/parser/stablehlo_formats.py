"""The pretty syntax of the StableHLO ops that share one shape, as data.

``stablehlo.compare LT, %a, %b, FLOAT {attrs} : (T, T) -> R`` is: words and keyword
clauses before the operands, the operands, words and clauses after them, the attr-dict,
then a type signature. Each :class:`Format` lists those pieces in order (from the op's
``assemblyFormat`` in ``StablehloOps.td``); the builder reads op text against it and the
printer writes it back, so the two cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.opdefs import OpDef, registered_ops


@dataclass(frozen=True, slots=True)
class Word:
    """A bare enum keyword such as ``LT`` stored in inherent attribute ``attr``."""

    attr: str
    enum: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Clause:
    """``key = value`` stored in inherent attribute ``attr``; ``kind`` says how it is spelled:
    ``i64_array`` (``[1, 2]``), ``i64`` (``0``), ``bool`` (``true``), ``string`` (``"s"``),
    ``enum:<kind>`` (``FFT``), ``precision`` (``[DEFAULT, HIGH]``), ``algorithm``
    (``<...>``), ``dot_batching``/``dot_contracting`` (``[0] x [0]``, parts of
    ``dot_dimension_numbers``) and ``fp_format`` (``e5m10``: exponent and mantissa bits)."""

    key: str
    attr: str
    kind: str
    optional: bool = False
    default: object = None  # an optional clause equal to this is not printed


@dataclass(frozen=True, slots=True)
class Format:
    operands: int | str | None  # fixed count, "*" (variadic), or None (no operand element)
    before: tuple = ()
    after: tuple = ()
    sig: str = "same"  # same | functional | select | complex | tuple | result | return
    defaults: dict = field(default_factory=dict)  # attr-dict entries elided at their default

    def consumed(self) -> tuple[str, ...]:
        """Inherent attributes the syntax itself prints (kept out of the attr-dict)."""
        names = []
        for item in (*self.before, *self.after):
            if isinstance(item, Clause) and item.kind == "fp_format":
                names += ["exponent_bits", "mantissa_bits"]
            else:
                names.append(item.attr)
        return tuple(names)


_RESULT_ACCURACY_DEFAULT = \
    "#stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<DEFAULT>>"


def _dims(attr: str) -> Clause:
    return Clause("dims", attr, "i64_array")


# The formats ops share, by the family their op definition names (``OpDef.syntax``):
# ``StableHLO_UnaryElementwiseOp``'s, ``StableHLO_BinaryElementwiseOp``'s, and
# ``operands attr-dict : functional-type(operands, results)``. -> (operands, sig)
_SHARED = {"unary": (1, "same"), "binary": (2, "same"), "functional": ("*", "functional")}


def _shared_format(d: OpDef) -> Format:
    operands, sig = _SHARED[d.syntax]
    defaults = ({"result_accuracy": _RESULT_ACCURACY_DEFAULT} if "result_accuracy" in d.inherent
                else {})
    return Format(operands, sig=sig, defaults=defaults)


FORMATS: dict[str, Format] = {name.removeprefix("stablehlo."): _shared_format(d)
                              for name, d in registered_ops().items()
                              if d.syntax and name.startswith("stablehlo.")}
FORMATS.update({
    "clamp": Format(3),
    "select": Format(3, sig="select"),
    "complex": Format(2, sig="complex"),
    "tuple": Format("*", sig="tuple"),
    "after_all": Format("*"),
    "return": Format("*", sig="return"),
    "create_token": Format(None, sig="result"),
    "replica_id": Format(None, sig="result"),
    "partition_id": Format(None, sig="result"),
    "iota": Format(None, before=(Clause("dim", "iota_dimension", "i64"),), sig="result"),
    "dynamic_iota": Format(1, after=(Clause("dim", "iota_dimension", "i64"),), sig="functional"),
    "transpose": Format(1, after=(_dims("permutation"),), sig="functional"),
    "broadcast_in_dim": Format(1, after=(_dims("broadcast_dimensions"),), sig="functional"),
    "dynamic_broadcast_in_dim": Format(2, after=(_dims("broadcast_dimensions"),),
                                       sig="functional"),
    "broadcast": Format(1, after=(Clause("sizes", "broadcast_sizes", "i64_array"),),
                        sig="functional"),
    "reverse": Format(1, after=(_dims("dimensions"),)),
    "concatenate": Format("*", after=(Clause("dim", "dimension", "i64"),), sig="functional"),
    "dynamic_slice": Format("*", after=(Clause("sizes", "slice_sizes", "i64_array"),),
                            sig="functional"),
    "get_dimension_size": Format(1, after=(Clause("dim", "dimension", "i64"),), sig="functional"),
    "set_dimension_size": Format(2, after=(Clause("dim", "dimension", "i64"),), sig="functional"),
    "pad": Format(2, after=(Clause("low", "edge_padding_low", "i64_array"),
                            Clause("high", "edge_padding_high", "i64_array"),
                            Clause("interior", "interior_padding", "i64_array")),
                  sig="functional"),
    "cholesky": Format(1, after=(Clause("lower", "lower", "bool", optional=True, default=False),)),
    "reduce_precision": Format(1, after=(Clause("format", "", "fp_format"),)),
    "fft": Format(1, after=(Clause("type", "fft_type", "enum:fft_type"),
                            Clause("length", "fft_length", "i64_array")), sig="functional"),
    "rng_bit_generator": Format(1, after=(Clause("algorithm", "rng_algorithm",
                                                 "enum:rng_algorithm"),), sig="functional"),
    "rng": Format(3, after=(Clause("distribution", "rng_distribution", "enum:rng_distribution"),),
                  sig="functional"),
    "einsum": Format(2, after=(Clause("config", "einsum_config", "string"),), sig="functional"),
    "unary_einsum": Format(1, after=(Clause("config", "einsum_config", "string"),),
                           sig="functional"),
    "compare": Format(2, before=(Word("comparison_direction", "comparison_direction"),),
                      after=(Word("compare_type", "comparison_type", optional=True),),
                      sig="functional"),
    "dot": Format(2, after=(Clause("precision", "precision_config", "precision", optional=True),),
                  sig="functional"),
    "dot_general": Format(2, after=(
        Clause("batching_dims", "dot_dimension_numbers", "dot_batching", optional=True),
        Clause("contracting_dims", "dot_dimension_numbers", "dot_contracting"),
        Clause("precision", "precision_config", "precision", optional=True),
        Clause("algorithm", "algorithm", "algorithm", optional=True)), sig="functional"),
})
FORMATS = {f"stablehlo.{k}": v for k, v in FORMATS.items()}

# Ops with bespoke pretty syntax (their own grammar rule, builder and printer).
BESPOKE = ("constant", "slice", "get_tuple_element", "custom_call", "optimization_barrier",
           "composite", "convolution", "reduce", "while")
