"""stablehlo.rng_bit_generator and stablehlo.rng: the Threefry/Philox known-answer vectors
(Random123), XLA's state updates and output layouts, the spec's example, varying states
(one call for all processes equals per-process calls), the distributions of ``rng``; and
bit-exact agreement with XLA's CPU backend (the reference interpreter runs neither op)."""
from __future__ import annotations

import json
import random
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_ref.execute import Interpreter
from shardy_ref.execute.context import Context
from shardy_ref.execute.dtypes import bit_width
from shardy_ref.execute.kernels.rng import philox4x32, rng_bit_generator, threefry2x32
from shardy_ref.execute.values import Tensor
from shardy_ref.parser import parse_module, parse_type
from tests.execute.oracle import ours

U32 = np.uint32


# -- helpers shared with test_linalg (XLA as the oracle of ops the interpreter lacks) ------

_XLA_SCRIPT = r"""
import json, sys
import numpy as np
from jax._src import xla_bridge as xb
from jax._src.interpreters import mlir
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir

backend = xb.get_backend("cpu")
devices = xc.DeviceList(tuple(backend.devices()[:1]))
ctx = mlir.make_ir_context()
out = {}
for job in json.load(sys.stdin):
    try:
        with ctx:
            exe = backend.compile_and_load(ir.Module.parse(job["text"]), devices,
                                           xc.CompileOptions())
        res = [np.asarray(r) for r in exe.execute([])]
        out[job["id"]] = {"ok": True, "results": [
            [str(r.dtype), list(r.shape), r.tobytes().hex()] for r in res]}
    except Exception as e:
        out[job["id"]] = {"ok": False, "err": str(e)[:400]}
json.dump(out, sys.stdout)
"""


def xla_results(texts: list[str]) -> list:
    """Compile and run each module's ``@main`` (no arguments) with XLA's CPU backend from the
    oracle venv (jaxlib 0.10.2), all in one process. Per text: a list of NumPy arrays (XLA's
    buffer dtypes: random bits come back as unsigned integers), or the error string."""
    from corpus import ORACLE_PY

    jobs = [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    proc = subprocess.run([str(ORACLE_PY), "-c", _XLA_SCRIPT], input=json.dumps(jobs),
                          capture_output=True, text=True, check=True, timeout=1800)
    raw = json.loads(proc.stdout)
    out = []
    for i in range(len(texts)):
        r = raw[str(i)]
        if not r["ok"]:
            out.append(r["err"])
            continue
        arrays = []
        for dtype, shape, hexdata in r["results"]:
            dt = np.dtype(dtype) if dtype in np.sctypeDict else np.dtype(np.uint8)
            arrays.append(np.frombuffer(bytes.fromhex(hexdata), dt).reshape(shape))
        out.append(arrays)
    return out


def bits_of(data: np.ndarray, width: int) -> np.ndarray:
    """The low ``width`` bits of each element, as uint64 (floats by their encoding)."""
    flat = np.ascontiguousarray(data).reshape(-1)
    if flat.dtype.kind == "b":
        return flat.astype(np.uint64)
    raw = flat.view(np.dtype(f"uint{flat.dtype.itemsize * 8}"))
    return raw.astype(np.uint64) & _mask(width)


# -- known answers ---------------------------------------------------------------------------

def test_threefry2x32_known_answers():
    # Random123's kat_vectors for threefry2x32_20
    cases = [((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
             ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
             ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0))]
    for ctr, key, want in cases:
        got = threefry2x32(U32(ctr[0]), U32(ctr[1]), U32(key[0]), U32(key[1]))
        assert tuple(int(w) for w in got) == want


def test_philox4x32_known_answers():
    # Random123's kat_vectors for philox4x32_10
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2,
              (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in cases:
        got = philox4x32([U32(c) for c in ctr], U32(key[0]), U32(key[1]))
        assert tuple(int(w) for w in got) == want


def _module(alg: str, n: int, state: list[int], out: str) -> str:
    values = ", ".join(map(str, state))
    return f"""func.func @main() -> (tensor<{n}xui64>, tensor<{out}>) {{
  %s = stablehlo.constant dense<[{values}]> : tensor<{n}xui64>
  %0, %1 = "stablehlo.rng_bit_generator"(%s) {{rng_algorithm = #stablehlo<rng_algorithm {alg}>}}
      : (tensor<{n}xui64>) -> (tensor<{n}xui64>, tensor<{out}>)
  func.return %0, %1 : tensor<{n}xui64>, tensor<{out}>
}}"""


def test_spec_example():
    state, out = ours(_module("THREE_FRY", 2, [1, 2], "2x2xui64"))
    assert state.data.tolist() == [1, 6]
    assert out.data.tolist() == [[9236835810183407956, 16087790271692313299],
                                 [18212823393184779219, 2658481902456610144]]


def test_threefry_state_counts_blocks():
    # 64-bit outputs use one block per element, 32-bit and narrower one per two elements
    assert ours(_module("THREE_FRY", 2, [5, 7], "3x2xui64"))[0].data.tolist() == [5, 13]
    assert ours(_module("THREE_FRY", 2, [5, 7], "3x2xf32"))[0].data.tolist() == [5, 10]
    assert ours(_module("THREE_FRY", 2, [5, 7], "3x3xi8"))[0].data.tolist() == [5, 13]
    assert ours(_module("THREE_FRY", 2, [5, 2**64 - 1], "ui32"))[0].data.tolist() == [5, 0]


def test_philox_state_is_a_128_bit_counter():
    # four 32-bit words (two 64-bit) per block; the counter carries into its high word
    state = ours(_module("PHILOX", 3, [1, 2**64 - 1, 4], "9xui32"))[0].data.tolist()
    assert state == [1, 2, 5]
    assert ours(_module("PHILOX", 3, [1, 0, 0], "5xf64"))[0].data.tolist() == [1, 3, 0]
    # two-word state: counter low word = state[1], high word = the key; only low written back
    assert ours(_module("PHILOX", 2, [7, 10], "4xi16"))[0].data.tolist() == [7, 11]
    assert ours(_module("DEFAULT", 2, [7, 10], "4xi16"))[0].data.tolist() == [7, 11]


def test_output_types_share_the_bits():
    base = ours(_module("PHILOX", 3, [3, 4, 5], "2x3xui32"))[1].data
    for t, width in [("i32", 32), ("f32", 32), ("ui16", 16), ("bf16", 16), ("f16", 16),
                     ("i8", 8), ("f8E4M3FN", 8), ("ui4", 4), ("i4", 4), ("i2", 2),
                     ("f4E2M1FN", 4)]:
        out = ours(_module("PHILOX", 3, [3, 4, 5], f"2x3x{t}"))[1].data
        np.testing.assert_array_equal(bits_of(out, width),
                                      bits_of(base, width))
    assert ours(_module("PHILOX", 3, [3, 4, 5], "2x3xf64"))[1].data.dtype == np.float64


def test_bad_state_size_is_an_error():
    from shardy_ref.execute import InterpreterError

    with pytest.raises(InterpreterError, match="THREE_FRY needs a state of 2"):
        ours(_module("THREE_FRY", 3, [1, 2, 3], "2xui32"))


@settings(max_examples=15, deadline=None)
@given(alg=st.sampled_from(["THREE_FRY", "PHILOX", "DEFAULT"]),
       out=st.sampled_from(["3x5xui64", "4xf32", "ui8", "3x3xi4", "2x1x3xbf16"]),
       seed=st.integers(0, 2**32))
def test_varying_state_equals_per_process(alg, out, seed):
    n = 2 if alg == "THREE_FRY" else 3
    text = _module(alg, n, [0] * n, out).replace(
        f"%s = stablehlo.constant dense<[{', '.join(['0'] * n)}]> : tensor<{n}xui64>", "")
    text = text.replace("@main()", f"@main(%s: tensor<{n}xui64>)")
    module = parse_module(text)
    interp = Interpreter(module)
    op = next(o for o in module.walk() if o.name == "stablehlo.rng_bit_generator")
    rs = np.random.default_rng(seed)
    states = rs.integers(0, 2**64, size=(3, n), dtype=np.uint64, endpoint=False)
    stype = op.operands[0].type
    both = rng_bit_generator(Context(interp, (3,)), op, Tensor(stype, states, 1))
    for p in range(3):
        one = rng_bit_generator(Context(interp), op, Tensor(stype, states[p], 0))
        for b, o in zip(both, one, strict=True):
            np.testing.assert_array_equal(bits_of(b.data[p], 64), bits_of(o.data, 64))


# -- stablehlo.rng ---------------------------------------------------------------------------

def _rng(dist: str, t: str, a: str, b: str, shape: list[int]) -> str:
    shape_t = "x".join(map(str, shape))
    out = f"{shape_t}x{t}" if shape else t
    return f"""func.func @main() -> (tensor<{out}>, tensor<{out}>) {{
  %a = stablehlo.constant dense<{a}> : tensor<{t}>
  %b = stablehlo.constant dense<{b}> : tensor<{t}>
  %s = stablehlo.constant dense<{shape}> : tensor<{len(shape)}xi64>
  %0 = "stablehlo.rng"(%a, %b, %s) {{rng_distribution = #stablehlo<rng_distribution {dist}>}}
      : (tensor<{t}>, tensor<{t}>, tensor<{len(shape)}xi64>) -> tensor<{out}>
  %1 = "stablehlo.rng"(%a, %b, %s) {{rng_distribution = #stablehlo<rng_distribution {dist}>}}
      : (tensor<{t}>, tensor<{t}>, tensor<{len(shape)}xi64>) -> tensor<{out}>
  func.return %0, %1 : tensor<{out}>, tensor<{out}>
}}"""


@pytest.mark.parametrize("t", ["f32", "f64", "bf16", "f16"])
def test_rng_uniform_floats_lie_in_the_interval(t):
    x, y = (v.data.astype(np.float64) for v in ours(_rng("UNIFORM", t, "-2.0", "3.0", [4000])))
    assert ((x >= -2) & (x <= 3)).all() and abs(x.mean() - 0.5) < 0.15
    assert not np.array_equal(x, y)  # the stream advances between calls


@pytest.mark.parametrize("t", ["i32", "ui32", "i64", "ui64", "i8", "i16"])
def test_rng_uniform_integers_lie_in_the_interval(t):
    lo, hi = (0, 7) if t.startswith("u") else (-5, 3)
    x, _ = (v.data.astype(np.int64) for v in ours(_rng("UNIFORM", t, str(lo), str(hi), [3000])))
    assert x.min() == lo and x.max() == hi - 1


def test_rng_normal_has_the_mean_and_deviation():
    x, _y = (v.data for v in ours(_rng("NORMAL", "f32", "1.5", "2.0", [20, 301])))
    assert x.dtype == np.float32 and x.shape == (20, 301)
    assert abs(x.mean() - 1.5) < 0.1 and abs(x.std() - 2.0) < 0.1
    assert abs(float(ours(_rng("NORMAL", "f64", "0.0", "1.0", []))[0].data)) < 10


def test_rng_is_deterministic_per_run():
    text = _rng("UNIFORM", "f32", "0.0", "1.0", [3, 3])
    first = [v.data for v in ours(text)]
    again = [v.data for v in ours(text)]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


# -- XLA as the oracle -----------------------------------------------------------------------

_TYPES = ["ui64", "i64", "f64", "ui32", "i32", "f32", "f16", "bf16", "i16", "ui16", "i8", "ui8",
          "f8E4M3FN", "f8E5M2", "i4", "ui4", "i2", "ui2", "f4E2M1FN"]
def _mask(width: int) -> np.uint64:
    return np.uint64(2**64 - 1 if width >= 64 else (1 << width) - 1)


def _random_programs(count: int, seed: int) -> list[tuple[str, str]]:
    rs = random.Random(seed)
    special = [0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 2**64 - 2]
    out = []
    for _ in range(count):
        alg = rs.choice(["THREE_FRY", "PHILOX", "DEFAULT"])
        n = 2 if alg == "THREE_FRY" else rs.choice([2, 3])
        t = rs.choice(_TYPES)
        shape = [rs.choice([1, 1, 2, 3, 4, 5, 7, 8]) for _ in range(rs.randint(0, 3))]
        state = [rs.choice(special) if rs.random() < 0.4 else rs.randrange(2**64)
                 for _ in range(n)]
        out_t = "x".join(map(str, [*shape, t])) if shape else t
        out.append((_module(alg, n, state, out_t), t))
    return out


@pytest.mark.oracle
def test_rng_bit_generator_matches_xla():
    programs = _random_programs(300, seed=12)
    theirs = xla_results([text for text, _ in programs])
    for (text, t), xla in zip(programs, theirs, strict=True):
        assert not isinstance(xla, str), f"XLA failed: {xla}\n{text}"
        state, out = ours(text)
        width = bit_width(parse_type(t))
        np.testing.assert_array_equal(state.data, xla[0], err_msg=text)
        np.testing.assert_array_equal(bits_of(out.data, width), bits_of(xla[1], width),
                                      err_msg=text)
