"""The library API of the parser (issue 15): ``parse_module`` rejects unregistered ops unless
asked, as MLIR's parser does, and parses in several threads at once with the results of one."""
from __future__ import annotations

import gc
import sys
import threading

import pytest

from shardy_ref.ir.diagnostics import ParseError, ShardyRefError
from shardy_ref.parser import parse_module, print_module
from shardy_ref.parser.reader import UNREGISTERED_MESSAGE
from tests.conftest import CORPUS

NESTED_UNREGISTERED = ('func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n'
                       '  %0 = stablehlo.abs %arg0 : tensor<2xf32>\n'
                       '  %1 = "foo.bar"(%0) : (tensor<2xf32>) -> tensor<2xf32>\n'
                       '  return %1 : tensor<2xf32>\n}\n')


def test_unregistered_op_is_rejected_by_default():
    """The location is MLIR's: just after the quoted op name (checked with sdy_opt)."""
    with pytest.raises(ParseError) as info:
        parse_module(NESTED_UNREGISTERED, "t.mlir")
    d = info.value.diagnostic
    assert (d.location.file, d.location.line, d.location.col) == ("t.mlir", 3, 17)
    assert d.message == UNREGISTERED_MESSAGE


def test_unregistered_op_line_offset_applies():
    with pytest.raises(ParseError) as info:
        parse_module(NESTED_UNREGISTERED, "t.mlir", 10)
    assert info.value.diagnostic.location.line == 13


def test_unregistered_op_is_accepted_when_allowed():
    module = parse_module(NESTED_UNREGISTERED, allow_unregistered=True)
    assert [op.name for op in module.walk()][-2:] == ["foo.bar", "func.return"]
    assert '"foo.bar"(%0)' in print_module(module)


def test_registered_dialects_need_no_flag():
    module = parse_module('func.func @f() {\n  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2]>, '
                          'sym_name = "m"}> : () -> ()\n  return\n}\n')
    assert module.regions[0].blocks[0].ops[0].name == "func.func"


def test_cli_flag_reaches_the_parser():
    from shardy_ref.tools.opt import Chunk, Options, process_chunk

    out, diagnostics = process_chunk(Chunk(NESTED_UNREGISTERED, 1), Options(), "t.mlir")
    assert out is None and diagnostics[0].message == UNREGISTERED_MESSAGE
    out, _ = process_chunk(Chunk(NESTED_UNREGISTERED, 1), Options(allow_unregistered=True),
                           "t.mlir")
    assert out is not None and '"foo.bar"' in out


# -- parsing in threads -----------------------------------------------------------------------

THREADS, ROUNDS = 8, 20


def _outcome(text: str, unregistered: bool) -> str:
    """What one parse gives: the printed module, or the located error."""
    try:
        return print_module(parse_module(text, "c.mlir", allow_unregistered=unregistered))
    except ShardyRefError as e:
        return f"error {e.diagnostic.location}: {e.diagnostic.message}"


def _chunks() -> list[tuple[str, bool]]:
    """Eight corpus chunks of distinct files, with aliases, regions, meshes and a failure."""
    import corpus

    picked, files = [], set()
    for chunk in corpus.corpus_chunks(["propagation/", "import/", "export/"]):
        if chunk.file not in files and 800 < len(chunk.text) < 4000:
            files.add(chunk.file)
            picked.append((chunk.text, chunk.unregistered))
    step = max(1, len(picked) // (THREADS - 1))
    chosen = picked[::step][:THREADS - 1]
    lines = chosen[0][0].split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith("func.func"))
    broken = "\n".join([*lines[:i], "func.func " + lines[i], *lines[i + 1:]])  # parse error
    return [*chosen, (broken, False)]


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/conformance is absent")
def test_threads_parse_as_one_thread_does():
    chunks = _chunks()
    expected = [_outcome(text, unregistered) for text, unregistered in chunks]
    assert expected[-1].startswith("error")
    results: list[list[str]] = [[] for _ in chunks]
    start = threading.Barrier(len(chunks))

    def work(i: int) -> None:
        start.wait()
        for _ in range(ROUNDS):
            results[i].append(_outcome(*chunks[i]))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, in the middle of parses
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(chunks))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    for i, got in enumerate(results):
        assert got == [expected[i]] * ROUNDS, f"chunk {i} differs in a thread"
    assert gc.isenabled()


def test_print_module_takes_a_module_as_its_op():
    """``from_jax`` and the passes hand out ``Module`` s: printing one prints its op."""
    from shardy_ref.ir import Module
    from shardy_ref.parser import parse_module, print_module

    op = parse_module("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                      "  return %a : tensor<2xf32>\n}\n")
    assert print_module(Module(op)) == print_module(op)
    assert print_module(Module(op), debug_info=True) == print_module(op, debug_info=True)
