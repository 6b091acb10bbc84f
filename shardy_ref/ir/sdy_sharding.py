"""Tensor shardings of the sdy dialect: dimension shardings, tensor shardings and their lists.

``#sdy.sharding<@mesh, [{"a", ?}p1, {}], replicated={"b"}, unreduced={"c"}>`` binds a
tensor to a mesh (by symbol or inline ``mesh<...>``) and says, per dimension, which axes
shard it, major to minor (upstream ``shardy/dialect/sdy/ir/printers.cc``).
See https://openxla.org/shardy/sdy_dialect#tensorshardingattr (also
``#dimensionshardingattr`` and ``#tensorshardingpervalueattr`` there) and "Detailed Design"
in https://openxla.org/shardy/sharding_representation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import format_symbol_name, quote_string
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, SdyAttr, format_axis_list
from shardy_ref.ir.sdy_debug import ReductionOp

DEFAULT_PRIORITY = 0  # upstream ``kDefaultPriority``: no priority means the highest one


@dataclass(frozen=True, slots=True)
class DimensionSharding(SdyAttr):
    """One dimension's axes, major to minor; open (``?``) dims may be sharded further."""

    MNEMONIC: ClassVar[str] = "dimension_sharding"
    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None

    def params(self) -> str:
        body = format_axis_list(self.axes)
        if not self.is_closed:
            body = body + ", ?" if self.axes else "?"
        prio = f"p{self.priority}" if self.priority is not None else ""
        return "{" + body + "}" + prio

    @property
    def priority_or_default(self) -> int:
        return DEFAULT_PRIORITY if self.priority is None else self.priority

    def sharded_size(self, mesh: Mesh) -> int:
        n = 1
        for a in self.axes:
            n *= a.size(mesh)
        return n


@dataclass(frozen=True, slots=True)
class TensorSharding(SdyAttr):
    """A tensor's sharding on a mesh (symbol name or inline :class:`Mesh`),
    sdy_dialect#tensorshardingattr."""

    MNEMONIC: ClassVar[str] = "sharding"
    mesh_or_ref: str | Mesh
    dim_shardings: tuple[DimensionSharding, ...] = ()
    replicated_axes: tuple[AxisRef, ...] = ()
    unreduced_axes: tuple[AxisRef, ...] = ()
    reduction_op: ReductionOp = ReductionOp.SUM  # how unreduced axes are to be reduced

    def params(self) -> str:
        return f"<{self.body()}>"

    def body(self) -> str:
        """The text inside the angle brackets: ``@mesh, [{"a"}, {}], replicated={"b"}``."""
        mesh = (f"mesh{self.mesh_or_ref.params()}" if isinstance(self.mesh_or_ref, Mesh)
                else format_symbol_name(self.mesh_or_ref))
        dims = ", ".join(d.params() for d in self.dim_shardings)
        out = f"{mesh}, [{dims}]"
        if self.replicated_axes:
            out += ", replicated={" + format_axis_list(self.replicated_axes) + "}"
        if self.unreduced_axes:
            op = "" if self.reduction_op == ReductionOp.SUM else self.reduction_op.keyword
            out += f", unreduced={op}{{" + format_axis_list(self.unreduced_axes) + "}"
        return out

    @property
    def rank(self) -> int:
        return len(self.dim_shardings)

    @property
    def mesh_name(self) -> str | None:
        return self.mesh_or_ref if isinstance(self.mesh_or_ref, str) else None

    @staticmethod
    def fully_open(mesh_or_ref: str | Mesh, rank: int) -> TensorSharding:
        return TensorSharding(mesh_or_ref, tuple(DimensionSharding((), False) for _ in range(rank)))

    @staticmethod
    def fully_closed(mesh_or_ref: str | Mesh, rank: int) -> TensorSharding:
        return TensorSharding(mesh_or_ref, tuple(DimensionSharding((), True) for _ in range(rank)))

    def all_axes(self):
        """Every axis ref used by the sharding: dims, then replicated, then unreduced."""
        for d in self.dim_shardings:
            yield from d.axes
        yield from self.replicated_axes
        yield from self.unreduced_axes

    @property
    def is_fully_replicated(self) -> bool:
        return not any(d.axes for d in self.dim_shardings) and not self.replicated_axes \
            and not self.unreduced_axes


@dataclass(frozen=True, slots=True)
class TensorShardingPerValue(SdyAttr):
    """``#sdy.sharding_per_value<[<@m, [...]>, ...]>``: one sharding per op result."""

    MNEMONIC: ClassVar[str] = "sharding_per_value"
    shardings: tuple[TensorSharding, ...] = ()

    def params(self) -> str:
        return f"<{self.body()}>"

    def body(self) -> str:
        """``[<@m, [...]>, ...]``: the list as ops print it (``in_shardings=[...]``)."""
        return "[" + ", ".join(s.params() for s in self.shardings) + "]"

    def __len__(self) -> int:
        return len(self.shardings)

    def __iter__(self):
        return iter(self.shardings)

    def __getitem__(self, i):
        return self.shardings[i]


@dataclass(frozen=True, slots=True)
class ManualAxes(SdyAttr):
    """``{"a", "b"}``: the axes a ``sdy.manual_computation`` is manual on
    (sdy_dialect#manualaxesattr)."""

    MNEMONIC: ClassVar[str] = "manual_axes"
    value: tuple[str, ...] = ()

    def params(self) -> str:
        return "{" + ", ".join(quote_string(a) for a in self.value) + "}"


    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True, slots=True)
class AllToAllParam(SdyAttr):
    """``{"x"}: 0->1``: the axes one all-to-all moves from ``src_dim`` to ``tgt_dim``."""

    MNEMONIC: ClassVar[str] = "all_to_all_param"
    axes: tuple[AxisRef, ...]
    src_dim: int
    tgt_dim: int

    def params(self) -> str:
        return "{" + format_axis_list(self.axes) + f"}}: {self.src_dim}->{self.tgt_dim}"



@dataclass(frozen=True, slots=True)
class AllToAllParamList(SdyAttr):
    """``[{"x"}: 0->1, {"y"}: 2->3]``."""

    MNEMONIC: ClassVar[str] = "all_to_all_param_list"
    value: tuple[AllToAllParam, ...] = ()

    def params(self) -> str:
        return "[" + ", ".join(p.params() for p in self.value) + "]"


    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)
