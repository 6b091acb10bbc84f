"""Deeply nested regions (issue 15): no RecursionError from the parser, the walks, the
printer, the passes or the interpreter. The library's walks and name resolution are
iterative; the command lines run on a deep stack (shardy_ref/tools/stack.py); past
``MAX_NESTING`` levels the parser gives a located error (``sdy_opt`` itself crashes on 3000
nested ``stablehlo.case`` ops). Every command line on 3000 levels (1001 for the ones that
propagate): ``tests/test_cli_misuse_table.py``."""
from __future__ import annotations

import pytest

from shardy_ref.ir.diagnostics import ParseError
from shardy_ref.ir.operation import Block, Operation, Region
from shardy_ref.parser import parse_module, reader
from shardy_ref.tools import opt, translate
from tests.nesting_programs import NESTS, case_nest, named_computation_nest, while_nest

DEPTH = 300  # past what the printer managed on Python's default stack
SLOW_DEPTH = 60  # for the propagation and per-device pipelines and the interpreter


def chain(depth: int) -> Operation:
    """``depth`` ops, each the only op in the region of the previous one."""
    root = inner = Operation("test.op", regions=[Region([Block()])])
    for _ in range(depth - 1):
        child = Operation("test.op", regions=[Region([Block()])])
        inner.regions[0].blocks[0].append(child)
        inner = child
    return root


def test_walk_is_iterative():
    root = chain(5000)
    assert sum(1 for _ in root.walk()) == 5000
    post = list(root.walk(post_order=True))
    assert len(post) == 5000 and post[-1] is root


def test_parse_resolves_names_iteratively():
    """Name resolution walks the regions without recursing (it failed at ~1000 levels)."""
    module = parse_module(named_computation_nest(1000))
    assert sum(op.name == "sdy.named_computation" for op in module.walk()) == 1000


def test_nesting_limit_is_a_located_error(monkeypatch):
    monkeypatch.setattr(reader, "MAX_NESTING", 12)
    parse_module(named_computation_nest(10))  # module, func and 10 levels: 12 regions
    with pytest.raises(ParseError) as info:
        parse_module(named_computation_nest(11), "deep.mlir")
    d = info.value.diagnostic
    assert (d.location.file, d.location.line, d.location.col) == ("deep.mlir", 13, 10)
    assert d.message == "nesting too deep: regions nested more than 12 levels (a shardy_ref limit)"


def _opt(tmp_path, text: str, *flags: str) -> tuple[int, str]:
    path = tmp_path / "deep.mlir"
    path.write_text(text)
    out = tmp_path / "out.mlir"
    return opt.main([str(path), "-o", str(out), *flags]), out.read_text() if out.exists() else ""


@pytest.mark.parametrize("kind", NESTS)
def test_opt_parses_verifies_and_prints_deep_modules(tmp_path, kind):
    status, out = _opt(tmp_path, NESTS[kind](DEPTH))
    assert status == 0
    assert print_roundtrips(out)


def print_roundtrips(text: str) -> bool:
    from shardy_ref.parser import print_module
    from shardy_ref.tools.stack import run_with_deep_stack
    return run_with_deep_stack(lambda: print_module(parse_module(text))) == text


@pytest.mark.parametrize(("flag", "depth"), [
    ("-sdy-propagation-pipeline", SLOW_DEPTH), ("-sdy-insert-explicit-reshards", DEPTH),
    ("-sdy-reshard-to-collectives", DEPTH), ("-sdy-ref-per-device-pipeline", SLOW_DEPTH)])
def test_passes_run_on_deep_modules(tmp_path, flag, depth):
    status, out = _opt(tmp_path, case_nest(depth), flag)
    assert status == 0 and out.count('"stablehlo.case"') == depth


def test_interpreter_runs_a_deep_while_nest(tmp_path, capsys):
    path = tmp_path / "deep.mlir"
    path.write_text(while_nest(SLOW_DEPTH, sdy=False))
    assert translate.main(["--interpret", str(path)]) == 0
    assert capsys.readouterr().out == "tensor<i32> {6}\n"  # 5 + 1, passed up unchanged


def test_interpreter_work_is_linear_in_depth(monkeypatch):
    """Each region's free values, and whether it computes the same on every process, are
    derived from its nested regions' (once), not by walking the whole nest again per level:
    the ops the interpreter's walks visit grow linearly with the depth (they grew with its
    square: a nest of 3000 ``case`` levels took 122 s)."""
    from shardy_ref.execute.interpreter import Interpreter
    from shardy_ref.tools.stack import run_with_deep_stack

    visited = [0]
    walk = Operation.walk

    def counting_walk(self, *args, **kwargs):
        for op in walk(self, *args, **kwargs):
            visited[0] += 1
            yield op

    def visits(depth: int) -> int:
        module = run_with_deep_stack(lambda: parse_module(while_nest(depth, sdy=False)))
        visited[0] = 0
        with monkeypatch.context() as m:
            m.setattr(Operation, "walk", counting_walk)
            run_with_deep_stack(lambda: Interpreter(module).run("main", []))
        return visited[0]

    small, large = visits(20), visits(80)
    assert large <= 5 * max(small, 1), (small, large)
