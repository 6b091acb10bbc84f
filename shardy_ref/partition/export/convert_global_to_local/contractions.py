"""``sdy-convert-global-to-local`` localizers of the contractions: dot, dot_general and
convolution run locally; a sharded contracting dimension must be followed by the
``sdy.all_reduce`` that sums the partial results, and a convolution's group counts shrink
with the sharding of their dimensions (upstream ``StablehloDotOpPattern``,
``StablehloDotGeneralOpPattern``, ``StablehloConvolutionOpPattern``)."""
from __future__ import annotations

from shardy_ref.ir.axis_lists import sort_and_merge_axes
from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.types import I64
from shardy_ref.partition.export.convert_global_to_local.op_utils import (
    axes_size,
    check,
    dim_axes,
    local_result_types,
    op_error,
    reducing_user,
    replicated,
)
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
)

# The attributes upstream's ConvolutionOp builder sets; the rebuilt op drops the others.
_CONV_ATTRS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal",
               "dimension_numbers", "precision_config")


def _is_zero_pad_or_not_pad(value: Value) -> bool:
    """Upstream ``nonPadOrPadWithZero``: ``value`` is not a pad, or pads with a constant 0."""
    pad = value.defining_op
    if pad is None or pad.name != "stablehlo.pad":
        return True
    padding = pad.operands[1].defining_op
    if padding is None or padding.name != "stablehlo.constant":
        return False
    attr = padding.attributes.get("value")
    return bool(getattr(attr, "is_splat", False)) and attr.values[0] == 0


def _check_all_reduce(op: Operation, axes, what: str, mesh) -> None:
    """The one user of ``op`` must be an ``sdy.all_reduce`` over exactly ``axes``, in any
    order (upstream compares the lists as they are, and refuses a dot whose operands were
    sharded ``{"y", "x"}`` along the contracting dimension, which explicit reshards reduce
    over ``{"x", "y"}``: the same sum)."""
    reduce = reducing_user(op)
    check(reduce is not None, op,
          f"Expected sharded contracting {what} to have one user and the user is an "
          "sdy.all_reduce.")
    check(sort_and_merge_axes(list(reduce.attributes["reduction_axes"]), mesh)
          == sort_and_merge_axes(list(axes), mesh), op,
          f"The axes of the sdy.all_reduce should match the sharded contracting "
          f"dimension{'s' if what != 'dot' else ''} of the {what}.")


def _check_contracting(op: Operation, axes, what: str, mesh) -> None:
    """Shared tail of the dot patterns once the contracting axes are known."""
    for operand in op.operands[:2]:
        check(_is_zero_pad_or_not_pad(operand), op,
              f"Padding value must be zero for sharded contracting {what}.")
    _check_all_reduce(op, axes, what, mesh)


@localizer("stablehlo.dot")
def localize_dot(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloDotOpPattern``: checks, then the generic conversion."""
    lhs = op.operands[0]
    sharding = state.sharding(lhs)
    if not replicated(sharding):
        mesh = state.mesh(sharding)
        if mesh is None:
            raise op_error(op, "failed to resolve mesh.")
        global_lhs = state.global_type(lhs)
        dim = len(global_lhs.shape) - 1
        axes = dim_axes(sharding, dim)
        if axes:
            check(global_lhs.shape[dim] % axes_size(axes, mesh) == 0, op,
                  "Sharded contracting dimension must be divisible by the total size of the "
                  "axes sharding it.")
            _check_contracting(op, axes, "dot", mesh)
    localize_generic(state, op)


@localizer("stablehlo.dot_general")
def localize_dot_general(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloDotGeneralOpPattern``: checks, then the generic conversion."""
    lhs = op.operands[0]
    sharding = state.sharding(lhs)
    if not replicated(sharding):
        mesh = state.mesh(sharding)
        if mesh is None:
            raise PassError(op.location, "failed to resolve mesh.")
        global_lhs = state.global_type(lhs)
        axes = []
        for dim in op.attributes["dot_dimension_numbers"].lhs_contracting_dimensions:
            dim_sharding = dim_axes(sharding, dim)
            if dim_sharding:
                check(global_lhs.shape[dim] % axes_size(dim_sharding, mesh) == 0, op,
                      "Sharded contracting dimension must be divisible by axes size.")
                axes.extend(dim_sharding)
        if axes:
            _check_contracting(op, axes, "dot_general", mesh)
    localize_generic(state, op)


def _local_group_count(op: Operation, count: int, axes, mesh) -> int:
    """Upstream ``getLocalGroupCount``: the group count divided by the sharding of its
    dimension (at most down to one group)."""
    if count <= 1 or not axes:
        return count
    divisor = min(count, axes_size(axes, mesh))
    check(count % divisor == 0, op, "global group count is not divisible by total axes size")
    return count // divisor


@localizer("stablehlo.convolution")
def localize_convolution(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloConvolutionOpPattern``: a convolution with local group counts;
    sharded kernel reduction dimensions need the matching ``sdy.all_reduce`` after it."""
    lhs, rhs = op.operands[:2]
    shardings = (state.sharding(lhs), state.sharding(rhs), state.result_sharding(op, 0))
    if all(replicated(s) for s in shardings):
        localize_generic(state, op)
        return
    mesh = next((m for m in (state.mesh(s) for s in shardings if s is not None) if m), None)
    if mesh is None:
        raise op_error(op, "failed to resolve mesh")
    lhs_sharding, rhs_sharding, _ = shardings
    dims = op.attributes["dimension_numbers"]
    reduction = []
    for dim in (dims.kernel_input_feature_dimension, *dims.kernel_spatial_dimensions):
        reduction.extend(a for a in dim_axes(rhs_sharding, dim) if a not in reduction)
    if reduction:
        reduce = reducing_user(op)
        check(reduce is not None, op,
              "Expected sharded contracting convolution to have one user and the user is an "
              "sdy.all_reduce.")
        check(sort_and_merge_axes(list(reduce.attributes["reduction_axes"]), mesh)
              == sort_and_merge_axes(reduction, mesh), op,
              "The axes of the sdy.all_reduce should match the sharded reduction dimensions "
              "of the convolution.")
    feature = _local_group_count(
        op, op.attributes["feature_group_count"].value,
        dim_axes(rhs_sharding, dims.kernel_output_feature_dimension), mesh)
    batch = _local_group_count(
        op, op.attributes["batch_group_count"].value,
        dim_axes(lhs_sharding, dims.input_batch_dimension), mesh)
    attrs = {k: op.attributes[k] for k in _CONV_ATTRS if k in op.attributes}
    attrs["feature_group_count"] = IntegerAttr(feature, I64)
    attrs["batch_group_count"] = IntegerAttr(batch, I64)
    b = state.builder(op)
    new = b.op(op.name, op.operands, local_result_types(state, op), attrs)
    state.replace(op, new.results)
