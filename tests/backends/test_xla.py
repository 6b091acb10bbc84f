"""XLA runs our per-device programs (issue 18): every ``examples/jax/*.mlir`` program is
partitioned by our passes, compiled by XLA for its mesh's CPU host devices (8, 16 or 64) as
an already-partitioned program, and its global results equal our simulator's and the
single-device run's (floats within rtol 1e-5, integers exactly; the shard_map programs
against their NumPy references, as in ``tests/execute/test_simulate_jax_programs.py``).
``from_jax`` programs run by XLA equal jax's own jitted results. Needs the ``jax`` extra."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from shardy_ref.backends import compile_on_xla, run_on_xla, xla_devices  # noqa: E402
from shardy_ref.execute import InterpreterError, compile_spmd, run  # noqa: E402
from shardy_ref.execute.inputs import random_arguments  # noqa: E402
from shardy_ref.ir.verify import verify_module  # noqa: E402
from shardy_ref.parser import parse_module, print_module  # noqa: E402
from shardy_ref.tools.cli import main  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.execute.test_simulate_jax_programs import (  # noqa: E402
    EXAMPLES,
    MANUAL_REFERENCE,
    _assert_same,
    _inputs,
)

pytestmark = pytest.mark.jax


@pytest.fixture(scope="module")
def devices():
    """jax's first 8 devices; asking for 64 first (before anything starts jax's backend in
    this worker) lets the 16- and 64-device programs run in the same process."""
    xla_devices(64)
    return xla_devices(8)


def _expected(path, text: str, arrays: list) -> tuple:
    module = parse_module(text, str(path))
    verify_module(module)
    if any(op.name == "sdy.manual_computation" for op in module.walk()):
        return MANUAL_REFERENCE[path.stem](*arrays)
    return run(module, *arrays)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_xla_run_equals_simulator_and_single_device(path, devices):
    text = path.read_text()
    program = compile_spmd(text, filename=str(path))
    arrays = _inputs(program.propagated, seed=18)
    simulated = program.run(*arrays)
    compiled = compile_on_xla(program)
    got = compiled.run(*arrays)
    _assert_same(got, simulated)
    _assert_same(got, _expected(path, text, arrays))


def test_xla_does_not_partition_again(devices):
    """XLA's entry parameters have our local shapes: XLA did not partition the program on
    its own."""
    path = next(p for p in EXAMPLES if p.stem == "sim_mlp_col_row")
    program = compile_spmd(path.read_text(), filename=str(path))
    main = next(op for op in program.per_device.walk() if op.name == "func.func")
    local = [tuple(a.type.shape) for a in main.regions[0].blocks[0].args]
    assert compile_on_xla(program).parameter_shapes() == local
    assert local[0] == (8, 32)  # 16 rows over "data"=2


def test_a_wrong_per_device_program_fails_the_comparison(devices):
    """XLA runs exactly the per-device program it is given, so the comparison can fail: an
    ``all_reduce`` over all 8 devices instead of the 4 of each ``data`` row adds the other
    row's partial sums; XLA's result equals our simulator's of the same wrong program and
    differs from the single-device run. Without the ``all_reduce`` the devices of a row
    disagree, which putting the global result together reports."""
    path = next(p for p in EXAMPLES if p.stem == "sim_mlp_col_row")
    text = path.read_text()
    program = compile_spmd(text, filename=str(path))
    arrays = _inputs(program.propagated, seed=18)
    right = "dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi64>"
    per_device = print_module(program.per_device)
    assert per_device.count(right) == 1
    wrong = dataclasses.replace(program, per_device=parse_module(
        per_device.replace(right, "dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>")))
    got = compile_on_xla(wrong).run(*arrays)
    _assert_same(got, wrong.run(*arrays))
    with pytest.raises(AssertionError):
        _assert_same(got, run(text, *arrays))

    (reduce_,) = [op for op in program.per_device.walk() if op.name == "stablehlo.all_reduce"]
    reduce_.results[0].replace_all_uses_with(reduce_.operands[0])
    reduce_.erase()
    with pytest.raises(InterpreterError, match=r"hold block .* with different values"):
        compile_on_xla(program).run(*arrays)


# -- from_jax ----------------------------------------------------------------------------------
def _mesh(devices):
    from jax.sharding import Mesh

    return Mesh(np.array(devices).reshape(2, 4), ("data", "model"))


def _arrays(*shapes, seed=18):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32) for s in shapes]


def test_from_jax_mlp_with_in_shardings(devices):
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from shardy_ref.frontends import from_jax

    def mlp(x, w1, w2):
        return jax.nn.relu(x @ w1) @ w2

    mesh = _mesh(devices)
    specs = (P("data"), P(None, "model"), P("model"))
    x, w1, w2 = _arrays((16, 32), (32, 64), (64, 8))
    module = from_jax(mlp, x, w1, w2, mesh=mesh, in_shardings=specs)
    assert module.mesh("mesh") is not None and len(module.funcs) >= 1
    want = jax.jit(mlp, in_shardings=tuple(NamedSharding(mesh, s) for s in specs))(x, w1, w2)
    _assert_same(run_on_xla(module, x, w1, w2), (np.asarray(want),))


def test_from_jax_with_sharding_constraint(devices):
    from jax.sharding import PartitionSpec as P

    from shardy_ref.frontends import from_jax

    def fn(x):
        y = jax.lax.with_sharding_constraint(jax.numpy.tanh(x) * 2.0, P("model", "data"))
        return y.sum(axis=0)

    mesh = _mesh(devices)
    (x,) = _arrays((16, 32))
    module = from_jax(fn, x, mesh=mesh, in_shardings=(P("data"),))
    assert any(op.name == "sdy.sharding_constraint" for op in module.walk())
    with jax.set_mesh(mesh):
        want = jax.jit(fn)(x)
    _assert_same(run_on_xla(module, x), (np.asarray(want),))


def test_from_jax_shard_map_psum(devices):
    from jax.sharding import PartitionSpec as P

    from shardy_ref.frontends import from_jax

    mesh = _mesh(devices)

    def fn(x, w):
        return jax.shard_map(lambda a, b: jax.lax.psum(a @ b, "model"), mesh=mesh,
                             in_specs=(P("data", "model"), P("model", None)),
                             out_specs=P("data", None))(x, w)

    x, w = _arrays((16, 32), (32, 16))
    module = from_jax(fn, x, w)
    assert any(op.name == "sdy.manual_computation" for op in module.walk())
    _assert_same(run_on_xla(module, x, w), (np.asarray(jax.jit(fn)(x, w)),))


def test_partition_spec_needs_a_mesh():
    from jax.sharding import PartitionSpec as P

    from shardy_ref.frontends import from_jax

    with pytest.raises(ValueError, match="pass mesh="):
        from_jax(lambda x: x, np.zeros(4, np.float32), in_shardings=(P("x"),))


def test_readme_jax_example_runs(devices):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    (code,) = [b for b in blocks if "shardy_ref.frontends" in b]
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})


@pytest.mark.parametrize("command", ["run", "check"])
def test_cli_backend_xla(command, capsys, tmp_path):
    path = next(p for p in EXAMPLES if p.stem == "sim_int_sum_16")
    out = tmp_path / "y.npz"
    argv = [command, "--backend", "xla", "--quiet", str(path)]
    assert main(argv + (["--out", str(out)] if command == "run" else [])) == 0
    text = capsys.readouterr().out
    if command == "check":
        assert "OK: the partitioned program (run by XLA) computes the same results" in text
        return
    program = compile_spmd(path.read_text(), filename=str(path))
    want = program.run(*random_arguments([a.type for a in program.args], 0))
    with np.load(out) as got:
        _assert_same([got["out0"], got["out1"]], want)


_FEW_DEVICES = """
import jax
jax.config.update("jax_num_cpu_devices", 2)
jax.devices()  # the backend starts with 2 devices
from shardy_ref.backends import BackendError, run_on_xla
try:
    run_on_xla(open(r"{path}").read())
except BackendError as e:
    print(e.message)
"""


def test_too_few_devices_says_how_to_get_more():
    """jax started with 2 CPU devices before we could ask for 8: the error says so and names
    the flag to set (a fresh process: this one's jax has 64)."""
    path = next(p for p in EXAMPLES if p.stem == "sim_mlp_col_row")
    proc = subprocess.run([sys.executable, "-c", _FEW_DEVICES.format(path=path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    assert proc.stdout.startswith("the program runs on 8 devices but jax has 2 cpu device(s)")
    assert "--xla_force_host_platform_device_count=8" in proc.stdout


_QUIET_XLA = """
import numpy as np
from shardy_ref.backends import run_on_xla
text = '''sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> tensor<4xf32> {
  %0 = stablehlo.negate %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
'''
print(run_on_xla(text, np.arange(4, dtype=np.float32))[0].tolist())
"""


def test_run_on_xla_does_not_pass_on_xlas_gspmd_warning():
    """XLA warns that GSPMD is deprecated when it compiles our all-manual program; the
    library, not only the command line, keeps that off the user's stderr."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    done = subprocess.run([sys.executable, "-c", _QUIET_XLA], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[-0.0, -1.0, -2.0, -3.0]"
    assert "GSPMD" not in done.stderr
