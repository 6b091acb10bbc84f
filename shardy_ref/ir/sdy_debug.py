"""Enums and the propagation-debugging attributes of the sdy dialect (sections
``#axistopropagationdetailsattr``, ``#edgevaluerefattr``, ``#propagationedgesattr``,
``#propagationonestepattr`` and ``#enums`` of https://openxla.org/shardy/sdy_dialect).

The enums are ``I32EnumAttr``s upstream: an op stores them as ``i32`` integer attributes
(``allowed_direction = 2 : i32`` in generic form) and its pretty syntax prints the name
(``allowed_direction=BACKWARD``). The debugging attributes record which axes propagation
moved where: ``#sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0]}]}]>``.
See https://openxla.org/shardy/sdy_dialect#propagationedgesattr.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import IntegerAttr
from shardy_ref.ir.sdy_axes import AxisRef, SdyAttr
from shardy_ref.ir.types import I32


class SdyEnum(IntEnum):
    """An sdy ``I32EnumAttr``: ops store the case as an ``i32`` IntegerAttr and op syntax
    prints its keyword (``KEYWORDS`` when it differs from the Python name)."""

    @property
    def keyword(self) -> str:
        return self.name.lower() if self._lowercase() else self.name

    @classmethod
    def _lowercase(cls) -> bool:
        return False

    @classmethod
    def from_keyword(cls, text: str):
        for case in cls:
            if case.keyword == text:
                return case
        return None

    @classmethod
    def from_attr(cls, attr):
        """The case stored in ``attr`` (an ``i32`` IntegerAttr), or None."""
        if isinstance(attr, IntegerAttr) and attr.type == I32:
            try:
                return cls(attr.value)
            except ValueError:
                return None
        return None

    def attr(self) -> IntegerAttr:
        return IntegerAttr(int(self), I32)


class PropagationDirection(SdyEnum):
    """Which way a ``sdy.propagation_barrier`` lets shardings through
    (sdy_dialect#propagationdirection)."""

    NONE = 0
    FORWARD = 1
    BACKWARD = 2
    BOTH = 3


class EdgeNodeType(SdyEnum):
    """Whether an edge value ref names an operand or a result (sdy_dialect#edgenodetype)."""

    OPERAND = 0
    RESULT = 1

    @classmethod
    def _lowercase(cls) -> bool:
        return True


class ReductionOp(SdyEnum):
    """How unreduced values combine: ``all_reduce max``, ``unreduced=min{...}``."""

    SUM = 0
    MAX = 1
    MIN = 2

    @classmethod
    def _lowercase(cls) -> bool:
        return True


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

    def verify_params(self) -> str | None:
        """Upstream ``PropagationEdgesAttr::verify``, which MLIR runs when the attribute is
        built (so the parser reports it, at the attribute): the message of the first
        broken rule (step indices non-negative and unique, no source among its targets,
        no target twice), or None."""
        seen_steps: set[int] = set()
        for step in self.value:
            index = step.step_index
            if index < 0:
                return f"propagation edges have negative step index: {index}"
            if index in seen_steps:
                return f"propagation edges have duplicate step index: {index}"
            seen_steps.add(index)
            for entry in step.axis_entries:
                seen_targets: set[EdgeValueRef] = set()
                for target in entry.targets:
                    if target == entry.source:
                        return "propagation edges have a source that is the same as a target"
                    if target in seen_targets:
                        return ("propagation edges have duplicate targets for step index: "
                                f"{index} and axis: {entry.axis_name.name}")
                    seen_targets.add(target)
        return None

    def params(self) -> str:
        return "<[" + ", ".join(s.params() for s in self.value) + "]>"
