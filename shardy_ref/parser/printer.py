"""``print_module(op)``: IR back to text, character for character as MLIR prints it.

The :class:`Printer` walks ops the way MLIR's ``OperationPrinter`` does: results, then the
op's pretty form (a printer registered by op name, see ``print_*.py``) or the generic
form ``"d.op"(%a) <{props}> ({regions}) {attrs} : (types) -> types``. Regions are printed
with two spaces of indentation per level. The dialect prefix of an op is dropped inside
an op that declares a default dialect (``return`` inside ``func.func``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from shardy_ref.ir.asm_hooks import register_printers
from shardy_ref.ir.builtin_attrs import (
    ELIDE_ELEMENTS_LARGER_THAN,
    Attribute,
    DictionaryAttr,
    format_named_attr,
)
from shardy_ref.ir.gc_pause import collector_paused
from shardy_ref.ir.location import UnknownLoc, debug_location_of
from shardy_ref.ir.module import Module
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, Operation, Region, Value
from shardy_ref.ir.types import format_result_types
from shardy_ref.parser.names import NameState
from shardy_ref.parser.print_locations import LocationPrinter, LocationTable

# op name -> function(printer, op) printing everything after the op name; it returns
# False when the op cannot be printed in its pretty form (the generic form is used).
PRINTERS: dict[str, Callable] = {}
_LOAD_LOCK = threading.RLock()  # threads wait for the printer modules to finish registering
_loaded = False
# op name -> the dialect prefix its regions may omit (MLIR's getDefaultDialect)
DEFAULT_DIALECT = {"func.func": "func"}


def op_printer(*names: str):
    """Register a pretty printer for the given op names."""
    def register(fn):
        for name in names:
            PRINTERS[name] = fn
        return fn
    return register


def _load_printers() -> None:
    """Import every printer module once; a thread printing meanwhile waits rather than
    see a half-filled ``PRINTERS`` (and print ops generic)."""
    global _loaded
    with _LOAD_LOCK:
        from shardy_ref.parser import (  # noqa: F401
            print_builtin,
            print_check,
            print_chlo,
            print_sdy,
            print_stablehlo,
        )
        _loaded = True


class Printer:
    """Accumulates output text; the per-op printers call its helpers."""

    def __init__(self, root: Operation, generic: bool = False, generic_dialects=(),
                 locations: LocationPrinter | None = None):
        if not _loaded:
            _load_printers()
        self.locations = locations  # None: no locations (no --mlir-print-debuginfo)
        self.generic = generic
        self.generic_dialects = frozenset(generic_dialects)  # printed generic (unregistered)
        self.names = NameState(root, generic)
        # (name, id(attribute)) -> (attribute, its text) for this print: parsed modules
        # share one object per repeated attribute text; holding it keeps its id unique
        self.named_texts: dict[tuple[str, int], tuple[Attribute, str]] = {}
        self.attr_texts: dict[int, tuple[Attribute, object, str]] = {}  # see attr_text
        self.parts: list[str] = []
        self.write = self.parts.append  # the hottest call of a print: no method frame
        self.indent = 0
        self.default_dialect = [""]
        self.display_names: dict[tuple[str, str], str] = {}  # see _display_name
        self.params_texts: dict[int, tuple[Attribute, str]] = {}  # see params_text
        self.signatures: dict[tuple, tuple] = {}  # see functional_type
        if locations is None:  # print_op adds nothing: one frame less per op
            self.print_op = self._print_op

    # -- output --------------------------------------------------------------------------
    def write(self, text: str) -> None:
        """Append ``text`` to the output (each Printer binds this to ``parts.append``)."""
        self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)

    # -- values, types, attributes -------------------------------------------------------
    def value(self, v: Value) -> str:
        return self.names.use(v)

    def values(self, vs) -> str:
        return ", ".join(map(self.names.use, vs))

    @staticmethod
    def types(ts) -> str:
        return ", ".join(map(str, ts))

    def functional_type(self, op: Operation) -> str:
        """``(operand types) -> result types``, once per tuple of type objects in this
        print (a parsed module shares one object per repeated type text)."""
        ins, outs = op.operand_types, op.result_types
        key = (*map(id, ins), None, *map(id, outs))
        hit = self.signatures.get(key)
        if hit is None:  # the memo holds the types, so their ids stay theirs
            text = f"({', '.join(map(str, ins))}) -> {format_result_types(outs)}"
            hit = self.signatures[key] = (ins, outs, text)
        return hit[2]

    def attr_dict(self, attrs: dict[str, Attribute], elided=()) -> str:
        """`` {a = 1, b}`` for the attributes not elided (sorted by name), or ``""``."""
        if not attrs:
            return ""
        items = sorted((k, v) for k, v in attrs.items() if k not in elided)
        if not items:
            return ""
        memo = self.named_texts
        out = []
        for k, v in items:
            hit = memo.get((k, id(v)))
            if hit is None or hit[0] is not v:
                hit = memo[k, id(v)] = (v, format_named_attr(k, v))
            out.append(hit[1])
        return " {" + ", ".join(out) + "}"

    def attr_text(self, attr: Attribute) -> str:
        """``str(attr)``, once per attribute object in this print (and elision limit, which
        dense elements print under)."""
        limit = ELIDE_ELEMENTS_LARGER_THAN.get()
        hit = self.attr_texts.get(id(attr))
        if hit is None or hit[0] is not attr or hit[1] != limit:
            hit = self.attr_texts[id(attr)] = (attr, limit, str(attr))
        return hit[2]

    def params_text(self, attr: Attribute) -> str:
        """``attr.params()`` (an sdy attribute's text after its mnemonic), once per attribute
        object in this print."""
        hit = self.params_texts.get(id(attr))
        if hit is None or hit[0] is not attr:
            hit = self.params_texts[id(attr)] = (attr, attr.params())
        return hit[1]

    def op_attr_dict(self, op: Operation, elided=(), defaults: dict | None = None) -> str:
        """The pretty form's attr-dict: attributes the syntax did not print, minus any
        attribute equal to its declared default value (MLIR elides those)."""
        attrs = op.attributes
        if not attrs:
            return ""
        if defaults:
            attrs = {k: v for k, v in attrs.items() if defaults.get(k, _NO_DEFAULT) != v}
        return self.attr_dict(attrs, elided)

    # -- ops -----------------------------------------------------------------------------
    def print_op(self, op: Operation) -> None:
        """The op, with its location when printing them (without, each Printer binds this
        name to ``_print_op``)."""
        if self.locations is None:
            self._print_op(op)
            return
        loc = op_location(op)
        self.locations.start_op(loc)
        self._print_op(op)
        self.write(self.locations.op(loc))

    def _print_op(self, op: Operation) -> None:
        results = op.results
        if results:  # one result: its use text, which numbering records
            text = self.names.use_texts.get(results[0]) if len(results) == 1 else None
            self.write((text or self.names.result_list(op)) + " = ")
        if not self.generic:
            fn = PRINTERS.get(op.name)
            if fn is not None and (not self.generic_dialects
                                   or op.dialect not in self.generic_dialects):
                mark = len(self.parts)
                self.write(self.display_names.get((op.name, self.default_dialect[-1]))
                           or self._display_name(op.name))
                if fn(self, op) is not False:
                    return
                del self.parts[mark:]
        self.print_generic(op)

    def _display_name(self, name: str) -> str:
        """The op name as printed, memoised per (name, default dialect) for this print."""
        key = (name, self.default_dialect[-1])
        text = self.display_names.get(key)
        if text is None:
            text = self.display_names[key] = self._strip_dialect(name)
        return text

    def _strip_dialect(self, name: str) -> str:
        if name.startswith("builtin."):  # builtin ops always print without their prefix
            return name[8:]
        prefix = self.default_dialect[-1]
        if prefix and name.count(".") == 1 and name.startswith(prefix + "."):
            return name[len(prefix) + 1:]
        return name

    def print_generic(self, op: Operation, print_name: bool = True) -> None:
        """The generic form; without the quoted name when a custom printer falls back to it
        after writing the name itself (MLIR ``printGenericOp(op, printOpName=false)``)."""
        from shardy_ref.ir.builtin_attrs import quote_string

        if print_name:
            self.write(quote_string(op.name))
        self.write(f"({self.values(op.operands)})")
        if op.successors:
            self.write("[" + ", ".join(self.names.block(b) for b in op.successors) + "]")
        d = op_def(op.name)
        if d is not None:
            props = {k: v for k, v in op.attributes.items() if k in d.inherent}
            discardable = {k: v for k, v in op.attributes.items() if k not in d.inherent}
            if props:  # MLIR prints no properties when none is set
                self.write(f" <{DictionaryAttr.of(props)}>")
        else:
            discardable = op.attributes
            if op.properties is not None:
                self.write(f" <{op.properties}>")
        self.print_generic_regions(op.regions)
        self.write(self.attr_dict(discardable))
        self.write(" : " + self.functional_type(op))

    # -- regions -------------------------------------------------------------------------
    def print_generic_regions(self, regions) -> None:
        """`` ({...}, {...})`` with entry block headers, as the generic form writes regions."""
        if not regions:
            return
        self.write(" (")
        for i, region in enumerate(regions):
            if i:
                self.write(", ")
            self.print_region(region, print_entry_args=True, print_empty_block=True)
        self.write(")")

    def print_region(self, region: Region, print_entry_args: bool = False,
                     print_terminators: bool = True, print_empty_block: bool = False) -> None:
        """``{``, the blocks, then ``}`` at the current indentation (MLIR ``printRegion``)."""
        self.write("{\n")
        if region.blocks:
            parent = region.parent
            self.default_dialect.append(DEFAULT_DIALECT.get(parent.name, "") if parent else "")
            entry = region.blocks[0]
            header = (print_empty_block and len(entry) == 0) or \
                (print_entry_args and bool(entry.args))
            self._print_block(entry, header, print_terminators)
            for block in region.blocks[1:]:
                self._print_block(block, True, True)
            self.default_dialect.pop()
        self.write(" " * self.indent + "}")

    def argument_location(self, arg) -> str:
        """`` loc(...)`` after a block argument printed with its type, or ``""``."""
        if self.locations is None:
            return ""
        return self.locations.argument(argument_location(arg))

    def argument(self, arg) -> str:
        """``%arg: type`` and, printing debug info, its location."""
        return f"{self.value(arg)}: {arg.type}{self.argument_location(arg)}"

    def _print_block(self, block: Block, header: bool, print_terminator: bool) -> None:
        if header:
            self.write(" " * self.indent + self.names.block(block))
            if block.args:
                self.write("(" + ", ".join(self.argument(a) for a in block.args) + ")")
            self.write(":" + self._predecessor_comment(block) + "\n")
        self.indent += 2
        ops = block.ops
        if not print_terminator and ops and _is_terminator(ops[-1]):
            ops = ops[:-1]
        pad = " " * self.indent
        for op in ops:
            self.write(pad)
            self.print_op(op)
            self.write("\n")
        self.indent -= 2

    def _predecessor_comment(self, block: Block) -> str:
        """MLIR's ``// pred: ^bb0`` / ``// 2 preds: ^bb0, ^bb4`` after a block label."""
        region = block.parent
        preds = [op.parent for op in region.ops() for s in op.successors if s is block]
        if not preds:
            return "" if block.is_entry_block else "  // no predecessors"
        if len(preds) == 1:
            return f"  // pred: {self.names.block(preds[0])}"
        order = {b: i for i, b in enumerate(region.blocks)}
        names = ", ".join(self.names.block(b) for b in sorted(preds, key=order.__getitem__))
        return f"  // {len(preds)} preds: {names}"

    def region_arguments(self, region: Region) -> str:
        """``(%arg1: T, %arg2: T)`` for ops that print their entry block arguments inline."""
        args = region.blocks[0].args if region.blocks else []
        return "(" + ", ".join(self.argument(a) for a in args) + ")"


_NO_DEFAULT = object()


def _is_terminator(op: Operation) -> bool:
    d = op_def(op.name)
    return d is not None and d.terminator


def op_location(op: Operation):
    """The location MLIR keeps for ``op``: its ``loc(...)``, else where it was written."""
    return op.debug_location or debug_location_of(op.location)


def argument_location(arg):
    """A block argument's location; one a pass created takes its op's."""
    if arg.debug_location is not None:
        return arg.debug_location
    owner = arg.owner_op
    return op_location(owner) if owner is not None else UnknownLoc()


def print_module(module: Operation | Module, generic: bool = False, generic_dialects=(),
                 debug_info: bool = False, local_scope: bool = False,
                 elide_elements_larger_than: int | None = None) -> str:
    """The text MLIR prints for a top-level op (normally ``builtin.module``, or the op of a
    :class:`~shardy_ref.ir.Module`), with newline;
    ops of ``generic_dialects`` (dialects the tool does not register) print generic.
    ``debug_info`` adds locations (``--mlir-print-debuginfo``); ``local_scope`` writes them
    inline instead of as ``#loc`` aliases (``--mlir-print-local-scope``);
    ``elide_elements_larger_than`` is ``--mlir-elide-elementsattrs-if-larger``. The cyclic
    GC is paused meanwhile: the printer's objects are not garbage until it returns, and
    collections over them cost ~5% of printing a 120k-op module (``benchmarks/scale.py``)."""
    if isinstance(module, Module):
        module = module.op
    token = ELIDE_ELEMENTS_LARGER_THAN.set(elide_elements_larger_than)
    try:
        with collector_paused(promote=False):  # what it allocated is garbage once it returns
            return _print_module(module, generic, generic_dialects, debug_info, local_scope)
    finally:
        ELIDE_ELEMENTS_LARGER_THAN.reset(token)


def _print_module(module, generic, generic_dialects, debug_info, local_scope) -> str:
    if not debug_info:
        p = Printer(module, generic, generic_dialects)
        p.print_op(module)
        return p.text() + "\n"
    if local_scope:
        p = Printer(module, generic, generic_dialects, LocationPrinter(None))
        p.print_op(module)
        return p.text() + "\n"
    table = LocationTable()
    Printer(module, generic, generic_dialects, LocationPrinter(table)).print_op(module)
    table.freeze()
    p = Printer(module, generic, generic_dialects, LocationPrinter(table))
    p.print_op(module)
    return table.definitions(deferred=False) + p.text() + "\n" + table.definitions(deferred=True)


def _generic_op_text(root: Operation, op: Operation) -> str:
    printer = Printer(root, generic=True)
    printer.print_op(op)
    return printer.text()


register_printers(module=print_module, generic_op=_generic_op_text)
