"""Differential testing of the interpreter against the real StableHLO reference interpreter.

``oracle_results(texts)`` runs each module's ``@main`` (no arguments) in the oracle
(``tools/oracle_interpret.py`` under the oracle venv, one process for all) and returns,
per text, the list of result tensors as uniform :class:`Tensor` values, or the oracle's
error string. ``assert_same(ours, theirs)`` compares results: integers and booleans exactly,
floats bit for bit except where ``rtol``/``atol`` allow, NaN equal to NaN.
"""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
from corpus import ORACLE_PY

from tests.conftest import ROOT


def oracle_results(texts: list[str], retries: int = 2) -> list:
    """Each module's results from the oracle. A module whose interpreter crashed (jaxlib's
    interpreter segfaults now and then under load) is run again, up to ``retries`` times."""
    out = _oracle_once(texts)
    for _ in range(retries):
        again = [i for i, r in enumerate(out) if isinstance(r, str) and "aborted" in r]
        if not again:
            break
        for i, r in zip(again, _oracle_once([texts[i] for i in again]), strict=True):
            out[i] = r
    return out


def _oracle_once(texts: list[str]) -> list:
    jobs = [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    env = dict(os.environ)
    # interpreter.run_parallel runs a thread per process from a pool of one thread per CPU:
    # the oracle's shim (../shared/oracle/cpu_shim.c) reports more CPUs so it does not stall.
    shim = ORACLE_PY.parent.parent / "lib" / "stablehlo-oracle-cpus.so"
    if shim.exists():
        env["LD_PRELOAD"] = str(shim) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    proc = subprocess.run([str(ORACLE_PY), str(ROOT / "tools" / "oracle_interpret.py")],
                          input=json.dumps(jobs), capture_output=True, text=True, check=True,
                          timeout=1800, env=env)
    raw = json.loads(proc.stdout)
    out = []
    for i in range(len(texts)):
        r = raw[str(i)]
        out.append([_tensor(s) for s in r["results"]] if r["ok"] else r["err"])
    return out


def _tensor(text: str):
    from shardy_ref.execute.values import from_dense
    from shardy_ref.parser import parse_attribute

    return from_dense(parse_attribute(text))


def ours(text: str) -> list:
    from shardy_ref.execute import Interpreter
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    module = parse_module(text)
    verify_module(module)
    return Interpreter(module).run("main")


def assert_same(mine: list, theirs: list, rtol: float = 0.0, atol: float = 0.0,
                context: str = "") -> None:
    assert not isinstance(theirs, str), f"oracle failed: {theirs}\n{context}"
    assert len(mine) == len(theirs), context
    for a, b in zip(mine, theirs, strict=True):
        assert a.type == b.type, f"{a.type} != {b.type}\n{context}"
        x, y = a.data, b.data
        if x.dtype.kind in "fcV" or str(x.dtype).startswith(("float", "bfloat")):
            xf, yf = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), \
                y.astype(np.complex128 if y.dtype.kind == "c" else np.float64)
            same_nan = np.isnan(xf) & np.isnan(yf)
            close = np.isclose(xf, yf, rtol=rtol, atol=atol) if (rtol or atol) else xf == yf
            ok = same_nan | close
            assert ok.all(), f"{a.type}: ours {xf[~ok][:5]} vs oracle {yf[~ok][:5]}\n{context}"
        else:
            assert np.array_equal(x.astype(np.int64) if x.dtype.kind not in "biu" else x,
                                  y.astype(np.int64) if y.dtype.kind not in "biu" else y), \
                f"{a.type}: ours {x} vs oracle {y}\n{context}"


def same_results(a: list, b: list) -> bool:
    """Two oracle answers with bit-identical tensors."""
    if isinstance(a, str) or isinstance(b, str) or len(a) != len(b):
        return False
    return all(x.type == y.type and x.data.tobytes() == y.data.tobytes()
               for x, y in zip(a, b, strict=True))
