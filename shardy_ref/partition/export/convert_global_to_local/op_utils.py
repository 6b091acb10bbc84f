"""Small helpers shared by the StableHLO localizers of ``sdy-convert-global-to-local``:
sharding queries with upstream's meaning, constants, rebuilt ops and the errors upstream's
patterns emit (``export/convert_global_to_local.cc``)."""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import DenseElementsAttr
from shardy_ref.ir.diagnostics import PassError
from shardy_ref.ir.operation import Operation, Value
from shardy_ref.ir.sdy_axes import AxisRef, Mesh
from shardy_ref.ir.sdy_sharding import TensorSharding
from shardy_ref.ir.types import IntegerType, RankedTensorType, Type
from shardy_ref.partition.export.lowering import Builder

I1 = IntegerType(1)


def replicated(sharding: TensorSharding | None) -> bool:
    """Upstream ``isFullyReplicated``: no sharding, or no dimension sharded (replicated and
    unreduced axes do not count)."""
    return sharding is None or not any(d.axes for d in sharding.dim_shardings)


def dim_axes(sharding: TensorSharding | None, dim: int) -> tuple[AxisRef, ...]:
    """The axes sharding dimension ``dim`` (none without a sharding or past its rank)."""
    if sharding is None or dim >= sharding.rank:
        return ()
    return sharding.dim_shardings[dim].axes


def axes_size(axes, mesh: Mesh) -> int:
    """Upstream ``getTotalAxesSize``."""
    n = 1
    for axis in axes:
        n *= axis.size(mesh)
    return n


def stripped_axes(axes) -> str:
    """Upstream ``strippedAttrsString`` of an axis list: ``[axis_ref"x", axis_ref"y":(1)2]``."""
    return "[" + ", ".join("axis_ref" + a.params() for a in axes) + "]"


def op_error(op: Operation, message: str) -> PassError:
    """``op.emitOpError(message)`` followed by the dialect conversion's own failure, the two
    errors upstream reports when a pattern rejects an op."""
    error = PassError(op.location, f"'{op.name}' op {message}")
    error.others = [PassError(op.location, f"failed to legalize operation '{op.name}' that "
                              "was explicitly marked illegal")]
    return error


def check(condition: bool, op: Operation, message: str) -> None:
    """Upstream ``SDY_CHECK``: a broken expectation on the input is a located error here."""
    if not condition:
        raise PassError(op.location, message)


def tensor(shape, element_type: Type) -> RankedTensorType:
    return RankedTensorType(tuple(shape), element_type)


def constant(b: Builder, type_: RankedTensorType, values) -> Value:
    """``stablehlo.constant`` of ``values`` (one value: a splat of it)."""
    attr = DenseElementsAttr.from_values(type_, values)
    return b.op("stablehlo.constant", types=[type_], attributes={"value": attr}).results[0]


def rebuild(b: Builder, op: Operation, operands, result_types, attributes=None) -> Operation:
    """A new ``op.name`` op built before ``b``'s anchor with ``operands``, ``result_types``,
    ``attributes`` (default: a copy of ``op``'s) and ``op``'s regions, moved over."""
    regions = op.take_regions()
    attrs = dict(op.attributes) if attributes is None else attributes
    return b.op(op.name, operands, result_types, attrs, regions)


def local_result_types(state, op: Operation) -> list[Type]:
    """Upstream ``convertResultTypes``: each result's local type from its sharding."""
    return [state.local_value_type(r) for r in op.results]


# collectives that move partial sums without summing them (they commute with the sum)
_MOVING = frozenset({"sdy.all_slice", "sdy.all_gather", "sdy.all_to_all",
                     "sdy.collective_permute"})


def reducing_user(op: Operation) -> Operation | None:
    """The ``sdy.all_reduce`` that sums ``op``'s partial result: its one user, or reached
    through one-use collectives that only move the data (upstream looks at the one user
    only, and refuses an op whose result a replicated factor gathers and slices back
    before the all-reduce explicit reshards put after it)."""
    value = op.results[0]
    while value.has_one_use:
        user = value.users[0]
        if user.name == "sdy.all_reduce":
            return user
        if user.name not in _MOVING:
            return None
        value = user.results[0]
    return None
