"""SSA value and block names as MLIR's printer assigns them (``SSANameState`` in AsmPrinter).

Values of a region are numbered before any nested region; each nested region starts from
the counters its parent region reached, so sibling regions restart from the same numbers
(every function starts at ``%0``/``%arg0``). Ops may ask for names (``%c``, ``%cst``,
``%iterArg``); a name already used in an enclosing scope gets a ``_N`` suffix from a
conflict counter that is saved and restored like the others. In generic form MLIR prints
unique IDs instead: the counters run on across the whole module, in the order regions
come off the naming stack (last pushed first), and ops name nothing.
"""
from __future__ import annotations

import itertools
import re

from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, Operation, Region, Value


class NameState:
    """The printed name of every value and block under ``root``."""

    def __init__(self, root: Operation, generic: bool = False):
        self.generic = generic
        self.value_ids: dict[Value, str] = {}  # head value of a group -> "0" / "arg0" / "c_1"
        self.result_groups: dict[Operation, list[int]] = {}  # op -> sorted group starts
        self.block_names: dict[Block, str] = {}
        self.next_value = 0
        self.next_arg = 0
        self.next_conflict = 0
        self.result_namers: dict[str, object] = {}  # op name -> its result_names, see below
        self.use_texts: dict[Value, str] = {}  # value -> its use text, see use
        self._number(root)

    # -- numbering -----------------------------------------------------------------------
    def _number(self, root: Operation) -> None:
        """Regions come off a stack (MLIR's order); the names in use are one dict: a
        region's names are added as it is numbered and removed once every region nested
        in it is done (a list on the stack marks that point), so a region sees exactly
        the names of its enclosing regions, in time independent of its depth."""
        stack: list = [(r, 0, 0, 0) for r in root.regions]
        self.used: dict[str, bool] = {}
        self._added: list[str] = []
        self._number_ops([root], [])
        while stack:
            entry = stack.pop()
            if isinstance(entry, list):
                for name in entry:
                    del self.used[name]
                continue
            region, value_id, arg_id, conflict_id = entry
            if not self.generic:
                self.next_value, self.next_arg, self.next_conflict = value_id, arg_id, conflict_id
            self._added = []
            nested = self._number_region(region)
            stack.append(self._added)
            counters = (self.next_value, self.next_arg, self.next_conflict)
            stack.extend((r, *counters) for r in nested)

    def _number_region(self, region: Region) -> list[Region]:
        """Names the region's block arguments and results; returns the regions of its ops,
        in order (numbered later, from the counters the region ends with)."""
        parent = region.parent
        if not self.generic and parent is not None and region.blocks:
            self._name_entry_args(parent, region)
        nested: list[Region] = []
        for i, block in enumerate(region.blocks):
            self.block_names[block] = f"bb{i}"
            entry = i == 0
            for arg in block.args:
                if arg in self.value_ids:
                    continue
                if entry:
                    self._set_name(arg, f"arg{self.next_arg}")
                    self.next_arg += 1
                else:
                    self._set_name(arg, "")
            self._number_ops(block, nested)
        return nested

    def _name_entry_args(self, parent: Operation, region: Region) -> None:
        """The entry block argument names the region's op asks for (``%iterArg``)."""
        d = op_def(parent.name)
        if d is not None and d.block_arg_names is not None:
            index = next(i for i, r in enumerate(parent.regions) if r is region)
            names = d.block_arg_names(parent, index)
            if names:
                for arg, name in zip(region.blocks[0].args, names):
                    self._set_name(arg, name)

    def _number_ops(self, ops, nested: list[Region]) -> None:
        """Names the results of ``ops`` (those the op asks for, then the first result if
        still unnamed) and adds their regions to ``nested``. A single result's use text is
        recorded here: every op prints its results, most ops have one."""
        value_ids, use_texts, namers = self.value_ids, self.use_texts, self.result_namers
        for op in ops:
            if not self.generic:
                namer = namers.get(op.name, _UNKNOWN)
                if namer is _UNKNOWN:
                    namer = self._result_namer(op.name)
                if namer is not None:
                    self._name_results(op, namer(op))
            results = op.results
            if results:
                first = results[0]
                ident = value_ids.get(first)
                if ident is None:
                    ident = value_ids[first] = str(self.next_value)
                    self.next_value += 1
                if len(results) == 1:
                    use_texts[first] = "%" + ident
            if op.regions:
                nested += op.regions

    def _result_namer(self, name: str):
        """The op definition's ``result_names`` (or None), looked up once per op name."""
        d = op_def(name)
        namer = self.result_namers[name] = d.result_names if d is not None else None
        return namer

    def _name_results(self, op: Operation, names) -> None:
        """The names an op asks for; a named result other than the first starts a group."""
        if not names:
            return
        groups = [0]
        for r, name in zip(op.results, names):
            if name:
                self._set_name(r, name)
                if r.index:
                    groups.append(r.index)
        if len(groups) != 1:
            self.result_groups[op] = sorted(groups)

    def _set_name(self, value: Value, name: str) -> None:
        if not name:
            self.value_ids[value] = str(self.next_value)
            self.next_value += 1
            return
        name = sanitize_identifier(name)
        if name in self.used:
            while True:
                probe = f"{name}_{self.next_conflict}"
                self.next_conflict += 1
                if probe not in self.used:
                    name = probe
                    break
        self.used[name] = True
        self._added.append(name)
        self.value_ids[value] = name

    # -- lookups -------------------------------------------------------------------------
    def use(self, value: Value) -> str:
        """``%name`` or ``%name#k`` as a use of ``value``, worked out once per value (the
        names are all assigned before anything prints). An unnamed value is not recorded:
        the printer takes a recorded text as the value's result list too."""
        text = self.use_texts.get(value)
        if text is None:
            text = self._use_text(value)
            if text != UNKNOWN_VALUE:
                self.use_texts[value] = text
        return text

    def _use_text(self, value: Value) -> str:
        head, number = self._head(value)
        ident = self.value_ids.get(head)
        if ident is None:
            return UNKNOWN_VALUE
        return f"%{ident}#{number}" if number is not None else f"%{ident}"

    def _head(self, value: Value):
        op = getattr(value, "op", None)
        if op is None or len(op.results) == 1:
            return value, None
        n = value.index
        groups = self.result_groups.get(op)
        if groups is None:
            return op.results[0], n
        start = max(g for g in groups if g <= n)
        later = [g for g in groups if g > n]
        size = (later[0] if later else len(op.results)) - start
        return op.results[start], (n - start if size != 1 else None)

    def result_list(self, op: Operation) -> str:
        """The ``%0:2`` / ``%output_state, %output`` text before `` = ``."""
        groups = self.result_groups.get(op, [0])
        bounds = [*groups, len(op.results)]
        parts = []
        for start, end in itertools.pairwise(bounds):
            ident = self.value_ids.get(op.results[start], "<<UNKNOWN SSA VALUE>>")
            parts.append(f"%{ident}" + (f":{end - start}" if end - start > 1 else ""))
        return ", ".join(parts)

    def block(self, block: Block) -> str:
        return "^" + self.block_names.get(block, "INVALIDBLOCK")


UNKNOWN_VALUE = "<<UNKNOWN SSA VALUE>>"  # MLIR's text for a value it did not number
_UNKNOWN = object()  # an op name not yet in NameState.result_namers
_PUNCT = set("$._-")
_PLAIN = re.compile(r"[a-zA-Z$._-][a-zA-Z0-9$._-]*")  # names sanitizing leaves as they are


def sanitize_identifier(name: str) -> str:
    """MLIR ``sanitizeIdentifier``: invalid characters become hex, spaces ``_``;
    a leading digit gets a ``_`` prefix so names never look like numbered values."""
    if _PLAIN.fullmatch(name):
        return name
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch in _PUNCT):
            out.append(ch)
        elif ch == " ":
            out.append("_")
        else:
            out.append("".join(f"{b:X}" for b in ch.encode("utf-8")))
    text = "".join(out)
    return "_" + text if name[:1].isdigit() else text
