"""``sdy-constant-or-scalar-splitter``: give every constant sub-computation and every scalar
expansion a single user, so that different uses of a constant are not sharded alike just
because they share it
(https://openxla.org/shardy/sdy_import_passes#-sdy-constant-or-scalar-splitter; upstream
``transforms/import/constant_or_scalar_splitter.cc``).

Upstream's source at the pinned commit a0277a83e7f8 differs from the mid-2025 version of
that pass doc in three ways, which we follow:
the pass anchors on the module (not on each function), functions are visited callees first
(``iterateFuncs``), and calls and ``sdy.named_computation``s count as constant-preserving
unless their body (for calls: any function with the same original name, for named
computations: any with the same name) holds an op that is not. Calls are cloned together
with a recursive clone of their callee (``cloneFuncRecursively``).

Which ops are pure and element-wise is upstream's ``isPure`` (``Pure``, or ``NoMemoryEffect``
plus a speculatability rule that holds for the operand types) and ``isElementwise``
(``Elementwise``/``BroadcastingElementwise`` traits; ``op_properties.cc``): the tables below
transcribe the traits of ``stablehlo/dialect/StablehloOps.td`` and sdy's ``ir/ops.td``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import StringAttr
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation, OpResult, Region, Value
from shardy_ref.ir.types import RankedTensorType, VectorType
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.propagate.imports.call_graph import (
    CALL_OP,
    FUNC_OP,
    InsertingSymbolTable,
    callee_name,
    clone_func_recursively,
    funcs_in_call_graph_order,
    get_func_or_die,
    original_func_name,
    set_callee,
)

SDY_CONSTANT = "sdy.constant"
STABLEHLO_CONSTANT = "stablehlo.constant"
NAMED_COMPUTATION = "sdy.named_computation"
SHARDING_GROUP = "sdy.sharding_group"

# -- op properties (StablehloOps.td traits) -----------------------------------------------

# ``StableHLO_UnaryElementwiseOp`` (and ``reduce_precision``): ``Elementwise``,
# ``NoMemoryEffect``, ``HLO_SpeculatableIfStaticDimInOutputIsStaticInInput``.
_UNARY_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """abs cbrt ceil convert
count_leading_zeros cosine exponential exponential_minus_one floor imag is_finite log
log_plus_one logistic not negate popcnt real round_nearest_afz round_nearest_even rsqrt sign
sine sqrt tan tanh uniform_quantize uniform_dequantize reduce_precision""".split())

# ``StableHLO_BinaryElementwiseOp`` (incl. the bitwise/logical ones) and ``compare``
# (``Elementwise``), ``clamp`` and ``select`` (``HLO_BroadcastingElementwise``): all
# ``NoMemoryEffect`` and ``HLO_SpeculatableIfAllInputsStatic``.
_NARY_ELEMENTWISE = frozenset(f"stablehlo.{n}" for n in """add atan2 complex divide maximum
minimum multiply power remainder shift_left shift_right_arithmetic shift_right_logical
subtract and or xor compare clamp select""".split())

BITCAST_CONVERT = "stablehlo.bitcast_convert"
BROADCAST_IN_DIM = "stablehlo.broadcast_in_dim"
RESHAPE = "stablehlo.reshape"
SLICE = "stablehlo.slice"
IOTA = "stablehlo.iota"

# Ops ``isElementwise`` accepts although they lack the trait (``op_properties.cc``).
_SDY_ELEMENTWISE = frozenset(
    ("sdy.propagation_barrier", "sdy.sharding_constraint", "sdy.reshard"))


def _static_dims_of_result_static_in_operand(op: Operation, rank: int | None = None) -> bool:
    """``SpeculatableIfStaticDimInOutputIsStaticInInput`` (``Base.h``): no result dimension
    is static where operand 0's is dynamic (over the first ``rank`` dimensions)."""
    operand, result = op.operands[0].type, op.results[0].type
    if not isinstance(operand, RankedTensorType) or not isinstance(result, RankedTensorType):
        return False
    n = result.rank if rank is None else rank
    return all(result.shape[i] is None or operand.shape[i] is not None for i in range(n))


def _all_operands_static(op: Operation) -> bool:
    """``SpeculatableIfAllInputsStatic`` (``Base.h``)."""
    return all(isinstance(t, RankedTensorType) and t.has_static_shape
               for t in op.operand_types)


def _bitcast_convert_speculatable(op: Operation) -> bool:
    """``BitcastConvertOp::getSpeculatability``: the static-dimension rule over the
    dimensions operand and result share."""
    operand, result = op.operands[0].type, op.results[0].type
    if not isinstance(operand, RankedTensorType) or not isinstance(result, RankedTensorType):
        return False
    return _static_dims_of_result_static_in_operand(op, min(operand.rank, result.rank))


def _reshape_speculatable(op: Operation) -> bool:
    """``ReshapeOp::getSpeculatability``: the operand has a static shape."""
    t = op.operands[0].type
    return isinstance(t, RankedTensorType) and t.has_static_shape


# op name -> whether the (``NoMemoryEffect``, conditionally speculatable) op is speculatable
_SPECULATABLE = {
    **dict.fromkeys(_UNARY_ELEMENTWISE, _static_dims_of_result_static_in_operand),
    **dict.fromkeys(_NARY_ELEMENTWISE, _all_operands_static),
    BITCAST_CONVERT: _bitcast_convert_speculatable,
    BROADCAST_IN_DIM: _all_operands_static,
    RESHAPE: _reshape_speculatable,
    SLICE: _static_dims_of_result_static_in_operand,
}


def is_pure(op: Operation) -> bool:
    """MLIR ``isPure`` (speculatable and free of memory effects) for the ops this pass asks
    about; other registered ops without regions are pure iff declared ``Pure`` (their op
    definition: ``sdy.sharding_constraint`` is not, it declares no memory effects), and
    unregistered ops never are."""
    rule = _SPECULATABLE.get(op.name)
    if rule is not None:
        return rule(op)
    d = op_def(op.name)
    return d is not None and d.pure and not op.regions


def is_elementwise(op: Operation) -> bool:
    """Upstream ``isElementwise`` (``transforms/common/op_properties.cc``)."""
    if op.name in _UNARY_ELEMENTWISE or op.name in _NARY_ELEMENTWISE:
        return True
    if op.name == BITCAST_CONVERT:  # shapes are equal iff bit widths are
        return _shape(op.operands[0]) == _shape(op.results[0])
    return op.name in _SDY_ELEMENTWISE


def _shape(value: Value) -> tuple | None:
    return getattr(value.type, "shape", None)


def is_scalar(value: Value) -> bool:
    """Upstream ``isScalar``: a ranked shaped value of rank 0."""
    t = value.type
    return isinstance(t, RankedTensorType | VectorType) and len(t.shape) == 0


def is_scalar_expansion(op: Operation) -> bool:
    """A ``broadcast_in_dim`` of a scalar."""
    return op.name == BROADCAST_IN_DIM and is_scalar(op.operands[0])


def parent_named_computation(op: Operation) -> Operation | None:
    """The closest enclosing ``sdy.named_computation`` (MLIR ``getParentOfType``)."""
    parent = op.parent_op
    while parent is not None and parent.name != NAMED_COMPUTATION:
        parent = parent.parent_op
    return parent


def named_computation_name(op: Operation) -> str:
    name = op.attributes["name"]
    return name.value if isinstance(name, StringAttr) else str(name)


# -- stablehlo.constant -> sdy.constant ----------------------------------------------------

def convert_constants(module: Operation) -> None:
    """Replace every ``stablehlo.constant`` with an ``sdy.constant`` carrying the same
    attributes, unregistered ones included; ``sdy.constant`` is not ``ConstantLike``, so
    the copies this pass makes are not folded back together."""
    for op in list(module.walk()):
        if op.name != STABLEHLO_CONSTANT:
            continue
        new = Operation(SDY_CONSTANT, op.operands, op.result_types, dict(op.attributes),
                        location=op.location)
        op.parent.insert_before(op, new)
        # replace_all_uses_with reverses the use list (as MLIR's does): that order decides
        # in which order the sharding groups of a cloned constant are cloned.
        op.results[0].replace_all_uses_with(new.results[0])
        op.erase()


# -- splitting -------------------------------------------------------------------------------

@dataclass
class _ModuleState:
    """What the whole run shares: the symbol table clones go into, and the named
    computations (by name) and functions (by original name) found not constant-preserving."""

    table: InsertingSymbolTable
    non_const_named_computations: set[str] = field(default_factory=set)
    non_const_funcs: set[str] = field(default_factory=set)

    def is_constant_preserving(self, op: Operation) -> bool:
        """Upstream ``isConstantPreserving``: the op's results are constant when its
        operands are. Assumes ``op`` is neither a constant nor an iota."""
        if op.name == CALL_OP:
            callee = get_func_or_die(callee_name(op), self.table, op)
            return original_func_name(callee) not in self.non_const_funcs
        if op.name == NAMED_COMPUTATION:
            return named_computation_name(op) not in self.non_const_named_computations
        if not is_pure(op):
            return False
        return op.name in (BROADCAST_IN_DIM, RESHAPE, SLICE) or is_elementwise(op)


class _RegionSplitter:
    """Upstream ``walkOnRegion``: one pre-order walk over a function or named-computation
    body (not into nested named computations), recording constant expressions and scalar
    expansions, and giving each other user a fresh clone of what it uses of them."""

    def __init__(self, func: Operation, state: _ModuleState):
        self.func = func
        self.state = state
        self.constant_ops: dict[Operation, None] = {}  # insertion-ordered sets
        self.scalar_expansion_ops: dict[Operation, None] = {}
        self._groups: dict[OpResult, list[Operation]] = {}

    def run(self, region: Region) -> None:
        self._walk(region)
        for op in [*self.scalar_expansion_ops, *reversed(self.constant_ops)]:
            users = [user for result in op.results for user in result.users]
            if all(user.name == SHARDING_GROUP for user in users):
                for user in users:
                    user.erase()
                op.erase()

    def _walk(self, region: Region) -> None:
        for block in region.blocks:
            for op in block:  # the next op is fixed before visiting (MLIR's early increment)
                self._process(op)
                if op.name != NAMED_COMPUTATION:
                    for nested in op.regions:
                        self._walk(nested)

    def _is_constant_expression(self, op: Operation) -> bool:
        if op.name in (SDY_CONSTANT, IOTA):
            return True
        return self.state.is_constant_preserving(op) and all(
            isinstance(v, OpResult) and v.defining_op in self.constant_ops for v in op.operands)

    def _process(self, op: Operation) -> None:
        if op.name in (FUNC_OP, SHARDING_GROUP):
            return
        if self._is_constant_expression(op):
            self.constant_ops[op] = None
            return
        d = op_def(op.name)
        if not self.state.is_constant_preserving(op) and not (d is not None and d.terminator):
            named_computation = parent_named_computation(op)
            if named_computation is not None:
                self.state.non_const_named_computations.add(
                    named_computation_name(named_computation))
            self.state.non_const_funcs.add(original_func_name(self.func))
        if is_scalar_expansion(op):
            self.scalar_expansion_ops[op] = None
            return
        for operand in op.op_operands:
            value = operand.value
            if isinstance(value, OpResult) and (
                    value.defining_op in self.constant_ops
                    or value.defining_op in self.scalar_expansion_ops):
                operand.set(self._clone_sub_computation(value))

    def _clone_sub_computation(self, result: OpResult) -> Value:
        """A fresh copy of the sub-computation defining ``result`` (scalars are shared)."""
        if is_scalar(result):
            return result
        mapping: dict = {}
        self._clone_into(result, mapping)
        return mapping[result]

    def _clone_into(self, result: OpResult, mapping: dict) -> None:
        """Clone the ops defining ``result``'s operands, then its own op, each just before
        its original, with the ``sdy.sharding_group``s using ``result`` (upstream's
        recursion, depth first, operands in order, on an explicit stack: a constant
        expression can be a chain of any length)."""
        if is_scalar(result) or result in mapping:
            return
        stack = [(result, iter(result.defining_op.operands))]
        while stack:
            current, operands = stack[-1]
            for operand in operands:
                if isinstance(operand, OpResult) and not is_scalar(operand) \
                        and operand not in mapping:
                    stack.append((operand, iter(operand.defining_op.operands)))
                    break
            else:
                stack.pop()
                self._clone_op(current, mapping)

    def _clone_op(self, result: OpResult, mapping: dict) -> None:
        """Clone the op defining ``result`` (its operands already cloned) just before it."""
        op = result.defining_op
        clone = op.parent.insert_before(op, op.clone(mapping))
        if clone.name == CALL_OP:
            table = self.state.table
            callee = get_func_or_die(callee_name(clone), table, clone)
            set_callee(clone, table.insert(clone_func_recursively(callee, table)))
        for group in self._sharding_groups(result):
            op.parent.insert_before(op, group.clone(mapping))

    def _sharding_groups(self, result: OpResult) -> list[Operation]:
        """The ``sdy.sharding_group``s using ``result``, in use-list order: found once per
        value, not once per clone (a constant with n users is cloned n times), as the walk
        does not move these uses."""
        groups = self._groups.get(result)
        if groups is None:
            groups = self._groups[result] = [
                user for user in result.users if user.name == SHARDING_GROUP]
        return groups


@register_pass
@dataclass(frozen=True, slots=True)
class ConstantOrScalarSplitterPass(Pass):
    """Splits constant sub-computations and scalar expansions so each has a single use.
    See ``shardy/dialect/sdy/transforms/import/passes.td`` (ConstantOrScalarSplitterPass)."""

    NAME = "sdy-constant-or-scalar-splitter"
    ANCHOR = "builtin.module"

    def run(self, op: Operation, ctx: PassContext) -> None:
        state = _ModuleState(InsertingSymbolTable(op))
        convert_constants(op)
        for func in funcs_in_call_graph_order(op, table=state.table):
            for nested in func.walk(post_order=True):
                if nested.name == NAMED_COMPUTATION:
                    _RegionSplitter(func, state).run(nested.regions[0])
            _RegionSplitter(func, state).run(func.regions[0])
