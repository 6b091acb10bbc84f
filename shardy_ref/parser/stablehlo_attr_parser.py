"""Reading StableHLO attributes from text, accepting what StableHLO's C++ parsers accept.

The main parser hands over a dialect attribute as its name token (``#stablehlo``,
``#stablehlo.gather``) and its balanced ``<...>`` body. :func:`parse_stablehlo_attr` reads
both spellings (``#stablehlo.dot<...>`` and ``#stablehlo<dot<...>>``) with a small MLIR-like
lexer and recursive descent, one method per mnemonic (``_PARSERS``). Errors are
:class:`AttrSyntaxError`, with MLIR's message at the offset MLIR reports. Also here: the
convolution op's ``dim_numbers`` / ``window`` syntax and dot's ``precision = [...]``.
See ``notes/stablehlo_attrs.md`` and StableHLO's ``StablehloOps.cpp`` / ``AssemblyFormat.cpp``
at https://github.com/openxla/stablehlo/tree/3c9301c116f97fbaf696959a0ede32712aec587b/stablehlo/dialect
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import NamedTuple

from shardy_ref.ir import builtin_attrs as ba
from shardy_ref.ir import stablehlo_attrs as sa
from shardy_ref.ir import types as ty
from shardy_ref.ir.floatfmt import bits_to_float, round_float
from shardy_ref.parser import literals as lit


class AttrSyntaxError(ValueError):
    """Malformed attribute text: ``offset`` into ``name + body``, MLIR's ``message``, and the
    lines MLIR prints after it in ``notes`` (``failed parsing dot dimension numbers attribute``)."""

    def __init__(self, offset: int, message: str, notes: tuple[str, ...] = ()):
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.notes = notes

    def with_note(self, note: str) -> AttrSyntaxError:
        return AttrSyntaxError(self.offset, self.message, (*self.notes, note))


# MLIR's token classes, as far as attribute bodies need them. `1e5` is an int, then `e5`.
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_TOKEN = re.compile(rf"""\s*(?:
    (?P<arrow>->)
  | (?P<string>{_STRING})
  | (?P<hash>\#[A-Za-z_][A-Za-z0-9_$.\-]*)
  | (?P<bang>![A-Za-z_][A-Za-z0-9_$.\-]*)
  | (?P<sym>@(?:[A-Za-z_][A-Za-z0-9_$.\-]*|{_STRING}))
  | (?P<float>[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)
  | (?P<hex>0x[0-9a-fA-F]+)
  | (?P<int>[0-9]+)
  | (?P<id>[A-Za-z_][A-Za-z0-9_$.]*)
  | (?P<punct>.))""", re.X | re.S)
_STRING_RE = re.compile(_STRING)
_CLOSER = {"<": ">", "[": "]", "(": ")", "{": "}"}
_INT64_MAX = (1 << 63) - 1
_DIMS_CPP = "::llvm::ArrayRef<int64_t>"
_BOOLS = ("true", "false")
_INT_FOR_FLOAT = "unexpected decimal integer literal for a floating point value"
_MINUS_HEX_FLOAT = "hexadecimal float literal should not have a leading minus"


class _Tok(NamedTuple):
    kind: str  # a group name of _TOKEN, or "eof"
    text: str
    start: int
    end: int


class _Parser:
    """Recursive descent over ``text[pos:limit]``; ``limit`` ends the current dialect body.

    Errors follow MLIR's placement: "expected '<'"-style token errors sit right after the
    previous token (``wrong_token``), all others at the start of the current token."""

    def __init__(self, text: str, aliases: Mapping[str, ba.Attribute] | None = None):
        self.text, self.pos, self.limit = text, 0, len(text)
        self.aliases = aliases or {}
        self._tok: _Tok | None = None

    # -- tokens --------------------------------------------------------------------------------
    def peek(self) -> _Tok:
        if self._tok is None:
            m = _TOKEN.match(self.text, self.pos, self.limit)
            kind = m and m.lastgroup
            self._tok = _Tok(kind, m.group(kind), m.start(kind), m.end()) if kind else \
                _Tok("eof", "", self.limit, self.limit)
        return self._tok

    def next(self) -> _Tok:
        tok = self.peek()
        self.seek(tok.end)
        return tok

    def seek(self, pos: int, limit: int | None = None) -> None:
        self.pos, self._tok = pos, None
        self.limit = self.limit if limit is None else limit

    def here(self) -> int:
        return self.peek().start

    def at(self, kind: str, *texts: str) -> bool:
        tok = self.peek()
        return tok.kind == kind and (not texts or tok.text in texts)

    def take(self, kinds: tuple[str, ...], message: str, notes: tuple[str, ...] = ()) -> _Tok:
        """The next token, which must be one of ``kinds``."""
        if self.peek().kind not in kinds:
            raise AttrSyntaxError(self.here(), message, notes)
        return self.next()

    def accept(self, text: str) -> bool:
        """Consume the punctuation or keyword ``text`` if it is next."""
        tok = self.peek()
        if tok.text == text and tok.kind in ("punct", "arrow", "id"):
            self.next()
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise self.wrong_token(f"expected '{text}'")

    def expect_keyword(self, word: str) -> None:
        if not self.accept(word):
            raise AttrSyntaxError(self.here(), f"expected '{word}'")

    def wrong_token(self, message: str) -> AttrSyntaxError:
        """MLIR's ``emitWrongTokenError``: reported right after the previous token."""
        return AttrSyntaxError(len(self.text[:self.here()].rstrip()), message)

    def balanced_end(self, start: int) -> int:
        """The index after the ``>`` closing the ``<`` at ``start``. As in MLIR's pretty
        dialect bodies, ``<[({`` nest, ``->`` closes nothing and strings are skipped whole."""
        stack, i, text = [], start, self.text
        while i < len(text):
            c = text[i]
            if c == '"':
                m = _STRING_RE.match(text, i)
                i = m.end() if m else len(text)
                continue
            if c in _CLOSER:
                stack.append(c)
            elif c in ">])}" and not (c == ">" and text[i - 1] == "-"):
                if _CLOSER[stack[-1]] != c:
                    break
                stack.pop()
                if not stack:
                    return i + 1
            i += 1
        raise AttrSyntaxError(start, f"unbalanced '{stack[-1]}' character in pretty dialect name")

    # -- scalars ---------------------------------------------------------------------------------
    def keyword(self) -> str:
        return self.take(("id",), "expected valid keyword").text

    def string(self) -> str:
        return lit.unquote(self.take(("string",), "expected string").text)

    def integer(self) -> int:
        """MLIR ``parseInteger`` into an int64; ``true`` is -1 (a sign-extended i1)."""
        start = self.here()
        if self.at("id", *_BOOLS):
            return -1 if self.next().text == "true" else 0
        sign = -1 if self.accept("-") else 1
        tok = self.take(("int", "hex"), "expected integer value")
        value = sign * int(tok.text, 16 if tok.kind == "hex" else 10)
        if not sa.INT64_MIN <= value <= _INT64_MAX:
            raise AttrSyntaxError(start, "integer value too large")
        return value

    def boolean(self) -> bool:
        """``parseInteger`` into a bool: ``true``/``false``, ``1``/``0``."""
        start = self.here()
        if self.at("id", *_BOOLS):
            return self.next().text == "true"
        if (value := self.integer()) not in (0, 1):
            raise AttrSyntaxError(start, "integer value too large")
        return bool(value)

    def float_(self) -> float:
        """MLIR ``parseFloat(double)``: a float literal, or its f64 bits in hex."""
        sign = -1.0 if self.accept("-") else 1.0
        tok, start = self.peek(), self.here()
        if tok.kind == "int":
            raise AttrSyntaxError(start, _INT_FOR_FLOAT, ("add a trailing dot to make the "
                                                          "literal a float",))
        self.take(("float", "hex"), "expected floating point literal")
        if tok.kind == "float":
            return sign * float(tok.text)
        if sign < 0:
            raise AttrSyntaxError(start, _MINUS_HEX_FLOAT)
        if int(tok.text, 16) >> 64:
            raise AttrSyntaxError(start, "hexadecimal float constant out of range for type")
        return bits_to_float(int(tok.text, 16), "f64")

    def dims(self) -> tuple[int, ...]:
        """``[1, ?, -2]`` (StableHLO ``parseDimSizes``); ``?`` is INT64_MIN."""
        self.expect("[")
        return tuple(self.comma_list(self.dim_size, "]"))

    def dim_size(self) -> int:
        return sa.INT64_MIN if self.accept("?") else self.integer()

    def comma_list(self, read: Callable, close: str | None = None) -> list:
        """``a, b, c``, then ``close``; with a ``close`` the list may be empty."""
        if close is not None and self.accept(close):
            return []
        items = [read()]
        while self.accept(","):
            items.append(read())
        if close is not None:
            self.expect(close)
        return items

    def enum_value(self, kind: str, values: tuple[str, ...]) -> str:
        """A keyword or quoted string naming one of ``values`` (ODS ``EnumAttr`` parser)."""
        cpp = "".join(w.capitalize() for w in kind.split("_"))
        notes = (f"failed to parse StableHLO_{cpp}Attr parameter 'value' which is to be a "
                 f"`::mlir::stablehlo::{cpp}`",)
        tok = self.take(("id", "string"), "expected valid keyword or string", notes)
        value = lit.unquote(tok.text) if tok.kind == "string" else tok.text
        if value not in values:
            raise AttrSyntaxError(tok.start, f"expected ::mlir::stablehlo::{cpp} to be one of: "
                                  f"{', '.join(values)}", notes)
        return value

    def type_(self) -> ty.Type:
        """A type: element types, ``tensor<...>``, ``!stablehlo.token``."""
        tok = self.peek()
        end = tok.end
        if tok.kind in ("id", "bang") and self.text.startswith("<", end):
            end = self.balanced_end(end)
        text = self.text[tok.start:end]
        try:
            result = ty.TOKEN if text == "!stablehlo.token" else \
                lit.tensor_type(text) if text.startswith("tensor<") else lit.element_type(text)
        except (ValueError, KeyError, IndexError):
            raise self.wrong_token("expected non-function type") from None
        self.seek(end)
        return result

    # -- attribute values ----------------------------------------------------------------------
    def attribute(self) -> ba.Attribute:
        """An attribute value: StableHLO attributes and the builtin ones they can hold."""
        tok = self.peek()
        if tok.kind == "hash":
            return self.hash_attr()
        if tok.kind == "sym":
            return self.symbol_ref()
        if tok.kind == "string":
            return ba.StringAttr(lit.unquote(self.next().text), self.optional_type())
        if tok.kind in ("int", "hex", "float") or tok.text == "-":
            return self.number()
        if self.accept("["):
            return ba.ArrayAttr(tuple(self.comma_list(self.attribute, "]")))
        if self.at("id", "true", "false", "unit"):
            return ba.UNIT if self.next().text == "unit" else ba.bool_attr(tok.text == "true")
        if self.at("id", "dense") and self.text.startswith("<", tok.end):
            return self.dense()
        if self.at("id", "array") and self.text.startswith("<", tok.end):  # kept as text
            self.seek(self.balanced_end(tok.end))
            return ba.OpaqueAttr(self.text[tok.start:self.pos])
        try:
            return ba.TypeAttr(self.type_())
        except AttrSyntaxError:
            raise self.wrong_token("expected attribute value") from None

    def attribute_of(self, cls: type, check: Callable = lambda attr: True) -> ba.Attribute:
        """MLIR ``parseAttribute<T>``: any attribute, which must then be a ``cls``."""
        start = self.here()
        attr = self.attribute()
        if not (isinstance(attr, cls) and check(attr)):
            raise AttrSyntaxError(start, "invalid kind of attribute specified")
        return attr

    def custom_attr(self, cls: type, parse_params: Callable) -> ba.Attribute:
        """ODS ``parseCustomAttributeWithFallback``: a full ``#...`` attribute, or the stripped
        parameters of ``cls``."""
        return self.attribute_of(cls) if self.at("hash") else parse_params(self)

    def optional_type(self) -> ty.Type | None:
        return self.type_() if self.accept(":") else None

    def number(self) -> ba.Attribute:
        sign = -1 if self.accept("-") else 1
        tok = self.take(("int", "hex", "float"), "expected integer value")
        if tok.kind != "float":
            return ba.IntegerAttr(sign * int(tok.text, 0 if tok.kind == "hex" else 10),
                                  self.optional_type() or ty.I64)
        t = self.optional_type() or ty.F64
        return ba.FloatAttr(round_float(sign * float(tok.text), getattr(t, "name", "f64")), t)

    def symbol_ref(self) -> ba.SymbolRefAttr:
        names = [lit.symbol_name(self.next().text)]
        while self.text.startswith("::@", self.here()):
            self.seek(self.here() + 2)
            names.append(lit.symbol_name(self.next().text))
        return ba.SymbolRefAttr(names[0], tuple(names[1:]))

    def dense(self) -> ba.DenseElementsAttr:
        tok = self.next()
        self.seek(end := self.balanced_end(tok.end))
        self.expect(":")
        try:
            return lit.parse_dense(self.text[tok.end + 1:end - 1], self.type_(),
                                   tok.end + 1 - tok.start)
        except lit.LiteralError as e:
            raise AttrSyntaxError(tok.start + e.offset, str(e)) from None

    def hash_attr(self) -> ba.Attribute:
        """``#stablehlo.mn<...>`` / ``#stablehlo<mn ...>`` (an optional ``: type`` after it is
        read and dropped, as MLIR does), an alias, or another dialect's attribute as text."""
        tok = self.next()
        name, has_body = tok.text, self.text.startswith("<", tok.end)
        if not ((name == "#stablehlo" and has_body) or name.startswith("#stablehlo.")):
            if has_body:
                self.seek(self.balanced_end(tok.end))
                return ba.OpaqueAttr(self.text[tok.start:self.pos])
            if name not in self.aliases:
                raise AttrSyntaxError(tok.start, f"undefined symbol alias id '{name[1:]}'")
            return self.aliases[name]
        end, outer_limit = self.balanced_end(tok.end) if has_body else tok.end, self.limit
        if name == "#stablehlo":  # opaque form: the mnemonic starts the body
            self.seek(tok.end + 1, end - 1)
            name_loc, mnemonic = self.here(), self.keyword()
        else:
            self.seek(tok.end, end)
            name_loc, mnemonic = tok.start + len("#stablehlo."), name[len("#stablehlo."):]
        if mnemonic not in _PARSERS:
            raise AttrSyntaxError(name_loc, "unknown StableHLO attribute")
        attr = _PARSERS[mnemonic](self)
        self.seek(end, outer_limit)  # upstream ignores anything left in an opaque body
        self.optional_type()
        return attr

    # -- struct helpers ----------------------------------------------------------------------------
    def param(self, attr: str, name: str, cpp_type: str, read: Callable):
        """``read()``, noting which ODS parameter failed as MLIR does."""
        try:
            return read()
        except AttrSyntaxError as e:
            raise e.with_note(f"failed to parse StableHLO_{attr} parameter '{name}' which is "
                              f"to be a `{cpp_type}`") from None

    def checked(self, loc: int, cls: type, *args, **kwargs) -> ba.Attribute:
        """``getChecked``: the attribute's own verifier errors are reported at ``loc``."""
        try:
            return cls(*args, **kwargs)
        except ValueError as e:
            raise AttrSyntaxError(loc, str(e)) from None

    def fixed_params(self, attr: str, params) -> list:
        """A declarative format ``<key = value, key = value>`` in fixed order."""
        self.expect("<")
        values = []
        for i, (key, cpp_type, read) in enumerate(params):
            if i:
                self.expect(",")
            self.expect_keyword(key)
            self.expect("=")
            camel = key.split("_")[0] + "".join(w.capitalize() for w in key.split("_")[1:])
            values.append(self.param(attr, camel, cpp_type, read))
        self.expect(">")
        return values

    def struct_params(self, attr: str, params: dict, optional: tuple[str, ...] = ()) -> dict:
        """ODS ``<struct(params)>``: ``key = value`` in any order. Without optional
        parameters the loop reads exactly one field per parameter, as the generated code does."""
        self.expect("<")
        values: dict = {}
        self.struct_field(attr, params, values)
        if not optional:
            for _ in range(len(params) - 1):
                self.expect(",")
                self.struct_field(attr, params, values)
        else:
            while self.accept(","):
                self.struct_field(attr, params, values)
            for key in params:
                if key not in values and key not in optional:
                    raise AttrSyntaxError(self.here(),
                                          f"struct is missing required parameter: {key}")
        self.expect(">")
        return values

    def struct_field(self, attr: str, params: dict, values: dict) -> None:
        key = self.take(("id",), "expected valid keyword", ("expected a parameter name in struct",))
        self.expect("=")
        if key.text in values or key.text not in params:
            raise AttrSyntaxError(self.here(),
                                  f"duplicate or unknown struct parameter name: {key.text}")
        cpp_type, read = params[key.text]
        values[key.text] = self.param(attr, key.text, cpp_type, read)

    def dims_struct(self, cls: type, what: str) -> ba.Attribute:
        """StableHLO ``parseStruct`` after its ``<``: the fields of ``cls`` in any order, each
        at most once, optionally a trailing comma, then ``>``."""
        keys = [(f.name, isinstance(f.default, tuple)) for f in fields(cls)]
        values: dict = {}
        try:
            while not self.accept(">"):
                found = False
                for key, is_list in keys:
                    if not self.accept(key):
                        continue
                    if key in values:
                        raise AttrSyntaxError(self.here(), f"duplicated `{key}` entry")
                    self.expect("=")
                    values[key] = self.dims() if is_list else self.integer()
                    if not self.accept(","):
                        self.expect(">")
                        return cls(**values)
                    found = True
                if not found:
                    raise AttrSyntaxError(self.here(), "expected one of: " +
                                          ", ".join(f"`{k}`" for k, _ in keys))
            return cls(**values)
        except AttrSyntaxError as e:
            raise e.with_note(f"failed parsing {what} dimension numbers attribute") from None

    # -- convolution dims ------------------------------------------------------------------------
    def conv_dims(self) -> sa.ConvDimensionNumbers:
        """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` (``parseConvolutionDimensions``)."""
        in_spatial, ins = self.conv_layout("bf")
        self.expect_keyword("x")
        kernel_spatial, kernel = self.conv_layout("io")
        self.expect("->")
        out_spatial, outs = self.conv_layout("bf")
        return sa.ConvDimensionNumbers(ins["b"], ins["f"], in_spatial, kernel["i"], kernel["o"],
                                       kernel_spatial, outs["b"], outs["f"], out_spatial)

    def conv_layout(self, letters: str) -> tuple[tuple[int, ...], dict[str, int]]:
        """One bracket: the tensor dim of each spatial dim, and of each letter."""
        allowed, spatial, named = list(letters), {}, {}
        self.expect("[")
        for index in itertools.count():
            loc = self.here()
            if self.at("int") or self.at("hex") or self.at("punct", "-") or self.at("id", *_BOOLS):
                dim = self.integer()
                if dim < 0:
                    raise AttrSyntaxError(loc, f"Unexpected dimension {dim}")
                if dim in spatial:
                    raise AttrSyntaxError(loc, f"Duplicate entries for spatial dimension {dim}")
                spatial[dim] = index
            else:
                word = self.keyword()
                if len(word) != 1 or not allowed:
                    raise AttrSyntaxError(loc, f"Unexpected keyword {word}")
                if word not in allowed:
                    raise AttrSyntaxError(loc, f"Unexpected dimension {word}, expecting "
                                          f"{', '.join(allowed)}")
                allowed.remove(word)
                named[word] = index
            if not self.accept(","):
                break
        if allowed:
            raise AttrSyntaxError(self.here(), f"Expected dimensions {', '.join(allowed)} "
                                  "not specified")
        self.expect("]")
        count = max(spatial, default=-1) + 1
        if missing := _first_missing(spatial, count, 10):
            raise AttrSyntaxError(self.here(), f"Expected spatial dimensions "
                                  f"{', '.join(map(str, missing))} not specified")
        return tuple(spatial[d] for d in range(count)), named

    # -- one method per mnemonic (registered in _PARSERS) ------------------------------------------
    def enum(self, kind: str) -> sa.StablehloEnum:
        return sa.StablehloEnum(kind, self.enum_value(kind, sa.ENUMS[kind]))

    def result_accuracy_mode(self) -> sa.ResultAccuracyMode:
        self.expect("<")
        value = self.enum_value("result_accuracy_mode", sa.RESULT_ACCURACY_MODES)
        self.expect(">")
        return sa.ResultAccuracyMode(value)

    def result_accuracy(self) -> sa.ResultAccuracy:
        self.expect("<")
        tolerances = {}
        for key, read in (("atol", self.float_), ("rtol", self.float_), ("ulps", self.integer)):
            if self.accept(key):
                self.expect("=")
                tolerances[key] = read()
                self.expect(",")
        self.expect_keyword("mode")
        self.expect("=")
        mode = self.attribute_of(sa.ResultAccuracyMode)
        self.expect(">")
        return self.checked(self.here(), sa.ResultAccuracy, mode=mode, **tolerances)

    def dims_attr(self, cls: type, what: str) -> ba.Attribute:
        self.expect("<")
        return self.dims_struct(cls, what)

    def conv(self) -> sa.ConvDimensionNumbers:
        self.expect("<")
        if self.accept("raw"):  # upstream's message says "dot" here too
            return self.dims_struct(sa.ConvDimensionNumbers, "dot")
        dims = self.conv_dims()
        self.expect(">")
        return dims

    def dot_algorithm(self) -> sa.DotAlgorithm:
        loc, t, i = self.here(), ("Type", self.type_), ("int64_t", self.integer)
        readers = (t, t, t, i, i, i, ("bool", self.boolean))
        return self.checked(loc, sa.DotAlgorithm, *self.fixed_params("DotAlgorithm", [
            (f.name, *reader) for f, reader in zip(fields(sa.DotAlgorithm), readers)]))

    def channel_handle(self) -> sa.ChannelHandle:
        return sa.ChannelHandle(**self.struct_params("ChannelHandle", {
            "handle": ("int64_t", self.integer), "type": ("int64_t", self.integer)}))

    def output_operand_alias(self) -> sa.OutputOperandAlias:
        return sa.OutputOperandAlias(*self.fixed_params("OutputOperandAlias", [
            ("output_tuple_indices", _DIMS_CPP, self.dims),
            ("operand_index", "int64_t", self.integer),
            ("operand_tuple_indices", _DIMS_CPP, self.dims)]))

    def type_extensions(self) -> sa.TypeExtensions:
        self.expect("<")
        self.expect_keyword("bounds")
        self.expect("=")
        bounds = self.dims()
        self.expect(">")
        return sa.TypeExtensions(bounds)

    def bounds(self) -> sa.TypeExtensions:
        if not self.accept("<"):  # upstream reads `#stablehlo<bounds>` as no bounds
            return sa.TypeExtensions(())
        return sa.TypeExtensions(tuple(self.comma_list(self.dim_size, ">")))

    def mesh_axis(self) -> sa.MeshAxis:
        return sa.MeshAxis(**self.struct_params("MeshAxis", {
            "name": ("::llvm::StringRef", self.string), "size": ("int64_t", self.integer)}))

    def mesh(self) -> sa.Mesh:
        self.expect("<")
        self.expect_keyword("axes")
        self.expect("=")
        self.expect("[")
        axes = self.param("Mesh", "axes", "::llvm::ArrayRef<stablehlo::MeshAxisAttr>", lambda:
                          self.comma_list(lambda: self.custom_attr(sa.MeshAxis, _Parser.mesh_axis)))
        self.expect("]")
        device_ids = None
        if self.accept(","):
            self.expect_keyword("device_ids")
            self.expect("=")
            device_ids = self.param("Mesh", "device_ids", "DenseIntElementsAttr", lambda:
                                    self.attribute_of(ba.DenseElementsAttr, _has_int_elements))
        self.expect(">")
        return sa.Mesh(tuple(axes), device_ids)

    def sub_axis_info(self) -> sa.SubAxisInfo:
        self.expect("(")
        pre_size = self.param("SubAxisInfo", "pre_size", "int64_t", self.integer)
        self.expect(")")
        return sa.SubAxisInfo(pre_size, self.param("SubAxisInfo", "size", "int64_t", self.integer))

    def axis_ref(self) -> sa.AxisRef:
        return sa.AxisRef(**self.struct_params("AxisRef", {
            "name": ("::llvm::StringRef", self.string),
            "sub_axis_info": ("SubAxisInfoAttr",
                              lambda: self.custom_attr(sa.SubAxisInfo, _Parser.sub_axis_info)),
        }, optional=("sub_axis_info",)))

    def replica_group_mesh_axes(self) -> sa.ReplicaGroupMeshAxes:
        loc = self.here()
        values = self.struct_params("ReplicaGroupMeshAxes", {
            "mesh": ("Attribute", self.attribute),
            "axes": ("ArrayAttr", lambda: self.attribute_of(ba.ArrayAttr))})
        return self.checked(loc, sa.ReplicaGroupMeshAxes, **values)


def _has_int_elements(attr: ba.DenseElementsAttr) -> bool:
    return isinstance(attr.element_type, (ty.IntegerType, ty.IndexType))


_PARSERS: dict[str, Callable[[_Parser], ba.Attribute]] = {
    **{kind: lambda p, kind=kind: p.enum(kind) for kind in sa.ENUMS},
    "dot": lambda p: p.dims_attr(sa.DotDimensionNumbers, "dot"),
    "gather": lambda p: p.dims_attr(sa.GatherDimensionNumbers, "gather"),
    "scatter": lambda p: p.dims_attr(sa.ScatterDimensionNumbers, "scatter"),
    **{name: getattr(_Parser, name) for name in (
        "result_accuracy_mode", "result_accuracy", "conv", "dot_algorithm", "channel_handle",
        "output_operand_alias", "type_extensions", "bounds", "mesh_axis", "mesh", "sub_axis_info",
        "axis_ref", "replica_group_mesh_axes")},
}


# -- public entry points ---------------------------------------------------------------------------
def parse_stablehlo_attr(name: str, body: str | None,
                         aliases: Mapping[str, ba.Attribute] | None = None) -> ba.Attribute:
    """The attribute written as ``name`` (``#stablehlo``, ``#stablehlo.gather``) plus its
    ``<...>`` ``body`` (or None). ``aliases`` resolves ``#alias`` references nested inside.
    Raises :class:`AttrSyntaxError` with an offset into ``name + body``."""
    p = _Parser(name + (body or ""), aliases)
    if not (name == "#stablehlo" or name.startswith("#stablehlo.")) or p.peek().end != len(name):
        raise AttrSyntaxError(0, f"not a StableHLO attribute name: {name!r}")
    return p.hash_attr()


def split_attr_text(text: str) -> tuple[str, str | None]:
    """``#stablehlo.dot<...>`` -> ``("#stablehlo.dot", "<...>")``: the inverse of name + body."""
    i = text.find("<")
    return (text, None) if i < 0 else (text[:i], text[i:])


def enum_from_text(kind: str, text: str) -> sa.StablehloEnum:
    """An enum in op syntax: ``LT``, ``"LT"`` or ``#stablehlo<comparison_direction LT>``."""
    if text.startswith("#"):
        attr = parse_stablehlo_attr(*split_attr_text(text))
        if not (isinstance(attr, sa.StablehloEnum) and attr.kind == kind):
            raise AttrSyntaxError(0, "invalid kind of attribute specified")
        return attr
    return _Parser(text).enum(kind)


def _first_missing(present, count: int, limit: int) -> list[int]:
    """The first ``limit`` numbers in ``range(count)`` not in ``present``, in time linear in
    ``len(present)`` (a dimension number may be near 2**63)."""
    missing: list[int] = []
    d = 0
    while d < count and len(missing) < limit:
        if d not in present:
            missing.append(d)
        d += 1
    return missing


def parse_conv_dims(text: str) -> sa.ConvDimensionNumbers:
    """The convolution op's ``dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``."""
    p = _Parser(text)
    dims = p.conv_dims()
    if not p.at("eof"):
        raise AttrSyntaxError(p.here(), f"unexpected '{p.peek().text}' after dimension numbers")
    return dims


def precision_config_from_names(names: list[str]) -> ba.ArrayAttr:
    """``precision = [DEFAULT, "HIGH"]`` of dot / dot_general: keywords or quoted strings (a full
    ``#stablehlo<precision HIGH>`` is rejected, as upstream does)."""
    return ba.ArrayAttr(tuple(_Parser(name).enum("precision") for name in names))


def format_precision_list(attr: ba.ArrayAttr) -> str:
    """``[DEFAULT, HIGHEST]``: a ``precision_config`` as dot / dot_general print it."""
    return "[" + ", ".join(e.value for e in attr) + "]"


# Pretty `window = {...}` keys of stablehlo.convolution -> inherent attributes, in print order.
_WINDOW_KEYS = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}


def conv_window_from_dict(entries: list[tuple[str, ba.Attribute]]) -> dict[str, ba.Attribute]:
    """The convolution's pretty ``window = {stride = [..], pad = [[..]], ...}`` (already parsed
    into builtin attributes) as its inherent attributes (upstream ``parseWindowAttributes``)."""
    out: dict[str, ba.Attribute] = {}
    for key, value in entries:
        name = _WINDOW_KEYS.get(key)
        if name is None or name in out:
            raise AttrSyntaxError(0, f"Unexpected keyword {key}")
        if key == "pad":
            pairs = [_window_ints(row) for row in _window_list(value)]
            for pair in pairs:
                if len(pair) != 2:
                    raise AttrSyntaxError(0, f"Expected array with 2 elements, got {len(pair)} "
                                          "elements instead")
            out[name] = _padding(pairs)
        elif key == "reverse":
            out[name] = ba.DenseArrayAttr(ty.I1, tuple(v != 0 for v in _window_ints(value)))
        else:
            out[name] = ba.DenseArrayAttr(ty.I64, _window_ints(value))
    return out


def _window_list(value: ba.Attribute) -> tuple:
    if not isinstance(value, ba.ArrayAttr):
        raise AttrSyntaxError(0, "expected '['")
    return value.value


def _window_ints(value: ba.Attribute) -> tuple[int, ...]:
    """The ints of ``[1, 2]``, read like ``parseInteger``: ``true`` is -1, ``false`` 0."""
    out = []
    for item in _window_list(value):
        if not isinstance(item, ba.IntegerAttr):
            raise AttrSyntaxError(0, "expected integer value")
        out.append(-item.value if item.type == ty.I1 else item.value)
        if not sa.INT64_MIN <= out[-1] <= _INT64_MAX:
            raise AttrSyntaxError(0, "integer value too large")
    return tuple(out)


def _padding(pairs: list[tuple[int, ...]]) -> ba.DenseElementsAttr:
    """``dense<..> : tensor<Nx2xi64>``, stored as a splat when all values are equal."""
    flat = tuple(v for pair in pairs for v in pair)
    t = ty.RankedTensorType((len(pairs), 2), ty.I64)
    if flat and all(v == flat[0] for v in flat):
        return ba.DenseElementsAttr(t, (flat[0],), True)
    return ba.DenseElementsAttr(t, flat)


def format_conv_window(attrs: Mapping[str, ba.Attribute]) -> str:
    """``{stride = [4, 4], pad = [[0, 0], [0, 0]], ..., reverse = [false, false]}`` from the
    convolution's inherent attributes; absent ones are left out (``{}`` when none)."""
    parts = []
    for key, name in _WINDOW_KEYS.items():
        if (attr := attrs.get(name)) is None:
            continue
        if key == "pad":
            v = attr.flat_values()
            body = ", ".join(f"[{v[i]}, {v[i + 1]}]" for i in range(0, len(v) - 1, 2))
        elif key == "reverse":
            body = ", ".join("true" if x else "false" for x in attr)
        else:
            body = ", ".join(map(str, attr))
        parts.append(f"{key} = [{body}]")
    return "{" + ", ".join(parts) + "}"
