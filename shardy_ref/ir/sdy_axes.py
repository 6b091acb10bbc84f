"""Meshes, axes and sub-axes of the sdy dialect, with upstream's axis algebra.

A mesh is a list of named axes (``<["x"=2, "y"=4]>``); an axis ref names a whole axis
(``"x"``) or a sub-axis (``"x":(m)k``: pre-size ``m``, size ``k``). The algebra
(``contains``, ``overlaps``, ``can_coexist``, ``merge`` ...) follows upstream
``shardy/dialect/sdy/ir/dialect.cc`` at the pinned commit a0277a83e7f8. See
https://openxla.org/shardy/sdy_dialect#axisrefattr (and ``#meshattr``, ``#meshaxisattr``,
``#subaxisinfoattr`` there) and "Axis splitting and sub-axes" in
https://openxla.org/shardy/sharding_representation.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cmp_to_key
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import Attribute, quote_string


class SdyAttr(Attribute):
    """An sdy attribute. ``params()`` is its stripped form, as op syntax prints it.

    In attribute position MLIR writes ``#sdy.<mnemonic><params>`` when the params are
    wrapped in angle brackets, and the opaque ``#sdy<<mnemonic><params>>`` otherwise
    (``#sdy<manual_axes{"a"}>``), by MLIR's "simple enough for the pretty form" rule.
    """

    __slots__ = ()
    MNEMONIC: ClassVar[str] = ""

    def params(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        params = self.params()
        if params.startswith("<") and params.endswith(">"):
            return f"#sdy.{self.MNEMONIC}{params}"
        return f"#sdy<{self.MNEMONIC}{params}>"


@dataclass(frozen=True, slots=True)
class MeshAxis(SdyAttr):
    """A named mesh axis: ``"x"=4``."""

    MNEMONIC: ClassVar[str] = "mesh_axis"
    name: str
    size: int

    def params(self) -> str:
        return f"{quote_string(self.name)}={self.size}"

    @staticmethod
    def verify_params(name: str, size: int) -> str | None:
        """Upstream ``MeshAxisAttr::verify``, run when the attribute is built."""
        if size <= 0:
            return f"axis size must be at least 1, got: {size}"
        return None



def _duplicate_axis_name(axes) -> str | None:
    """``MeshAttr::verify``'s unique-names check: the first repeated axis name's message."""
    seen: set[str] = set()
    for axis in axes:
        if axis.name in seen:
            return f'duplicate axis name: "{axis.name}"'
        seen.add(axis.name)
    return None


def _verify_device_ids_cover_mesh(axes, device_ids) -> str | None:
    """``MeshAttr::verify``'s explicit ``device_ids`` checks: as many ids as the mesh has
    devices, and a permutation of ``iota``."""
    total = 1
    for axis in axes:
        total *= axis.size
    if total != len(device_ids):
        return ("total product of axis sizes must match total number of device ids, "
                f"got: {total} != {len(device_ids)}")
    ordered = sorted(device_ids)
    if ordered != list(range(len(ordered))):
        return ("sorted device ids must be iota(product(axes)), got: "
                + ", ".join(map(str, ordered)))
    return None


@dataclass(frozen=True, slots=True)
class Mesh(SdyAttr):
    """A mesh: axes and an optional device order (sdy_dialect#meshattr).

    Like upstream's builder, an explicit ``device_ids`` equal to ``iota`` of a non-empty
    axis list is dropped, so ``<["a"=2], device_ids=[0, 1]>`` is ``<["a"=2]>``.
    """

    MNEMONIC: ClassVar[str] = "mesh"
    axes: tuple[MeshAxis, ...] = ()
    device_ids: tuple[int, ...] = ()

    def __post_init__(self):
        if self.axes and self.device_ids == tuple(range(len(self.device_ids))) and \
                len(self.device_ids) == self.total_size:
            object.__setattr__(self, "device_ids", ())

    @staticmethod
    def verify_params(axes, device_ids) -> str | None:
        """Upstream ``MeshAttr::verify`` (our rules MESHATTR-1..4, the constraints of
        https://openxla.org/shardy/sdy_dialect#meshattr): the first broken rule's message,
        or None. Upstream runs it when the attribute is built, so a bad mesh is a parse
        error. Its last check (explicit ``device_ids`` equal to iota) cannot
        fail here, as such ids are dropped on construction, as upstream's builder does."""
        for device_id in device_ids:
            if device_id < 0:
                return f"device id must be non-negative, got: {device_id}"
        if not axes:
            if len(device_ids) > 1:
                return "axes is empty and device_ids has more than one element"
            return None
        duplicate = _duplicate_axis_name(axes)
        if duplicate is not None:
            return duplicate
        if not device_ids:
            return None
        return _verify_device_ids_cover_mesh(axes, device_ids)

    def params(self) -> str:
        axes = ", ".join(a.params() for a in self.axes)
        ids = f", device_ids=[{', '.join(map(str, self.device_ids))}]" if self.device_ids else ""
        return f"<[{axes}]{ids}>"

    @property
    def total_size(self) -> int:
        n = 1
        for a in self.axes:
            n *= a.size
        return n

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def has_axis(self, name: str) -> bool:
        return any(a.name == name for a in self.axes)

    def axis_size(self, name: str) -> int:
        for a in self.axes:
            if a.name == name:
                return a.size
        raise KeyError(f"unknown axis name: {quote_string(name)}")

    @property
    def is_empty(self) -> bool:
        return not self.axes and not self.device_ids

    @property
    def is_maximal(self) -> bool:
        """No axes and exactly one device id: everything runs on that device."""
        return not self.axes and len(self.device_ids) == 1

    @property
    def maximal_device_id(self) -> int | None:
        return self.device_ids[0] if self.is_maximal else None

    def axis_index(self, name: str) -> int:
        for i, a in enumerate(self.axes):
            if a.name == name:
                return i
        raise KeyError(name)

    def equals(self, other: Mesh, ignore_device_ids: bool = False) -> bool:
        if not ignore_device_ids:
            return self == other
        return self.is_maximal == other.is_maximal and self.axes == other.axes


@dataclass(frozen=True, slots=True)
class SubAxisInfo(SdyAttr):
    """``(m)k``: a sub-axis of pre-size ``m`` and size ``k`` (sdy_dialect#subaxisinfoattr)."""

    MNEMONIC: ClassVar[str] = "sub_axis_info"
    pre_size: int
    size: int

    def params(self) -> str:
        return f"({self.pre_size}){self.size}"


    @property
    def next_pre_size(self) -> int:
        return self.pre_size * self.size


@dataclass(frozen=True, slots=True)
class AxisRef(SdyAttr):
    """A full axis ``"x"`` or a sub-axis ``"x":(m)k`` (sdy_dialect#axisrefattr)."""

    MNEMONIC: ClassVar[str] = "axis_ref"
    name: str
    sub_axis_info: SubAxisInfo | None = None

    @staticmethod
    def sub(name: str, pre_size: int, size: int) -> AxisRef:
        return AxisRef(name, SubAxisInfo(pre_size, size))

    def params(self) -> str:
        if self.sub_axis_info is None:
            return quote_string(self.name)
        return f"{quote_string(self.name)}:{self.sub_axis_info.params()}"

    __repr__ = params

    @property
    def is_sub_axis(self) -> bool:
        return self.sub_axis_info is not None

    @property
    def pre_size(self) -> int:
        """The sub-axis pre-size; 1 for a full axis."""
        return self.sub_axis_info.pre_size if self.sub_axis_info else 1

    def size(self, mesh: Mesh) -> int:
        return self.sub_axis_info.size if self.sub_axis_info else mesh.axis_size(self.name)

    def next_pre_size(self, mesh: Mesh) -> int:
        """``pre_size * size``; the full axis size for a full axis."""
        return self.sub_axis_info.next_pre_size if self.sub_axis_info else mesh.axis_size(self.name)

    def contains(self, other: AxisRef) -> bool:
        if other.name != self.name:
            return False
        if self.sub_axis_info is None:
            return True
        if other.sub_axis_info is None:
            return False
        return (self.sub_axis_info.pre_size <= other.sub_axis_info.pre_size
                and self.sub_axis_info.next_pre_size >= other.sub_axis_info.next_pre_size)

    def strictly_contains(self, other: AxisRef) -> bool:
        return self != other and self.contains(other)

    def prefix_of(self, other: AxisRef) -> bool:
        return other.contains(self) and self.pre_size == other.pre_size

    def strict_prefix_of(self, other: AxisRef) -> bool:
        return self != other and self.prefix_of(other)

    def suffix_of(self, other: AxisRef, mesh: Mesh) -> bool:
        return other.contains(self) and self.next_pre_size(mesh) == other.next_pre_size(mesh)

    def strict_suffix_of(self, other: AxisRef, mesh: Mesh) -> bool:
        return self != other and self.suffix_of(other, mesh)

    def overlaps(self, other: AxisRef) -> bool:
        if other.name != self.name:
            return False
        a, b = self.sub_axis_info, other.sub_axis_info
        if a is None or b is None:
            return True
        return a.pre_size < b.next_pre_size and b.pre_size < a.next_pre_size

    def can_coexist(self, other: AxisRef) -> bool:
        """Whether both can appear in one sharding without describing an impossible split."""
        if self.name != other.name:
            return True
        a, b = self.sub_axis_info, other.sub_axis_info
        if a is None or b is None:
            return True
        return _sub_axes_can_coexist(*_min_max(a, b))

    def overlap(self, other: AxisRef) -> AxisRef | None:
        """The common part of two overlapping axis refs, if they can coexist."""
        if other.name != self.name:
            return None
        if self.sub_axis_info is None:
            return other
        if other.sub_axis_info is None:
            return self
        min_pre, max_pre, min_next, max_next = _min_max(self.sub_axis_info, other.sub_axis_info)
        if min_next <= max_pre or not _sub_axes_can_coexist(min_pre, max_pre, min_next, max_next):
            return None
        return AxisRef.sub(self.name, max_pre, min_next // max_pre)

    def prefix_without_overlap(self, other: AxisRef) -> AxisRef | None:
        if not self.can_coexist(other):
            return None
        if not self.overlaps(other):
            return self
        if self.pre_size >= other.pre_size:
            return None
        return AxisRef.sub(self.name, self.pre_size, other.pre_size // self.pre_size)

    def suffix_without_overlap(self, other: AxisRef, mesh: Mesh) -> AxisRef | None:
        if not self.can_coexist(other):
            return None
        if not self.overlaps(other):
            return self
        this_next, other_next = self.next_pre_size(mesh), other.next_pre_size(mesh)
        if this_next <= other_next:
            return None
        return AxisRef.sub(self.name, other_next, this_next // other_next)

    def greatest_common_prefix(self, other: AxisRef) -> AxisRef | None:
        if not self.can_coexist(other):
            return None
        if self.prefix_of(other):
            return self
        if other.prefix_of(self):
            return other
        return None

    def can_merge(self, other: AxisRef) -> bool:
        """Two sub-axes of one axis where ``other`` starts where ``self`` ends."""
        if other.name != self.name or self.sub_axis_info is None or other.sub_axis_info is None:
            return False
        return self.sub_axis_info.next_pre_size == other.sub_axis_info.pre_size

    def merge(self, other: AxisRef, mesh: Mesh) -> AxisRef:
        assert self.can_merge(other)
        size = self.sub_axis_info.size * other.sub_axis_info.size
        if mesh.axis_size(self.name) == size:
            return AxisRef(self.name)
        return AxisRef.sub(self.name, self.sub_axis_info.pre_size, size)

    def __lt__(self, other: AxisRef) -> bool:
        """Upstream ``AxisRefAttr::operator<``: by name, then by position within the axis."""
        if self.name != other.name:
            return self.name < other.name
        if self.sub_axis_info is None:
            return other.pre_size > 1
        if other.sub_axis_info is None:
            return self.pre_size == 1
        return (self.sub_axis_info.pre_size, self.sub_axis_info.size) < \
            (other.sub_axis_info.pre_size, other.sub_axis_info.size)


def _min_max(a: SubAxisInfo, b: SubAxisInfo) -> tuple[int, int, int, int]:
    return (min(a.pre_size, b.pre_size), max(a.pre_size, b.pre_size),
            min(a.next_pre_size, b.next_pre_size), max(a.next_pre_size, b.next_pre_size))


def _sub_axes_can_coexist(min_pre: int, max_pre: int, min_next: int, max_next: int) -> bool:
    if min_next > max_pre:  # overlapping: both parts must be valid sub-axes
        return min_next % max_pre == 0 and max_pre % min_pre == 0 and max_next % min_next == 0
    return max_pre % min_next == 0  # disjoint: the gap must be a valid sub-axis


def mesh_axis_key(mesh: Mesh):
    """Sort key: axis refs in mesh axis order, then by position within an axis
    (upstream ``getMeshComparator``)."""
    order = {a.name: i for i, a in enumerate(mesh.axes)}

    def cmp(a: AxisRef, b: AxisRef) -> int:
        if a.name != b.name:
            return order[a.name] - order[b.name]
        return -1 if a < b else (1 if b < a else 0)
    return cmp_to_key(cmp)


def format_axis_list(axes) -> str:
    """``"a", "b":(1)2`` — the comma-separated body of an axis list."""
    return ", ".join(a.params() for a in axes)


@dataclass(frozen=True, slots=True)
class AxisRefList(SdyAttr):
    """``{"a", "b"}``: a list of axis refs (sdy_dialect#axisreflistattr)."""

    MNEMONIC: ClassVar[str] = "axis_ref_list"
    value: tuple[AxisRef, ...] = ()

    def params(self) -> str:
        return "{" + format_axis_list(self.value) + "}"


    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True, slots=True)
class ListOfAxisRefLists(SdyAttr):
    """``[{"a"}, {}, {"b", "c"}]``: one axis list per dimension
    (sdy_dialect#listofaxisreflistsattr)."""

    MNEMONIC: ClassVar[str] = "list_of_axis_ref_lists"
    value: tuple[AxisRefList, ...] = ()

    def params(self) -> str:
        return "[" + ", ".join(lst.params() for lst in self.value) + "]"


    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

