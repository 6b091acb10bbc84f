"""``Module``: a view of a ``builtin.module`` op with its symbol table.

The module is an ordinary :class:`Operation` (as in MLIR); this wrapper adds what passes
reach for all the time: its body block, symbol lookup (functions, meshes), and printing.
"""
from __future__ import annotations

from shardy_ref.ir.asm_hooks import module_text
from shardy_ref.ir.operation import Block, Operation
from shardy_ref.ir.symbols import SymbolTable


class Module:
    """A ``builtin.module`` op and a lazily built, explicitly invalidated symbol table."""

    __slots__ = ("_table", "op")

    def __init__(self, op: Operation):
        if op.name != "builtin.module":
            raise ValueError(f"expected a builtin.module, got '{op.name}'")
        self.op = op
        self._table: SymbolTable | None = None

    @property
    def body(self) -> Block:
        return self.op.regions[0].blocks[0]

    @property
    def symbol_table(self) -> SymbolTable:
        if self._table is None:
            self._table = SymbolTable(self.op)
        return self._table

    def invalidate_symbols(self) -> None:
        """Call after adding, removing or renaming symbols."""
        self._table = None

    def lookup(self, name: str) -> Operation | None:
        return self.symbol_table.lookup(name)

    def ops_named(self, name: str) -> list[Operation]:
        return [op for op in self.body if op.name == name]

    @property
    def funcs(self) -> list[Operation]:
        return self.ops_named("func.func")

    def mesh(self, name: str):
        """The ``Mesh`` attribute of the ``sdy.mesh`` op named ``name``, or None."""
        op = self.lookup(name)
        return op.attributes.get("mesh") if op is not None and op.name == "sdy.mesh" else None

    def walk(self):
        return self.op.walk()

    def __str__(self) -> str:
        return module_text(self.op)
