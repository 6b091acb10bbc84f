"""Ops of the StableHLO dialect: inherent attributes, traits, and the names ops give their
results and block arguments (``StablehloOps.td``). See https://openxla.org/stablehlo/spec."""
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


# Ops without side effects (MLIR ``Pure``): erased when their results are unused.
_PURE = """abs add and atan2 bitcast_convert broadcast broadcast_in_dim cbrt ceil clamp
complex compare concatenate constant convert cosine count_leading_zeros divide dot
dot_general dynamic_broadcast_in_dim dynamic_gather dynamic_iota dynamic_pad dynamic_reshape
dynamic_slice dynamic_update_slice einsum exponential exponential_minus_one fft floor gather
get_dimension_size get_tuple_element imag iota is_finite log log_plus_one logistic maximum
minimum multiply negate not or pad popcnt power real real_dynamic_slice reduce_precision
remainder reshape reverse round_nearest_afz round_nearest_even rsqrt select shift_left
shift_right_arithmetic shift_right_logical sign sine slice sqrt subtract tan tanh transpose
tuple unary_einsum uniform_dequantize uniform_quantize xor map reduce sort scatter
reduce_window select_and_scatter triangular_solve cholesky batch_norm_inference
batch_norm_training batch_norm_grad convolution dynamic_conv torch_index_select
set_dimension_size rng_bit_generator""".split()

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
}
for _name in ("cbrt cosine exponential exponential_minus_one log log_plus_one logistic rsqrt "
              "sine sqrt tan tanh").split():
    _INHERENT[_name] = "result_accuracy"

_RESULT_NAMES = {
    "constant": _constant_name,
    "rng_bit_generator": _named("output_state", "output"),
    "batch_norm_training": _named("output", "batch_mean", "batch_var"),
    "batch_norm_grad": _named("grad_operand", "grad_scale", "grad_offset"),
}

_OTHERS = """after_all all_gather all_reduce all_to_all case collective_broadcast
collective_permute create_token custom_call if infeed optimization_barrier outfeed
partition_id recv reduce_scatter replica_id rng send while composite async_start async_done
cross-replica-sum""".split()

for _name in sorted({*_PURE, *_INHERENT, *_OTHERS}):
    register(f"stablehlo.{_name}", inherent=tuple(sorted(_INHERENT.get(_name, "").split())),
             pure=_name in _PURE, result_names=_RESULT_NAMES.get(_name),
             block_arg_names=_iter_arg_names if _name == "while" else None)
register("stablehlo.return", terminator=True, pure=True)
