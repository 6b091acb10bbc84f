"""Argument and result attributes of a ``func.func``, read and written as MLIR's
``FunctionOpInterface`` does (``getArgAttr``/``setArgAttr``/``setResultAttr``).

They live in the inherent ``arg_attrs``/``res_attrs`` attributes: an array with one
dictionary per argument (result). MLIR drops the whole array once every dictionary in it
is empty, so the printer never shows ``{}`` placeholders that no input had.
"""
from __future__ import annotations

from shardy_ref.ir.builtin_attrs import ArrayAttr, Attribute, DictionaryAttr, TypeAttr
from shardy_ref.ir.operation import Operation
from shardy_ref.ir.types import FunctionType

_ARRAY = {"arg": "arg_attrs", "result": "res_attrs"}


def function_type(func: Operation) -> FunctionType:
    return func.attributes["function_type"].value


def set_function_type(func: Operation, ftype: FunctionType) -> None:
    func.attributes["function_type"] = TypeAttr(ftype)


def _count(func: Operation, kind: str) -> int:
    ftype = function_type(func)
    return len(ftype.inputs if kind == "arg" else ftype.results)


def attr_dicts(func: Operation, kind: str) -> list[dict[str, Attribute]]:
    """One dict per argument (``kind="arg"``) or result (``kind="result"``)."""
    n = _count(func, kind)
    array = func.attributes.get(_ARRAY[kind])
    dicts = [d.as_dict() if isinstance(d, DictionaryAttr) else {}
             for d in (array.value if isinstance(array, ArrayAttr) else ())]
    return (dicts + [{} for _ in range(n)])[:n]


def set_attr_dicts(func: Operation, kind: str, dicts: list[dict[str, Attribute]]) -> None:
    """Store the dicts; remove the array when all are empty (as MLIR does)."""
    if any(dicts):
        func.attributes[_ARRAY[kind]] = ArrayAttr(tuple(DictionaryAttr.of(d) for d in dicts))
    else:
        func.attributes.pop(_ARRAY[kind], None)


def _entry(func: Operation, kind: str, index: int) -> DictionaryAttr | None:
    """The dictionary of one argument/result, without building the others."""
    array = func.attributes.get(_ARRAY[kind])
    if isinstance(array, ArrayAttr) and index < len(array.value):
        entry = array.value[index]
        return entry if isinstance(entry, DictionaryAttr) else None
    return None


def get_arg_attr(func: Operation, index: int, name: str):
    entry = _entry(func, "arg", index)
    return entry.as_dict().get(name) if entry is not None else None


def get_result_attr(func: Operation, index: int, name: str):
    entry = _entry(func, "result", index)
    return entry.as_dict().get(name) if entry is not None else None


def set_arg_attr(func: Operation, index: int, name: str, value: Attribute | None) -> None:
    """Set (or with None remove) attribute ``name`` of argument ``index``."""
    _set(func, "arg", index, name, value)


def set_result_attr(func: Operation, index: int, name: str, value: Attribute | None) -> None:
    _set(func, "result", index, name, value)


def _set(func: Operation, kind: str, index: int, name: str, value) -> None:
    set_attrs(func, kind, name, {index: value})


def set_attrs(func: Operation, kind: str, name: str, values: dict) -> None:
    """Set (None: remove) attribute ``name`` of several arguments (``kind="arg"``) or
    results at once: ``values`` maps index to value. Only those entries are rebuilt."""
    n = _count(func, kind)
    array = func.attributes.get(_ARRAY[kind])
    entries = list(array.value) if isinstance(array, ArrayAttr) else []
    entries = (entries + [DictionaryAttr(()) for _ in range(n)])[:n]
    for index, value in values.items():
        entry = entries[index]
        current = entry.as_dict() if isinstance(entry, DictionaryAttr) else {}
        if value is None:
            current.pop(name, None)
        else:
            current[name] = value
        entries[index] = DictionaryAttr.of(current)
    if any(isinstance(e, DictionaryAttr) and e.value for e in entries):
        func.attributes[_ARRAY[kind]] = ArrayAttr(tuple(entries))
    else:
        func.attributes.pop(_ARRAY[kind], None)
