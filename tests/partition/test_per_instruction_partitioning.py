# ruff: noqa: E501  (the inputs are MLIR lines, kept whole to stay readable)
"""``sdy-per-instruction-partitioning``: filter parsing, which ops are numbered and picked,
the padded outlined function, and (once the sub-pipeline's passes exist) the wrapped
device-local code."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardy_ref.ir.diagnostics import ShardyRefError
from shardy_ref.ir.symbols import SymbolTable
from shardy_ref.ir.types import FloatType, RankedTensorType
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_attribute, parse_module, print_module
from shardy_ref.partition.export.per_instruction_partitioning import (
    FilterConfig,
    candidates,
    divisible_padded_type,
    instruction_shardings,
    mesh_symbol,
    outline,
    padded_types,
    select_ops,
)
from shardy_ref.pass_manager import make_pass, pass_class
from shardy_ref.tools.opt import parse_args

SUB_PIPELINE = ("sdy-resolve-permutation-factors", "sdy-insert-explicit-reshards",
                "sdy-reshard-to-collectives", "sdy-pad-for-divisibility",
                "sdy-convert-global-to-local", "sdy-drop-sharding-and-mesh")


def _have_sub_pipeline() -> bool:
    try:
        for name in SUB_PIPELINE:
            pass_class(name)
    except (ShardyRefError, ImportError):  # not (fully) implemented yet
        return False
    return True


needs_sub_pipeline = pytest.mark.skipif(not _have_sub_pipeline(),
                                        reason="a pass of the sub-pipeline is missing")

PROGRAM = """sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                %b: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.dot %a, %b {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.add %c, %c : tensor<8x16xf32>
  %2 = sdy.all_reduce {} %1 out_sharding=<@mesh, [{}, {}]> : tensor<8x16xf32>
  %3 = stablehlo.add %0, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>]>} : tensor<8x16xf32>
  %4 = stablehlo.negate %3 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], replicated={"x"}>]>} : tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}
"""


def sharding(text: str):
    return parse_attribute(f"#sdy.sharding<{text}>")


@pytest.mark.parametrize(("text", "expected"), [
    ("", FilterConfig(select_all=True)),
    ("  ", FilterConfig(select_all=True)),
    ("dot, pad", FilterConfig(op_names=("dot", "pad"))),
    ("'selectLow=0, selectHigh=3'", FilterConfig(0, 3)),
    ('"selectHigh=3,selectLow=1"', FilterConfig(1, 3)),
    ("selectLow=x,add,,", FilterConfig(op_names=("add",))),
    ("selectLow = 2", FilterConfig(op_names=("selectLow = 2",))),
])
def test_filter_parsing(text, expected):
    assert FilterConfig.parse(text) == expected


@given(low=st.integers(-1, 6), high=st.integers(-1, 6), seq=st.integers(0, 8))
def test_a_range_picks_the_numbers_inside_it(low, high, seq):
    config = FilterConfig.parse(f"selectLow={low},selectHigh={high}")
    inside = (low < 0 or seq >= low) and (high < 0 or seq <= high)
    assert config.matches("stablehlo.add", seq) == inside


def test_names_are_substrings_and_combine_with_the_range():
    config = FilterConfig.parse("selectHigh=1, dot")
    assert config.matches("stablehlo.dot_general", 1)
    assert not config.matches("stablehlo.dot_general", 2)
    assert not config.matches("stablehlo.add", 0)


def test_candidates_skip_unsharded_ops_collectives_and_terminators():
    module = parse_module(PROGRAM)
    # the unsharded add and the all-reduce are not numbered; the negate is (its operand is
    # sharded) even though its own sharding only replicates
    assert [op.name for op in candidates(module)] == [
        "stablehlo.dot", "stablehlo.add", "stablehlo.negate"]
    picked = select_ops(module, FilterConfig.parse("selectLow=1"))
    assert [op.name for op in picked] == ["stablehlo.add", "stablehlo.negate"]
    assert select_ops(module, FilterConfig.parse("neg"))[0].name == "stablehlo.negate"


def test_manual_axes_in_order_of_first_use_and_results_drop_unreduced():
    module = parse_module("""sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}], unreduced={"x"}>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}], unreduced={"x"}>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}""")
    negate = candidates(module)[0]
    info = instruction_shardings(negate, "mesh")
    assert info.in_shardings == (sharding('@mesh, [{"y"}], unreduced={"x"}'),)
    assert info.out_shardings == (sharding('@mesh, [{"y"}]'),)
    assert info.manual_axes == ("y", "x")


@pytest.mark.parametrize(("shape", "text", "allowed", "padded"), [
    ((5, 8), '@mesh, [{"x"}, {}]', None, (6, 8)),
    ((6, 8), '@mesh, [{"x", "y"}, {"y"}]', None, (8, 8)),
    ((6, 7), '@mesh, [{"x", "y"}, {"y"}]', {"x"}, (6, 7)),
    ((5, 7), '@mesh, [{}, {}], replicated={"x"}', None, (5, 7)),
])
def test_divisible_padded_type_rounds_up_per_dimension(shape, text, allowed, padded):
    module = parse_module('sdy.mesh @mesh = <["x"=2, "y"=4]>')
    type_ = RankedTensorType(shape, FloatType("f32"))
    result = divisible_padded_type(type_, sharding(text), SymbolTable(module), allowed)
    assert result.shape == padded


RESHARD = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<5x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<5x8xf32> {
  %0 = sdy.reshard %a <@mesh, [{}, {}]> : tensor<5x8xf32>
  %1 = stablehlo.slice %0 [0:3, 0:8] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>} : (tensor<5x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<5x8xf32>
}"""


def test_a_reshard_pads_operand_and_result_alike():
    module = parse_module(RESHARD)
    reshard = candidates(module)[0]
    info = instruction_shardings(reshard, "mesh")
    ins, outs = padded_types(reshard, info, SymbolTable(module))
    assert ins[0].shape == outs[0].shape == (6, 8)


def test_outlining_a_padded_slice_extends_its_limits():
    module = parse_module(RESHARD)
    slice_op = candidates(module)[1]
    info = instruction_shardings(slice_op, "mesh")
    ins, outs = padded_types(slice_op, info, SymbolTable(module))
    assert (ins[0].shape, outs[0].shape) == ((5, 8), (4, 8))  # the operand is replicated
    scratch, _ = outline(slice_op, module, info, ins, outs)
    verify_module(scratch)
    text = print_module(scratch)
    assert 'sdy.mesh @mesh = <["x"=2]>' in text
    assert "func.func private @outlined_op" in text
    assert "stablehlo.slice %arg0 [0:4, 0:8]" in text


def test_an_inline_mesh_gets_a_symbol_at_the_module_start():
    module = parse_module('sdy.mesh @mesh = <["x"=4]>\nsdy.mesh @other = <["x"=2]>')
    table = SymbolTable(module)
    mesh_of = lambda text: parse_attribute(f"#sdy.mesh<{text}>")  # noqa: E731
    assert mesh_symbol(module, module, mesh_of('["x"=2]'), table) == "other"
    assert mesh_symbol(module, module, mesh_of('["y"=2]'), table) == "mesh_0"
    assert module.regions[0].blocks[0].first_op.attributes["sym_name"].value == "mesh_0"


def test_option_spellings_of_the_command_line():
    opts = parse_args(["-sdy-per-instruction-partitioning=filter='selectLow=0, selectHigh=0'"])
    pass_ = make_pass(*opts.passes[0])
    assert FilterConfig.parse(pass_.filter) == FilterConfig(0, 0)
    pass_ = make_pass("sdy-per-instruction-partitioning", "filter=dot,constant "
                      "enable-halo-exchange=false replica-count=1 partition-count=4")
    assert (pass_.filter, pass_.enable_halo_exchange, pass_.partition_count) == \
        ("dot,constant", False, 4)


def _partition(text: str, options: str) -> str:
    from tests.propagate.pass_helpers import run_pipeline
    return run_pipeline(text, f"sdy-per-instruction-partitioning{{{options}}}")


@needs_sub_pipeline
def test_a_dot_becomes_a_manual_computation_of_local_code():
    out = _partition(PROGRAM, "filter=dot")
    assert "manual_axes={\"x\", \"y\"} (%arg3: tensor<4x32xf32>, %arg4: tensor<32x8xf32>)" in out
    assert "-> tensor<4x8xf32>" in out
    assert out.count("sdy.manual_computation") == 1
    assert "stablehlo.negate" in out and "stablehlo.dot %arg0" not in out


@needs_sub_pipeline
def test_an_indivisible_reshard_is_padded_gathered_and_sliced_back():
    out = _partition(RESHARD, "filter=reshard")
    assert "stablehlo.pad %arg0" in out
    assert '"stablehlo.all_gather"' in out
    assert "stablehlo.slice %1 [0:5, 0:8]" in out
    assert "sdy.reshard" not in out


def test_the_export_pipeline_runs_it_with_full_reshards_and_its_filter():
    pipeline = make_pass("sdy-export-pipeline", "enable-per-instruction-partitioning=true "
                         "per-instruction-partitioning-filter=dot partition-count=4")
    elements = pipeline.elements()
    passes_ = [e.pass_ for e in elements if e.pass_ is not None]
    partitioning = [p for p in passes_ if p.NAME == "sdy-per-instruction-partitioning"]
    assert len(partitioning) == 1
    assert (partitioning[0].filter, partitioning[0].partition_count) == ("dot", 4)
    reshards = [p for e in elements for p in (n.pass_ for n in e.nested)
                if p.NAME == "sdy-insert-explicit-reshards"]
    assert reshards[0].enable_full_version
    assert "sdy-reshard-to-collectives" not in {p.NAME for e in elements for p in
                                                (n.pass_ for n in e.nested)}
