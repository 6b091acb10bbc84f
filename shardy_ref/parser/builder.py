"""Build IR while Lark parses: the transformer callbacks for MLIR's core syntax.

The parser runs in LALR mode with this transformer applied as each rule is reduced, so
no parse tree is ever built (measured: about 2.8x faster than building a tree and then
transforming it, and no tree of the whole module is held). Operands are
recorded by name and resolved once the whole module exists, region by region, the way
MLIR's parser scopes SSA names (values of enclosing regions are visible unless the op
is isolated from above; forward references are allowed and checked at the end).
"""
from __future__ import annotations

from bisect import bisect_right

from lark import Token, Transformer

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir.diagnostics import Diagnostic, ParseError
from shardy_ref.ir.location import FileLineColLoc, Location
from shardy_ref.ir.opdefs import op_def
from shardy_ref.ir.operation import Block, Operation, Region
from shardy_ref.ir.types import (
    I64,
    NONE,
    TOKEN,
    FloatType,
    FunctionType,
    IndexType,
    IntegerType,
    OpaqueType,
    RankedTensorType,
    TupleType,
    UnrankedTensorType,
    VectorType,
)
from shardy_ref.parser import literals as lit
from shardy_ref.parser.fast_lalr import FastToken
from shardy_ref.parser.literals import LiteralError
from shardy_ref.parser.locations import LocationSyntaxError, parse_location


class PendingOperands:
    """Operand names of one op, with the types its syntax declared for them."""

    __slots__ = ("tokens", "types")

    def __init__(self, tokens, types):
        self.tokens = tokens
        self.types = types


class CoreBuilder(Transformer):
    """Callbacks for core.lark; dialect builders subclass this (see :mod:`.reader`)."""

    def __init__(self):
        super().__init__(visit_tokens=False)
        self.reset("<stdin>")

    def reset(self, filename: str, line_offset: int = 0, text: str = "") -> None:
        self.filename = filename
        # wrap the top-level ops in a module, unless mlir-opt's --no-implicit-module
        self.implicit_module = True
        self.line_offset = line_offset
        self.text = text
        self._line_starts: list[int] | None = None
        # diagnostics that do not stop the parse (upstream emits some, e.g. factor symbol
        # index overflow, and goes on)
        self.nonfatal: list[Diagnostic] = []
        self.attr_aliases: dict[str, ba.Attribute] = {}
        self.type_aliases: dict = {}
        self.pending: dict[Operation, PendingOperands] = {}
        self.result_defs: dict[Operation, list] = {}
        self.arg_names: dict[Block, list] = {}
        self.block_labels: dict[Block, object] = {}  # block -> its ^label token
        self.successor_labels: dict[Operation, list] = {}  # op -> ^label tokens it jumps to
        self.def_tokens: dict = {}  # (name, id of first value) -> the defining token
        self.region_starts: dict[Region, object] = {}  # region -> its '{' token
        self.op_locs: list = []  # (op, its loc(...) token), resolved after the parse
        self.arg_locs: dict[int, object] = {}  # id(argument name token) -> its loc token
        self.loc_aliases: dict[str, object] = {}  # "#name" -> the loc(...) token defining it
        self.last_loc = None
        self.ops_read = 0  # ``operation`` reductions so far (op_shortcut checks its lines)
        # dialect-attribute text that parsed without error or warning -> its (immutable)
        # value, and dialect bodies found balanced: repeated texts are parsed once per parse
        self.attr_text_cache: dict = {}
        self.balanced_bodies: set[str] = set()

    # -- helpers -------------------------------------------------------------------------
    def loc(self, tok) -> Location:
        if type(tok) is FastToken:  # its line and column come from the same line starts
            return self.loc_at(tok.start_pos)
        return Location(self.filename, tok.line + self.line_offset, tok.column)

    def loc_at(self, offset: int) -> Location:
        """The location of a character offset into the text being parsed."""
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line = bisect_right(self._line_starts, offset)
        return Location(self.filename, line + self.line_offset,
                        offset - self._line_starts[line - 1] + 1)

    def error(self, tok, message: str) -> ParseError:
        return ParseError(self.loc(tok), message)

    def string(self, tok) -> str:
        """The value of a string literal token; bad escapes are located errors."""
        try:
            return lit.unquote(tok)
        except LiteralError as e:
            raise ParseError(Location(self.filename, tok.line + self.line_offset,
                                      tok.column + e.offset), str(e)) from None

    def make_op(self, name_tok, name: str, operands=(), operand_types=(), result_types=(),
                attributes=None, regions=(), successors=(), properties=None) -> Operation:
        """Create an op whose operands are resolved by name after the parse."""
        op = Operation(name, (), result_types, attributes if attributes is not None else {},
                       regions, successors, self.loc(name_tok), properties)
        if operands:
            if len(operand_types) != len(operands):
                raise self.error(
                    name_tok, f"{len(operands)} operands present, but expected "
                    f"{len(operand_types)}")
            self.pending[op] = PendingOperands(list(operands), list(operand_types))
        return op

    def check_operand_types(self, op_name: str, operands, types, offset: int) -> None:
        """A custom op's ``operands : types`` resolved one to one (MLIR's
        ``resolveOperands``): their counts must match. ``offset`` is where the operand list
        starts (its first operand, or what stands there)."""
        if len(operands) != len(types):
            raise ParseError(self.loc_at(offset),
                             f"custom op '{op_name}' number of operands and types do not "
                             f"match: got {len(operands)} operands and {len(types)} types")

    def after_paren(self, tok) -> int:
        """The offset of the first token after the ``(`` that follows ``tok``."""
        i = self.text.find("(", tok.end_pos) + 1
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def region_with_args(self, region: Region, args) -> Region:
        """Give ``region``'s entry block the named arguments ``[(token, type), ...]``."""
        if not region.blocks:
            region.add_block()
        block = region.blocks[0]
        if block.args:
            raise ParseError(self.loc(args[0][0]) if args else None,
                             "entry block arguments were already defined")
        for tok, t in args:
            block.add_argument(t)
        self.arg_names[block] = [tok for tok, _ in args]
        return region

    # -- top level -----------------------------------------------------------------------
    def start(self, items):
        ops = [x for x in items if isinstance(x, Operation)]
        if not self.implicit_module and len(ops) != 1:
            raise ParseError(Location(self.filename, 1 + self.line_offset, 1),
                             f"source must contain a single top-level operation, found: "
                             f"{len(ops)}")
        if len(ops) == 1 and (ops[0].name == "builtin.module" or not self.implicit_module):
            module = ops[0]
        else:
            block = Block()
            for op in ops:
                block.append(op)
            module = Operation("builtin.module", regions=[Region([block])],
                               location=Location(self.filename, 1 + self.line_offset, 1))
            # mlir-opt wraps the ops in a module located at line 0, column 0 of the buffer
            module.debug_location = FileLineColLoc(self.filename, 0, 0)
        self.resolve_operands(module)
        self.resolve_locations()
        return module

    def resolve_locations(self) -> None:
        """Give ops and block arguments their ``loc(...)`` (now that every ``#loc`` alias,
        usually defined at the end of the file, is known); block arguments written without
        one are located at their name, as MLIR's parser does."""
        resolved: dict[str, object] = {}

        def alias(name: str):
            if name not in resolved:
                tok = self.loc_aliases[name]
                resolved[name] = None  # being resolved: a cycle back to it is undefined
                resolved[name] = self.location_of(tok, alias)
            if resolved[name] is None:
                raise KeyError(name)
            return resolved[name]

        for op, tok in self.op_locs:
            op.debug_location = self.location_of(tok, alias)
        for block, toks in self.arg_names.items():
            for tok, arg in zip(toks, block.args):
                loc_tok = self.arg_locs.get(id(tok))
                if loc_tok is not None:
                    arg.debug_location = self.location_of(loc_tok, alias)
                else:
                    where = self.loc(tok)
                    arg.debug_location = FileLineColLoc(where.file, where.line, where.col)

    def location_of(self, tok, alias):
        try:
            return parse_location(str(tok), alias)
        except LocationSyntaxError as e:
            raise ParseError(Location(self.filename, tok.line + self.line_offset,
                                      tok.column + e.offset), str(e)) from None

    def attr_alias_def(self, items):
        name, value = items
        if name in self.attr_aliases:
            raise self.error(name, f"redefinition of attribute alias id '{name[1:]}'")
        self.attr_aliases[str(name)] = value
        if value is ba.UNIT and self.text[name.end_pos:].lstrip(" \t=").startswith("loc("):
            self.loc_aliases[str(name)] = self.last_loc

    def type_alias_def(self, items):
        name, value = items
        if name in self.type_aliases:
            raise self.error(name, f"redefinition of type alias id '{name[1:]}'")
        self.type_aliases[str(name)] = value

    # -- operations ----------------------------------------------------------------------
    def operation(self, items):
        results, op, loc = items
        self.ops_read += 1
        if loc is not None:
            self.op_locs.append((op, loc))
        if results:
            total = results[0][1] if len(results) == 1 else sum(n for _, n in results)
            if not op.results:
                raise self.error(results[0][0], "cannot name an operation with no results")
            if total != len(op.results):
                raise self.error(results[0][0], f"operation defines {len(op.results)} results "
                                 f"but was provided {total} to bind")
            self.result_defs[op] = results
        return op

    def op_results(self, items):
        return items

    def op_result(self, items):
        tok, count = items
        if "#" in tok:
            raise self.error(tok, "expected result name without '#' suffix")
        n = int(count) if count is not None else 1
        if n < 1:
            raise self.error(count, "expected named operation to have at least 1 result")
        return (tok, n)

    def custom_op(self, items):
        return items[0]

    def generic_op(self, items):
        name_tok, operands, successors, props, regions, attrs, ftype = items
        operands = operands or []
        if len(operands) != len(ftype.inputs):
            raise self.error(name_tok, f"expected {len(operands)} operand types but had "
                             f"{len(ftype.inputs)}")
        name = self.string(name_tok)
        attributes = dict(attrs.value) if attrs else {}
        properties = None
        if props is not None:
            if op_def(name) is not None:
                attributes.update(props.value)
            else:
                properties = props
        op = self.make_op(name_tok, name, operands, ftype.inputs, ftype.results, attributes,
                          regions or (), (), properties)
        if successors:
            self.successor_labels[op] = successors
        return op

    def successors(self, items):
        return items

    def successor(self, items):
        return items[0]

    def properties(self, items):
        return items[0] or ba.DictionaryAttr(())

    def generic_regions(self, items):
        return items

    def values(self, items):
        return items

    def types(self, items):
        return items

    # -- regions -------------------------------------------------------------------------
    def region(self, items):
        lbrace, *items = items
        region = Region()
        self.region_starts[region] = lbrace
        entry: Block | None = None
        for item in items:
            if isinstance(item, Operation):
                if entry is None:
                    entry = region.add_block()
                entry.append(item)
            else:
                region.add_block(item)
        return region

    def block(self, items):
        label, args, *ops = items
        block = Block()
        self.block_labels[block] = label
        if args:
            for tok, t in args:
                block.add_argument(t)
            self.arg_names[block] = [tok for tok, _ in args]
        for op in ops:
            block.append(op)
        return block

    def block_args(self, items):
        return items

    def block_arg(self, items):
        tok, t, loc = items
        if loc is not None:
            self.arg_locs[id(tok)] = loc
        return (tok, t)

    def region_args(self, items):
        return items[0] or []

    # -- module and func -----------------------------------------------------------------
    def module_op(self, items):
        tok, sym, attrs, *ops = items
        block = Block()
        for op in ops:
            block.append(op)
        attributes = dict(attrs.value) if attrs else {}
        if sym is not None:
            attributes["sym_name"] = ba.StringAttr(lit.symbol_name(sym))
        return self.make_op(tok, "builtin.module", attributes=attributes,
                            regions=[Region([block])])

    def func_op(self, items):
        tok, visibility, sym, args, results, attrs, region = items
        args = args or []
        result_types, result_attrs = results if results else ([], [])
        attributes = dict(attrs.value) if attrs else {}
        attributes["sym_name"] = ba.StringAttr(lit.symbol_name(sym))
        attributes["function_type"] = ba.TypeAttr(
            FunctionType(tuple(t for _, t, _ in args), tuple(result_types)))
        if visibility is not None:
            attributes["sym_visibility"] = ba.StringAttr(str(visibility))
        if any(a for _, _, a in args):
            attributes["arg_attrs"] = ba.ArrayAttr(
                tuple(a or ba.DictionaryAttr(()) for _, _, a in args))
        if any(result_attrs):
            attributes["res_attrs"] = ba.ArrayAttr(
                tuple(a or ba.DictionaryAttr(()) for a in result_attrs))
        named = [(n, t) for n, t, _ in args if n is not None]
        if region is not None:
            if not region.blocks:
                raise self.error(self.region_starts[region],
                                 "custom op 'func.func' expected non-empty function body")
            if len(named) != len(args):
                raise self.error(sym, "expected SSA identifier")
            self.region_with_args(region, named)
        return self.make_op(tok, "func.func", attributes=attributes,
                            regions=[region if region is not None else Region()])

    def func_args(self, items):
        return items

    def func_arg(self, items):
        name, t, attrs, loc = items
        if loc is not None and name is not None:
            self.arg_locs[id(name)] = loc
        return (name, t, attrs if attrs and attrs.value else None)

    def func_result_single(self, items):
        return ([items[0]], [None])

    def func_result_list(self, items):
        items = [x for x in items if x is not None]
        return ([t for t, _ in items], [a for _, a in items])

    def func_result(self, items):
        t, attrs, _loc = items
        return (t, attrs if attrs and attrs.value else None)

    def call_op(self, items):
        tok, sym, operands, attrs, ftype = items
        attributes = dict(attrs.value) if attrs else {}
        attributes["callee"] = ba.SymbolRefAttr(lit.symbol_name(sym))
        self.check_operand_types("func.call", operands or [], ftype.inputs,
                                 operands[0].start_pos if operands else self.after_paren(sym))
        return self.make_op(tok, "func.call", operands or [], ftype.inputs, ftype.results,
                            attributes)

    def return_op(self, items):
        tok, attrs, operands, types = items
        if operands:
            self.check_operand_types("func.return", operands, types, operands[0].start_pos)
        return self.make_op(tok, "func.return", operands or [], types or [],
                            attributes=dict(attrs.value) if attrs else {})

    # -- types ---------------------------------------------------------------------------
    def tensor_type_fast(self, items):
        return lit.tensor_type(str(items[0]))  # a plain str key: the cache keeps no token

    def tensor_type(self, items):
        dim_list, et, encoding = items
        return RankedTensorType(lit.dims(dim_list) if dim_list else (), et, encoding)

    def unranked_tensor_type_x(self, items):
        tok = items[0]
        if not tok.startswith("x"):
            raise self.error(tok, "expected 'x' in unranked tensor type")
        return UnrankedTensorType(lit.element_type(tok[1:]))

    def vector_type(self, items):
        return VectorType(lit.dims(items[0]), items[1])

    def int_type(self, items):
        return lit.element_type(str(items[0]))

    def float_type(self, items):
        return FloatType(str(items[0]))

    def index_type(self, items):
        return lit.element_type("index")

    def none_type(self, items):
        return NONE

    def complex_type(self, items):
        from shardy_ref.ir.types import ComplexType
        return ComplexType(items[0])

    def tuple_type(self, items):
        return TupleType(tuple(items[0] or ()))

    def dialect_type(self, items):
        tok, body = items
        name = str(tok)
        self.check_dialect_body(body)
        if body is None:
            if name == "!stablehlo.token":
                return TOKEN
            if name in self.type_aliases:
                return self.type_aliases[name]
            if "." not in name:
                raise self.error(tok, f"undefined symbol alias id '{name[1:]}'")
        dialect, _, rest = name[1:].partition(".")
        return OpaqueType(dialect, (("." + rest) if rest else "") + (str(body) if body else ""))

    def function_type(self, items):
        inputs, *results = items
        if len(results) == 1 and isinstance(results[0], list):
            results = results[0]
        elif results == [None]:
            results = []
        return FunctionType(tuple(inputs or ()), tuple(results))

    # -- attributes ----------------------------------------------------------------------
    def attr_dict(self, items):
        entries = {}
        for item in items:
            if item is None:
                continue
            name, value = item
            if name in entries:
                raise ParseError(None, f"duplicate key '{name}' in dictionary attribute")
            entries[name] = value
        return ba.DictionaryAttr(tuple(sorted(entries.items())))

    def named_attr(self, items):
        name, value = items
        key = self.string(name) if name.type == "STRING" else str(name)
        if key == "":
            raise self.error(name, "expected valid attribute name")
        if isinstance(value, tuple):  # a bare `<...>` body: only a dialect attribute has one
            raise self.error(name, "expected attribute value")
        return (key, value if value is not None else ba.UNIT)

    def arith_constant_op(self, items):
        tok, attrs, value = items
        attributes = dict(attrs.value) if attrs is not None else {}
        attributes.setdefault("value", value)
        return self.make_op(tok, "arith.constant", result_types=[value.type],
                            attributes=attributes)

    def int_attr(self, items):
        tok, t = items
        value = int(tok, 16) if tok.startswith("0x") else int(tok)
        if t is None:
            t = I64
        if isinstance(t, FloatType):
            if tok.startswith("0x"):
                from shardy_ref.ir.floatfmt import bits_to_float
                return ba.FloatAttr(bits_to_float(value, t.name), t)
            raise self.error(tok, "unexpected decimal integer literal for a floating point value")
        if not isinstance(t, (IntegerType, IndexType)):
            negative = str(tok).startswith("-")
            raise ParseError(Location(self.filename, tok.line + self.line_offset,
                                      tok.column + negative),
                             "integer literal not valid for specified type")
        return ba.IntegerAttr(self._fit_integer(tok, value, t), t)

    def _fit_integer(self, tok, value: int, t) -> int:
        """MLIR's integer literal rules (:func:`literals.fit_integer`): a signless value that
        fits the width unsigned is read as its two's complement (``255 : i8`` is -1);
        anything else out of range fails, at the digits (after any ``-``)."""
        negative = str(tok).startswith("-")
        at = Location(self.filename, tok.line + self.line_offset, tok.column + negative)
        if negative and getattr(t, "is_unsigned", False):
            raise ParseError(at, "negative integer literal not valid for unsigned integer type")
        fitted = lit.fit_integer(abs(value), negative, t)
        if fitted is None:
            raise ParseError(at, "integer constant out of range for attribute")
        return fitted

    def float_attr(self, items):
        from shardy_ref.ir.floatfmt import round_float
        tok, t = items
        if t is None:
            t = FloatType("f64")
        if not isinstance(t, FloatType):
            raise self.error(tok, "floating point value not valid for specified type")
        return ba.FloatAttr(round_float(float(tok), t.name), t)

    def string_attr(self, items):
        tok, t = items
        return ba.StringAttr(self.string(tok), t)

    def true_attr(self, _):
        return ba.TRUE

    def false_attr(self, _):
        return ba.FALSE

    def unit_attr(self, _):
        return ba.UNIT

    def array_attr(self, items):
        if items == [None]:
            return ba.ArrayAttr(())
        return ba.ArrayAttr(tuple(items))

    def dict_attr(self, items):
        return items[0]

    def symbol_ref_attr(self, items):
        names = [lit.symbol_name(t) for t in items]
        return ba.SymbolRefAttr(names[0], tuple(names[1:]))

    def dense_attr(self, items):
        tok, t = items
        key = ("dense", str(tok), t)
        value = self.attr_text_cache.get(key)
        if value is None:
            try:
                value = lit.parse_dense(tok[6:-1], t, 6)
            except LiteralError as e:
                raise ParseError(self.loc_at(tok.start_pos + e.offset), str(e)) from None
            self.attr_text_cache[key] = value
        return value

    def dense_resource_attr(self, items):
        return ba.DenseResourceElementsAttr(items[1], str(items[0]))

    def dense_array_attr(self, items):
        tok = items[0]
        try:
            et, values = lit.parse_dense_array(tok[6:-1], 6)
        except LiteralError as e:
            raise ParseError(self.loc_at(tok.start_pos + e.offset), str(e)) from None
        return ba.DenseArrayAttr(et, values)

    def type_attr(self, items):
        return ba.TypeAttr(items[0])

    def check_dialect_body(self, body) -> None:
        """MLIR pre-scans a ``#d.x<...>``/``!d.x<...>`` body for balanced brackets before
        the dialect parses it; the grammar balanced only its angle brackets."""
        if body is None or body in self.balanced_bodies:
            return
        from shardy_ref.parser.errors import dialect_body_end, unbalanced_dialect_body
        end = dialect_body_end(self.text, body.start_pos)
        if end is not None and end <= body.end_pos:
            self.balanced_bodies.add(str(body))  # the scan read only the body's own text
            return
        error = unbalanced_dialect_body(self.text, body.start_pos, self.loc_at)
        if error is not None:
            raise error

    def hash_attr(self, items):
        tok, body = items
        name = str(tok)
        self.check_dialect_body(body)
        if body is None and name in self.attr_aliases:
            return self.attr_aliases[name]
        if body is None and "." not in name:
            raise self.error(tok, f"undefined symbol alias id '{name[1:]}'")
        return self.dialect_attr_from_text(tok, name, body)

    def dialect_attr_from_text(self, tok, name: str, body):
        """A dialect attribute this builder does not model: kept as text."""
        return ba.OpaqueAttr(name + (str(body) if body else ""))

    def loc_attr(self, items):
        self.last_loc = items[0]  # for attr_alias_def: `#loc1 = loc(...)` defines a location
        return ba.UNIT

    def struct_attr(self, items):
        return ("struct", [x for x in items if x is not None])

    def struct_field(self, items):
        return (str(items[0]), items[1])

    # -- SSA name resolution -------------------------------------------------------------
    def resolve_operands(self, root: Operation) -> None:
        """Bind every recorded operand name to its value, following MLIR's scoping.

        Names are defined in text order: an op's results after its regions (so a nested
        region may reuse a name its op defines), block arguments first. A use sees the
        names of its region and of all enclosing regions (as MLIR's custom-op parsers do,
        even for ops isolated from above: the verifier reports such uses); names defined
        later in those regions are forward references, also allowed.

        The walk is iterative and keeps one dict of the names visible at each point (MLIR
        forbids redefining a visible name, so nothing is ever shadowed): a region's names
        leave it when the region closes, and a use not bound by then is retried in the
        enclosing region when that one closes. Errors come in text order of the uses.
        """
        visible: dict[str, list] = {}
        bound: dict[tuple[Operation, int], list] = {}
        uses: list[Operation] = []
        frames: list[_Scope] = []
        tasks: list[tuple[str, object]] = [("region", r) for r in reversed(root.regions)]
        while tasks:
            kind, item = tasks.pop()
            if kind == "region":
                frames.append(self._open_region(item, visible))
                tasks.append(("close", None))
                tasks.append(("ops", item.ops()))
            elif kind == "ops":
                self._scan_ops(item, tasks, frames[-1], visible, uses)
            elif kind == "results":
                self._define_results(item, frames[-1], visible)
            else:
                self._close_region(frames, visible, bound)
        for op in uses:
            op.set_operands(self._bound_values(op, self.pending[op], bound))

    def _scan_ops(self, ops, tasks: list, scope: _Scope, visible: dict, uses: list) -> None:
        """Record the uses and define the results of ``ops`` (an iterator of one region's
        ops) up to one with regions: that op's regions are scanned next, then its results
        are defined and the iterator goes on (pushed to ``tasks``)."""
        pending_of, result_defs = self.pending.get, self.result_defs
        for op in ops:
            pending = pending_of(op)
            if pending is not None:
                uses.append(op)
                scope.unbound += [(op, i, str(tok).partition("#")[0])
                                  for i, tok in enumerate(pending.tokens)]
            if op.regions:
                tasks.append(("ops", ops))
                tasks.append(("results", op))
                tasks.extend(("region", r) for r in reversed(op.regions))
                return
            if op in result_defs:
                self._define_results(op, scope, visible)

    def _bound_values(self, op: Operation, pending: PendingOperands, bound: dict) -> list:
        """The values of ``op``'s operands: most are the first value of their name, of
        the very type object declared (:meth:`_lookup` checks the others)."""
        values = []
        for i, (tok, t) in enumerate(zip(pending.tokens, pending.types)):
            group = bound.get((op, i))
            value = group[0] if group is not None and "#" not in tok else None
            values.append(value if value is not None and value.type is t
                          else self._lookup(tok, t, group))
        return values

    def _open_region(self, region: Region, visible: dict) -> _Scope:
        self._resolve_successors(region)
        scope = _Scope()
        for block in region.blocks:
            for tok, arg in zip(self.arg_names.get(block, ()), block.args):
                self._define(scope, visible, tok, [arg])
        return scope

    def _define_results(self, op: Operation, scope: _Scope, visible: dict) -> None:
        defs = self.result_defs.get(op)
        if defs:
            i = 0
            for tok, n in defs:
                self._define(scope, visible, tok, op.results[i:i + n])
                i += n

    @staticmethod
    def _close_region(frames: list, visible: dict, bound: dict) -> None:
        """Bind the uses of the closing region that its names (or earlier names of the
        enclosing regions) define; hand the others to the enclosing region."""
        scope = frames.pop()
        outer = frames[-1].unbound if frames else None
        for use in scope.unbound:
            group = visible.get(use[2])
            if group is not None:
                bound[use[0], use[1]] = group
            elif outer is not None:
                outer.append(use)
        for name in scope.names:
            del visible[name]

    def _resolve_successors(self, region: Region) -> None:
        """Bind ``[^bb1]`` successor labels to the blocks of the same region."""
        labels: dict[str, Block] = {}
        for block in region.blocks:
            tok = self.block_labels.get(block)
            if tok is not None:
                if str(tok) in labels:
                    raise self.error(tok, f"redefinition of block '{tok}'")
                labels[str(tok)] = block
        for block in region.blocks:
            for op in block:
                for tok in self.successor_labels.get(op, ()):
                    target = labels.get(str(tok))
                    if target is None:
                        raise self.error(tok, "reference to an undefined block")
                    op.successors.append(target)

    def _define(self, scope: _Scope, visible: dict, tok, values) -> None:
        name = str(tok)
        if name in visible:
            previous = self.def_tokens[name, id(visible[name][0])]
            raise ParseError(self.loc(tok), f"redefinition of SSA value '{name}'",
                             [Diagnostic("note", self.loc(previous), "previously defined here")])
        visible[name] = values
        scope.names.append(name)
        self.def_tokens[name, id(values[0])] = tok

    def _lookup(self, tok, declared_type, group):
        """Check one use against the values its name was bound to (None: unbound)."""
        name, _, index = str(tok).partition("#")
        if group is None:
            raise self.error(tok, "use of undeclared SSA value name")
        i = int(index) if index else 0
        if i >= len(group):
            raise self.error(tok, "reference to invalid result number")
        value = group[i]
        if declared_type is not None and value.type != declared_type:
            prior = self.def_tokens.get((name, id(group[0])))
            notes = [Diagnostic("note", self.loc(prior), "prior use here")] if prior else []
            raise ParseError(self.loc(tok), f"use of value '{tok}' expects different type than "
                             f"prior uses: '{declared_type}' vs '{value.type}'", notes)
        return value


class _Scope:
    """The names one open region defined, and the uses in it (or in regions it holds)
    still waiting for a name: ``(op, operand index, name)``."""

    __slots__ = ("names", "unbound")

    def __init__(self):
        self.names: list[str] = []
        self.unbound: list[tuple[Operation, int, str]] = []


__all__ = ["CoreBuilder", "Token"]
