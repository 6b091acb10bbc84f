"""The collective-op verifier beyond the spec-003 rule cases (tests/ir/verify_cases).

Covers the two ops newer than spec 003 (``sdy.sharded_to_unreduced``,
``sdy.replicated_to_unreduced``), the ODS traits the ops share, the unreduced-axes
transition of ``sdy.all_reduce``/``sdy.reduce_scatter``, and which sharding an operand
carries (:func:`get_sharding`). Expected messages were checked against the oracle
(jaxlib 0.10.2) or, for reduction kinds the oracle can't parse, upstream's
``collective_verification.mlir``.
"""
from __future__ import annotations

import pytest

from shardy_ref.ir.value_sharding import get_sharding
from shardy_ref.ir.verify import collect_errors
from shardy_ref.parser import parse_module
from tests.ir.verify_cases.collectives import MESH, module


def _errors(text: str) -> list[str]:
    return [e.message for e in collect_errors(parse_module(text))]


def _first_error(text: str) -> str:
    errors = _errors(text)
    assert errors, "expected a verification error"
    return errors[0]


T3 = "tensor<8x8x8xf32>"
S2U_ARG = '<@mesh, [{"x", "y"}, {}, {"z"}]>'
S2U = ('sdy.sharded_to_unreduced [{"y"}, {}, {"z"}] %arg0 '
       'out_sharding=<@mesh, [{"x"}, {}, {}], unreduced={"y", "z"}>')
R2U_ARG = '<@mesh, [{"x"}, {}, {}], unreduced={"z"}>'
R2U = ('sdy.replicated_to_unreduced {"y"} %arg0 '
       'out_sharding=<@mesh, [{"x"}, {}, {}], unreduced={"y", "z"}>')


def test_sharded_to_unreduced_valid():
    assert _errors(module(S2U, S2U_ARG, type_=T3)) == []


@pytest.mark.parametrize(("op", "message"), [
    (S2U.replace('unreduced={"y", "z"}', 'unreduced=max{"y", "z"}'),
     "out_sharding reduction_op must be SUM"),
    (S2U.replace('[{"y"}, {}, {"z"}]', '[{"x"}, {}, {"z"}]'),
     "can't apply shard-to-unreduce axis \"x\" to operand sharding on dimension 0"),
    (S2U.replace('unreduced={"y", "z"}', 'unreduced={"y"}'),
     "out_unreduced_axes should be in_unreduced_axes + sharded_to_unreduced_axes"),
    (S2U.replace('[{"y"}, {}, {"z"}]', '[{"y"}, {"z"}]'),
     "result sharding has rank 3 but collective axes has rank 2"),
])
def test_sharded_to_unreduced_invalid(op, message):
    assert _first_error(module(op, S2U_ARG, type_=T3)) == \
        f"'sdy.sharded_to_unreduced' op {message}"


def test_sharded_to_unreduced_needs_operand_sharding():
    assert _first_error(module(S2U, None, type_=T3)) == \
        "'sdy.sharded_to_unreduced' op collective on operand without sharding"


def test_replicated_to_unreduced_valid():
    assert _errors(module(R2U, R2U_ARG, type_=T3)) == []


@pytest.mark.parametrize(("op", "message"), [
    (R2U.replace('unreduced={"y", "z"}', 'unreduced=min{"y", "z"}'),
     "out_sharding reduction_op must be SUM"),
    (R2U.replace('[{"x"}, {}, {}], unreduced', '[{}, {"x"}, {}], unreduced'),
     "input and output must share the same dimension shardings"),
    (R2U.replace('{"y"} %arg0', "{} %arg0"), "r2u axes must not be empty"),
    (R2U.replace('{"y"} %arg0', '{"y", "x"} %arg0'), "r2u axes are not ordered w.r.t. mesh"),
    (R2U.replace('{"y"} %arg0', '{"x"} %arg0'),
     "r2u axis \"x\" overlaps with operand dimension sharding"),
    (R2U.replace('{"y"} %arg0', '{"z"} %arg0'),
     "r2u axis \"z\" overlaps with operand unreduced axes"),
    (R2U.replace('unreduced={"y", "z"}', 'unreduced={"y"}'),
     "out_unreduced_axes should be in_unreduced_axes + r2u_axes"),
])
def test_replicated_to_unreduced_invalid(op, message):
    assert _first_error(module(op, R2U_ARG, type_=T3)) == \
        f"'sdy.replicated_to_unreduced' op {message}"


# --- unreduced axes across all_reduce / reduce_scatter (upstream's last four chunks) ----

def test_all_reduce_keeps_and_reduces_unreduced_axes_of_its_kind():
    op = 'sdy.all_reduce max {"x"} %arg0 out_sharding=<@mesh, [{}], unreduced=max{"y"}>'
    assert _errors(module(op, '<@mesh, [{}], unreduced=max{"x", "y"}>',
                          type_="tensor<8xf32>")) == []


@pytest.mark.parametrize(("op", "arg", "message"), [
    ('sdy.all_reduce {"z"} %arg0 out_sharding=<@mesh, [{"y"}, {"x"}]>',
     '<@mesh, [{"y"}, {"x"}], unreduced=max{"z"}>',
     "'sdy.all_reduce' op cannot reduce 'max' unreduced axes. Expected 'sum'."),
    ('sdy.all_reduce {} %arg0 out_sharding=<@mesh, [{"y"}, {"x"}], unreduced={"z"}>',
     '<@mesh, [{"y"}, {"x"}]>', "'sdy.all_reduce' op cannot add new unreduced axis 'z'."),
    ('sdy.all_reduce min {} %arg0 out_sharding=<@mesh, [{"y"}, {"x"}], unreduced=min{"z"}>',
     '<@mesh, [{"y"}, {"x"}], unreduced=max{"z"}>',
     "'sdy.all_reduce' op cannot change the reduction operator of kept unreduced axes from "
     "max to min."),
    ('sdy.reduce_scatter min [{"x"}, {}] %arg0 out_sharding=<@mesh, [{"x", "z"}, {"y"}]>',
     '<@mesh, [{"x"}, {"y"}], unreduced=max{"z"}>',
     "'sdy.reduce_scatter' op cannot reduce 'max' unreduced axes. Expected 'min'."),
])
def test_unreduced_axes_transition(op, arg, message):
    assert _first_error(module(op, arg)) == message


# --- ODS traits, in generic form (messages from the oracle) -----------------------------

GATHER_PROPS = ('gathering_axes = #sdy<list_of_axis_ref_lists[{}, {"x"}]>, '
                'out_sharding = #sdy.sharding<@mesh, [{"y"}, {}]>')


def _generic(props: str, operands: str = "%arg0", in_types: str = "tensor<16x8xf32>",
             out_types: str = "tensor<16x8xf32>", results: str = "%0",
             arg_type: str = "tensor<16x8xf32>", name: str = "sdy.all_gather") -> str:
    return (f"{MESH}\nfunc.func @f(%arg0: {arg_type} {{sdy.sharding = "
            f'#sdy.sharding<@mesh, [{{"y"}}, {{"x"}}]>}}) {{\n'
            f'  {results} = "{name}"({operands}) <{{{props}}}> : ({in_types}) -> {out_types}\n'
            "  return\n}\n")


@pytest.mark.parametrize(("text", "message"), [
    (_generic(""), "requires attribute 'gathering_axes'"),  # attributes by name
    (_generic(GATHER_PROPS.split(", out")[0]), "requires attribute 'out_sharding'"),
    (_generic(GATHER_PROPS, "%arg0, %arg0", "tensor<16x8xf32>, tensor<16x8xf32>"),
     "requires a single operand"),
    (_generic(GATHER_PROPS, out_types="(tensor<16x8xf32>, tensor<16x8xf32>)", results="%0:2"),
     "requires one result"),
    (_generic(GATHER_PROPS, out_types="tensor<8x8xf32>"),
     "requires the same type for all operands and results"),
    (_generic(GATHER_PROPS, out_types="tensor<16x8xi32>"),
     "requires the same type for all operands and results"),
    (_generic(GATHER_PROPS, in_types="tensor<?x8xf32>", arg_type="tensor<?x8xf32>"),
     "inferred type(s) 'tensor<?x8xf32>' are incompatible with return type(s) of operation "
     "'tensor<16x8xf32>'"),
])
def test_ods_traits(text, message):
    assert _first_error(text) == f"'sdy.all_gather' op {message}"


def test_required_attributes_by_name():
    assert _first_error(_generic("", name="sdy.all_to_all")) == \
        "'sdy.all_to_all' op requires attribute 'out_sharding'"


def test_operand_must_be_shaped():
    text = (f'{MESH}\nfunc.func @f(%arg0: i32) {{\n  %0 = "sdy.all_gather"(%arg0) '
            '<{gathering_axes = #sdy<list_of_axis_ref_lists[]>, '
            'out_sharding = #sdy.sharding<@mesh, []>}> : (i32) -> i32\n  return\n}\n')
    assert _first_error(text) == ("'sdy.all_gather' op operand #0 must be shaped of any "
                                  "non-token type values, but got 'i32'")


# --- the operand's sharding -------------------------------------------------------------

def test_mesh_mismatch_note_points_at_the_operand():
    text = module('sdy.all_gather [{}, {"b"}] %arg0 out_sharding=<@mesh, [{"y"}, {"x"}]>',
                  '<@other, [{"a"}, {"b"}]>',
                  meshes=(MESH, 'sdy.mesh @other = <["a"=2, "b"=2]>'))
    (error,) = collect_errors(parse_module(text))
    (operand_note,) = error.notes
    assert operand_note.message == 'operand mesh: #sdy.mesh<["a"=2, "b"=2]>'
    assert operand_note.location.line == 3  # the function holding %arg0


def test_collective_in_manual_computation_sees_free_axes_only():
    body = ('  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x", "y"}]>] '
            'out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<8xf32>) {\n'
            '    %1 = sdy.all_gather [{"y"}] %arg1 out_sharding=<@mesh, [{OUT}]> : tensor<8xf32>\n'
            "    sdy.return %1 : tensor<8xf32>\n"
            "  } : (tensor<16xf32>) -> tensor<16xf32>\n")
    text = (f"{MESH}\nfunc.func @f(%arg0: tensor<16xf32>) -> tensor<16xf32> {{\n{body}"
            "  return %0 : tensor<16xf32>\n}\n")
    assert _errors(text.replace("{OUT}", "{}")) == []
    assert _first_error(text.replace("{OUT}", '{"x"}')) == (
        "'sdy.all_gather' op operates on axis \"x\" which is already bound by a parent "
        "sdy.manual_computation op")


SHARDINGS_TEXT = f"""{MESH}
func.func @f(%arg0: tensor<8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}]>}},
             %arg1: tensor<8xf32>) -> tensor<8xf32> {{
  %0 = stablehlo.tanh %arg1
    {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"y"}}]>]>}} : tensor<8xf32>
  %1 = sdy.all_slice [{{"z"}}] %0 out_sharding=<@mesh, [{{"y", "z"}}]> : tensor<8xf32>
  %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{{"y", "z"}}]>]
      out_shardings=[<@mesh, [{{"y"}}]>] manual_axes={{"y"}} (%arg2: tensor<4xf32>) {{
    sdy.return %arg2 : tensor<4xf32>
  }} : (tensor<8xf32>) -> tensor<8xf32>
  %3 = stablehlo.while(%iterArg = %2) : tensor<8xf32>
      attributes {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x"}}]>]>}}
    cond {{
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      stablehlo.return %iterArg : tensor<8xf32>
    }}
  %4 = stablehlo.add %3, %arg1 : tensor<8xf32>
  return %4 : tensor<8xf32>
}}
"""


def test_get_sharding():
    m = parse_module(SHARDINGS_TEXT)
    ops = {op.name: op for op in m.walk()}
    func = ops["func.func"]
    arg0, arg1 = func.regions[0].blocks[0].args
    shown = {name: str(get_sharding(v)) if get_sharding(v) else None for name, v in [
        ("arg0", arg0), ("arg1", arg1),
        ("tanh", ops["stablehlo.tanh"].results[0]),
        ("all_slice", ops["sdy.all_slice"].results[0]),
        ("manual result", ops["sdy.manual_computation"].results[0]),
        ("manual block arg", ops["sdy.manual_computation"].regions[0].blocks[0].args[0]),
        ("while result", ops["stablehlo.while"].results[0]),
        ("while body arg", ops["stablehlo.while"].regions[1].blocks[0].args[0]),
        ("add", ops["stablehlo.add"].results[0]),
    ]}
    assert shown == {
        "arg0": '#sdy.sharding<@mesh, [{"x"}]>',
        "arg1": None,
        "tanh": '#sdy.sharding<@mesh, [{"y"}]>',
        "all_slice": '#sdy.sharding<@mesh, [{"y", "z"}]>',
        "manual result": '#sdy.sharding<@mesh, [{"y"}]>',
        "manual block arg": '#sdy.sharding<@mesh, [{"z"}]>',
        "while result": '#sdy.sharding<@mesh, [{"x"}]>',
        "while body arg": '#sdy.sharding<@mesh, [{"x"}]>',
        "add": None,
    }
    assert _errors(SHARDINGS_TEXT) == []
