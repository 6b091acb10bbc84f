"""Per-op dispatch shortcuts (issue 30): each must give what the plain path gives."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shardy_ref.execute import Interpreter, InterpreterError, run
from shardy_ref.execute.context import Context
from shardy_ref.execute.interpreter import _check_value, _exact, block_stamp
from shardy_ref.execute.kernel_index import KERNEL_MODULES
from shardy_ref.execute.registry import KERNELS, load_all, load_kernels
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.types import FloatType, IntegerType, RankedTensorType
from shardy_ref.parser import parse_module

F32, I32, BF16 = FloatType("f32"), IntegerType(32), FloatType("bf16")


def _tensors():
    """Tensors against result types: some exact, some off in dtype, shape or batch."""
    t = RankedTensorType((2, 3), F32)
    dyn = RankedTensorType((None, 3), F32)
    bf = RankedTensorType((2, 3), BF16)
    yield Tensor(t, np.zeros((2, 3), np.float32)), t
    yield Tensor(t, np.zeros((2, 3), np.float64)), t
    yield Tensor(t, np.zeros((3, 2), np.float32)), t
    yield Tensor(t, np.zeros((4, 2, 3), np.float32), 1), t
    yield Tensor(t, np.zeros((2, 3), np.float32)), RankedTensorType((2, 3), F32)
    yield Tensor(dyn, np.zeros((2, 3), np.float32)), dyn
    yield Tensor(t, np.zeros((2, 3), np.float32)), dyn
    yield Tensor(bf, np.zeros((2, 3), np.float32)), bf
    i32 = RankedTensorType((2, 3), I32)
    yield Tensor(i32, np.zeros((2, 3), np.int32)), i32
    yield Tensor(i32, np.zeros((2, 3), np.int32)), RankedTensorType((2, 3), I32)


@pytest.mark.parametrize("batch_shape", [(), (4,)])
def test_exact_fast_path_only_accepts_what_the_full_check_accepts(batch_shape):
    ctx = Context(Interpreter(parse_module("func.func @main() {\n  func.return\n}")),
                  batch_shape)
    op = parse_module("func.func @main() {\n  func.return\n}")
    taken = 0
    for value, type_ in _tensors():
        if _exact(value, type_):
            taken += 1
            _check_value(ctx, op, type_, value)  # must not raise
    assert taken == 2


CHAIN = """func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = stablehlo.multiply %0, %y : tensor<4xf32>
  %2 = stablehlo.tanh %1 : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}"""


def test_run_reuses_plans_only_while_the_module_is_unchanged():
    module = parse_module(CHAIN)
    x, y = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    first = run(module, x, y)
    np.testing.assert_array_equal(run(module, x, y)[0], first[0])
    func = next(iter(module.regions[0].blocks[0]))
    block = func.regions[0].blocks[0]
    stamp = block_stamp(block)
    ops = list(block)
    ops[1].set_operand(0, block.args[0])  # multiply now reads %x, not %0
    assert block_stamp(block) != stamp
    fresh = Interpreter(module).run(args=[Tensor(block.args[0].type, x),
                                          Tensor(block.args[1].type, y)])
    changed = run(module, x, y)
    np.testing.assert_array_equal(changed[0], fresh[0].data)
    np.testing.assert_array_equal(changed[0], np.tanh(x * y))


def test_a_kept_plan_sees_kernels_registered_later():
    text = '"test.later"() : () -> ()\n'
    module = parse_module("func.func @main() {\n  " + text + "  func.return\n}",
                          allow_unregistered=True)
    with pytest.raises(InterpreterError, match="no interpreter kernel"):
        run(module)
    calls = []
    KERNELS["test.later"] = lambda ctx, op: calls.append(op)
    try:
        assert run(module) == ()
    finally:
        del KERNELS["test.later"]
    assert len(calls) == 1


def test_kernel_index_is_what_the_kernel_modules_register():
    code = ("import json; from shardy_ref.execute.registry import kernel_index; "
            "print(json.dumps(kernel_index()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == KERNEL_MODULES, \
        "stale: run python -m shardy_ref.execute.kernel_index"


def test_lazy_kernel_table_gives_the_eager_table():
    lazy = load_kernels()
    for name in KERNEL_MODULES:
        assert name in lazy
        assert lazy[name] is KERNELS[name]
    assert dict(lazy) == load_all()
    assert "no.such_op" not in lazy
    assert lazy.get("no.such_op") is None


def test_a_lookup_imports_only_the_kernel_module_it_needs():
    code = ("import sys; from shardy_ref.execute.registry import load_kernels; "
            "load_kernels()['stablehlo.sort']; "
            "print(sorted(m for m in sys.modules if m.startswith('shardy_ref.execute.kernels.')"
            " and m.endswith(('fft', 'rng', 'linalg'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
