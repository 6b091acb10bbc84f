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

Which ops are pure and element-wise is :mod:`shardy_ref.transforms.common.op_properties`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from shardy_ref.ir.builtin_attrs import StringAttr
from shardy_ref.ir.call_graph import (
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
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Operation, OpResult, Region, Value
from shardy_ref.ir.utils import is_scalar
from shardy_ref.pass_manager import Pass, PassContext, register_pass
from shardy_ref.transforms.common.op_properties import (
    BROADCAST_IN_DIM,
    RESHAPE,
    SLICE,
    is_elementwise,
    is_pure,
)

SDY_CONSTANT = "sdy.constant"
STABLEHLO_CONSTANT = "stablehlo.constant"
NAMED_COMPUTATION = "sdy.named_computation"
SHARDING_GROUP = "sdy.sharding_group"


IOTA = "stablehlo.iota"


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
