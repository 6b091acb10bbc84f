"""Issue 15's parser and printer defects: each input once crashed, hung or printed text that did
not parse back. Every expected (line, col) and message was printed by real Shardy (jaxlib
0.10.2's ``sdy_opt``) for the same input, except where a comment says upstream has none."""
from __future__ import annotations

import pytest

from shardy_ref.tools.opt import Chunk, Options, process_chunk


def run(text: str, **options):
    """``shardy-ref-opt`` on ``text``: (output or None, the error diagnostics)."""
    out, diagnostics = process_chunk(Chunk(text, 1), Options(**options), "t.mlir")
    return out, [d for d in diagnostics if d.severity == "error"]


def first_error(text: str, **options) -> tuple[int, int, str]:
    out, errors = run(text, **options)
    assert out is None and errors
    e = errors[0]
    return e.location.line, e.location.col, e.message


def func_attr(value: str) -> str:
    return f"func.func @main() attributes {{foo = {value}}} {{\n  return\n}}\n"


def printed_attr(value: str, **options) -> str:
    """How the printer writes ``value`` back (the ``foo`` attribute of :func:`func_attr`)."""
    out, errors = run(func_attr(value), **options)
    assert out is not None, errors
    start = out.index("foo = ") + 6
    end = out.index("} {" if not options.get("generic") else "} : () -> ()", start)
    return out[start:end]


# -- 1. dense<...> elements of an index (and other) tensor: located errors, as MLIR's -------------

DENSE_ERRORS = [  # value at col 37 of func_attr -> (col, message)
    ("dense<1.0> : tensor<2xindex>", 43, "expected integer elements, but parsed floating-point"),
    ("dense<9223372036854775808> : tensor<2xindex>", 43,
     "integer constant out of range for type"),
    ("dense<true> : tensor<2xindex>", 43, "expected i1 type for 'true' or 'false' values"),
    ("dense<[1, -1.0]> : tensor<2xi8>", 48,
     "expected integer elements, but parsed floating-point"),
    ("dense<-0> : tensor<2xi8>", 44, "integer constant out of range for type"),
    ("dense<-1> : tensor<2xui8>", 44,
     "expected unsigned integer elements, but parsed negative value"),
    ("dense<[2, 1]> : tensor<2xi1>", 44, "integer constant out of range for type"),
    ("dense<1> : tensor<2xf32>", 43,
     "unexpected decimal integer literal for a floating point value"),
    ("dense<-0x3F80> : tensor<2xbf16>", 44,
     "hexadecimal float literal should not have a leading minus"),
    ("dense<[1 2]> : tensor<2xi32>", 45, "expected ']'"),
]


@pytest.mark.parametrize(("value", "col", "message"), DENSE_ERRORS)
def test_dense_element_errors_are_located_like_mlir(value, col, message):
    assert first_error(func_attr(value)) == (1, col, message)


def test_dense_index_literal_in_an_op_is_a_located_error():
    text = ("func.func @main() -> tensor<2xindex> {\n"
            "  %0 = stablehlo.constant dense<1.0> : tensor<2xindex>\n"
            "  return %0 : tensor<2xindex>\n}\n")
    assert first_error(text) == (2, 33, "expected integer elements, but parsed floating-point")


@pytest.mark.parametrize(("value", "printed"), [
    ("dense<[1, 0x10, -3]> : tensor<3xindex>", "dense<[1, 16, -3]> : tensor<3xindex>"),
    ("dense<-0x80> : tensor<2xi8>", "dense<-128> : tensor<2xi8>"),
    ("dense<[-1, 1]> : tensor<2xi1>", "dense<true> : tensor<2xi1>"),
])
def test_dense_integer_literals_read_as_mlir_reads_them(value, printed):
    assert printed_attr(value) == printed


# -- 2. a convolution dimension near 2**63 is a prompt error, not a hang --------------------------

CONV = ("func.func @main(%a: tensor<1x8x8x1xf32>, %k: tensor<3x3x1x1xf32>) -> "
        "tensor<1x6x6x1xf32> {\n"
        "  %0 = stablehlo.convolution(%a, %k) dim_numbers = DIMS, window = {} "
        "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
        "(tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x6x6x1xf32>\n"
        "  return %0 : tensor<1x6x6x1xf32>\n}\n")


def test_huge_convolution_dimension_is_a_prompt_located_error():
    # upstream aborts here ("SmallVector unable to grow"); we say what it says for [b, 5, f]
    dims = "[b, 9223372036854775807, f]x[0, 1, i, o]->[b, 0, 1, f]"
    assert first_error(CONV.replace("DIMS", dims)) == (
        2, 79, "custom op 'stablehlo.convolution' Expected spatial dimensions "
        "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 not specified")


@pytest.mark.parametrize(("dims", "col", "message"), [
    ("[b, 5, f]x[0, 1, i, o]->[b, 0, 1, f]", 61, "Expected spatial dimensions 0, 1, 2, 3, 4 "
     "not specified"),
    ("[b, 0, 0, f]x[0, i, o]->[b, 0, f]", 59, "Duplicate entries for spatial dimension 0"),
    ("[b, 0, f]x[0, i]->[b, 0, f]", 67, "Expected dimensions o not specified"),
    ("[ b , 0 ,f ] x [ 0, i, o ] -> [b, 2, f]", 91, "Expected spatial dimensions 0, 1 not "
     "specified"),
])
def test_convolution_dimension_errors_match_mlir(dims, col, message):
    assert first_error(CONV.replace("DIMS", dims)) == (
        2, col, f"custom op 'stablehlo.convolution' {message}")


# -- 3. integers that do not fit their type -------------------------------------------------------

GROUP = ("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
         "  sdy.sharding_group %arg0 group_id=ID : tensor<8xf32>\n"
         "  return %arg0 : tensor<8xf32>\n}\n")


@pytest.mark.parametrize(("group_id", "col"), [
    ("18446744073709551616", 37), ("-9223372036854775809", 38), ("0x10000000000000000", 37),
    ("-0", 38)])
def test_group_id_out_of_i64_is_rejected(group_id, col):
    assert first_error(GROUP.replace("ID", group_id)) == (
        2, col, "integer constant out of range for attribute")


@pytest.mark.parametrize("group_id", ["9223372036854775808", "0x8000000000000000"])
@pytest.mark.parametrize("generic", [False, True])
def test_group_id_wraps_like_mlir_and_round_trips(group_id, generic):
    out, errors = run(GROUP.replace("ID", group_id), generic=generic)
    assert out is not None, errors
    expected = ("group_id = -9223372036854775808 : i64" if generic
                else "group_id=-9223372036854775808 ")
    assert expected in out
    again, errors = run(out)
    assert again is not None and "-9223372036854775808" in again, errors


@pytest.mark.parametrize(("value", "col", "message"), [
    ("array<i64: 18446744073709551616>", 68, "integer constant out of range"),
    ("array<i64: -9223372036854775809>", 68, "integer constant out of range"),
    ("array<i32: 5000000000>", 58, "integer constant out of range"),
    ("array<i8: 255, -129>", 56, "integer constant out of range"),
    ("array<i8: -0>", 49, "integer constant out of range"),
    ("array<i1: 2>", 48, "expected 'true' or 'false' values for i1 type"),
    ("array<i8: true>", 47, "expected i1 type for 'true' or 'false' values"),
    ("array<i8: 1.5>", 47, "expected integer literal"),
    ("array<i64: 1,,2>", 50, "expected integer literal"),
    ("array<index: 1>", 43, "expected integer or float type, got: 'index'"),
    ("array<i4: 1>", 43, "element type bitwidth must be a multiple of 8"),
    ("array<f32: 1>", 48, "unexpected decimal integer literal for a floating point value"),
    ("array<f32: -0x3F80>", 49, "hexadecimal float literal should not have a leading minus"),
])
def test_dense_array_elements_that_do_not_fit_are_rejected(value, col, message):
    assert first_error(func_attr(value)) == (1, col, message)


@pytest.mark.parametrize(("value", "printed"), [
    ("array<i64: 9223372036854775808>", "array<i64: -9223372036854775808>"),
    ("array<i8: 0xFF>", "array<i8: -1>"),
    ("array<ui8: -1>", "array<ui8: 255>"),
    ("array<bf16: 0x3F80>", "array<bf16: 1.000000e+00>"),
    ("array<i0: 0>", "array<i0: 0>"),
])
def test_dense_array_elements_read_as_mlir_reads_them(value, printed):
    assert printed_attr(value) == printed
    assert printed_attr(value, generic=True) == printed


@pytest.mark.parametrize(("value", "col", "message"), [
    ("9223372036854775808 : index", 37, "integer constant out of range for attribute"),
    ("-129 : i8", 38, "integer constant out of range for attribute"),
    ("-0 : i8", 38, "integer constant out of range for attribute"),
    ("-1 : ui8", 38, "negative integer literal not valid for unsigned integer type"),
    ("1 : i0", 37, "integer constant out of range for attribute"),
])
def test_typed_integer_attributes_that_do_not_fit_are_rejected(value, col, message):
    assert first_error(func_attr(value)) == (1, col, message)


@pytest.mark.parametrize(("value", "printed"), [
    ("9223372036854775808", "-9223372036854775808 : i64"),
    ("0 : i0", "0 : i0"),
    ("-9223372036854775808 : index", "-9223372036854775808 : index"),
])
def test_typed_integer_attributes_read_as_mlir_reads_them(value, printed):
    assert printed_attr(value, generic=True) == printed


BROADCAST = ("func.func @main(%arg0: tensor<2xf32>) -> tensor<3x2xf32> {\n"
             "  %0 = stablehlo.broadcast_in_dim %arg0, dims = [DIM] : (tensor<2xf32>) -> "
             "tensor<3x2xf32>\n  return %0 : tensor<3x2xf32>\n}\n")


@pytest.mark.parametrize("dim", ["9223372036854775808", "-9223372036854775809"])
def test_custom_op_dimension_out_of_int64_is_rejected(dim):
    assert first_error(BROADCAST.replace("DIM", dim)) == (
        2, 50, "custom op 'stablehlo.broadcast_in_dim' integer value too large")


def test_tuple_index_out_of_i32_is_rejected():
    text = ("func.func @main(%arg0: tuple<tensor<2xf32>>) -> tensor<2xf32> {\n"
            "  %0 = stablehlo.get_tuple_element %arg0[5000000000] : (tuple<tensor<2xf32>>) -> "
            "tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    assert first_error(text) == (2, 42, "integer constant out of range for attribute")


# -- 4. a function nested in a function body ------------------------------------------------------

def test_nested_function_is_rejected_like_mlir():
    text = "func.func @main() {\n  func.func @baz() {\n    return\n  }\n  return\n}\n"
    assert first_error(text) == (
        2, 3, "'func.func' op symbol's parent must have the SymbolTable trait")


def test_named_module_nested_in_a_function_is_rejected():
    text = "func.func @main() {\n  builtin.module @inner {\n  }\n  return\n}\n"
    assert first_error(text) == (
        2, 3, "'builtin.module' op symbol's parent must have the SymbolTable trait")


def test_function_in_an_unregistered_op_is_accepted():
    """An unregistered op may be a symbol table, so MLIR lets it hold a function."""
    text = ('func.func @main() {\n  "test.region"() ({\n    func.func private @baz()\n'
            '    "test.end"() : () -> ()\n  }) : () -> ()\n  return\n}\n')
    out, errors = run(text, allow_unregistered=True)
    assert out is not None, errors


# -- 5. deep nesting of arrays and dictionaries ---------------------------------------------------

DEPTH = 500


def nested(kind: str, depth: int = DEPTH) -> str:
    if kind == "dict":
        return "{a = " * depth + "1" + "}" * depth
    return "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("kind", ["dict", "array"])
@pytest.mark.parametrize("generic", [False, True])
def test_deeply_nested_attributes_print_and_parse_back(kind, generic):
    value = nested(kind)
    assert printed_attr(value, generic=generic) == (value if kind == "array"
                                                    else value.replace("1}", "1 : i64}", 1))
    out, _ = run(func_attr(value), generic=generic)
    again, errors = run(out)
    assert again is not None, errors
    assert printed_attr(value) in again


@pytest.mark.parametrize("kind", ["dict", "array"])
def test_deeply_nested_attributes_compare_hash_and_str(kind):
    from shardy_ref.parser import parse_attribute

    a, b = parse_attribute(nested(kind)), parse_attribute(nested(kind))
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != parse_attribute(nested(kind, DEPTH - 1))
    assert str(a) == str(b)


@pytest.mark.parametrize("kind", ["dict", "array"])
def test_deeply_nested_attributes_survive_propagation(kind):
    value = nested(kind)
    text = ("func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> attributes "
            f"{{foo = {value}}} {{\n  %0 = stablehlo.add %arg0, %arg0 {{bar = {value}}} : "
            "tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n")
    out, errors = run(text, passes=[("sdy-propagation-pipeline", "")])
    assert out is not None, errors


def test_reduce_dimension_out_of_int64_is_rejected_like_mlir():
    text = ("func.func @f(%a: tensor<4x4xf32>, %i: tensor<f32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = "
            "[9223372036854775808] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n}\n")
    assert first_error(text) == (2, 81, "custom op 'stablehlo.reduce' integer value too large")


def test_a_bare_attribute_body_is_not_an_attribute_value():
    """`name = <a = 1>` (a dialect attribute without its `#dialect.name`) printed back as a
    Python tuple before."""
    text = ('func.func @f() {\n  "test.op"() {dims = <a = [0, 1], b = 1>} : () -> ()\n'
            "  return\n}\n")
    assert first_error(text, allow_unregistered=True)[2] == "expected attribute value"
