"""``lazy_module("a.b")``: a module proxy that imports on first attribute access.

Keeps ``shardy-ref-opt`` start-up small: modules only some inputs need (the StableHLO
attribute parser, say) load when first used.
"""
from __future__ import annotations

import importlib


class _LazyModule:
    __slots__ = ("_module", "_name")

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


def lazy_module(name: str):
    return _LazyModule(name)
