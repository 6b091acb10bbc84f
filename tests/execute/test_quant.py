"""Quantization: parsing ``!quant.uniform`` types, uniform_quantize / uniform_dequantize as the
spec defines them (per-tensor and per-axis, storage ranges, rounding half to even,
requantization), varying operands, and other ops on quantized tensors through
``kernels.quant.route`` (the spec's ``dequantize_op_quantize``; storage-level data movement).
The oracle (jaxlib) has no quant dialect: the spec and the corpus decide."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter, InterpreterError
from shardy_ref.execute.context import Context
from shardy_ref.execute.kernels.quant import route, uniform_dequantize, uniform_quantize
from shardy_ref.execute.quant_types import (
    UniformQuantType,
    dequantize,
    parse_uniform,
    quant_type,
    quantize,
)
from shardy_ref.execute.registry import load_kernels
from shardy_ref.execute.values import Tensor
from shardy_ref.ir.types import FloatType, IntegerType, OpaqueType
from shardy_ref.parser import parse_module
from tests.execute.oracle import ours

PER_AXIS = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"


def test_parse_per_tensor_and_per_axis():
    q = parse_uniform(".uniform<i8:f32, 1.0:0>")
    assert q == UniformQuantType(IntegerType(8), FloatType("f32"), (1.0,), (0,), -128, 127)
    q = parse_uniform(".uniform<i8:f32:0, {0.1:1, 0.2:2}>")
    assert q.per_axis and q.quantized_dimension == 0 and q.zero_points == (1, 2)
    assert q.scales == (0.1, 0.2)
    q = parse_uniform(".uniform<i8<-100:100>:bf16, 5.000000e-01>")
    assert (q.storage_min, q.storage_max, q.zero_points) == (-100, 100, (0,))
    q = parse_uniform(".uniform<u8:f16, 0x3C00:128>")  # hexadecimal f16 bits of 1.0
    assert q.storage_type == IntegerType(8, "unsigned") and q.scales == (1.0,)
    assert quant_type(OpaqueType("quant", ".uniform<i4:f32, 2.0:-1>")).storage_max == 7
    assert quant_type(FloatType("f32")) is None


@pytest.mark.parametrize("body", [
    ".uniform<i8:f32, 0.0:0>",  # scale must be positive
    ".uniform<i8:f32, 1.0:200>",  # zero point outside storage range
    ".uniform<i8<-100:200>:f32, 1.0>",  # storage range outside i8
    ".uniform<i8:f32, {1.0:0, 2.0:0}>",  # per-axis without a dimension
    ".uniform<i8:i32, 1.0>",  # expressed type not a float
    ".any<i8:f32>",
])
def test_malformed_types_are_rejected(body):
    with pytest.raises(ValueError, match=r"\w"):
        parse_uniform(body)


@settings(max_examples=30, deadline=None)
@given(storage=st.sampled_from(["i8", "u8", "i16", "i4", "u4", "i32"]),
       expressed=st.sampled_from(["f32", "f16", "bf16", "f64"]),
       scales=st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=3), data=st.data())
def test_printing_parses_back(storage, expressed, scales, data):
    width = int(storage[1:])
    lo, hi = (0, 2**width - 1) if storage[0] == "u" else (-(2**(width - 1)), 2**(width - 1) - 1)
    zps = [data.draw(st.integers(lo, hi)) for _ in scales]
    dim = data.draw(st.integers(0, 3)) if len(scales) > 1 else None
    q = UniformQuantType(IntegerType(width, "unsigned" if storage[0] == "u" else "signless"),
                         FloatType(expressed), tuple(scales), tuple(zps), lo, hi, dim)
    assert parse_uniform(str(q)[len("!quant"):]) == q


def _qdq(x: str, shape: str, qt: str, et: str = "f32") -> str:
    return f"""func.func @main() -> (tensor<{shape}xi8>, tensor<{shape}x{et}>) {{
  %x = stablehlo.constant dense<{x}> : tensor<{shape}x{et}>
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<{shape}x{et}>) -> tensor<{shape}x{qt}>
  %d = "stablehlo.uniform_dequantize"(%q) : (tensor<{shape}x{qt}>) -> tensor<{shape}x{et}>
  %i = "stablehlo.uniform_quantize"(%q) : (tensor<{shape}x{qt}>)
      -> tensor<{shape}x!quant.uniform<i8:{et}, 1.0:0>>
  %b = "stablehlo.uniform_dequantize"(%i) : (tensor<{shape}x!quant.uniform<i8:{et}, 1.0:0>>)
      -> tensor<{shape}x{et}>
  %s = stablehlo.convert %b : (tensor<{shape}x{et}>) -> tensor<{shape}xi8>
  %z = "stablehlo.uniform_quantize"(%d) : (tensor<{shape}x{et}>) -> tensor<{shape}x{qt}>
  %r = "stablehlo.uniform_dequantize"(%z) : (tensor<{shape}x{qt}>) -> tensor<{shape}x{et}>
  func.return %s, %r : tensor<{shape}xi8>, tensor<{shape}x{et}>
}}"""


def _quantized(x, qt: str, et: str = "f32"):
    """Storage integers of ``uniform_quantize(x)`` (the kernel called directly)."""
    text = f"""func.func @main(%x: tensor<{len(x)}x{et}>) -> tensor<{len(x)}x{qt}> {{
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<{len(x)}x{et}>) -> tensor<{len(x)}x{qt}>
  func.return %q : tensor<{len(x)}x{qt}>
}}"""
    module = parse_module(text)
    op = next(o for o in module.walk() if o.name == "stablehlo.uniform_quantize")
    data = np.asarray(x, dtype=quant_type(op.results[0].type).expressed_dtype)
    return uniform_quantize(Context(Interpreter(module)), op,
                            Tensor(op.operands[0].type, data)).data


def test_spec_examples():
    assert _quantized([4.0, 15.0], PER_AXIS).tolist() == [10, 10]
    text = f"""func.func @main() -> (tensor<2xf32>) {{
  %c = stablehlo.constant dense<[4.0, 15.0]> : tensor<2xf32>
  %q = "stablehlo.uniform_quantize"(%c) : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %r = "stablehlo.uniform_quantize"(%q) : (tensor<2x{PER_AXIS}>)
      -> tensor<2x!quant.uniform<i8:f32:0, {{0.1:-20,0.2:-30}}>>
  %d = "stablehlo.uniform_dequantize"(%r)
      : (tensor<2x!quant.uniform<i8:f32:0, {{0.1:-20,0.2:-30}}>>) -> tensor<2xf32>
  func.return %d : tensor<2xf32>
}}"""
    (d,) = ours(text)
    # requantized storage [20, 45]: (20 + 20) * 0.1 = 4, (45 + 30) * 0.2 = 15
    np.testing.assert_allclose(d.data, [4.0, 15.0], rtol=1e-6)


def test_storage_range_clamps_and_ties_round_to_even():
    qt = "!quant.uniform<i8<-100:100>:f32, 0.5:10>"
    # x / 0.5 + 10: 1000 -> 100 (clamped), -1000 -> -100, 0.25 -> 10.5 -> 10, 0.75 -> 11.5 -> 12
    assert _quantized([1000.0, -1000.0, 0.25, 0.75, np.nan], qt).tolist() == [100, -100, 10, 12, 0]
    assert _quantized([3.0, -1.0], "!quant.uniform<u8:f32, 1.0:128>").tolist() == [131, 127]


def _spec_quantize(x: float, scale: float, zp: int, lo: int, hi: int, dtype) -> int:
    """The spec's ``quantize`` for one element, in the expressed type ``dtype``."""
    v = dtype(x) / dtype(scale) + dtype(zp)
    v = min(max(v, dtype(lo)), dtype(hi))
    return int(np.rint(np.float64(v)))


@settings(max_examples=30, deadline=None)
@given(xs=st.lists(st.floats(-300, 300, width=32), min_size=1, max_size=8),
       scale=st.floats(0.01, 10), zp=st.integers(-20, 20),
       et=st.sampled_from(["f32", "f16", "bf16"]))
def test_quantize_and_dequantize_follow_the_spec(xs, scale, zp, et):
    import ml_dtypes

    dtype = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[et]
    scale = float(dtype(scale))
    qt = f"!quant.uniform<i8:{et}, {scale!r}:{zp}>"
    got = _quantized(xs, qt, et)
    want = [_spec_quantize(x, scale, zp, -128, 127, dtype) for x in xs]
    assert got.tolist() == want
    q = quant_type(OpaqueType("quant", qt[len("!quant"):]))
    back = dequantize(got, q, 1)
    assert back.dtype == np.dtype(dtype)
    assert back.astype(np.float64).tolist() == [
        float(dtype(float(dtype(g - zp)) * scale)) for g in want]


def test_per_axis_parameters_follow_their_dimension():
    q = parse_uniform(".uniform<i8:f32:1, {1.0:0, 0.5:10, 2.0:-5}>")
    x = np.array([[1.0, 1.0, 4.0], [-2.0, 3.0, 8.0]], np.float32)
    s = quantize(x, q, 2)
    assert s.tolist() == [[1, 12, -3], [-2, 16, -1]]
    np.testing.assert_array_equal(dequantize(s, q, 2), x)
    batch = np.stack([x, 2 * x])  # a batch dimension in front broadcasts the same way
    np.testing.assert_array_equal(quantize(batch, q, 2)[0], s)


def test_quantize_dequantize_round_trips():
    # uniform_qdq (quantize, dequantize), and requantization to scale 1, zero point 0
    s, r = ours(_qdq("[4.0, 15.0]", "2", PER_AXIS))
    assert s.data.tolist() == [4, 15]
    np.testing.assert_allclose(r.data, [4.0, 15.0], rtol=1e-6)


def test_varying_operand_equals_per_process():
    text = f"""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %d = "stablehlo.uniform_dequantize"(%q) : (tensor<2x{PER_AXIS}>) -> tensor<2xf32>
  func.return %d : tensor<2xf32>
}}"""
    module = parse_module(text)
    interp = Interpreter(module)
    qop, dop = [o for o in module.walk() if o.name.startswith("stablehlo.uniform")]
    data = np.array([[4.0, 15.0], [-3.0, 100.0], [0.04, 0.26]], np.float32)
    q_all = uniform_quantize(Context(interp, (3,)), qop, Tensor(qop.operands[0].type, data, 1))
    d_all = uniform_dequantize(Context(interp, (3,)), dop, q_all)
    assert q_all.batch == d_all.batch == 1
    for p in range(3):
        q = uniform_quantize(Context(interp), qop, Tensor(qop.operands[0].type, data[p]))
        np.testing.assert_array_equal(q_all.data[p], q.data)
        np.testing.assert_array_equal(d_all.data[p], uniform_dequantize(Context(interp), dop,
                                                                        q).data)


def test_errors_are_located_interpreter_errors():
    text = """func.func @main() -> tensor<2xf32> {
  %x = stablehlo.constant dense<1.0> : tensor<2xf32>
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>)
      -> tensor<2x!quant.uniform<i8:f32:0, {0.1:1, 0.2:2, 0.3:3}>>
  %d = "stablehlo.uniform_dequantize"(%q)
      : (tensor<2x!quant.uniform<i8:f32:0, {0.1:1, 0.2:2, 0.3:3}>>) -> tensor<2xf32>
  func.return %d : tensor<2xf32>
}"""
    with pytest.raises(InterpreterError, match="dimension 0 of size 3"):
        ours(text)


# -- other ops on quantized tensors (kernels.quant.route, applied by Interpreter._plan) --

def _needs(*names):
    missing = [n for n in names if n not in load_kernels()]
    if missing:
        pytest.skip(f"kernels not written yet: {missing}")


def test_quantized_add_dequantizes_adds_and_quantizes():
    _needs("stablehlo.add", "stablehlo.reshape")
    a, b, r = ("!quant.uniform<i8:f32, 0.1:-30>", "!quant.uniform<i8:f32, 0.5:-20>",
               "!quant.uniform<i8:f32, 0.5:-20>")
    text = f"""func.func @main() -> (tensor<2x1xf32>, tensor<2x1xi8>) {{
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %qx = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{a}>
  %qy = "stablehlo.uniform_quantize"(%y) : (tensor<2xf32>) -> tensor<2x{b}>
  %s = "stablehlo.add"(%qx, %qy) : (tensor<2x{a}>, tensor<2x{b}>) -> tensor<2x{r}>
  %m = stablehlo.reshape %s : (tensor<2x{r}>) -> tensor<2x1x{r}>
  %d = "stablehlo.uniform_dequantize"(%m) : (tensor<2x1x{r}>) -> tensor<2x1xf32>
  %i = "stablehlo.uniform_quantize"(%m) : (tensor<2x1x{r}>)
      -> tensor<2x1x!quant.uniform<i8:f32, 1.0:0>>
  %k = "stablehlo.uniform_dequantize"(%i) : (tensor<2x1x!quant.uniform<i8:f32, 1.0:0>>)
      -> tensor<2x1xf32>
  %c = stablehlo.convert %k : (tensor<2x1xf32>) -> tensor<2x1xi8>
  func.return %d, %c : tensor<2x1xf32>, tensor<2x1xi8>
}}"""
    d, c = ours(text)
    np.testing.assert_allclose(d.data.reshape(-1), [4.0, 6.0])
    # the corpus's quantized_add: storage [-12, -8] = 4 / 0.5 - 20, 6 / 0.5 - 20; requantized
    # to scale 1 zero point 0 these are the real values
    assert c.data.reshape(-1).tolist() == [4, 6]


def test_routing_leaves_unquantized_ops_alone():
    module = parse_module("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = stablehlo.add %x, %x : tensor<2xf32>
      func.return %y : tensor<2xf32>
    }""")
    op = next(o for o in module.walk() if o.name == "stablehlo.add")

    def fn(ctx, op, *args):
        return None
    assert route(op, fn) is fn


def test_data_movement_runs_on_storage_and_reductions_are_refused():
    _needs("stablehlo.transpose", "stablehlo.reduce", "stablehlo.add")
    q = "!quant.uniform<i8:f32:1, {0.5:0, 0.25:3, 1.0:-2}>"
    qt = "!quant.uniform<i8:f32:0, {0.5:0, 0.25:3, 1.0:-2}>"
    text = f"""func.func @main() -> tensor<3x2xf32> {{
  %x = stablehlo.constant dense<[[1.0, 2.0, 3.0], [-4.0, 5.5, 60.0]]> : tensor<2x3xf32>
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2x3xf32>) -> tensor<2x3x{q}>
  %t = stablehlo.transpose %q, dims = [1, 0] : (tensor<2x3x{q}>) -> tensor<3x2x{qt}>
  %d = "stablehlo.uniform_dequantize"(%t) : (tensor<3x2x{qt}>) -> tensor<3x2xf32>
  func.return %d : tensor<3x2xf32>
}}"""
    (d,) = ours(text)
    assert d.data.tolist() == [[1.0, -4.0], [2.0, 5.5], [3.0, 60.0]]
    r = "!quant.uniform<i8:f32, 0.5:0>"
    text = f"""func.func @main() -> tensor<{r}> {{
  %x = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %q = "stablehlo.uniform_quantize"(%x) : (tensor<2xf32>) -> tensor<2x{r}>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %zq = "stablehlo.uniform_quantize"(%z) : (tensor<f32>) -> tensor<{r}>
  %s = stablehlo.reduce(%q init: %zq) applies stablehlo.add across dimensions = [0]
      : (tensor<2x{r}>, tensor<{r}>) -> tensor<{r}>
  func.return %s : tensor<{r}>
}}"""
    with pytest.raises(InterpreterError, match="on quantized tensors is not supported"):
        ours(text)
