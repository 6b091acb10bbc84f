"""What the IR needs to know about each registered op, keyed by upstream op name.

An :class:`OpDef` lists the op's inherent attributes (MLIR properties: printed inside
``<{...}>`` in generic form), its traits, and the names it asks the printer to give its
results and block arguments (MLIR's ``OpAsmOpInterface``). Dialect modules register
their ops with :func:`register`; nothing here depends on a dialect.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    inherent: tuple[str, ...] = ()
    # upstream ODS trait names (``Pure``, ``Elementwise``, ``Terminator``...; StableHLO's
    # ``HLO_`` prefix dropped): every list of ops sharing a property is derived from these
    traits: frozenset[str] = frozenset()
    # the assembly format the op shares with others (``unary``, ``binary``, ``functional``:
    # :mod:`shardy_ref.parser.stablehlo_formats`), or "" (its own, or generic only)
    syntax: str = ""
    # ``MemoryEffects<[...]>`` or ``getEffects``: the effect kinds, or op -> effect kinds
    memory_effects: tuple[str, ...] | Callable | None = field(default=None, compare=False)
    # op -> one name per result ("" = number it), or None for the default numbering
    result_names: Callable | None = field(default=None, compare=False)
    # (op, region index) -> one name per entry block argument, or None
    block_arg_names: Callable | None = field(default=None, compare=False)

    @property
    def isolated_from_above(self) -> bool:
        return "IsolatedFromAbove" in self.traits

    @property
    def terminator(self) -> bool:
        return "Terminator" in self.traits

    @property
    def symbol(self) -> bool:
        return "Symbol" in self.traits


OPS: dict[str, OpDef] = {}
_LOAD_LOCK = threading.RLock()  # threads wait for the dialect modules to finish registering
_loaded = False


def register(name: str, traits: str = "", **kwargs) -> OpDef:
    """Define op ``name``; ``traits`` are space-separated ODS trait names."""
    d = OpDef(name, traits=frozenset(traits.split()), **kwargs)
    OPS[name] = d
    return d


def op_def(name: str) -> OpDef | None:
    """The definition of a registered op, or None for an op of an unknown dialect."""
    if not _loaded:
        _load_dialects()
    return OPS.get(name)


def registered_ops() -> dict[str, OpDef]:
    """Every registered op's definition, by name (all dialects loaded)."""
    if not _loaded:
        _load_dialects()
    return OPS


def ops_with_trait(trait: str, dialect: str | None = None) -> tuple[str, ...]:
    """The names of the registered ops (of ``dialect``, if given) that have ``trait``,
    sorted."""
    return tuple(sorted(name for name, d in registered_ops().items() if trait in d.traits
                        and (dialect is None or name.partition(".")[0] == dialect)))


def is_registered_dialect(dialect: str) -> bool:
    """Whether ops of ``dialect`` parse without ``-allow-unregistered-dialect``."""
    return dialect in DIALECTS


DIALECTS = ("builtin", "func", "sdy", "stablehlo", "chlo", "mhlo", "arith", "tensor", "quant",
            "check", "interpreter")


def _load_dialects() -> None:
    """Import every dialect module once; a thread asking meanwhile waits rather than see
    a half-filled ``OPS``."""
    global _loaded
    with _LOAD_LOCK:
        from shardy_ref.ir import (  # noqa: F401
            dialect_arith,
            dialect_builtin,
            dialect_check,
            dialect_chlo,
            dialect_sdy,
            dialect_stablehlo,
        )
        _loaded = True
