"""Ops of the StableHLO dialect: inherent attributes, traits, and the names ops give their
results and block arguments (``StablehloOps.td``). See https://openxla.org/stablehlo/spec."""
from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.opdefs import register
from shardy_ref.ir.types import IntegerType


def _constant_name(op):
    """``%c`` for integer (and bool) constants, ``%cst`` for everything else."""
    t = op.results[0].type if op.results else None
    return ["c" if isinstance(getattr(t, "element_type", None), IntegerType) else "cst"]


def _iter_arg_names(op, region_index):
    """Both regions of a while name their arguments ``iterArg``, so they print alike."""
    return ["iterArg"] * len(op.regions[region_index].blocks[0].args)


def _named(*names):
    return lambda op: list(names)


# The traits of StablehloOps.td's op classes: ``StableHLO_UnaryElementwiseOp`` and
# ``StableHLO_BinaryElementwiseOp`` (whose ops also share an assembly format).
_UNARY = "Elementwise NoMemoryEffect SpeculatableIfStaticDimInOutputIsStaticInInput"
_BINARY = "Elementwise NoMemoryEffect SpeculatableIfAllInputsStatic"
_COMPATIBLE = "CompatibleOperandsAndResultType"  # HLO_CompatibleOperandsAndResultType
_LOGICAL = f"{_BINARY} Commutative {_COMPATIBLE}"  # StableHLO_BinaryBiwiseOrLogicalElementwiseOp

# op -> (the assembly format it shares, its traits): StablehloOps.td, with the traits this
# implementation consults (``HLO_`` prefixes dropped; ``ConditionallySpeculatable`` is
# implied by the ``Speculatable*`` ones).
_OPS: dict[str, tuple[str, str]] = {
    "abs": ("unary", _UNARY),
    "add": ("binary", f"{_BINARY} Commutative"),
    "after_all": ("", "Pure"),
    "all_gather": ("", ""),
    "all_reduce": ("", ""),
    "all_to_all": ("", ""),
    "and": ("binary", _LOGICAL),
    "async_done": ("", ""),
    "async_start": ("", ""),
    "atan2": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "batch_norm_grad": ("", "NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "batch_norm_inference": ("", "NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "batch_norm_training": ("", "NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "bitcast_convert": ("functional", "NoMemoryEffect"),
    "broadcast": ("", "Pure"),
    "broadcast_in_dim": ("", "NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "case": ("", "RecursiveMemoryEffects"),
    "cbrt": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "ceil": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "cholesky": ("", "NoMemoryEffect"),
    "clamp": ("", "BroadcastingElementwise NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "collective_broadcast": ("", ""),
    "collective_permute": ("", ""),
    "compare": ("", "Elementwise NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "complex": ("", _BINARY),
    "composite": ("", ""),
    "concatenate": ("", "NoMemoryEffect"),
    "constant": ("", "ConstantLike Pure"),
    "convert": ("unary", _UNARY),
    "convolution": ("", "NoMemoryEffect"),
    "cosine": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "count_leading_zeros": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "create_token": ("", "Pure"),
    "cross-replica-sum": ("", f"Pure {_COMPATIBLE}"),
    "custom_call": ("", ""),
    "divide": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "dot": ("", "Pure"),
    "dot_general": ("", "NoMemoryEffect"),
    "dynamic_broadcast_in_dim": ("", "NoMemoryEffect"),
    "dynamic_conv": ("", "NoMemoryEffect"),
    "dynamic_gather": ("", "NoMemoryEffect"),
    "dynamic_iota": ("", "NoMemoryEffect"),
    "dynamic_pad": ("functional", "NoMemoryEffect"),
    "dynamic_reshape": ("functional", "NoMemoryEffect"),
    "dynamic_slice": ("", "Pure"),
    "dynamic_update_slice": ("functional", "Pure"),
    "einsum": ("", "Pure"),
    "exponential": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "exponential_minus_one": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "fft": ("", "NoMemoryEffect"),
    "floor": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "gather": ("", "NoMemoryEffect"),
    "get_dimension_size": ("", "Pure"),
    "get_tuple_element": ("", "Pure"),
    "if": ("", "RecursiveMemoryEffects"),
    "imag": ("unary", _UNARY),
    "infeed": ("", ""),
    "iota": ("", "Pure"),
    "is_finite": ("functional", _UNARY),
    "log": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "log_plus_one": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "logistic": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "map": ("", "RecursiveMemoryEffects"),
    "maximum": ("binary", f"{_BINARY} Commutative {_COMPATIBLE}"),
    "minimum": ("binary", f"{_BINARY} Commutative {_COMPATIBLE}"),
    "multiply": ("binary", f"{_BINARY} Commutative {_COMPATIBLE}"),
    "negate": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "not": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "optimization_barrier": ("", "Pure"),
    "or": ("binary", _LOGICAL),
    "outfeed": ("", ""),
    "pad": ("", "NoMemoryEffect SpeculatableIfStaticDimInOutputIsStaticInInput"),
    "partition_id": ("", "Pure"),
    "popcnt": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "power": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "real": ("unary", _UNARY),
    "real_dynamic_slice": ("functional", "NoMemoryEffect"),
    "recv": ("", ""),
    "reduce": ("", "RecursiveMemoryEffects"),
    "reduce_precision": ("", f"{_UNARY} {_COMPATIBLE}"),  # _UNARY's traits, not its syntax
    "reduce_scatter": ("", ""),
    "reduce_window": ("", "RecursiveMemoryEffects"),
    "remainder": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "replica_id": ("", "Pure"),
    "reshape": ("functional", "NoMemoryEffect"),
    "reverse": ("", "NoMemoryEffect SpeculatableIfStaticDimInOutputIsStaticInInput"),
    "rng": ("", ""),
    "rng_bit_generator": ("", "NoMemoryEffect SpeculatableIfStaticDimInOutputIsStaticInInput"),
    "round_nearest_afz": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "round_nearest_even": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "rsqrt": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "scatter": ("", "RecursiveMemoryEffects"),
    "select": ("", "BroadcastingElementwise NoMemoryEffect SpeculatableIfAllInputsStatic"),
    "select_and_scatter": ("", "RecursiveMemoryEffects"),
    "send": ("", ""),
    "set_dimension_size": ("", "NoMemoryEffect"),
    "shift_left": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "shift_right_arithmetic": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "shift_right_logical": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "sign": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "sine": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "slice": ("", "NoMemoryEffect SpeculatableIfStaticDimInOutputIsStaticInInput"),
    "sort": ("", "RecursiveMemoryEffects"),
    "sqrt": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "subtract": ("binary", f"{_BINARY} {_COMPATIBLE}"),
    "tan": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "tanh": ("unary", f"{_UNARY} {_COMPATIBLE}"),
    "torch_index_select": ("", "Pure"),
    "transpose": ("", "NoMemoryEffect"),
    "triangular_solve": ("", "NoMemoryEffect"),
    "tuple": ("", "Pure"),
    "unary_einsum": ("", "Pure"),
    "uniform_dequantize": ("unary", _UNARY),
    "uniform_quantize": ("unary", _UNARY),
    "while": ("", "RecursiveMemoryEffects"),
    "xor": ("binary", _LOGICAL),
}


def _custom_call_effects(op) -> tuple[str, ...]:
    """``CustomCallOp::getEffects``: allocate/free/write/read when ``has_side_effect``."""
    flag = op.attributes.get("has_side_effect")
    if isinstance(flag, IntegerAttr) and flag.value:  # a BoolAttr (i1)
        return ("allocate", "free", "write", "read")
    return ()


# op -> its memory effects: ``MemoryEffects<[MemRead<...>, MemWrite<...>]>`` on a resource
# of the op's own, or ``getEffects``
_READ_WRITE = ("read", "write")
_MEMORY_EFFECTS = {"infeed": _READ_WRITE, "outfeed": _READ_WRITE, "recv": _READ_WRITE,
                   "send": _READ_WRITE, "custom_call": _custom_call_effects}

# op -> inherent attribute names (properties), from StablehloOps.td
_INHERENT = {
    "constant": "value", "iota": "iota_dimension", "dynamic_iota": "iota_dimension",
    "get_tuple_element": "index", "compare": "comparison_direction compare_type",
    "slice": "start_indices limit_indices strides", "dynamic_slice": "slice_sizes",
    "broadcast": "broadcast_sizes", "broadcast_in_dim": "broadcast_dimensions",
    "dynamic_broadcast_in_dim":
        "broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions",
    "cholesky": "lower", "concatenate": "dimension",
    "composite": "name composite_attributes decomposition version",
    "convolution": "window_strides padding lhs_dilation rhs_dilation window_reversal "
                   "dimension_numbers feature_group_count batch_group_count precision_config",
    "dynamic_conv": "window_strides lhs_dilation rhs_dilation window_reversal dimension_numbers "
                    "feature_group_count batch_group_count precision_config",
    "custom_call": "call_target_name has_side_effect backend_config api_version "
                   "called_computations operand_layouts result_layouts output_operand_aliases",
    "dot": "precision_config", "dot_general": "dot_dimension_numbers precision_config algorithm",
    "einsum": "einsum_config", "unary_einsum": "einsum_config", "fft": "fft_type fft_length",
    "get_dimension_size": "dimension", "set_dimension_size": "dimension",
    "pad": "edge_padding_low edge_padding_high interior_padding", "transpose": "permutation",
    "reverse": "dimensions", "reduce_precision": "exponent_bits mantissa_bits",
    "rng": "rng_distribution", "rng_bit_generator": "rng_algorithm", "reduce": "dimensions",
    "sort": "dimension is_stable",
    "scatter": "scatter_dimension_numbers indices_are_sorted unique_indices",
    "gather": "dimension_numbers slice_sizes indices_are_sorted",
    "dynamic_gather": "dimension_numbers indices_are_sorted",
    "reduce_window": "window_dimensions window_strides base_dilations window_dilations padding",
    "select_and_scatter": "window_dimensions window_strides padding",
    "all_reduce": "replica_groups channel_handle use_global_device_ids",
    "reduce_scatter": "scatter_dimension replica_groups channel_handle use_global_device_ids",
    "all_gather": "all_gather_dim replica_groups channel_handle use_global_device_ids",
    "all_to_all": "split_dimension concat_dimension split_count replica_groups channel_handle",
    "collective_permute": "source_target_pairs channel_handle",
    "collective_broadcast": "replica_groups channel_handle",
    "send": "channel_handle is_host_transfer source_target_pairs",
    "recv": "channel_handle is_host_transfer source_target_pairs",
    "batch_norm_inference": "epsilon feature_index", "batch_norm_training": "epsilon feature_index",
    "batch_norm_grad": "epsilon feature_index",
    "triangular_solve": "left_side lower unit_diagonal transpose_a", "map": "dimensions",
    "infeed": "infeed_config layout", "outfeed": "outfeed_config",
    "torch_index_select": "dim batch_dims", "cross-replica-sum": "replica_groups",
    "cbrt": "result_accuracy", "cosine": "result_accuracy", "exponential": "result_accuracy",
    "exponential_minus_one": "result_accuracy", "log": "result_accuracy",
    "log_plus_one": "result_accuracy", "logistic": "result_accuracy", "rsqrt": "result_accuracy",
    "sine": "result_accuracy", "sqrt": "result_accuracy", "tan": "result_accuracy",
    "tanh": "result_accuracy",
}

_RESULT_NAMES = {
    "constant": _constant_name,
    "rng_bit_generator": _named("output_state", "output"),
    "batch_norm_training": _named("output", "batch_mean", "batch_var"),
    "batch_norm_grad": _named("grad_operand", "grad_scale", "grad_offset"),
}

for _name in sorted(_OPS):
    _syntax, _traits = _OPS[_name]
    register(f"stablehlo.{_name}", _traits, syntax=_syntax,
             inherent=tuple(sorted(_INHERENT.get(_name, "").split())),
             memory_effects=_MEMORY_EFFECTS.get(_name), result_names=_RESULT_NAMES.get(_name),
             block_arg_names=_iter_arg_names if _name == "while" else None)
register("stablehlo.return", "Pure Terminator")
