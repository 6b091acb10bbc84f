"""The mutable IR graph: values with use lists, operations, blocks and regions.

This mirrors MLIR's core data structures (https://mlir.llvm.org/docs/LangRef/): one
generic :class:`Operation` (name, operands, results, attributes, regions) serves every
dialect; what an op *means* lives in registries keyed by its name. Ops compare by
identity. Use lists stay consistent under ``set_operand``, ``replace_all_uses_with`` and
``erase``; a value's ``uses`` are listed most-recent first, the order MLIR iterates them.

Every change made through this API is counted (:mod:`shardy_ref.ir.change_count`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from shardy_ref.ir.change_count import CONTENT, STRUCTURE, Attributes, touch_users
from shardy_ref.ir.location import UNKNOWN_LOC, Location

if TYPE_CHECKING:
    from shardy_ref.ir.builtin_attrs import Attribute
    from shardy_ref.ir.types import Type


class IRError(Exception):
    """Misuse of the IR API (erasing a value that still has uses, ...): a bug, not bad input."""


class Value:
    """An SSA value: an op result or a block argument."""

    __slots__ = ("_type", "_uses")

    def __init__(self, type: Type):
        self._type = type
        self._uses: dict[OpOperand, None] = {}

    @property
    def uses(self) -> list[OpOperand]:
        """The operands using this value, most recently added first (MLIR's use-list order)."""
        return list(reversed(self._uses))

    @property
    def users(self) -> list[Operation]:
        """The ops using this value, in use-list order, without duplicates."""
        return list(dict.fromkeys(u.owner for u in reversed(self._uses)))

    @property
    def has_uses(self) -> bool:
        return bool(self._uses)

    @property
    def has_one_use(self) -> bool:
        return len(self._uses) == 1

    def replace_all_uses_with(self, other: Value) -> None:
        """Move every use to ``other`` as MLIR does: most recent use first, each becoming
        the most recent use of ``other``, so the moved uses end up in reverse order."""
        if other is self:
            return
        for use in self.uses:
            use.set(other)

    def replace_uses_with_if(self, other: Value, predicate) -> None:
        for use in self.uses:
            if predicate(use):
                use.set(other)

    @property
    def parent_block(self) -> Block | None:
        raise NotImplementedError

    @property
    def defining_op(self) -> Operation | None:
        return None


def _set_type(value: Value, type: Type) -> None:
    CONTENT[0] += 1
    value._type = type
    if isinstance(value, OpResult):
        value.op._stamp += 1
    touch_users(value)


# read through the slot's own C getter: a read costs about what a plain slot's does
Value.type = property(Value._type.__get__, _set_type, doc="The value's type; setting it counts "
                      "as a change of the IR.")


class OpResult(Value):
    """Result number ``index`` of ``op``."""

    __slots__ = ("index", "op")

    def __init__(self, type: Type, op: Operation, index: int):
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def defining_op(self) -> Operation:
        return self.op

    @property
    def parent_block(self) -> Block | None:
        return self.op.parent

    def __repr__(self) -> str:
        return f"<OpResult #{self.index} of {self.op.name}: {self.type}>"


class BlockArgument(Value):
    """Argument number ``index`` of ``block``."""

    __slots__ = ("block", "debug_location", "index")

    def __init__(self, type: Type, block: Block, index: int):
        super().__init__(type)
        self.block = block
        self.index = index
        self.debug_location = None  # an explicit ``loc(...)``; see Operation.debug_location

    @property
    def parent_block(self) -> Block:
        return self.block

    @property
    def owner_op(self) -> Operation | None:
        """The op whose region holds this argument's block."""
        region = self.block.parent
        return region.parent if region is not None else None

    def __repr__(self) -> str:
        return f"<BlockArgument #{self.index}: {self.type}>"


class OpOperand:
    """Operand slot ``index`` of ``owner``; setting its value moves it between use lists."""

    __slots__ = ("index", "owner", "value")

    def __init__(self, owner: Operation, index: int, value: Value):
        self.owner = owner
        self.index = index
        self.value = value
        value._uses[self] = None

    def set(self, value: Value) -> None:
        STRUCTURE[0] += 1
        self.owner._stamp += 1
        del self.value._uses[self]
        self.value = value
        value._uses[self] = None

    def drop(self) -> None:
        STRUCTURE[0] += 1
        self.owner._stamp += 1
        self.value._uses.pop(self, None)


class Operation:
    """A generic operation; ``attributes`` holds inherent and discardable attributes alike.

    ``properties`` is used only by ops of unregistered dialects that were written with a
    ``<{...}>`` properties dictionary; registered ops keep everything in ``attributes`` and
    the op's definition (``shardy_ref.ir.opdefs``) says which names are inherent.
    """

    __slots__ = (
        "__weakref__",
        "_dstamp",
        "_next",
        "_operands",
        "_prev",
        "_stamp",
        "attributes",
        "debug_location",
        "location",
        "name",
        "parent",
        "properties",
        "regions",
        "results",
        "successors",
    )

    def __init__(self, name: str, operands: Iterable[Value] = (),
                 result_types: Iterable[Type] = (),
                 attributes: dict[str, Attribute] | None = None,
                 regions: Iterable[Region] = (), successors: Iterable[Block] = (),
                 location: Location = UNKNOWN_LOC, properties: Attribute | None = None):
        self.name = name
        self._operands = [OpOperand(self, i, v) for i, v in enumerate(operands)]
        self.results = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, Attribute] = Attributes(attributes or ())
        self.attributes._owner = self
        # moved by every change of what this op's own checks read (change_count.touch),
        # but for its discardable attributes, which move _dstamp (change_count.Attributes)
        self._stamp = 0
        self._dstamp = 0
        self.properties = properties
        self.regions: list[Region] = []
        for r in regions:
            self.add_region(r)
        self.successors: list[Block] = list(successors)
        self.parent: Block | None = None
        self._prev: Operation | None = None
        self._next: Operation | None = None
        self.location = location
        # The location attribute MLIR would print with --mlir-print-debuginfo (a
        # shardy_ref.ir.location debug location), or None: the position in ``location``.
        self.debug_location = None

    # -- operands and results ------------------------------------------------------------
    @property
    def operands(self) -> tuple[Value, ...]:
        return tuple([o.value for o in self._operands])  # a list is built faster than a generator

    @property
    def op_operands(self) -> list[OpOperand]:
        return list(self._operands)

    def operand(self, i: int) -> Value:
        return self._operands[i].value

    @property
    def num_operands(self) -> int:
        return len(self._operands)

    def set_operand(self, i: int, value: Value) -> None:
        self._operands[i].set(value)

    def set_operands(self, values: Iterable[Value]) -> None:
        STRUCTURE[0] += 1
        self._stamp += 1
        for o in self._operands:
            o.drop()
        self._operands = [OpOperand(self, i, v) for i, v in enumerate(values)]

    def erase_operands(self, indices: Iterable[int]) -> None:
        """Remove the operands at ``indices``; the others keep their place in their values'
        use lists (MLIR ``eraseOperands``)."""
        drop = set(indices)
        for o in self._operands:
            if o.index in drop:
                o.drop()
        self._operands = [o for o in self._operands if o.index not in drop]
        for i, o in enumerate(self._operands):
            o.index = i

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IRError(f"'{self.name}' has {len(self.results)} results, not one")
        return self.results[0]

    @property
    def num_results(self) -> int:
        return len(self.results)

    @property
    def result_types(self) -> list[Type]:
        return [r._type for r in self.results]

    @property
    def operand_types(self) -> list[Type]:
        return [o.value._type for o in self._operands]

    def replace_all_uses_with(self, values: Iterable[Value]) -> None:
        values = list(values)
        if len(values) != len(self.results):
            raise IRError(f"replacing {len(self.results)} results with {len(values)} values")
        for r, v in zip(self.results, values):
            r.replace_all_uses_with(v)

    # -- regions -------------------------------------------------------------------------
    def add_region(self, region: Region | None = None) -> Region:
        STRUCTURE[0] += 1
        self._stamp += 1
        region = region if region is not None else Region()
        region.parent = self
        self.regions.append(region)
        return region

    def take_regions(self) -> list[Region]:
        """Remove and return this op's regions, blocks and all (to move them to a new op)."""
        STRUCTURE[0] += 1
        self._stamp += 1
        regions, self.regions = self.regions, []
        return regions

    # -- position in the IR ---------------------------------------------------------------
    @property
    def parent_region(self) -> Region | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def parent_op(self) -> Operation | None:
        region = self.parent_region
        return region.parent if region is not None else None

    @property
    def next_op(self) -> Operation | None:
        return self._next

    @property
    def prev_op(self) -> Operation | None:
        return self._prev

    def is_ancestor_of(self, other: Operation) -> bool:
        """True when ``other`` is this op or nested somewhere inside its regions."""
        while other is not None:
            if other is self:
                return True
            other = other.parent_op
        return False

    def is_before_in_block(self, other: Operation) -> bool:
        """Both ops in one block, this one first."""
        block = self.parent
        if block is None or other.parent is not block:
            return False
        return block.op_order(self) < block.op_order(other)

    def move_before(self, anchor: Operation) -> None:
        """Unlink this op and insert it just before ``anchor`` (MLIR ``moveBefore``)."""
        anchor.parent.insert_before(anchor, self)

    def move_after(self, anchor: Operation) -> None:
        anchor.parent.insert_after(anchor, self)

    def clone(self, mapping: dict | None = None) -> Operation:
        """A deep copy, not inserted anywhere (MLIR ``Operation::clone(IRMapping&)``).

        Operands (and successor blocks) found in ``mapping`` are remapped, others kept; the
        clone's results, nested blocks and block arguments are added to ``mapping`` so later
        clones can use them.
        """
        mapping = {} if mapping is None else mapping
        op = Operation(self.name, [mapping.get(v, v) for v in self.operands],
                       self.result_types, dict(self.attributes), (), (), self.location,
                       self.properties)
        op.debug_location = self.debug_location
        for old, new in zip(self.results, op.results):
            mapping[old] = new
        for region in self.regions:
            op.add_region(region.clone(mapping))
        op.successors = [mapping.get(b, b) for b in self.successors]
        return op

    def detach(self) -> Operation:
        """Unlink from the parent block; operands and results keep their uses."""
        if self.parent is not None:
            self.parent._unlink(self)
        return self

    def drop_all_references(self) -> None:
        """Drop this op's operand uses, and those of every op nested in its regions."""
        for o in self._operands:
            o.drop()
        self._operands = []
        for region in self.regions:
            for block in region.blocks:
                for op in block:
                    op.drop_all_references()

    def erase(self) -> None:
        """Remove the op; its results must be unused (as MLIR asserts)."""
        for r in self.results:
            if r.has_uses:
                raise IRError(f"erasing '{self.name}' whose result #{r.index} still has uses")
        self.detach()
        self.drop_all_references()

    # -- traversal -----------------------------------------------------------------------
    def walk(self, post_order: bool = False) -> Iterator[Operation]:
        """This op and every op nested in it, pre-order (default) or post-order.

        Iterative, with one lazy iterator per open level (a nested generator per level
        costs time linear in the depth for every op, and Python frames): an op's regions
        are looked at only when the walk resumes after it, as a recursive walk would."""
        if post_order:
            yield from self._walk_post_order()
            return
        yield self
        stack = [self._nested_ops()]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            if op.regions:
                stack.append(op._nested_ops())

    def _walk_post_order(self) -> Iterator[Operation]:
        stack = [(self, self._nested_ops())]
        while stack:
            op, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                yield op
            else:
                stack.append((child, child._nested_ops()))

    def _nested_ops(self) -> Iterator[Operation]:
        """The ops directly inside this op's regions, block by block."""
        for region in self.regions:
            for block in region.blocks:
                yield from block

    # -- attributes ----------------------------------------------------------------------
    def get_attr(self, name: str, default=None):
        return self.attributes.get(name, default)

    def set_attr(self, name: str, value: Attribute) -> None:
        self.attributes[name] = value

    def remove_attr(self, name: str):
        return self.attributes.pop(name, None)

    @property
    def dialect(self) -> str:
        return self.name.partition(".")[0]

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {self.location}>"


class Block:
    """A list of ops (a doubly linked list, as in MLIR) with typed block arguments."""

    __slots__ = ("__weakref__", "_first", "_last", "_len", "_order", "args", "parent")

    def __init__(self, arg_types: Iterable[Type] = ()):
        self.args = [BlockArgument(t, self, i) for i, t in enumerate(arg_types)]
        self.parent: Region | None = None
        self._first: Operation | None = None
        self._last: Operation | None = None
        self._len = 0
        self._order: dict[Operation, int] | None = None  # op -> position, rebuilt lazily

    def op_order(self, op: Operation) -> int:
        """``op``'s position in this block (MLIR's cached op order, invalidated on change)."""
        if self._order is None:
            self._order = {o: i for i, o in enumerate(self)}
        return self._order[op]

    def __iter__(self) -> Iterator[Operation]:
        """Iterate the ops; erasing or moving the current op while iterating is safe."""
        op = self._first
        while op is not None:
            nxt = op._next
            yield op
            op = nxt

    def __reversed__(self) -> Iterator[Operation]:
        op = self._last
        while op is not None:
            prv = op._prev
            yield op
            op = prv

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return True

    @property
    def ops(self) -> list[Operation]:
        return list(self)

    @property
    def first_op(self) -> Operation | None:
        return self._first

    @property
    def last_op(self) -> Operation | None:
        return self._last

    @property
    def terminator(self) -> Operation | None:
        return self._last

    @property
    def arg_types(self) -> list[Type]:
        return [a._type for a in self.args]

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent is not None else None

    @property
    def is_entry_block(self) -> bool:
        return self.parent is not None and self.parent.blocks and self.parent.blocks[0] is self

    def add_argument(self, type: Type) -> BlockArgument:
        STRUCTURE[0] += 1
        arg = BlockArgument(type, self, len(self.args))
        self.args.append(arg)
        return arg

    def insert_argument(self, index: int, type: Type) -> BlockArgument:
        STRUCTURE[0] += 1
        arg = BlockArgument(type, self, index)
        self.args.insert(index, arg)
        for i, a in enumerate(self.args):
            a.index = i
        return arg

    def erase_argument(self, index: int) -> None:
        arg = self.args[index]
        if arg.has_uses:
            raise IRError(f"erasing block argument #{index} that still has uses")
        STRUCTURE[0] += 1
        del self.args[index]
        for i, a in enumerate(self.args):
            a.index = i

    def append(self, op: Operation) -> Operation:
        self._link(op, self._last, None)
        return op

    def prepend(self, op: Operation) -> Operation:
        self._link(op, None, self._first)
        return op

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        assert anchor.parent is self
        self._link(op, anchor._prev, anchor)
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        assert anchor.parent is self
        self._link(op, anchor, anchor._next)
        return op

    def _link(self, op: Operation, prev: Operation | None, nxt: Operation | None) -> None:
        if op.parent is self and (op is prev or op is nxt):
            return  # already there (e.g. moved right after its own predecessor)
        if op.parent is not None:
            op.parent._unlink(op)
        STRUCTURE[0] += 1
        op._stamp += 1
        op.parent = self
        self._order = None
        op._prev, op._next = prev, nxt
        if prev is None:
            self._first = op
        else:
            prev._next = op
        if nxt is None:
            self._last = op
        else:
            nxt._prev = op
        self._len += 1

    def _unlink(self, op: Operation) -> None:
        STRUCTURE[0] += 1  # no stamp: an unlinked op is not verified until linked again
        if op._prev is None:
            self._first = op._next
        else:
            op._prev._next = op._next
        if op._next is None:
            self._last = op._prev
        else:
            op._next._prev = op._prev
        op.parent = op._prev = op._next = None
        self._order = None
        self._len -= 1


class Region:
    """A list of blocks owned by an op."""

    __slots__ = ("__weakref__", "blocks", "parent")

    def __init__(self, blocks: Iterable[Block] = ()):
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block | None = None) -> Block:
        STRUCTURE[0] += 1
        block = block if block is not None else Block()
        block.parent = self
        self.blocks.append(block)
        return block

    def remove_block(self, block: Block) -> None:
        """Take ``block`` out of this region (its ops stay in it)."""
        STRUCTURE[0] += 1
        self.blocks.remove(block)
        block.parent = None

    def take_blocks(self) -> list[Block]:
        """Remove and return every block (MLIR ``takeBody`` moves them to another region)."""
        STRUCTURE[0] += 1
        blocks, self.blocks = self.blocks, []
        for block in blocks:
            block.parent = None
        return blocks

    @property
    def entry_block(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    def clone(self, mapping: dict) -> Region:
        """A deep copy of the blocks (arguments mapped first, so ops in any block may use
        the arguments of any block), for :meth:`Operation.clone`."""
        region = Region()
        for block in self.blocks:
            new = region.add_block(Block(block.arg_types))
            mapping[block] = new
            for old_arg, new_arg in zip(block.args, new.args):
                mapping[old_arg] = new_arg
                new_arg.debug_location = old_arg.debug_location
        for block, new in zip(self.blocks, region.blocks):
            for op in block:
                new.append(op.clone(mapping))
        return region

    @property
    def args(self) -> list[BlockArgument]:
        return self.blocks[0].args if self.blocks else []

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    def ops(self) -> Iterator[Operation]:
        for block in self.blocks:
            yield from block

    def walk(self) -> Iterator[Operation]:
        for block in self.blocks:
            for op in block:
                yield from op.walk()
