"""Enums and the propagation-debugging attributes of the sdy dialect (spec 003 §3.5, §3.8,
§3.14-§3.15, §4).

The enums are ``I32EnumAttr``s upstream: an op stores them as ``i32`` integer attributes
(``allowed_direction = 2 : i32`` in generic form) and its pretty syntax prints the name
(``allowed_direction=BACKWARD``). The debugging attributes record which axes propagation
moved where: ``#sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0]}]}]>``.
See https://openxla.org/shardy/sdy_dialect#propagationedgesattr.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.sdy_axes import AxisRef, SdyAttr
from shardy_ref.ir.types import I32

# enum name -> its case names, in value order (case i has value i)
PROPAGATION_DIRECTIONS = ("NONE", "FORWARD", "BACKWARD", "BOTH")
EDGE_NODE_TYPES = ("operand", "result")
REDUCTION_OPS = ("sum", "max", "min")


def enum_attr(cases: tuple[str, ...], name: str) -> IntegerAttr:
    """The ``i32`` attribute an op stores for enum case ``name``."""
    return IntegerAttr(cases.index(name), I32)


def enum_name(cases: tuple[str, ...], attr) -> str | None:
    """The case name of a stored enum attribute, or None if it is not one."""
    if isinstance(attr, IntegerAttr) and attr.type == I32 and 0 <= attr.value < len(cases):
        return cases[attr.value]
    return None


@dataclass(frozen=True, slots=True)
class EdgeValueRef(SdyAttr):
    """``operand-1`` / ``result-0``: one operand or result of the op carrying the edges."""

    MNEMONIC: ClassVar[str] = "edge_value_ref"
    type: str  # "operand" | "result"
    index: int

    def params(self) -> str:
        return f"{self.type}-{self.index}"


@dataclass(frozen=True, slots=True)
class AxisToPropagationDetails(SdyAttr):
    """``{"y" = operand-1 -> [operand-0, result-0]}``: where one axis flowed from and to."""

    MNEMONIC: ClassVar[str] = "axis_to_propagation_details"
    axis_name: AxisRef
    source: EdgeValueRef
    targets: tuple[EdgeValueRef, ...]

    def params(self) -> str:
        targets = ", ".join(t.params() for t in self.targets)
        return f"{{{self.axis_name.params()} = {self.source.params()} -> [{targets}]}}"


@dataclass(frozen=True, slots=True)
class PropagationOneStep(SdyAttr):
    """``{step-N = [details, ...]}``."""

    MNEMONIC: ClassVar[str] = "propagation_one_step"
    step_index: int
    axis_entries: tuple[AxisToPropagationDetails, ...]

    def params(self) -> str:
        entries = ", ".join(e.params() for e in self.axis_entries)
        return f"{{step-{self.step_index} = [{entries}]}}"


@dataclass(frozen=True, slots=True)
class PropagationEdges(SdyAttr):
    """``#sdy.propagation_edges<[step, ...]>``: debug record of propagation decisions."""

    MNEMONIC: ClassVar[str] = "propagation_edges"
    value: tuple[PropagationOneStep, ...] = ()

    def params(self) -> str:
        return "<[" + ", ".join(s.params() for s in self.value) + "]>"
