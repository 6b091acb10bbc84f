"""How the IR prints itself without depending on the text format: the parser package
registers its printer here when imported, as MLIR dialects register their op printers with
the IR library (``OpAsmOpInterface``), so ``ir`` never imports ``parser``. Anything that
holds IR has imported the parser already (text in), or imports it to print (text out)."""
from __future__ import annotations

from collections.abc import Callable

_module_printer: Callable | None = None
_generic_op_printer: Callable | None = None


def register_printers(module: Callable, generic_op: Callable) -> None:
    """``module(op) -> str`` prints a ``builtin.module``; ``generic_op(root, op) -> str``
    prints ``op`` in the generic form with values numbered from ``root``."""
    global _module_printer, _generic_op_printer
    _module_printer, _generic_op_printer = module, generic_op


def module_text(op) -> str:
    """``op`` (a ``builtin.module``) as MLIR text."""
    if _module_printer is None:
        raise RuntimeError("printing MLIR text needs the printer: import shardy_ref.parser")
    return _module_printer(op)


def generic_op_text(root, op) -> str | None:
    """``op`` in the generic form, values numbered from ``root``; None before the printer
    is registered (a verifier message then names the op without printing it)."""
    return None if _generic_op_printer is None else _generic_op_printer(root, op)
