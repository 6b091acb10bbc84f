"""sdy attributes from text, parsed the way upstream parses them.

The Lark grammar hands over an sdy attribute's text whole (``#sdy.sharding<...>``, or a
stripped ``<@mesh, [...]>`` inside an op); this recursive-descent parser mirrors
upstream's parsers (``ir/parsers.cc`` and the ODS-generated formats of ``ir/attrs.td``)
so that malformed input gets upstream's diagnostics, at upstream's columns:

* errors of MLIR's own token parser (``expected ','``) point just after the previous
  token; all others point at the next token;
* when an ODS parameter fails, a ``failed to parse Sdy_X parameter 'p' which is to be a
  `T``` error follows at every nesting level (the "cascade");
* inside an op's syntax, errors that go through the op's parser get the prefix
  ``custom op 'sdy.mesh' `` (not the token-parser ones, nor any inside a ``#sdy...`` form);
* attributes upstream verifies while parsing (meshes, mesh axes) are verified here.
"""
from __future__ import annotations

import re

from shardy_ref.ir.sdy_axes import (
    AxisRef,
    AxisRefList,
    ListOfAxisRefLists,
    Mesh,
    MeshAxis,
    SubAxisInfo,
)
from shardy_ref.ir.sdy_debug import (
    AxisToPropagationDetails,
    EdgeValueRef,
    PropagationEdges,
    PropagationOneStep,
    ReductionOp,
)
from shardy_ref.ir.sdy_rules import DimMapping, OpShardingRule, TensorMapping, factor_symbol
from shardy_ref.ir.sdy_sharding import (
    AllToAllParam,
    AllToAllParamList,
    DimensionSharding,
    ManualAxes,
    TensorSharding,
    TensorShardingPerValue,
)
from shardy_ref.parser.literals import LiteralError, unquote

START_AT_Z = 17
INT64_MAX = (1 << 63) - 1

_TOKEN = re.compile(r'''
    (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<hash>\#[a-zA-Z_][\w$.]*)
  | (?P<symbol>@(?:[a-zA-Z_][\w$.\-]*|"(?:[^"\\\n]|\\.)*"))
  | (?P<arrow>->)
  | (?P<int>[0-9]+)
  | (?P<word>[a-zA-Z_][\w$.]*)
  | (?P<punct>[<>\[\]{}(),:=?\-*])
  | (?P<space>\s+|//[^\n]*)
  | (?P<other>.)
''', re.X)


class SdyParseError(Exception):
    """One or more diagnostics ``(offset, message, prefixed)``; the first is the cause."""

    def __init__(self, offset: int, message: str, prefixed: bool = True):
        super().__init__(message)
        self.errors = [(offset, message, prefixed)]


class _Tok:
    __slots__ = ("end", "kind", "start", "text")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end


class SdyAttrParser:
    """Parse one sdy attribute body; offsets are into ``text`` (the whole source chunk)."""

    def __init__(self, text: str, start: int, end: int):
        self.text = text
        self.toks: list[_Tok] = []
        for m in _TOKEN.finditer(text, start, end):
            if m.lastgroup != "space":
                self.toks.append(_Tok(m.lastgroup, m.group(), m.start(), m.end()))
        self.pos = 0
        self.end = end
        # errors upstream emits without failing the parse: (offset, message, prefixed)
        self.warnings: list = []

    # -- token access ----------------------------------------------------------------------
    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def here(self) -> int:
        """MLIR's current location: the start of the next token."""
        tok = self.peek()
        return tok.start if tok else self.end

    def after_previous(self) -> int:
        """Where MLIR reports a missing token: just after the previous one (at the end of
        the input, from one character before it, as ``emitWrongTokenError`` does)."""
        if self.peek() is None and self.end >= len(self.text) > 0:
            from shardy_ref.parser.errors import _after_previous_token
            return _after_previous_token(self.text, len(self.text) - 1)
        return self.toks[self.pos - 1].end if self.pos else self.here()

    def next(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def error(self, message: str, prefixed: bool = True, at: int | None = None):
        return SdyParseError(self.here() if at is None else at, message, prefixed)

    def is_punct(self, ch: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == ch and tok.kind in ("punct", "arrow")

    def optional(self, ch: str) -> bool:
        if self.is_punct(ch):
            self.pos += 1
            return True
        return False

    def expect(self, ch: str) -> None:
        """MLIR ``parseToken``: ``expected 'X'`` just after the previous token, no prefix."""
        if not self.optional(ch):
            raise self.error(f"expected '{ch}'", prefixed=False, at=self.after_previous())

    def optional_keyword(self, word: str | None = None) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind == "word" and (word is None or tok.text == word):
            self.pos += 1
            return tok.text
        return None

    def keyword(self, word: str | None = None) -> str:
        got = self.optional_keyword(word)
        if got is None:
            raise self.error(f"expected '{word}'" if word else "expected valid keyword")
        return got

    def string(self) -> str:
        tok = self.peek()
        if tok is None or tok.kind != "string":
            raise self.error("expected string")
        self.pos += 1
        try:
            return unquote(tok.text)
        except LiteralError as e:
            raise SdyParseError(tok.start + e.offset, str(e), False) from None

    def integer(self) -> int:
        negative = self.optional("-")
        tok = self.peek()
        if tok is None or tok.kind != "int":
            raise self.error("expected integer value")
        self.pos += 1
        value = int(tok.text)
        if value > INT64_MAX + (1 if negative else 0):
            raise SdyParseError(tok.start, "integer value too large")
        return -value if negative else value

    def param(self, owner: str, name: str, cpp_type: str | None, parse):
        """An ODS ``$param``: on failure add upstream's cascade message at the next token."""
        try:
            return parse()
        except SdyParseError as e:
            message = f"failed to parse {owner} parameter '{name}'"
            if cpp_type is not None:
                message += f" which is to be a `{cpp_type}`"
            e.errors.append((self.here(), message, True))
            raise

    def comma_list(self, parse_element) -> list:
        """``parseCommaSeparatedList(Delimiter::None)``: at least one element."""
        items = [parse_element()]
        while self.optional(","):
            items.append(parse_element())
        return items

    def with_fallback(self, parse_stripped, mnemonic: str):
        """``parseCustomAttributeWithFallback``: the full ``#sdy.X<...>`` form or the stripped
        one. Errors inside a full form never get the op prefix."""
        tok = self.peek()
        if tok is not None and tok.kind == "hash":
            return self.full_attribute(expected=mnemonic)
        return parse_stripped()

    # -- full attributes ---------------------------------------------------------------------
    def full_attribute(self, expected: str | None = None):
        """``#sdy.mnemonic<...>`` or ``#sdy<mnemonic ...>``."""
        tok = self.next()
        try:
            if tok.text == "#sdy":
                self.expect("<")
                mnemonic = self.keyword()
                value = self.dispatch(mnemonic, tok)
                self.expect(">")
            elif tok.text.startswith("#sdy."):
                value = self.dispatch(tok.text[5:], tok)
            else:
                raise SdyParseError(tok.start, "invalid kind of attribute specified")
        except SdyParseError as e:
            e.errors = [(o, m, False) for o, m, _ in e.errors]
            raise
        return value

    def dispatch(self, mnemonic: str, tok: _Tok):
        parse = _ATTRIBUTES.get(mnemonic)
        if parse is None:
            raise SdyParseError(tok.start, f"unknown attribute `{mnemonic}` in dialect `sdy`",
                                False)
        return parse(self)

    def run(self, parse, whole: bool = True):
        """Parse with ``parse``, which must consume every token if ``whole``: (value,
        warnings). Errors come out as one SdyParseError, the warnings emitted before the
        failure first."""
        try:
            value = parse()
            if whole and self.peek() is not None:
                raise self.error(f"unexpected '{self.peek().text}' after the attribute",
                                 prefixed=False)
        except SdyParseError as e:
            e.errors = [*self.warnings, *e.errors]
            raise
        return value, self.warnings

    # -- meshes ------------------------------------------------------------------------------
    def mesh_axis(self) -> MeshAxis:
        start = self.here()
        name = self.param("Sdy_MeshAxis", "name", "::llvm::StringRef", self.string)
        self.expect("=")
        size = self.param("Sdy_MeshAxis", "size", "int64_t", self.integer)
        message = MeshAxis.verify_params(name, size)
        if message is not None:
            raise SdyParseError(start, message)
        return MeshAxis(name, size)

    def mesh(self) -> Mesh:
        start = self.here()
        self.expect("<")
        self.expect("[")
        axes: list = []
        if not self.optional("]"):
            axes = self.param("Sdy_Mesh", "axes", "::llvm::ArrayRef<MeshAxisAttr>",
                              lambda: self.comma_list(self.mesh_axis))
            self.expect("]")
        device_ids: list = []
        if self.optional(","):
            self.keyword("device_ids")
            self.expect("=")
            self.expect("[")
            device_ids = self.param("Sdy_Mesh", "device_ids", "::llvm::ArrayRef<int64_t>",
                                    lambda: self.comma_list(self.integer))
            self.expect("]")
        self.expect(">")
        message = Mesh.verify_params(axes, device_ids)
        if message is not None:
            raise SdyParseError(start, message)
        return Mesh(tuple(axes), tuple(device_ids))

    # -- axes and shardings --------------------------------------------------------------------
    def sub_axis_info(self) -> SubAxisInfo:
        self.expect("(")
        pre = self.param("Sdy_SubAxisInfo", "pre_size", "int64_t", self.integer)
        self.expect(")")
        size = self.param("Sdy_SubAxisInfo", "size", "int64_t", self.integer)
        return SubAxisInfo(pre, size)

    def axis_ref(self) -> AxisRef:
        name = self.param("Sdy_AxisRef", "name", "::llvm::StringRef", self.string)
        if self.optional(":"):
            info = self.param("Sdy_AxisRef", "sub_axis_info", "SubAxisInfoAttr",
                              lambda: self.with_fallback(self.sub_axis_info, "sub_axis_info"))
            return AxisRef(name, info)
        return AxisRef(name)

    def axis_refs(self) -> list[AxisRef]:
        return self.comma_list(lambda: self.with_fallback(self.axis_ref, "axis_ref"))

    def dimension_sharding(self) -> DimensionSharding:
        self.expect("{")
        axes: list = []
        is_closed = True
        while not self.optional("}"):
            if axes:
                self.expect(",")
            if self.optional("?"):
                is_closed = False
                self.expect("}")
                break
            axes.append(self.axis_ref())
        priority = None
        tok = self.peek()
        if tok is not None and tok.kind == "word":
            self.pos += 1
            text = tok.text
            digits = text[1:]
            if len(text) < 2 or text[0] != "p" or not digits.isdigit():
                raise self.error(f"expecting priority in format 'p<number>', got: {text}")
            if digits.startswith("0") and len(digits) > 1:
                raise self.error(f"priorities with leading zeros are not allowed, got: {text}")
            if int(digits) > INT64_MAX:
                raise self.error(f"expecting integer priority, got: {text}")
            priority = int(digits)
        return DimensionSharding(tuple(axes), is_closed, priority)

    def mesh_or_ref(self):
        """Upstream ``parseMeshOrRef``: ``mesh<...>`` or a flat symbol reference; anything
        else is parsed as some attribute, then rejected."""
        if self.optional_keyword("mesh") is not None:
            try:
                return self.mesh()
            except SdyParseError as e:
                e.errors.append((self.here(), "failed to parse MeshAttr", True))
                raise
        tok = self.peek()
        if tok is not None and tok.kind == "symbol" and not self._nested_symbol_follows():
            self.pos += 1
            body = tok.text[1:]
            return unquote(body) if body.startswith('"') else body
        try:
            if not self._skip_other_attribute():
                raise self.error("expected attribute value", prefixed=False,
                                 at=self.after_previous())
            raise SdyParseError(tok.start, "invalid kind of attribute specified")
        except SdyParseError as e:
            e.errors.append((self.here(), "expecting MeshAttr or FlatSymbolRefAttr, got: "
                             "<<NULL ATTRIBUTE>>", True))
            raise

    def _nested_symbol_follows(self) -> bool:
        """``@a::@b``: a nested reference, which is not a flat one."""
        nxt = self.toks[self.pos + 1:self.pos + 3]
        return len(nxt) == 2 and nxt[0].text == ":" and nxt[1].text == ":" and \
            nxt[0].end == nxt[1].start

    def _skip_other_attribute(self) -> bool:
        """Step over a well-formed attribute of another kind (a string, a number, a
        nested symbol reference, a ``#dialect<...>`` attribute or a keyword constant);
        False if no attribute starts here."""
        tok = self.peek()
        if tok is None:
            return False
        if tok.kind in ("string", "int") or tok.text in ("true", "false", "unit"):
            self.pos += 1
            return True
        if tok.kind == "punct" and tok.text == "-" and self.pos + 1 < len(self.toks) and \
                self.toks[self.pos + 1].kind == "int":
            self.pos += 2
            return True
        if tok.kind == "symbol":
            self.pos += 1
            while self._at_double_colon():
                self.pos += 3
            return True
        if tok.kind == "hash":
            self.pos += 1
            if self.is_punct("<") and self.toks[self.pos].start == tok.end:
                self._skip_balanced()
            return True
        return False

    def _at_double_colon(self) -> bool:
        nxt = self.toks[self.pos:self.pos + 3]
        return len(nxt) == 3 and nxt[0].text == ":" and nxt[1].text == ":" and \
            nxt[2].kind == "symbol"

    def _skip_balanced(self) -> None:
        depth = 0
        while self.pos < len(self.toks):
            text = self.next().text
            if text in "<[({":
                depth += 1
            elif text in ">])}":
                depth -= 1
                if depth == 0:
                    return

    def axis_list_in_braces(self) -> list[AxisRef]:
        self.expect("{")
        try:
            axes = self.axis_refs()  # at least one: upstream's FieldParser<SmallVector<...>>
        except SdyParseError as e:
            e.errors.append((self.here(), "failed to parse axis list which is expected to be "
                             "an `ArrayRef<AxisRefAttr>`", True))
            raise
        self.expect("}")
        return axes

    def replicated_and_unreduced(self):
        replicated: list = []
        unreduced: list = []
        reduction = ReductionOp.SUM
        while self.optional(","):
            if not replicated and self.optional_keyword("replicated"):
                try:
                    self.expect("=")
                    replicated = self.axis_list_in_braces()
                except SdyParseError as e:
                    e.errors.append((self.here(), "failed to parse Sdy_TensorSharding parameter "
                                     "'replicated_axes'", True))
                    raise
            elif not unreduced and self.optional_keyword("unreduced"):
                try:
                    if self.optional("="):
                        for case in ReductionOp:
                            if self.optional_keyword(case.keyword):
                                reduction = case
                                break
                    unreduced = self.axis_list_in_braces()
                except SdyParseError as e:
                    e.errors.append((self.here(), "failed to parse Sdy_TensorSharding parameter "
                                     "'unreduced_axes'", True))
                    raise
            else:
                raise self.error("failed to parse Sdy_TensorSharding, expected valid named axis "
                                 "list after comma")
        return replicated, unreduced, reduction

    def tensor_sharding(self) -> TensorSharding:
        self.expect("<")
        mesh = self.mesh_or_ref()
        self.expect(",")
        self.expect("[")
        dims: list = []
        if not self.optional("]"):
            dims = self.param("Sdy_TensorSharding", "dim_shardings",
                              "::llvm::ArrayRef<DimensionShardingAttr>",
                              lambda: self.comma_list(
                                  lambda: self.with_fallback(self.dimension_sharding,
                                                             "dimension_sharding")))
            self.expect("]")
        replicated, unreduced, reduction = self.replicated_and_unreduced()
        self.expect(">")
        return TensorSharding(mesh, tuple(dims), tuple(replicated), tuple(unreduced), reduction)

    def sharding_list(self) -> list[TensorSharding]:
        """``[<...>, ...]`` (custom<StrippedTensorShardingPerValueAttr> in op syntax)."""
        self.expect("[")
        if self.optional("]"):
            return []
        items = self.comma_list(lambda: self.with_fallback(self.tensor_sharding, "sharding"))
        self.expect("]")
        return items

    def tensor_sharding_per_value(self) -> TensorShardingPerValue:
        self.expect("<")
        self.expect("[")
        shardings: list = []
        if not self.optional("]"):
            shardings = self.param(
                "Sdy_TensorShardingPerValue", "shardings", "::llvm::ArrayRef<TensorShardingAttr>",
                lambda: self.comma_list(lambda: self.with_fallback(self.tensor_sharding,
                                                                   "sharding")))
            self.expect("]")
        self.expect(">")
        return TensorShardingPerValue(tuple(shardings))

    def manual_axes(self) -> ManualAxes:
        self.expect("{")
        names: list = []
        if not self.optional("}"):
            names = self.param("Sdy_ManualAxes", "value", "::llvm::ArrayRef<StringAttr>",
                               lambda: self.comma_list(self._string_attr))
            self.expect("}")
        return ManualAxes(tuple(names))

    def _string_attr(self) -> str:
        tok = self.peek()
        if tok is None or tok.kind != "string":
            raise self.error("expected attribute value", prefixed=False, at=self.after_previous())
        return self.string()

    def axis_ref_list(self) -> AxisRefList:
        self.expect("{")
        axes: list = []
        if not self.optional("}"):
            axes = self.param("Sdy_AxisRefList", "value", "::llvm::ArrayRef<AxisRefAttr>",
                              self.axis_refs)
            self.expect("}")
        return AxisRefList(tuple(axes))

    def list_of_axis_ref_lists(self) -> ListOfAxisRefLists:
        self.expect("[")
        lists: list = []
        if not self.optional("]"):
            lists = self.param("Sdy_ListOfAxisRefLists", "value",
                               "::llvm::ArrayRef<AxisRefListAttr>",
                               lambda: self.comma_list(
                                   lambda: self.with_fallback(self.axis_ref_list,
                                                              "axis_ref_list")))
            self.expect("]")
        return ListOfAxisRefLists(tuple(lists))

    def all_to_all_param(self) -> AllToAllParam:
        self.expect("{")
        axes = self.param("Sdy_AllToAllParamAttr", "axes", "::llvm::ArrayRef<AxisRefAttr>",
                          self.axis_refs)
        self.expect("}")
        self.expect(":")
        src = self.param("Sdy_AllToAllParamAttr", "src_dim", "int64_t", self.integer)
        self.expect("->")
        tgt = self.param("Sdy_AllToAllParamAttr", "tgt_dim", "int64_t", self.integer)
        return AllToAllParam(tuple(axes), src, tgt)

    def all_to_all_param_list(self) -> AllToAllParamList:
        self.expect("[")
        params: list = []
        if not self.optional("]"):
            params = self.param("Sdy_AllToAllParamList", "value",
                                "::llvm::ArrayRef<AllToAllParamAttr>",
                                lambda: self.comma_list(
                                    lambda: self.with_fallback(self.all_to_all_param,
                                                               "all_to_all_param")))
            self.expect("]")
        return AllToAllParamList(tuple(params))

    # -- sharding rules --------------------------------------------------------------------------
    def factor_index(self, symbols: str) -> tuple[int, str]:
        """One factor symbol off the front of ``symbols`` (upstream parseFactorSymbolIndex)."""
        if not symbols.startswith("z_"):
            symbol = symbols[0]
            if not "i" <= symbol <= "z":
                raise self.error(f"expecting symbol from 'i' to 'z'. Received: '{symbol}'")
            return ord(symbol) - ord("i"), symbols[1:]
        digits = re.match(r"[0-9]*", symbols[2:]).group()
        if not digits:
            raise self.error(f"expecting integer after 'z_'. Received: '{symbols}'")
        if digits[0] == "0":
            raise self.error(f"expecting positive integer without leading zeros. Received: "
                             f"'{digits}'")
        index = int(digits)
        if index > INT64_MAX:
            # upstream reports this without failing, and goes on with index 0 (`z`)
            self.warnings.append((self.here(), f"expecting symbol index <=2^63-1. Received: "
                                               f"'{digits}'", True))
            index = 0
        # upstream adds in int64 and lets it wrap around
        index = ((index + START_AT_Z + (1 << 63)) % (1 << 64)) - (1 << 63)
        return index, symbols[2 + len(digits):]

    def dim_mapping(self) -> DimMapping:
        word = self.optional_keyword()
        if word is None:
            return DimMapping(())  # upstream defers the failure to verification
        indices = []
        while word:
            index, word = self.factor_index(word)
            indices.append(index)
        return DimMapping(tuple(indices))

    def tensor_mapping(self) -> TensorMapping:
        self.expect("[")
        dims: list = []
        if not self.optional("]"):
            dims = self.param("Sdy_TensorMapping", "dim_mappings",
                              "::llvm::ArrayRef<DimMappingAttr>",
                              lambda: self.comma_list(
                                  lambda: self.with_fallback(self.dim_mapping, "dim_mapping")))
            self.expect("]")
        return TensorMapping(tuple(dims))

    def factor_sizes(self) -> list[int]:
        sizes: list = []
        if not self.optional("{"):
            return sizes
        while True:
            word = self.keyword()
            index, rest = self.factor_index(word)
            if index != len(sizes):
                raise self.error("expecting factor indices to be ordered like an iota "
                                 "([0,1,2,...], e.g. {i=#, j=#, ...}). Expecting factor index "
                                 f"symbol '{factor_symbol(len(sizes))}', received: "
                                 f"'{factor_symbol(index)}'")
            if rest:
                raise self.error(f"expecting single factor symbol: {rest}")
            self.expect("=")
            sizes.append(self.integer())
            if not self.optional(","):
                break
        self.expect("}")
        return sizes

    def factors_with_type(self, kind: str) -> list[int]:
        if self.optional_keyword(kind) is None:
            return []
        self.expect("=")
        factors: list = []
        if not self.optional("{"):
            return factors
        while True:
            index, _ = self.factor_index(self.keyword())
            factors.append(index)
            if not self.optional(","):
                break
        self.expect("}")
        return factors

    def op_sharding_rule(self) -> OpShardingRule:
        self.expect("<")
        self.expect("(")
        operands = self.param("Sdy_OpShardingRule", "operand_mappings",
                              "::llvm::ArrayRef<TensorMappingAttr>", self._mappings)
        self.expect(")")
        self.expect("->")
        self.expect("(")
        results = self.param("Sdy_OpShardingRule", "result_mappings",
                             "::llvm::ArrayRef<TensorMappingAttr>", self._mappings)
        self.expect(")")
        sizes = self.factor_sizes()
        special = {kind: self.factors_with_type(kind)
                   for kind in ("reduction", "need_replication", "permutation",
                                "blocked_propagation")}
        custom = False
        if self.optional(","):
            self.keyword("custom")
            custom = True
        self.expect(">")
        return OpShardingRule(tuple(sizes), tuple(operands), tuple(results),
                              tuple(special["reduction"]), tuple(special["need_replication"]),
                              tuple(special["permutation"]), tuple(special["blocked_propagation"]),
                              custom)

    def _mappings(self) -> list[TensorMapping]:
        return self.comma_list(lambda: self.with_fallback(self.tensor_mapping, "tensor_mapping"))

    # -- propagation edges ---------------------------------------------------------------------
    def edge_value_ref(self) -> EdgeValueRef:
        tok = self.peek()
        if tok is None or tok.text not in ("operand", "result"):
            raise self.error("expected ::mlir::sdy::EdgeNodeType to be one of: operand, result")
        self.pos += 1
        self.expect("-")
        index = self.param("Sdy_EdgeValueRef", "index", "int64_t", self.integer)
        return EdgeValueRef(tok.text, index)

    def axis_propagation(self) -> AxisToPropagationDetails:
        self.expect("{")
        axis = self.param("Sdy_AxisToPropagationDetails", "axis_name",
                          "::mlir::sdy::AxisRefAttr",
                          lambda: self.with_fallback(self.axis_ref, "axis_ref"))
        self.expect("=")
        source = self.param("Sdy_AxisToPropagationDetails", "source",
                            "::mlir::sdy::EdgeValueRefAttr",
                            lambda: self.with_fallback(self.edge_value_ref, "edge_value_ref"))
        self.expect("->")
        self.expect("[")
        targets = self.param("Sdy_AxisToPropagationDetails", "targets",
                             "::llvm::ArrayRef<EdgeValueRefAttr>",
                             lambda: self.comma_list(self.edge_value_ref))
        self.expect("]")
        self.expect("}")
        return AxisToPropagationDetails(axis, source, tuple(targets))

    def propagation_step(self) -> PropagationOneStep:
        self.expect("{")
        self.keyword("step")
        self.expect("-")
        step = self.param("Sdy_PropagationOneStep", "step_index", "int64_t", self.integer)
        self.expect("=")
        self.expect("[")
        entries = self.param("Sdy_PropagationOneStep", "axis_entries",
                             "::llvm::ArrayRef<AxisToPropagationDetailsAttr>",
                             lambda: self.comma_list(self.axis_propagation))
        self.expect("]")
        self.expect("}")
        return PropagationOneStep(step, tuple(entries))

    def propagation_edges(self) -> PropagationEdges:
        start = self.here()
        self.expect("<")
        self.expect("[")
        steps = self.param("Sdy_PropagationEdges", "value",
                           "::llvm::ArrayRef<PropagationOneStepAttr>",
                           lambda: self.comma_list(
                               lambda: self.with_fallback(self.propagation_step,
                                                          "propagation_one_step")))
        self.expect("]")
        self.expect(">")
        edges = PropagationEdges(tuple(steps))
        message = edges.verify_params()
        if message is not None:
            raise SdyParseError(start, message)
        return edges


# mnemonic -> how its stripped form is parsed
_ATTRIBUTES = {
    "sharding": SdyAttrParser.tensor_sharding,
    "sharding_per_value": SdyAttrParser.tensor_sharding_per_value,
    "mesh": SdyAttrParser.mesh,
    "mesh_axis": SdyAttrParser.mesh_axis,
    "op_sharding_rule": SdyAttrParser.op_sharding_rule,
    "propagation_edges": SdyAttrParser.propagation_edges,
    "manual_axes": SdyAttrParser.manual_axes,
    "axis_ref_list": SdyAttrParser.axis_ref_list,
    "list_of_axis_ref_lists": SdyAttrParser.list_of_axis_ref_lists,
    "all_to_all_param_list": SdyAttrParser.all_to_all_param_list,
    "all_to_all_param": SdyAttrParser.all_to_all_param,
    "dimension_sharding": SdyAttrParser.dimension_sharding,
    "axis_ref": SdyAttrParser.axis_ref,
    "sub_axis_info": SdyAttrParser.sub_axis_info,
    "tensor_mapping": SdyAttrParser.tensor_mapping,
    "dim_mapping": SdyAttrParser.dim_mapping,
    "axis_to_propagation_details": SdyAttrParser.axis_propagation,
    "propagation_one_step": SdyAttrParser.propagation_step,
    "edge_value_ref": SdyAttrParser.edge_value_ref,
}

# what each op syntax slot holds: how to parse it and its mnemonic (for the full form)
STRIPPED = {
    "sharding": ("sharding", SdyAttrParser.tensor_sharding),
    "sharding_list": (None, SdyAttrParser.sharding_list),
    "mesh": ("mesh", SdyAttrParser.mesh),
    "manual_axes": ("manual_axes", SdyAttrParser.manual_axes),
    "axis_ref_list": ("axis_ref_list", SdyAttrParser.axis_ref_list),
    "list_of_axis_ref_lists": ("list_of_axis_ref_lists", SdyAttrParser.list_of_axis_ref_lists),
    "all_to_all_param_list": ("all_to_all_param_list", SdyAttrParser.all_to_all_param_list),
}


def parse_full(text: str, start: int, end: int):
    """A qualified ``#sdy...`` attribute spanning ``text[start:end]``: (value, warnings)."""
    p = SdyAttrParser(text, start, end)
    return p.run(p.full_attribute)


def parse_stripped(kind: str, text: str, start: int, end: int, whole: bool = True):
    """A stripped attribute in op syntax (``kind`` is a key of :data:`STRIPPED`):
    (value, warnings). With ``whole=False`` the text may go on after the attribute."""
    p = SdyAttrParser(text, start, end)
    _, parse = STRIPPED[kind]
    return p.run(lambda: parse(p), whole)
