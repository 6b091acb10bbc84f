"""NumPy dtypes for MLIR element types (``ml_dtypes`` supplies bf16 and the f8/f4 formats).

Used for ``dense<"0x...">`` hex literals and, later, by the interpreter. Imported lazily:
``import shardy_ref`` must not pay for NumPy.
"""
from __future__ import annotations

from functools import cache


@cache
def numpy_dtype(name: str):
    """The NumPy dtype of an element type name (``f32``, ``bf16``, ``ui8``, ``i1``...)."""
    import numpy as np

    builtin = {
        "f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
        "complex<f32>": np.complex64, "complex<f64>": np.complex128, "index": np.int64,
    }
    if name in builtin:
        return np.dtype(builtin[name])
    for prefix, kind in (("ui", "uint"), ("si", "int"), ("i", "int")):
        width = name[len(prefix):]
        if name.startswith(prefix) and width.isdigit():
            if width in ("8", "16", "32", "64"):
                return np.dtype(f"{kind}{width}")
            if width in ("2", "4"):
                return _ml_dtype(f"{kind}{width}")
            break
    ml_names = {
        "bf16": "bfloat16", "f8E5M2": "float8_e5m2", "f8E4M3": "float8_e4m3",
        "f8E4M3FN": "float8_e4m3fn", "f8E5M2FNUZ": "float8_e5m2fnuz",
        "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E4M3B11FNUZ": "float8_e4m3b11fnuz",
        "f8E3M4": "float8_e3m4", "f8E8M0FNU": "float8_e8m0fnu", "f4E2M1FN": "float4_e2m1fn",
        "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
    }
    if name in ml_names:
        return _ml_dtype(ml_names[name])
    raise KeyError(f"no NumPy dtype for element type {name}")


def _ml_dtype(attr: str):
    import numpy as np
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - ml_dtypes is a declared dependency
        raise KeyError(f"element type needs ml_dtypes ({attr}); pip install ml_dtypes") from e
    return np.dtype(getattr(ml_dtypes, attr))
