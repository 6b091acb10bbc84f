"""``interpreter.probe`` files: each probed tensor is written as ``probe<N>.npy`` in the probe
directory, and a line ``probe_id,type,path`` is appended to its ``index.csv``
(``stablehlo/reference/InterpreterOps.cpp``, ``evalProbeOp``). The index starts afresh with
each run; ``check.expect_serialized_eq ... iter = i`` reads line ``i`` of it, which must
name its probe id (CheckOps.cpp, ``getSerializedTensorMetadata``)."""
from __future__ import annotations

import os

import numpy as np

from shardy_ref.execute.dtypes import storage_dtype
from shardy_ref.execute.errors import InterpreterError
from shardy_ref.execute.values import Tensor

INDEX = "index.csv"


def _file_dtype(dtype: np.dtype) -> np.dtype:
    """Standard NumPy dtypes are written as they are; ml_dtypes ones as unsigned bits."""
    if dtype.kind in "biufc" and dtype.itemsize in (1, 2, 4, 8, 16) and \
            np.dtype(dtype.str) == dtype:
        return dtype
    return np.dtype(f"u{dtype.itemsize}")


def write_probe(interp, probe_id: str, value: Tensor) -> None:
    directory = interp.probe_dir
    if not directory:
        raise InterpreterError(None, "Probe serialization directory cannot be empty.")
    with interp.lock:
        interp.probe_count += 1
        path = os.path.join(directory, f"probe{interp.probe_count}.npy")
        data = value.data
        np.save(path, np.array(data, order="C").view(_file_dtype(data.dtype)))
        mode = "a" if interp.probe_count > 1 else "w"
        with open(os.path.join(directory, INDEX), mode, encoding="utf-8") as f:
            f.write(f"{probe_id},{value.type},{path}\n")


def read_probe(directory: str | None, probe_id: str, iteration: int, type_) -> Tensor:
    if not directory:
        raise InterpreterError(None, f"Failed to find serialized data for probe {probe_id}.")
    try:
        with open(os.path.join(directory, INDEX), encoding="utf-8") as f:
            lines = f.read().split()
    except OSError as e:
        raise InterpreterError(None, f"Failed to find serialized data for probe {probe_id}: "
                               f"{e.strerror}.") from e
    if iteration >= len(lines) or probe_id not in lines[iteration]:
        raise InterpreterError(None, f"Failed to find serialized data for probe {probe_id}.")
    fields = lines[iteration].split(",", 2)
    if len(fields) != 3:
        raise InterpreterError(None, f"Failed to find serialized data for probe {probe_id}.")
    _, stored_type, path = fields
    if stored_type != str(type_):
        raise InterpreterError(None, f"Serialized types don't match: {type_} (actual) vs "
                               f"{stored_type} (expected) for probe {probe_id}.")
    dtype = storage_dtype(type_.element_type)
    try:
        raw = np.load(path)
    except (OSError, ValueError) as e:
        raise InterpreterError(None, f"Failed to verify serialized tensor {probe_id}.") from e
    if raw.shape != tuple(type_.shape):
        raise InterpreterError(None, f"Failed to verify serialized tensor {probe_id}.")
    return Tensor(type_, raw.view(dtype), 0)
