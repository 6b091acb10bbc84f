"""The tools skip the cyclic collection at interpreter shutdown (issue 30, start-up), and
what they write is complete all the same."""
from __future__ import annotations

import os
import subprocess
import sys

ONE_OP = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

# an exit handler registered before the tool runs runs after the tool's own (last in,
# first out), so it sees what the tool's handler did
PROBE = """import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, file=sys.stderr))
from shardy_ref.tools.opt import main
rc = main(sys.argv[1:])
rc = main(sys.argv[1:]) or rc  # twice in one process: one handler
sys.exit(rc)
"""


def _run(tmp_path, *args):
    source = tmp_path / "in.mlir"
    source.write_text(ONE_OP)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", PROBE, str(source), *args], env=env,
                          capture_output=True, text=True, cwd=tmp_path)


def test_the_heap_is_frozen_at_exit_and_the_output_is_whole(tmp_path):
    out = _run(tmp_path, "-o", str(tmp_path / "out.mlir"))
    assert out.returncode == 0, out.stderr
    assert "frozen True" in out.stderr
    written = (tmp_path / "out.mlir").read_text()
    assert written.endswith("}\n") and "stablehlo.add %arg0, %arg0" in written


def test_stdout_is_whole_when_the_heap_is_frozen(tmp_path):
    out = _run(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "frozen True" in out.stderr
    assert out.stdout.count("stablehlo.add") == 2 and out.stdout.endswith("}\n")


def test_a_process_that_calls_main_registers_one_handler(monkeypatch):
    import atexit

    from shardy_ref.tools import opt

    registered = []
    opt.skip_collection_at_exit.cache_clear()  # as in a fresh process
    monkeypatch.setattr(atexit, "register", registered.append)
    try:
        opt.skip_collection_at_exit()
        opt.skip_collection_at_exit()
    finally:
        opt.skip_collection_at_exit.cache_clear()
    assert len(registered) == 1
