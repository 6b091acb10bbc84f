"""``sdy-remove-sub-axes-in-input-output-shardings``: the main function's open argument and
result dimensions lose everything from their first sub-axis on (upstream
``export/remove_sub_axes_in_input_output_shardings.cc``; see
https://openxla.org/shardy/sdy_export_passes#-sdy-remove-sub-axes-in-input-output-shardings)."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.ir.func_attrs import function_type, get_arg_attr, get_result_attr, set_attrs
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.utils import main_func_or_die
from shardy_ref.ir.value_sharding import SHARDING_ATTR
from shardy_ref.pass_manager import Pass, PassContext, register_pass


def without_sub_axes(sharding: TensorSharding) -> TensorSharding:
    """Closed dimensions are kept; open ones are cut before their first sub-axis."""
    dims = []
    for dim in sharding.dim_shardings:
        axes = dim.axes
        if not dim.is_closed:
            cut = next((i for i, a in enumerate(axes) if a.is_sub_axis), len(axes))
            axes = axes[:cut]
        dims.append(dim.replace(axes=axes))
    return sharding.replace(dim_shardings=tuple(dims))


@register_pass
@dataclass(frozen=True, slots=True)
class RemoveSubAxesInInputOutputShardingsPass(Pass):
    """Removes sub-axes from the open dimensions of the main function's input and output
    shardings."""

    NAME = "sdy-remove-sub-axes-in-input-output-shardings"

    def run(self, op: Operation, ctx: PassContext) -> None:
        func = main_func_or_die(op, SymbolTable(op))
        ftype = function_type(func)
        for kind, count in (("arg", len(ftype.inputs)), ("result", len(ftype.results))):
            get = get_arg_attr if kind == "arg" else get_result_attr
            updates = {}
            for index in range(count):
                sharding = get(func, index, SHARDING_ATTR)
                if isinstance(sharding, TensorSharding):
                    updates[index] = without_sub_axes(sharding)
            if updates:
                set_attrs(func, kind, SHARDING_ATTR, updates)
