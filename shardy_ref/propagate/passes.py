"""The propagation passes, registered as upstream declares them in
``transforms/propagation/passes.td``
(https://github.com/openxla/shardy/blob/a0277a83e7f8/shardy/dialect/sdy/transforms/propagation/passes.td):
each strategy's implementation lives in the module named after its ``.cc`` and extends the
previous one (``BasicPropagationPassImpl`` <- ``AggressivePropagationPassImpl`` <- ...), so
registering all four here keeps pass modules from importing one another."""
from __future__ import annotations

from dataclasses import dataclass

from shardy_ref.pass_manager import register_pass
from shardy_ref.propagate.aggressive_propagation import AggressivePropagationPassImpl
from shardy_ref.propagate.basic_propagation import BasicPropagationPassImpl
from shardy_ref.propagate.op_priority_propagation import OpPriorityPropagationPassImpl
from shardy_ref.propagate.user_priority_propagation import UserPriorityPropagationPassImpl


@register_pass
@dataclass(frozen=True, slots=True)
class BasicPropagationPass(BasicPropagationPassImpl):
    """Runs the basic sharding propagation algorithm: only axes compatible between all
    operands and results propagate, no conflict resolution."""

    NAME = "sdy-basic-propagate"


@register_pass
@dataclass(frozen=True, slots=True)
class AggressivePropagationPass(AggressivePropagationPassImpl):
    """Propagates with the aggressive factor propagation strategy (conflicts resolved in
    favour of the larger source tensor), the basic one, or basic then aggressive."""

    NAME = "sdy-aggressive-propagate"


@register_pass
@dataclass(frozen=True, slots=True)
class OpPriorityPropagationPass(OpPriorityPropagationPassImpl):
    """Runs the aggressive strategies once per op-priority round (five rounds), or just
    once with ``run-op-priority-propagation=false``."""

    NAME = "sdy-op-priority-propagate"


@register_pass
@dataclass(frozen=True, slots=True)
class UserPriorityPropagationPass(UserPriorityPropagationPassImpl):
    """Propagates dimension shardings in the order of their user priorities, each round a
    full op-priority propagation."""

    NAME = "sdy-user-priority-propagate"
