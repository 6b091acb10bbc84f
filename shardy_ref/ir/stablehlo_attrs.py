"""StableHLO attributes as immutable values: enums, the dimension numbers of dot, gather,
scatter and convolution, dot algorithms, result accuracy, channel handles, output aliases,
tensor bounds, and the mesh / axis-ref family used by ``replica_groups``.

Each ``__str__`` prints exactly what StableHLO's printer writes for the attribute (full
``#stablehlo...`` form); ``params()`` is the body after the mnemonic, which some op syntaxes
print stripped (``algorithm = <...>``). Construction runs the checks StableHLO's
``getChecked`` runs while parsing and raises ``ValueError`` with its message. Text details:
``notes/stablehlo_attrs.md``; parsing: :mod:`shardy_ref.parser.stablehlo_attr_parser`. See
https://github.com/openxla/stablehlo/blob/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/dialect/StablehloAttrs.td
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from shardy_ref.ir.builtin_attrs import (
    ArrayAttr,
    Attribute,
    DenseElementsAttr,
    SymbolRefAttr,
    quote_string,
)
from shardy_ref.ir.floatfmt import format_float
from shardy_ref.ir.types import IndexType, IntegerType, Type

INT64_MIN = -(1 << 63)  # ShapedType::kDynamic: what `?` stands for in dimension lists

# The `#stablehlo<kind VALUE>` enums: mnemonic -> values in C++ order (StablehloEnums.td).
ENUMS: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
    "fft_type": ("FFT", "IFFT", "RFFT", "IRFFT"),
    "transpose": ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
    "rng_distribution": ("UNIFORM", "NORMAL"),  # C++ values 1, 2
    "rng_algorithm": ("DEFAULT", "THREE_FRY", "PHILOX"),
}
RESULT_ACCURACY_MODES = ("DEFAULT", "HIGHEST", "TOLERANCE")
# custom_call's `api_version` is a plain `N : i32`, not a dialect attribute; these are its
# names by value.
CUSTOM_CALL_API_VERSIONS = ("API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                            "API_VERSION_STATUS_RETURNING",
                            "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI")


def _ints(values) -> str:
    """``[1, -2]``: an int list printed raw (StableHLO ``printStruct``)."""
    return "[" + ", ".join(map(str, values)) + "]"


def _dim_sizes(values) -> str:
    """``[?, 2]``: an int list with INT64_MIN as ``?`` (StableHLO ``printDimSizes``)."""
    return "[" + ", ".join("?" if v == INT64_MIN else str(v) for v in values) + "]"


def _freeze_tuples(obj) -> None:
    """Store list-valued fields as tuples, so attributes built from lists stay hashable."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, list):
            object.__setattr__(obj, f.name, tuple(value))


class StablehloAttr(Attribute):
    """A StableHLO attribute printed as ``#stablehlo.<MNEMONIC><params>``."""

    __slots__ = ()
    MNEMONIC: ClassVar[str] = ""

    def params(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return f"#stablehlo.{self.MNEMONIC}{self.params()}"


@dataclass(frozen=True, slots=True)
class StablehloEnum(StablehloAttr):
    """An enum attribute; prints ``#stablehlo<comparison_direction LT>`` (op syntax: ``LT``)."""

    kind: str  # the mnemonic, a key of ENUMS
    value: str  # the keyword, e.g. "LT"

    def __post_init__(self):
        if self.value not in ENUMS.get(self.kind, ()):
            raise ValueError(f"{self.value!r} is not a StableHLO {self.kind!r} "
                             f"(one of {ENUMS.get(self.kind, 'no such enum')})")

    def __str__(self) -> str:
        return f"#stablehlo<{self.kind} {self.value}>"


def compare_attrs(direction: str, compare_type: str | None = None) -> dict:
    """The inherent attributes of ``stablehlo.compare`` (direction keyword such as ``LT``,
    optional compare type such as ``FLOAT``)."""
    attrs = {"comparison_direction": StablehloEnum("comparison_direction", direction)}
    if compare_type is not None:
        attrs["compare_type"] = StablehloEnum("comparison_type", compare_type)
    return attrs


@dataclass(frozen=True, slots=True)
class ResultAccuracyMode(StablehloAttr):
    """The accuracy mode of a transcendental op; prints ``#stablehlo.result_accuracy_mode<X>``."""

    MNEMONIC: ClassVar[str] = "result_accuracy_mode"
    value: str = "DEFAULT"

    def __post_init__(self):
        if self.value not in RESULT_ACCURACY_MODES:
            raise ValueError(f"{self.value!r} is not a result accuracy mode "
                             f"(one of {RESULT_ACCURACY_MODES})")

    def params(self) -> str:
        return f"<{self.value}>"


@dataclass(frozen=True, slots=True)
class ResultAccuracy(StablehloAttr):
    """Requested accuracy of a transcendental op; prints ``#stablehlo.result_accuracy<atol =
    1.000000e-05, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>``, zero
    tolerances left out, floats printed like f64 ``FloatAttr`` values."""

    MNEMONIC: ClassVar[str] = "result_accuracy"
    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0
    mode: ResultAccuracyMode = ResultAccuracyMode("DEFAULT")

    def __post_init__(self):
        if isinstance(self.mode, str):
            object.__setattr__(self, "mode", ResultAccuracyMode(self.mode))
        if math.copysign(1.0, self.atol) < 0 or math.copysign(1.0, self.rtol) < 0 \
                or self.ulps < 0:
            raise ValueError("Negative tolerance")
        if self.mode.value != "TOLERANCE" and (self.atol or self.rtol or self.ulps):
            raise ValueError(f"Invalid tolerances for ResultAccuracyAttr with mode "
                             f"{self.mode.value}, must be all zero.")

    def params(self) -> str:
        parts = [f"atol = {format_float(self.atol, 'f64')}"] if self.atol else []
        if self.rtol:
            parts.append(f"rtol = {format_float(self.rtol, 'f64')}")
        if self.ulps:
            parts.append(f"ulps = {self.ulps}")
        parts.append(f"mode = {self.mode}")
        return "<" + ", ".join(parts) + ">"


class _DimsStruct(StablehloAttr):
    """StableHLO's ``printStruct``: each non-empty list / non-zero int field, in declaration
    order, as ``name = [..]`` / ``name = N``; INT64_MIN prints raw."""

    __slots__ = ()

    def __post_init__(self):
        _freeze_tuples(self)

    def params(self) -> str:
        parts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value:
                parts.append(f"{f.name} = {_ints(value) if isinstance(value, tuple) else value}")
        return "<" + ", ".join(parts) + ">"


@dataclass(frozen=True, slots=True)
class DotDimensionNumbers(_DimsStruct):
    """Batching and contracting dims of dot_general; prints
    ``#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>``."""

    MNEMONIC: ClassVar[str] = "dot"
    lhs_batching_dimensions: tuple[int, ...] = ()
    rhs_batching_dimensions: tuple[int, ...] = ()
    lhs_contracting_dimensions: tuple[int, ...] = ()
    rhs_contracting_dimensions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class GatherDimensionNumbers(_DimsStruct):
    """Dimension numbers of gather; prints
    ``#stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>``."""

    MNEMONIC: ClassVar[str] = "gather"
    offset_dims: tuple[int, ...] = ()
    collapsed_slice_dims: tuple[int, ...] = ()
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()
    start_index_map: tuple[int, ...] = ()
    index_vector_dim: int = 0


@dataclass(frozen=True, slots=True)
class ScatterDimensionNumbers(_DimsStruct):
    """Dimension numbers of scatter; prints
    ``#stablehlo.scatter<update_window_dims = [1], index_vector_dim = 2>``."""

    MNEMONIC: ClassVar[str] = "scatter"
    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0


def _conv_layout(spatial: tuple[int, ...], non_spatial: tuple[tuple[int, str], ...]) -> str:
    """One bracket of ``printConvolutionDimensions``: letters, then spatial indices, overwrite
    a list of zeros; out-of-range dims are the errors upstream aborts with."""
    slots: list[int | str] = [0] * (len(non_spatial) + len(spatial))
    for dim, letter in non_spatial:
        if not 0 <= dim < len(slots):
            raise ValueError("Invalid non-spatial dimension.")
        slots[dim] = letter
    for index, dim in enumerate(spatial):
        if not 0 <= dim < len(slots):
            raise ValueError("Invalid spatial dimension.")
        slots[dim] = index
    return "[" + ", ".join(map(str, slots)) + "]"


@dataclass(frozen=True, slots=True)
class ConvDimensionNumbers(StablehloAttr):
    """Dimension layout of a convolution; prints
    ``#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`` (never the ``raw`` form)."""

    MNEMONIC: ClassVar[str] = "conv"
    input_batch_dimension: int = 0
    input_feature_dimension: int = 0
    input_spatial_dimensions: tuple[int, ...] = ()
    kernel_input_feature_dimension: int = 0
    kernel_output_feature_dimension: int = 0
    kernel_spatial_dimensions: tuple[int, ...] = ()
    output_batch_dimension: int = 0
    output_feature_dimension: int = 0
    output_spatial_dimensions: tuple[int, ...] = ()

    def __post_init__(self):
        _freeze_tuples(self)

    def pretty(self) -> str:
        """The bare ``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` of the op syntax."""
        return (_conv_layout(self.input_spatial_dimensions,
                             ((self.input_batch_dimension, "b"),
                              (self.input_feature_dimension, "f")))
                + "x" + _conv_layout(self.kernel_spatial_dimensions,
                                     ((self.kernel_input_feature_dimension, "i"),
                                      (self.kernel_output_feature_dimension, "o")))
                + "->" + _conv_layout(self.output_spatial_dimensions,
                                      ((self.output_batch_dimension, "b"),
                                       (self.output_feature_dimension, "f"))))

    def params(self) -> str:
        return f"<{self.pretty()}>"


_F8_TYPES = frozenset({"f8E3M4", "f8E4M3", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ",
                       "f8E4M3B11FNUZ", "f8E5M2FNUZ"})
# (lhs, rhs, accumulation, primitive ops) of Base.cpp getKnownDotAlgorithm, besides f8 x f8.
_KNOWN_DOT_ALGORITHMS = frozenset({
    ("f16", "f16", "f16", 1), ("f16", "f16", "f32", 1), ("bf16", "bf16", "bf16", 1),
    ("bf16", "bf16", "f32", 1), ("bf16", "bf16", "f32", 3), ("bf16", "bf16", "f32", 6),
    ("bf16", "bf16", "f32", 9), ("tf32", "tf32", "f32", 1), ("tf32", "tf32", "f32", 3),
    ("f32", "f32", "f32", 1), ("f64", "f64", "f64", 1)})


@dataclass(frozen=True, slots=True)
class DotAlgorithm(StablehloAttr):
    """A dot_general precision algorithm known to some hardware; prints
    ``#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, ...,
    allow_imprecise_accumulation = false>`` (all seven fields, on one line)."""

    MNEMONIC: ClassVar[str] = "dot_algorithm"
    lhs_precision_type: Type
    rhs_precision_type: Type
    accumulation_type: Type
    lhs_component_count: int
    rhs_component_count: int
    num_primitive_operations: int
    allow_imprecise_accumulation: bool

    def __post_init__(self):
        for name, what in (("lhs_component_count", "lhs component count"),
                           ("rhs_component_count", "rhs component count"),
                           ("num_primitive_operations", "num primitive operations")):
            if getattr(self, name) < 1:
                raise ValueError(f"{what} must be positive")
        if not self.is_known():
            raise ValueError(
                f"dot algorithm not known to be supported on any hardware: "
                f"{{lhs:'{self.lhs_precision_type}', rhs:'{self.rhs_precision_type}', "
                f"accum:'{self.accumulation_type}', lhs_components:{self.lhs_component_count}, "
                f"rhs_components:{self.rhs_component_count}, "
                f"primitive_ops:{self.num_primitive_operations}, "
                f"imprecise:{int(self.allow_imprecise_accumulation)}}}")

    def is_known(self) -> bool:
        """Upstream ``isKnownDotAlgorithm``."""
        lhs, rhs, acc = map(str, (self.lhs_precision_type, self.rhs_precision_type,
                                  self.accumulation_type))
        if self.lhs_component_count != 1 or self.rhs_component_count != 1:
            return False
        if lhs in _F8_TYPES and rhs in _F8_TYPES and acc == "f32" \
                and self.num_primitive_operations == 1:
            return True
        return not self.allow_imprecise_accumulation and \
            (lhs, rhs, acc, self.num_primitive_operations) in _KNOWN_DOT_ALGORITHMS

    def params(self) -> str:
        flag = "true" if self.allow_imprecise_accumulation else "false"
        return (f"<lhs_precision_type = {self.lhs_precision_type}, "
                f"rhs_precision_type = {self.rhs_precision_type}, "
                f"accumulation_type = {self.accumulation_type}, "
                f"lhs_component_count = {self.lhs_component_count}, "
                f"rhs_component_count = {self.rhs_component_count}, "
                f"num_primitive_operations = {self.num_primitive_operations}, "
                f"allow_imprecise_accumulation = {flag}>")


@dataclass(frozen=True, slots=True)
class ChannelHandle(StablehloAttr):
    """The channel of a cross-program transfer; prints
    ``#stablehlo.channel_handle<handle = 1, type = 0>``."""

    MNEMONIC: ClassVar[str] = "channel_handle"
    handle: int
    type: int

    def params(self) -> str:
        return f"<handle = {self.handle}, type = {self.type}>"


@dataclass(frozen=True, slots=True)
class OutputOperandAlias(StablehloAttr):
    """A custom_call result aliasing an operand; prints ``#stablehlo.output_operand_alias<
    output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = [1]>`` (on one line;
    INT64_MIN in the index lists prints as ``?``)."""

    MNEMONIC: ClassVar[str] = "output_operand_alias"
    output_tuple_indices: tuple[int, ...]
    operand_index: int
    operand_tuple_indices: tuple[int, ...]

    def __post_init__(self):
        _freeze_tuples(self)

    def params(self) -> str:
        return (f"<output_tuple_indices = {_dim_sizes(self.output_tuple_indices)}, "
                f"operand_index = {self.operand_index}, "
                f"operand_tuple_indices = {_dim_sizes(self.operand_tuple_indices)}>")


@dataclass(frozen=True, slots=True)
class TypeExtensions(StablehloAttr):
    """Bounds of a tensor's dynamic dims (a tensor encoding); always prints
    ``#stablehlo.bounds<4, ?>``. ``None`` is a missing bound (``?``); INT64_MIN, upstream's
    spelling of it, is stored as ``None``."""

    MNEMONIC: ClassVar[str] = "type_extensions"
    bounds: tuple[int | None, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "bounds",
                           tuple(None if b == INT64_MIN else b for b in self.bounds))

    def params(self) -> str:
        return "<" + ", ".join("?" if b is None else str(b) for b in self.bounds) + ">"

    def __str__(self) -> str:
        return f"#stablehlo.bounds{self.params()}"


@dataclass(frozen=True, slots=True)
class MeshAxis(StablehloAttr):
    """A named axis of a StableHLO mesh; prints ``#stablehlo.mesh_axis<name = "x", size = 2>``."""

    MNEMONIC: ClassVar[str] = "mesh_axis"
    name: str
    size: int

    def params(self) -> str:
        return f"<name = {quote_string(self.name)}, size = {self.size}>"


@dataclass(frozen=True, slots=True)
class Mesh(StablehloAttr):
    """An inline device mesh; prints
    ``#stablehlo.mesh<axes=[<name = "x", size = 2>], device_ids=dense<[1, 0]> : tensor<2xi64>>``
    (axes stripped, no spaces around ``=``, device ids only when present)."""

    MNEMONIC: ClassVar[str] = "mesh"
    axes: tuple[MeshAxis, ...]
    device_ids: DenseElementsAttr | None = None

    def __post_init__(self):
        _freeze_tuples(self)
        ids = self.device_ids
        if ids is not None and not isinstance(ids.element_type, (IntegerType, IndexType)):
            raise ValueError(f"device_ids must be integer elements, got {ids}")

    def params(self) -> str:
        ids = f", device_ids={self.device_ids}" if self.device_ids is not None else ""
        return f"<axes=[{', '.join(a.params() for a in self.axes)}]{ids}>"


@dataclass(frozen=True, slots=True)
class SubAxisInfo(StablehloAttr):
    """A sub-axis of pre-size ``pre_size`` and size ``size``; prints
    ``#stablehlo<sub_axis_info(1)2>`` (``(1)2`` inside an axis ref)."""

    MNEMONIC: ClassVar[str] = "sub_axis_info"
    pre_size: int
    size: int

    def params(self) -> str:
        return f"({self.pre_size}){self.size}"

    def __str__(self) -> str:
        return f"#stablehlo<sub_axis_info{self.params()}>"


@dataclass(frozen=True, slots=True)
class AxisRef(StablehloAttr):
    """A mesh axis or sub-axis in replica groups; prints
    ``#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>``."""

    MNEMONIC: ClassVar[str] = "axis_ref"
    name: str
    sub_axis_info: SubAxisInfo | None = None

    def params(self) -> str:
        sub = self.sub_axis_info
        sub_text = "" if sub is None else f", sub_axis_info = {sub.params()}"
        return f"<name = {quote_string(self.name)}{sub_text}>"


@dataclass(frozen=True, slots=True)
class ReplicaGroupMeshAxes(StablehloAttr):
    """Replica groups given as mesh axes; prints
    ``#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "x">]>``.
    Whether ``@mesh`` names a mesh is checked by the op that holds the attribute."""

    MNEMONIC: ClassVar[str] = "replica_group_mesh_axes"
    mesh: SymbolRefAttr | Mesh
    axes: ArrayAttr

    def __post_init__(self):
        if not isinstance(self.axes, ArrayAttr):
            object.__setattr__(self, "axes", ArrayAttr(tuple(self.axes)))
        flat_ref = isinstance(self.mesh, SymbolRefAttr) and not self.mesh.nested
        if not (flat_ref or isinstance(self.mesh, Mesh)):
            raise ValueError("mesh must be a FlatSymbolRefAttr or MeshAttr")
        if isinstance(self.mesh, Mesh):
            names = {a.name for a in self.mesh.axes}
            for axis in self.axes:
                if not isinstance(axis, AxisRef):
                    raise ValueError("expected AxisRefAttr in axes list")
                if axis.name not in names:
                    raise ValueError(f"axis '{axis.name}' not found in mesh definition")

    def params(self) -> str:
        return f"<mesh = {self.mesh}, axes = {self.axes}>"
