"""Verification of the sdy ops that are not collectives, with upstream's messages.

Each op is checked the way MLIR verifies an ODS op (the ops' sections of
https://openxla.org/shardy/sdy_dialect#operations): :data:`ODS` holds what
``shardy/dialect/sdy/ir/ops.td`` declares (counts, traits, attribute and type constraints;
``ods.py`` checks them), :data:`OP_VERIFY` the ops' ``verify()`` (PB-1, MC-8); the checks
MLIR runs after an op's body (``SingleBlockImplicitTerminator``, ``InferTypeOpInterface``,
NC-2) come last. The checks that need the module's meshes are upstream's
``verifySymbolUses`` and run in the symbol-use phase: ``DataFlowEdgeOp`` (DFE-*),
``FuncDataFlowEdgeOp``, ``ManualComputationOp`` (MC-1..7) and ``NamedComputationOp`` (NC-1),
ported from ``verifiers.cc``.
See https://openxla.org/shardy/sdy_dialect and ``shardy/dialect/sdy/ir/verifiers.cc`` at
the pinned commit (a0277a83e7f8).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from shardy_ref.ir.builtin_attrs import (
    DenseElementsAttr,
    DenseResourceElementsAttr,
    IntegerAttr,
    StringAttr,
    quote_string,
)
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import BlockArgument, Operation
from shardy_ref.ir.sdy_axes import Mesh
from shardy_ref.ir.sdy_debug import PropagationDirection
from shardy_ref.ir.sdy_sharding import ManualAxes, TensorSharding, TensorShardingPerValue
from shardy_ref.ir.types import (
    FLOAT_TYPES,
    I64,
    FloatType,
    IntegerType,
    OpaqueType,
    RankedTensorType,
    Type,
    VectorType,
)
from shardy_ref.ir.verify import (
    VerifyContext,
    exit_verifier,
    note,
    op_error,
    op_verifier,
    symbol_use_verifier,
)
from shardy_ref.ir.verify.ods import (
    ANY_RANKED_TENSOR,
    ANY_SHAPED,
    ANY_STATIC_SHAPE_TENSOR,
    SHAPED_TYPES,
    AttrConstraint,
    OdsSpec,
    verify_inferred_result_types,
    verify_ods,
)
from shardy_ref.ir.verify.sharding import (
    bound_axis_error,
    common_mesh,
    mesh_for,
    op_emitter,
    parent_manual_axes,
    verify_tensor_sharding_for_op,
    verify_tensor_sharding_per_value,
)

# --- the ODS definitions of the sdy ops (ops.td) -----------------------------------------

_ELEMENTS = (DenseElementsAttr, DenseResourceElementsAttr)


def _quant_storage(t: Type) -> Type:
    """The storage type of a ``!quant.*`` element type (``i8`` for ``!quant.uniform<i8:f32,
    0.1>``), else ``t``."""
    if not (isinstance(t, OpaqueType) and t.dialect == "quant"):
        return t
    m = re.match(r"\.\w+<\s*([a-zA-Z0-9]+)", t.body)
    storage = m.group(1) if m else ""
    if re.fullmatch(r"[iu]\d+", storage):
        return IntegerType(int(storage[1:]))
    return FloatType(storage) if storage in FLOAT_TYPES else t


def _constant_compatible(inferred: list[Type], results: list[Type]) -> bool:
    """``stablehlo::ConstantOp::isCompatibleReturnTypes``: equal, except that a quantized
    result compares by its storage type."""
    if len(inferred) != 1 or len(results) != 1:
        return False
    result = results[0]
    if isinstance(result, RankedTensorType):
        result = result.replace(element_type=_quant_storage(result.element_type))
    return inferred[0] == result


def _operand_type(op: Operation) -> list[Type]:
    return [op.operand_types[0]]


def _terminator_operand_types(op: Operation) -> list[Type]:
    """``getBodyTerminatorOperands``: the operand types of the body's last op."""
    return list(op.regions[0].blocks[0].last_op.operand_types)


def _is_direction(attr) -> bool:
    return PropagationDirection.from_attr(attr) is not None


_PER_VALUE = "Tensor sharding per operand/result of an op"

ODS: dict[str, OdsSpec] = {
    "sdy.constant": OdsSpec(
        operands=0,
        attrs=(AttrConstraint("value", lambda a: isinstance(a, _ELEMENTS),
                              "constant vector/tensor attribute"),),
        result_type=ANY_STATIC_SHAPE_TENSOR,
        infer=lambda op: [op.attributes["value"].type], compatible=_constant_compatible),
    "sdy.data_flow_edge": OdsSpec(
        attrs=(AttrConstraint("sharding", lambda a: isinstance(a, TensorSharding),
                              "Tensor sharding", required=False),),
        operand_type=ANY_SHAPED, result_type=ANY_SHAPED,
        same_operands_and_result_type=True, infer=_operand_type),
    "sdy.func_data_flow_edge": OdsSpec(
        operand_type=ANY_SHAPED, result_type=ANY_SHAPED,
        same_operands_and_result_type=True, infer=_operand_type),
    "sdy.manual_computation": OdsSpec(
        operands=None, results=None, regions=1, body_terminator="sdy.return",
        attrs=(AttrConstraint("in_shardings", lambda a: isinstance(a, TensorShardingPerValue),
                              _PER_VALUE),
               AttrConstraint("out_shardings", lambda a: isinstance(a, TensorShardingPerValue),
                              _PER_VALUE),
               AttrConstraint("manual_axes", lambda a: isinstance(a, ManualAxes),
                              "A list of axes that a ManualComputationOp is manual on"))),
    "sdy.named_computation": OdsSpec(
        operands=None, results=None, regions=1, body_terminator="sdy.return",
        attrs=(AttrConstraint("name", lambda a: isinstance(a, StringAttr) and a.type is None,
                              "string attribute"),
               AttrConstraint("in_shardings", lambda a: isinstance(a, TensorShardingPerValue),
                              _PER_VALUE, required=False),
               AttrConstraint("out_shardings", lambda a: isinstance(a, TensorShardingPerValue),
                              _PER_VALUE, required=False)),
        infer=_terminator_operand_types),
    "sdy.propagation_barrier": OdsSpec(
        attrs=(AttrConstraint("allowed_direction", _is_direction,
                              "propagation direction enum"),),
        operand_type=ANY_RANKED_TENSOR, result_type=ANY_RANKED_TENSOR,
        same_operands_and_result_type=True, infer=_operand_type),
    "sdy.return": OdsSpec(operands=None, results=0, is_terminator=True),
    "sdy.sharding_group": OdsSpec(
        results=0,
        attrs=(AttrConstraint("group_id", lambda a: isinstance(a, IntegerAttr) and a.type == I64,
                              "64-bit signless integer attribute"),),
        operand_type=ANY_RANKED_TENSOR, infer=lambda op: []),
}


@op_verifier(*ODS)
def _verify_sdy_op(op: Operation, ctx: VerifyContext) -> None:
    """The ODS checks, then the op's ``verify()`` (:data:`OP_VERIFY`)."""
    spec = ODS[op.name]
    verify_ods(op, spec)
    check = OP_VERIFY.get(op.name)
    if check is not None:
        check(op, ctx)


@exit_verifier(*ODS)
def _verify_sdy_op_regions(op: Operation, ctx: VerifyContext) -> None:
    """What MLIR checks after the op's regions: ``SingleBlockImplicitTerminator`` and the
    inferred result types (``InferTypeOpInterface`` verifies with the regions)."""
    spec = ODS[op.name]
    if spec.body_terminator is not None:
        _verify_body_end(op, spec)
    elif spec.infer is not None:
        verify_inferred_result_types(op, spec.infer(op), spec.compatible)


def _verify_body_end(op: Operation, spec: OdsSpec) -> None:
    """``SingleBlockImplicitTerminator<T>`` (the body ends with ``T``), then the inferred
    result types. A body ending with a registered op that is no terminator is left to
    the block check (``block with no terminator``), which MLIR runs first."""
    last = op.regions[0].blocks[0].last_op
    d = op_def(last.name)
    if d is not None and not d.terminator:
        return
    terminator = spec.body_terminator
    if last.name != terminator:
        raise op_error(op, f"expects regions to end with '{terminator}', found '{last.name}'",
                       [note(op.location, "in custom textual format, the absence of "
                                          f"terminator implies '{terminator}'")])
    if spec.infer is not None:
        verify_inferred_result_types(op, spec.infer(op), spec.compatible)


# --- verify() of the ops (phase 1) -------------------------------------------------------

def _verify_manual_computation(op: Operation, ctx: VerifyContext) -> None:
    """``ManualComputationOp::verify`` (MC-8): no manual axis is already manual in an
    enclosing ``sdy.manual_computation``."""
    owners = parent_manual_axes(op, ctx)
    for axis_name in op.attributes["manual_axes"]:
        owner = owners.get(axis_name)
        if owner is not None:
            raise bound_axis_error(op_emitter(op), axis_name, owner)


def _verify_propagation_barrier(op: Operation, ctx: VerifyContext) -> None:
    """``PropagationBarrierOp::verify`` (PB-1)."""
    if PropagationDirection.from_attr(op.attributes["allowed_direction"]) is \
            PropagationDirection.BOTH:
        raise op_error(op, "cannot specify `BOTH` as the direction. Not blocking propagation "
                           "direction makes the op redundant.")


OP_VERIFY: dict[str, Callable[[Operation, VerifyContext], None]] = {
    "sdy.manual_computation": _verify_manual_computation,
    "sdy.propagation_barrier": _verify_propagation_barrier,
}


# --- symbol uses (phase 3) -----------------------------------------------------------------

def _has_static_shape(t: Type) -> bool:
    """``ShapedType::hasStaticShape``: ranked, and no dynamic dimension."""
    return isinstance(t, (RankedTensorType, VectorType)) and None not in t.shape


@symbol_use_verifier("sdy.data_flow_edge")
def _verify_data_flow_edge(op: Operation, ctx: VerifyContext) -> None:
    """``DataFlowEdgeOp::verifySymbolUses``: a static-shaped result, an input with a
    single user (DFE-1) not defined by an sdy op other than a shardable data-flow op
    (DFE-2), and a valid sharding (DFE-3)."""
    result_type = op.result_types[0]
    if not _has_static_shape(result_type):
        raise op_error(op, "expected sdy.data_flow_edge to have a static-shaped result. "
                           f"type: '{result_type}'")
    value = op.operands[0]
    if not value.has_one_use:
        raise op_error(op, "expected input of sdy.data_flow_edge to have a single user")
    definer = value.defining_op
    if definer is not None and definer.dialect == "sdy" and \
            definer.name not in _SHARDABLE_DATA_FLOW_OPS:
        raise op_error(op, "expected input of sdy.data_flow_edge to not be defined by an "
                           "SdyDialect op (other than an sdy.named_computation).",
                       [note(definer.location,
                             "sdy op defining the input of the sdy.data_flow_edge")])
    sharding = op.attributes.get("sharding")
    if sharding is not None:
        verify_tensor_sharding_for_op(sharding, result_type, op, ctx, op_emitter(op))


# ops implementing ``ShardableDataFlowOpInterface``
_SHARDABLE_DATA_FLOW_OPS = ("sdy.manual_computation", "sdy.named_computation")


@symbol_use_verifier("sdy.func_data_flow_edge")
def _verify_func_data_flow_edge(op: Operation, ctx: VerifyContext) -> None:
    """``FuncDataFlowEdgeOp::verifySymbolUses``: a static-shaped result, and an operand
    with a single user that is an argument of a function or a result of a call."""
    result_type = op.result_types[0]
    if not _has_static_shape(result_type):
        raise op_error(op, "expected sdy.func_data_flow_edge to have a static-shaped result. "
                           f"type: '{result_type}'")
    value = op.operands[0]
    if not value.has_one_use:
        raise op_error(op, "expected operand of sdy.func_data_flow_edge to have a single user")
    if isinstance(value, BlockArgument):
        owner = value.block.parent_op
        if owner is None or owner.name != "func.func":
            raise op_error(op, "expected operand of sdy.func_data_flow_edge to be a block "
                               "argument of a func op.")
    elif value.defining_op is None or value.defining_op.name != "func.call":
        raise op_error(op, "expected operand of sdy.func_data_flow_edge to be a result of "
                           "call op.")


# --- sdy.manual_computation (MC-*) ---------------------------------------------------------

def _manual_axes_size(axes, manual_axes: set[str], mesh: Mesh) -> int:
    """``accumulatedManualAxesSize``: the product of the sizes of the manual axes."""
    size = 1
    for axis in axes:
        if axis.name in manual_axes:
            size *= axis.size(mesh)
    return size


def _manual_axis_after_free_axis(axes, manual_axes: set[str]) -> int | None:
    """``findManualAxisAfterFreeAxis``: the index of the first manual axis that follows a
    free axis, or None."""
    seen_free = False
    for i, axis in enumerate(axes):
        if axis.name not in manual_axes:
            seen_free = True
        elif seen_free:
            return i
    return None


def _verify_manual_computation_values(op: Operation, global_types: Sequence[Type],
                                      local_types: Sequence[Type],
                                      per_value: TensorShardingPerValue, ctx: VerifyContext,
                                      manual_axes: set[str], kind: str) -> None:
    """``verifyManualComputationValue`` for the operands or the results (``kind``): valid
    shardings of the global types (MC-1), as many local values (MC-2), manual axes before
    free ones (MC-3), dims divisible by their manual axes (MC-4), and local types that are
    the global ones divided by the manual axes (MC-5)."""
    if not global_types and not local_types and not per_value.shardings:
        return
    verify_tensor_sharding_per_value(per_value, global_types, op, ctx,
                                     lambda m: op_error(op, f"{kind} {m}"))
    if len(global_types) != len(local_types):
        raise op_error(op, f"number of op {kind}s and region {kind}s must match. Op has "
                           f"{len(global_types)} op {kind}s and {len(local_types)} region "
                           f"{kind}s")
    for index, (global_type, local_type, sharding) in enumerate(
            zip(global_types, local_types, per_value.shardings)):
        for dim, dim_sharding in enumerate(sharding.dim_shardings):
            axes = dim_sharding.axes
            i = _manual_axis_after_free_axis(axes, manual_axes)
            if i is not None:
                raise op_error(op, f"{kind} sharding at index {index} must have all manual "
                                   "axes come before free axes in its dimension sharding at "
                                   f"index {dim}. Saw manual axis {axes[i].params()} after "
                                   f"free axis {axes[i - 1].params()}")
        if not isinstance(global_type, SHAPED_TYPES):
            continue  # e.g. a token: nothing to divide
        expected = _local_type(op, global_type, sharding, ctx, manual_axes, kind)
        if expected != local_type:
            raise op_error(op, f"{kind} shape, corresponding sharding, and region {kind} shape "
                               f"at index {index} must match. Expected local shape "
                               f"'{expected}', actual local shape '{local_type}'")


def _local_type(op: Operation, global_type: Type, sharding: TensorSharding,
                ctx: VerifyContext, manual_axes: set[str], kind: str) -> RankedTensorType:
    """The body's view of ``global_type``: each static dim divided by the size of its
    manual axes (MC-4 when it does not divide); no encoding, as upstream builds it."""
    mesh = mesh_for(sharding, op, ctx)
    shape: list[int | None] = []
    for dim_size, dim_sharding in zip(global_type.shape, sharding.dim_shardings):
        if dim_size is None:
            shape.append(None)
            continue
        size = _manual_axes_size(dim_sharding.axes, manual_axes, mesh)
        if dim_size % size != 0:
            raise op_error(op, f"{kind} dimension size {dim_size} is not divisible by the "
                               f"manual axes size {size}")
        shape.append(dim_size // size)
    return RankedTensorType(tuple(shape), global_type.element_type)


@symbol_use_verifier("sdy.manual_computation")
def _verify_manual_computation_symbols(op: Operation, ctx: VerifyContext) -> None:
    """``ManualComputationOp::verifySymbolUses``: the operands against the body arguments,
    the results against the body's returned values (MC-1..5), then one common mesh when
    there are manual axes (MC-6) that has every manual axis (MC-7)."""
    manual_axes = op.attributes["manual_axes"]
    axes_set = set(manual_axes)
    in_shardings = op.attributes["in_shardings"]
    out_shardings = op.attributes["out_shardings"]
    block = op.regions[0].blocks[0]
    terminator = block.last_op
    _verify_manual_computation_values(op, op.operand_types, block.arg_types, in_shardings,
                                      ctx, axes_set, "operand")
    _verify_manual_computation_values(op, op.result_types, terminator.operand_types,
                                      out_shardings, ctx, axes_set, "result")
    if not in_shardings.shardings and not out_shardings.shardings:
        return
    mesh = common_mesh([*in_shardings.shardings, *out_shardings.shardings], op, ctx)
    if mesh is None and len(manual_axes):
        raise op_error(op, "all in and out shardings must be bound to the same mesh or an "
                           "empty mesh.")
    for axis_name in manual_axes:
        if mesh is not None and not mesh.has_axis(axis_name):
            raise op_error(op, f"unknown manual axis: {quote_string(axis_name)}")


# --- sdy.named_computation (NC-*) ----------------------------------------------------------

@symbol_use_verifier("sdy.named_computation")
def _verify_named_computation(op: Operation, ctx: VerifyContext) -> None:
    """``NamedComputationOp::verifySymbolUses``: the body arguments match the operands
    (NC-1; upstream reports these without the op prefix), and the optional in/out
    shardings are valid for the operands/results. NC-2 is the inferred result types."""
    args = op.regions[0].blocks[0].arg_types
    if len(args) != op.num_operands:
        raise VerifyError(op.location, "number of block arguments must match the number of "
                                       f"operands: {len(args)} != {op.num_operands}")
    for i, (inner, outer) in enumerate(zip(args, op.operand_types)):
        if inner != outer:
            raise VerifyError(op.location,
                              f"expected the type of the {i}'th block argument to match the "
                              f"type of the corresponding operand: '{inner}' vs '{outer}'")
    for key, types in (("in_shardings", op.operand_types), ("out_shardings", op.result_types)):
        per_value = op.attributes.get(key)
        if per_value is not None:
            verify_tensor_sharding_per_value(per_value, types, op, ctx,
                              lambda m, key=key: op_error(op, f"{key} {m}"))

