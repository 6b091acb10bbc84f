"""Run-time values: tensors (uniform or varying over a batch of processes), tokens, tuples.

Like ``jax.vmap``'s batched values, a :class:`Tensor` is either *uniform* (``batch == 0``:
one array of the tensor's own shape, the same for every process) or *varying* (``batch ==
k``: an array of shape ``batch_shape + shape`` whose ``k`` leading dimensions index the
processes, or, inside a region a kernel runs elementwise, processes and elements). So one
pass of the interpreter runs every process at once, and replicated data is stored once.
The batch shape belongs to the :class:`~shardy_ref.execute.context.Context` a value lives in.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.types import ComplexType, FloatType, IntegerType, RankedTensorType, Type


@dataclass(frozen=True, slots=True, eq=False)
class Tensor:
    """A tensor value: ``data.shape == batch_shape[:batch] + type.shape`` and ``data.dtype ==
    storage_dtype(type.element_type)`` (``batch`` is 0 for a uniform value)."""

    type: RankedTensorType
    data: np.ndarray
    batch: int = 0

    @property
    def varying(self) -> bool:
        return self.batch > 0

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def element_type(self) -> Type:
        return self.type.element_type

    def at(self, index: tuple[int, ...]) -> Tensor:
        """The uniform value one process (batch index ``index``) sees."""
        if not self.batch:
            return self
        return Tensor(self.type, self.data[index], 0)

    def __repr__(self) -> str:
        kind = f"varying[{self.batch}]" if self.batch else "uniform"
        return f"Tensor({self.type}, {kind}, {self.data!r})"


@dataclass(frozen=True, slots=True, eq=False)
class Token:
    """A ``!stablehlo.token``: carries no data, only orders side effects."""

    batch: int = 0

    @property
    def varying(self) -> bool:
        return False

    def at(self, index) -> Token:
        return self


@dataclass(frozen=True, slots=True, eq=False)
class TupleValue:
    """A ``tuple<...>`` value: its elements are run-time values."""

    elements: tuple

    @property
    def varying(self) -> bool:
        return any(e.varying for e in self.elements)

    @property
    def batch(self) -> int:
        return max((e.batch for e in self.elements), default=0)

    def at(self, index) -> TupleValue:
        return TupleValue(tuple(e.at(index) for e in self.elements))


RuntimeValue = Tensor | Token | TupleValue


def tensor(type_: RankedTensorType, data, batch: int = 0) -> Tensor:
    """A Tensor with ``data`` converted to the type's storage dtype (no copy if it has it)."""
    dtype = storage_dtype(type_.element_type)
    return Tensor(type_, np.asarray(data).astype(dtype, copy=False), batch)


def from_dense(attr) -> Tensor:
    """The uniform tensor of a ``DenseElementsAttr``."""
    t = attr.type
    et = t.element_type
    dtype = storage_dtype(et)
    if attr.is_splat:  # one element, broadcast (read-only, stride 0: as cheap as a scalar)
        data = np.broadcast_to(_scalar_array(attr.values[:1], et, dtype).reshape(()), t.shape)
    else:
        data = _scalar_array(attr.values, et, dtype).reshape(t.shape)
    return Tensor(t, data, 0)


def _scalar_array(values, et: Type, dtype: np.dtype) -> np.ndarray:
    if isinstance(et, FloatType):
        return np.array(values, dtype=np.float64).astype(dtype)
    if isinstance(et, ComplexType):
        wide = np.complex128
        return np.array(values, dtype=wide).astype(dtype)
    if dtype.kind in "iub" or isinstance(et, IntegerType):
        return np.array(values, dtype=object).astype(dtype) if values else np.zeros(0, dtype)
    return np.array(values, dtype=dtype)


def to_dense(value: Tensor):
    """A uniform tensor as a ``DenseElementsAttr`` (for printing results)."""
    from shardy_ref.ir.builtin_attrs import DenseElementsAttr

    if value.batch:
        raise ValueError("a varying tensor has one value per process")
    et = value.element_type
    flat = value.data.reshape(-1)
    if isinstance(et, FloatType):
        items = [float(v) for v in flat.astype(np.float64)]
    elif isinstance(et, ComplexType):
        items = [complex(v) for v in flat.astype(np.complex128)]
    elif isinstance(et, IntegerType) and et.width == 1:
        items = [bool(v) for v in flat]
    else:
        items = [int(v) for v in flat.astype(object)]
    return DenseElementsAttr.from_values(value.type, items)
