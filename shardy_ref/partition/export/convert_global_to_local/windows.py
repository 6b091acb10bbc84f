"""``sdy-convert-global-to-local`` localizer of the windowed ops, reduce_window and
select_and_scatter: they run locally when every sharded dimension is a pass-through one, no
padding and windows that never straddle two shards (upstream
``StablehloWindowedOpPattern`` in ``export/convert_global_to_local.cc``)."""
from __future__ import annotations

from shardy_ref.ir.operation import Operation
from shardy_ref.partition.export.convert_global_to_local.op_utils import (
    axes_size,
    check,
    dim_axes,
    op_error,
    replicated,
)
from shardy_ref.partition.export.convert_global_to_local.state import (
    ConversionState,
    localize_generic,
    localizer,
)


def _pass_through(dim: int, padding, window, strides) -> bool:
    """No padding on ``dim``, and a window of 1, a stride of 1, or a stride at least the
    window (so each window lies within one shard)."""
    if padding is not None:
        values = padding.flat_values()
        if values[2 * dim] != 0 or values[2 * dim + 1] != 0:
            return False
    window_fits = bool(window) and bool(strides) and strides[dim] >= window[dim]
    return (not strides or strides[dim] == 1 or window_fits) and \
        (not window or window[dim] == 1 or window_fits)


@localizer("stablehlo.reduce_window", "stablehlo.select_and_scatter")
def localize_windowed(state: ConversionState, op: Operation) -> None:
    """Upstream ``StablehloWindowedOpPattern``: checks, then the generic conversion."""
    operand = op.operands[0]
    sharding = state.sharding(operand)
    if not replicated(sharding):
        mesh = state.mesh(sharding)
        if mesh is None:
            raise op_error(op, "failed to resolve mesh")
        padding = op.attributes.get("padding")
        window = list(op.attributes.get("window_dimensions") or ())
        strides = list(op.attributes.get("window_strides") or ())
        for dim in range(len(state.global_type(operand).shape)):
            axes = dim_axes(sharding, dim)
            if axes and axes_size(axes, mesh) > 1:
                check(_pass_through(dim, padding, window, strides), op,
                      f"In op {op.name} dimension {dim} is sharded but is not a pass-through "
                      "dimension.")
    localize_generic(state, op)
