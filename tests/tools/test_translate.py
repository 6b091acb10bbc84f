"""``shardy-ref-translate --interpret``: flags, output, exit status and located errors,
as ``stablehlo-translate`` behaves."""
from __future__ import annotations

import io

import pytest

from shardy_ref.tools.translate import UsageError, parse_args, run

ADD = """func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %a, %b : tensor<2xi32>
  return %0 : tensor<2xi32>
}
"""


def translate(text: str, *flags: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = run(parse_args(["--interpret", *flags, "-"]), io.StringIO(text), out, err)
    return rc, out.getvalue(), err.getvalue()


def test_args_and_both_result_formats():
    args = "--args=[dense<1> : tensor<2xi32>, dense<[2, 5]> : tensor<2xi32>]"
    assert translate(ADD, args) == (0, "tensor<2xi32> {\n  [3, 6]\n}\n", "")
    assert translate(ADD, args, "--interpreter-print-dense") == \
        (0, "dense<[3, 6]> : tensor<2xi32>\n", "")


@pytest.mark.parametrize(("args", "message"), [
    ("--args=not_array", "expectected array attribute string for args, i.e. "
                         "--args=[dense<1> : tensor<2xi32>, ...]"),
    ("--args=[4.0 : f32]", "expected dense elements attribute for args elements, i.e. "
                           "--args=[dense<1> : tensor<2xi32>, ...]"),
])
def test_bad_args_use_the_reference_messages(args, message):
    rc, out, err = translate(ADD, args)
    assert rc == 1 and out == "" and message in err


def test_wrong_argument_count_and_type_are_located_errors():
    rc, _, err = translate(ADD, "--args=[dense<1> : tensor<2xi32>]")
    assert rc == 1 and err.startswith("<stdin>:1:1: error: incorrect number of arguments "
                                      "specified, provided 1 inputs but function expected 2")
    rc, _, err = translate(ADD, "--args=[dense<1> : tensor<2xi64>, dense<1> : tensor<2xi32>]")
    assert rc == 1 and "invalid input argument type at index 0, input type was " \
                       "tensor<2xi64> but entry function expected tensor<2xi32>" in err


CHUNKS = """func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi32>
  func.return
}
// -----
func.func @main() -> tensor<i1> {
  %0 = stablehlo.constant dense<true> : tensor<i1>
  func.return %0 : tensor<i1>
}
"""


def test_chunks_are_independent_and_a_failed_check_fails_the_run():
    rc, out, err = translate(CHUNKS, "-split-input-file")
    assert rc == 1
    assert out == "tensor<i1> {true}\n"  # the second chunk still ran
    assert err.startswith("<stdin>:3:3: error: check.expect_eq_const failed: Element values "
                          "don't match: 2 (actual) vs 3 (expected) at index [1]")
    assert "  check.expect_eq_const %0" in err and "\n  ^" in err


def test_parse_errors_and_unsupported_ops_are_located():
    rc, _, err = translate("func.func @main() {\n  %0 = stablehlo.add\n}")
    assert rc == 1 and err.startswith("<stdin>:")
    rc, _, err = translate('func.func @main() {\n  "foo.bar"() : () -> ()\n  func.return\n}')
    assert rc == 1 and err.startswith("<stdin>:2:12: error: operation being parsed with an "
                                      "unregistered dialect")  # as stablehlo-translate
    rc, _, err = translate('func.func @main() {\n  %0 = "tensor.empty"() : () -> tensor<2xf32>\n'
                           '  func.return\n}')
    assert rc == 1 and "Unsupported op: 'tensor.empty'" in err and err.startswith("<stdin>:2:8:")


def test_output_file_and_missing_input(tmp_path):
    src = tmp_path / "in.mlir"
    src.write_text(ADD.replace("(%a: tensor<2xi32>, %b: tensor<2xi32>)", "()").replace(
        "%0 = stablehlo.add %a, %b", "%0 = stablehlo.iota dim = 0"))
    dst = tmp_path / "out.txt"
    assert run(parse_args(["--interpret", str(src), "-o", str(dst)])) == 0
    assert dst.read_text() == "tensor<2xi32> {\n  [0, 1]\n}\n"
    err = io.StringIO()
    assert run(parse_args(["--interpret", str(tmp_path / "nope.mlir")]), stderr=err) == 1
    assert "Could not open input file" in err.getvalue()


def test_usage_errors():
    with pytest.raises(UsageError, match="only --interpret"):
        parse_args(["x.mlir"])
    with pytest.raises(UsageError, match="Unknown command line argument"):
        parse_args(["--interpret", "--frobnicate"])


GRID = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %p = stablehlo.partition_id : tensor<ui32>
  %r = stablehlo.replica_id : tensor<ui32>
  %0 = "stablehlo.all_reduce"(%a) <{
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>,
      replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %m: tensor<f32>):
    %s = stablehlo.add %l, %m : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2xf32>) -> tensor<2xf32>
  %q = stablehlo.multiply %r, %r : tensor<ui32>
  %t = stablehlo.add %p, %q : tensor<ui32>
  %f = stablehlo.convert %t : (tensor<ui32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.add %0, %b : tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""


@pytest.mark.parametrize("vectorize", [[], ["--no-vectorize"]])
def test_a_per_device_program_runs_on_a_grid_of_processes(vectorize):
    """Every process of a 2 x 2 grid runs @main: partition and replica ids, and an
    all_reduce over flattened ids, as on four devices."""
    rc, out, err = translate(GRID, "--num-partitions=2", "--num-replicas", "2",
                             "--args=[dense<[1.0, 2.0]> : tensor<2xf32>]",
                             "--interpreter-print-dense", *vectorize)
    assert (rc, err) == (0, "")
    expected = []
    for pid in range(4):
        replica, partition = divmod(pid, 2)
        extra = partition + replica * replica
        expected += [f"// process {pid} (replica {replica}, partition {partition})",
                     f"dense<[{2 + extra:.6e}, {4 + extra:.6e}]> : tensor<2xf32>"]
    assert out.splitlines() == expected


@pytest.mark.parametrize("flag", ["--num-partitions=0", "--num-replicas=x",
                                  "--num-partitions"])
def test_grid_flags_take_positive_numbers(flag):
    with pytest.raises(UsageError, match="positive whole number"):
        parse_args(["--interpret", flag, "-"])


def test_a_grid_too_small_for_the_program_is_a_located_error():
    rc, out, err = translate(GRID, "--num-partitions=3",
                             "--args=[dense<[1.0, 2.0]> : tensor<2xf32>]")
    assert rc == 1 and out == ""
    assert "<stdin>:4:8: error: 'stablehlo.all_reduce' names process 3, but the process " \
           "grid has 3 process(es)" in err
