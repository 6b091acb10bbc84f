"""Seeded random arguments of given types, for ``shardy-ref run``/``check`` without
``--inputs`` and for tests: floats standard normal, integers small and non-negative (so they
are also valid indices of small dimensions), booleans fair coins."""
from __future__ import annotations

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.ir.types import ComplexType, FloatType, RankedTensorType


def random_argument(type_, rng: np.random.Generator):
    """One random array of ``type_`` (None for a token)."""
    if not isinstance(type_, RankedTensorType):
        return None
    shape = tuple(type_.shape)
    dtype = storage_dtype(type_.element_type)
    et = type_.element_type
    if isinstance(et, FloatType):
        return rng.standard_normal(shape).astype(dtype)
    if isinstance(et, ComplexType):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 4, shape).astype(dtype)


def random_arguments(types, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [random_argument(t, rng) for t in types]
