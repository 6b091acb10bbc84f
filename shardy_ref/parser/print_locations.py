"""Locations in printed IR (``--mlir-print-debuginfo``), with MLIR's ``#loc`` aliases.

MLIR's printer first runs itself "dry" to collect the attributes it will print, in print
order (an op's location before its regions, since ``AliasInitializer`` visits it first),
then names every location ``#loc``, ``#loc1``, ...: sorted by nesting depth (a location
whose parts are aliases comes after them), then by first use. Aliases used only by ops are
printed after the module; those reached from a block argument (printed inline, with its
parts as aliases) before it. ``--mlir-print-local-scope`` prints every location inline.
See ``mlir/lib/IR/AsmPrinter.cpp`` (``AliasInitializer``) in llvm-project.
"""
from __future__ import annotations

from shardy_ref.ir.location import inline_location


class LocationTable:
    """Collects locations in a dry run (``visit``), then names them (``freeze``)."""

    def __init__(self):
        self.order: dict[object, int] = {}  # location -> first-visit index
        self.depth: dict[object, int] = {}
        self.deferrable: dict[object, bool] = {}
        self.names: dict[object, str] | None = None

    def visit(self, loc, deferrable: bool) -> int:
        """Record ``loc`` and its parts; returns its nesting depth."""
        if loc in self.order:
            if not deferrable:
                self._pin(loc)
            return self.depth[loc]
        self.order[loc] = len(self.order)
        self.deferrable[loc] = deferrable
        depth = 0
        for child in loc.children():
            depth = max(depth, self.visit(child, deferrable) + 1)
        self.depth[loc] = depth
        return depth

    def _pin(self, loc) -> None:
        """An alias printed before the module: so must be the aliases it refers to."""
        self.deferrable[loc] = False
        for child in loc.children():
            self._pin(child)

    def freeze(self) -> None:
        ranked = sorted(self.order, key=lambda loc: (self.depth[loc], self.order[loc]))
        self.names = {loc: f"#loc{i or ''}" for i, loc in enumerate(ranked)}

    def alias(self, loc) -> str:
        return self.names[loc]

    def definitions(self, deferred: bool) -> str:
        """``#locN = loc(...)`` lines for the aliases printed before (or after) the module."""
        lines = [f"{name} = loc({loc.format(self.alias)})"
                 for loc, name in sorted(self.names.items(), key=lambda kv: _number(kv[1]))
                 if self.deferrable[loc] == deferred]
        return "".join(line + "\n" for line in lines)


def _number(name: str) -> int:
    return int(name[4:] or 0)


class LocationPrinter:
    """How a ``Printer`` writes locations: recording (dry run), aliased, or inline."""

    def __init__(self, table: LocationTable | None):
        self.table = table  # None: --mlir-print-local-scope, every location inline

    def start_op(self, loc) -> None:
        """Called before an op prints: the dry run records its location first."""
        if self.table is not None and self.table.names is None:
            self.table.visit(loc, deferrable=True)

    def op(self, loc) -> str:
        """`` loc(...)`` written after an op (nothing in the dry run)."""
        table = self.table
        if table is None:
            return f" loc({inline_location(loc)})"
        if table.names is None:
            return ""
        return f" loc({table.alias(loc)})"

    def argument(self, loc) -> str:
        table = self.table
        if table is None:
            return f" loc({inline_location(loc)})"
        if table.names is None:
            table.visit(loc, deferrable=False)
            return ""
        return f" loc({loc.format(table.alias)})"
