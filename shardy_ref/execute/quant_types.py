"""Quantized element types at run time: ``!quant.uniform<...>`` parsed, and the spec's
``quantize`` / ``dequantize`` on NumPy arrays (StableHLO spec, "Types" (quantized element
types) and "Quantization computations").

Our IR keeps quant types as :class:`~shardy_ref.ir.types.OpaqueType` (dialect ``quant``, body
``.uniform<...>``). :func:`quant_type` parses one into a :class:`UniformQuantType`: the
storage type (``i8``, ``u8``...), optional storage range, expressed type, optional quantized
dimension, and one (per-tensor) or several (per-axis) ``scale[:zero_point]`` pairs. The
run-time data of a quantized tensor is its storage integers, stored in the storage type's
NumPy dtype.

Grammar (spec "Types"): ``!quant.uniform<STORAGE[<MIN:MAX>]:EXPRESSED[:DIM], PARAMS>`` with
``PARAMS`` either ``SCALE[:ZP]`` or ``{SCALE[:ZP], ...}``. See
https://openxla.org/stablehlo/spec#types.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.types import FLOAT_TYPES, FloatType, IntegerType, OpaqueType, RankedTensorType

_UNIFORM = re.compile(
    r"\.uniform<\s*(?P<storage>[iu]\d+)\s*"
    r"(?:<\s*(?P<min>[-+]?\d+)\s*:\s*(?P<max>[-+]?\d+)\s*>)?\s*"
    r":\s*(?P<expressed>[A-Za-z0-9]+)\s*"
    r"(?::\s*(?P<dim>\d+)\s*)?"
    r",\s*(?P<params>\{[^{}]*\}|[^{}<>]+?)\s*>\s*$")
_FLOAT = r"[-+]?(?:0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)"
_PARAM = re.compile(rf"^\s*(?P<scale>{_FLOAT})\s*(?::\s*(?P<zp>[-+]?\d+))?\s*$")


@dataclass(frozen=True, slots=True)
class UniformQuantType:
    """A ``!quant.uniform`` element type: ``value = (storage - zero_point) * scale``, with
    ``storage`` in ``[storage_min, storage_max]``. ``quantized_dimension`` is None for
    per-tensor quantization (one scale), else the dimension whose slices have their own
    scale and zero point (spec "Types", (C1)-(C13))."""

    storage_type: IntegerType
    expressed_type: FloatType
    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    storage_min: int
    storage_max: int
    quantized_dimension: int | None = None

    replace = dataclasses.replace

    def __post_init__(self):
        lo, hi = _int_range(self.storage_type)
        if not lo <= self.storage_min < self.storage_max <= hi:
            raise ValueError(f"storage range [{self.storage_min}, {self.storage_max}] not "
                             f"within {self.storage_type}'s [{lo}, {hi}]")
        if len(self.scales) != len(self.zero_points) or not self.scales:
            raise ValueError("quantization needs one zero point per scale")
        if self.quantized_dimension is None and len(self.scales) != 1:
            raise ValueError("per-tensor quantization has exactly one scale")
        if not all(np.isfinite(s) and s > 0 for s in self.scales):
            raise ValueError(f"scales must be positive and finite, got {list(self.scales)}")
        if not all(self.storage_min <= z <= self.storage_max for z in self.zero_points):
            raise ValueError(f"zero points {list(self.zero_points)} outside the storage range "
                             f"[{self.storage_min}, {self.storage_max}]")

    @property
    def per_axis(self) -> bool:
        return self.quantized_dimension is not None

    @property
    def storage_dtype(self) -> np.dtype:
        return storage_dtype(self.storage_type)

    @property
    def expressed_dtype(self) -> np.dtype:
        return storage_dtype(self.expressed_type)

    def __str__(self) -> str:
        st = f"{'u' if self.storage_type.is_unsigned else 'i'}{self.storage_type.width}"
        if (self.storage_min, self.storage_max) != _int_range(self.storage_type):
            st += f"<{self.storage_min}:{self.storage_max}>"
        dim = "" if self.quantized_dimension is None else f":{self.quantized_dimension}"
        params = [f"{s!r}:{z}" for s, z in zip(self.scales, self.zero_points, strict=True)]
        body = "{" + ",".join(params) + "}" if self.per_axis else params[0]
        return f"!quant.uniform<{st}:{self.expressed_type}{dim}, {body}>"

    def check_shape(self, shape) -> None:
        """Per-axis constraints (C12)-(C13) for a tensor of ``shape``."""
        if not self.per_axis:
            return
        d = self.quantized_dimension
        if d >= len(shape) or shape[d] not in (None, len(self.scales)):
            raise ValueError(f"{self} needs dimension {d} of size {len(self.scales)}, got "
                             f"shape {list(shape)}")


def _int_range(t: IntegerType) -> tuple[int, int]:
    if t.is_unsigned:
        return 0, (1 << t.width) - 1
    return -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1


def _scale(text: str, expressed: FloatType) -> float:
    """A scale literal: decimal, or MLIR's hexadecimal bit pattern of the expressed type."""
    if text.lower().lstrip("+-").startswith("0x"):
        bits = int(text, 16)
        width = FLOAT_TYPES[expressed.name][1]
        as_int = np.array(bits, np.dtype(f"uint{width}"))
        return float(as_int.view(storage_dtype(expressed)))
    return float(text)


def parse_uniform(body: str) -> UniformQuantType:
    """Parse the body of a ``!quant`` type (``.uniform<i8:f32, 0.5:-3>``); ValueError if it is
    not a well-formed uniform quantized type."""
    m = _UNIFORM.match(body)
    if m is None:
        raise ValueError(f"not a uniform quantized type: !quant{body}")
    storage = m["storage"]
    storage_type = IntegerType(int(storage[1:]), "unsigned" if storage[0] == "u" else "signless")
    if m["expressed"] not in FLOAT_TYPES:
        raise ValueError(f"expressed type {m['expressed']} is not a float type")
    expressed = FloatType(m["expressed"])
    params = m["params"].strip()
    items = params[1:-1].split(",") if params.startswith("{") else [params]
    scales, zero_points = [], []
    for item in items:
        p = _PARAM.match(item)
        if p is None:
            raise ValueError(f"bad quantization parameter {item.strip()!r} in !quant{body}")
        scales.append(_scale(p["scale"], expressed))
        zero_points.append(int(p["zp"]) if p["zp"] is not None else 0)
    lo, hi = _int_range(storage_type)
    dim = int(m["dim"]) if m["dim"] is not None else None
    if dim is None and params.startswith("{"):
        raise ValueError(f"per-axis parameters without a quantized dimension: !quant{body}")
    return UniformQuantType(storage_type, expressed, tuple(scales), tuple(zero_points),
                            int(m["min"]) if m["min"] is not None else lo,
                            int(m["max"]) if m["max"] is not None else hi, dim)


@cache
def quant_type(t) -> UniformQuantType | None:
    """The uniform quantized type an element type (or a tensor type's element type) is, or
    None if it is not quantized. Raises ValueError for a malformed ``!quant`` type."""
    if isinstance(t, RankedTensorType):
        t = t.element_type
    if isinstance(t, OpaqueType) and t.dialect == "quant":
        return parse_uniform(t.body)
    return None


def is_quantized(t) -> bool:
    if isinstance(t, RankedTensorType):
        t = t.element_type
    return isinstance(t, OpaqueType) and t.dialect == "quant"


def storage_element_type(t):
    """The storage type of a quantized element type; other element types unchanged."""
    q = quant_type(t)
    return t if q is None else q.storage_type


def storage_tensor_type(t):
    """A tensor type with its quantized element type replaced by the storage type."""
    if isinstance(t, RankedTensorType) and is_quantized(t.element_type):
        return t.replace(element_type=storage_element_type(t.element_type))
    return t


def runtime_type(t):
    """The type a run-time Tensor of IR type ``t`` carries. The interpreter's checks call
    ``dtypes.storage_dtype`` on a result's element type; while that has no entry for quant
    types (it raises KeyError), quantized results carry their storage type instead and
    kernels read quantization parameters from the IR types (``op.operands[i].type``)."""
    if not isinstance(t, RankedTensorType) or not is_quantized(t.element_type):
        return t
    try:
        storage_dtype(t.element_type)
    except KeyError:
        return storage_tensor_type(t)
    return t


# -- quantize / dequantize -------------------------------------------------------------------

def _per_element(values, q: UniformQuantType, rank: int, dtype) -> np.ndarray:
    """Per-tensor parameter as a scalar array, per-axis parameters shaped to broadcast along
    the quantized dimension of a rank-``rank`` tensor (with any batch dimensions in front)."""
    arr = np.asarray(values, dtype=dtype)
    if not q.per_axis:
        return arr.reshape(())
    return arr.reshape((-1,) + (1,) * (rank - 1 - q.quantized_dimension))


def dequantize(data: np.ndarray, q: UniformQuantType, rank: int) -> np.ndarray:
    """Spec ``dequantize``: ``(storage - zero_point) * scale`` in the expressed type. The
    difference is taken exactly (in int64, as the reference lowering does in i32) before
    converting; the product is rounded once in the expressed type."""
    dtype = q.expressed_dtype
    zp = _per_element(q.zero_points, q, rank, np.int64)
    scale = _per_element(q.scales, q, rank, np.float64).astype(dtype)
    diff = np.asarray(data).astype(np.int64) - zp
    return diff.astype(np.float64).astype(dtype) * scale  # exact up to 2^53, rounded once


def quantize(x: np.ndarray, q: UniformQuantType, rank: int) -> np.ndarray:
    """Spec ``quantize``: ``round_nearest_even(clamp(min, x / scale + zero_point, max))`` in
    the expressed type, converted to the storage type. The spec leaves NaN undefined; it
    becomes 0 (clamped into the storage range), as a float-to-int convert of NaN does in XLA."""
    dtype = q.expressed_dtype
    x = np.asarray(x).astype(dtype, copy=False)
    scale = _per_element(q.scales, q, rank, np.float64).astype(dtype)
    zp = _per_element(q.zero_points, q, rank, np.float64).astype(dtype)
    lo, hi = dtype.type(q.storage_min), dtype.type(q.storage_max)
    with np.errstate(all="ignore"):
        scaled = x / scale + zp
        clamped = np.minimum(np.maximum(scaled, lo), hi)
        rounded = np.rint(clamped.astype(np.float64))
    rounded = np.where(np.isnan(rounded), 0.0, rounded)
    rounded = np.clip(rounded, q.storage_min, q.storage_max)  # a range not exact in `dtype`
    return rounded.astype(np.int64).astype(q.storage_dtype)
