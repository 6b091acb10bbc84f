"""The op x sharding sweep: every catalog kind, with each dimension of each argument (and
of the result) sharded by each axis of an 8-device mesh ``["x"=4, "y"=2]``, by the
sub-axes ``"x":(1)2`` and ``"x":(2)2`` and by two axes ``{"x", "y"}``; dimensions of 6
are not divisible by 4 or 8. Runtime indices take four scenarios: inside a shard,
straddling shards, clamped past the end, and negative (clamped to 0).

Each case is judged like ``per_device_equals_single_device``: the partitioned program run
on every device (``simulate``) equals the single-device run, or the partitioner refuses it
with a located error. Anything else (a mismatch, an internal error) is wrong.
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from shardy_ref.testing.catalog.kinds import KINDS, OpKind
from shardy_ref.testing.catalog.site import Site, tensor

MESH = (("x", 4), ("y", 2))
SPECS = {
    "x": ('"x"',),
    "y": ('"y"',),
    "x:(1)2": ('"x":(1)2',),
    "x:(2)2": ('"x":(2)2',),
    "x,y": ('"x"', '"y"'),
}
# two dimensions sharded at once (dimension 0 | dimension 1): an axis each, a sub-axis each
PAIRS = (("x", "y"), ("y", "x"), ("x:(1)2", "x:(2)2"))
SCENARIOS = ("inside", "straddle", "past_end", "negative")
VARIANTS = 2  # builder seeds per kind and shape (their random choices differ)


@dataclass
class _Arg:
    name: str
    shape: tuple[int, ...]
    dtype: str
    role: str  # "data" or "index"
    size: int = 0  # for indices: the size of the dimension they index
    window: int = 1  # for a scalar index: the window starting there


class SweepSite(Site):
    """A site whose new arguments are ``@main``'s next arguments and whose runtime
    indices are i32 arguments the sweep fills per scenario."""

    def __init__(self, rng):
        super().__init__(rng, mesh=MESH)
        self.args: list[_Arg] = []
        # (scenario, input constrained?) -> (inputs, single-device results or the error
        # running them): the same for every sharding of the module, so run once
        self.single_device: dict[tuple, tuple] = {}

    def _new(self, shape, dtype, role, size=0, window=1) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append(_Arg(name, tuple(shape), dtype, role, size, window))
        return name

    def arg(self, shape, dtype: str = "f32") -> str:
        return self._new(shape, dtype, "data")

    def index(self, size: int, window: int = 1) -> str:
        return self._new((), "i32", "index", size, window)

    def indices(self, shape, size: int) -> str:
        return self._new(shape, "i32", "index", size)


@dataclass(frozen=True)
class Case:
    """One module of the sweep, its inputs, and what it shards."""

    kind: str
    variant: int
    target: str  # "arg0 dim 1", "result dim 0" or "none"
    spec: str
    scenario: str
    text: str
    seed: int

    def label(self) -> str:
        return f"{self.kind}[{self.variant}] {self.target} {{{self.spec}}} {self.scenario}"

    def inputs(self, site: SweepSite) -> list[np.ndarray]:
        return index_inputs(site, self.scenario, self.seed)


@dataclass(frozen=True)
class Built:
    """A kind built once: its site (arguments, body) and result."""

    kind: OpKind
    variant: int
    site: SweepSite
    result: str
    result_shape: tuple[int, ...]


def build(op_kind: OpKind, shape, variant: int) -> Built | None:
    site = SweepSite(random.Random(f"{op_kind.name}/{shape}/{variant}"))
    x = site.arg(shape)
    made = op_kind.build(site, x, tuple(shape))
    if made is None:
        return None
    return Built(op_kind, variant, site, made[0], tuple(made[1]))


def module_text(b: Built, shardings: dict[int, str], result_sharding: str | None,
                constraint: str | None = None) -> str:
    """``@main`` of ``b`` with ``shardings`` (argument index -> sharding text) on its
    arguments and ``result_sharding`` on its result; with ``constraint``, the kind reads
    ``-arg0`` under a sharding constraint instead of ``arg0`` (an intermediate value may
    keep a sharding that does not divide it; a function argument may not)."""
    mesh = ", ".join(f'"{n}"={k}' for n, k in MESH)
    args = []
    for i, a in enumerate(b.site.args):
        attr = f" {{sdy.sharding = #sdy.sharding{shardings[i]}}}" if i in shardings else ""
        args.append(f"{a.name}: {tensor(a.shape, a.dtype)}{attr}")
    rt = tensor(b.result_shape)
    if result_sharding is not None:
        rt += f" {{sdy.sharding = #sdy.sharding{result_sharding}}}"
    lines = b.site.lines
    if constraint is not None:
        t = tensor(b.site.args[0].shape)
        lines = ["%x_neg = stablehlo.negate %arg0 : " + t,
                 f"%x_constrained = sdy.sharding_constraint %x_neg {constraint} : {t}",
                 *(re.sub(r"%arg0\b", "%x_constrained", line) for line in lines)]
    body = "\n".join("  " + line for line in lines)
    return (f"sdy.mesh @mesh = <[{mesh}]>\n" + "".join(b.site.funcs) +
            f"func.func @main({', '.join(args)}) -> ({rt}) {{\n{body}\n"
            f"  return {b.result} : {tensor(b.result_shape)}\n}}\n")


def dim_sharding(rank: int, dim: int, spec: str) -> str:
    dims = ["{" + ", ".join(SPECS[spec]) + "}" if d == dim else "{}" for d in range(rank)]
    return f"<@mesh, [{', '.join(dims)}]>"


def two_dims_sharding(rank: int, first: str, second: str) -> str:
    dims = ["{" + ", ".join(SPECS[first]) + "}", "{" + ", ".join(SPECS[second]) + "}"]
    return f"<@mesh, [{', '.join(dims + ['{}'] * (rank - 2))}]>"


def targets(b: Built) -> Iterator[tuple[str, dict[int, str], str | None, str | None]]:
    """(label, argument shardings, result sharding, constraint) for every dimension of
    every data argument, index tensor and of the result, and of the kind's input under a
    sharding constraint, each spec."""
    yield "none", {}, None, None
    for i, a in enumerate(b.site.args):
        if not a.shape:  # scalar start indices have no dimension to shard
            continue
        for label, sharding in _shardings(a.shape):
            yield f"arg{i} {label}", {i: sharding}, None, None
    for d in range(len(b.result_shape)):
        for spec in SPECS:
            yield (f"result dim {d} {spec}", {}, dim_sharding(len(b.result_shape), d, spec),
                   None)
    for label, sharding in _shardings(b.site.args[0].shape):
        yield f"constrained input {label}", {}, None, sharding


def _shardings(shape) -> Iterator[tuple[str, str]]:
    """Each dimension by each spec, and the first two dimensions at once."""
    for d in range(len(shape)):
        for spec in SPECS:
            yield f"dim {d} {spec}", dim_sharding(len(shape), d, spec)
    if len(shape) >= 2:
        for first, second in PAIRS:
            yield f"dims 0,1 {first}|{second}", two_dims_sharding(len(shape), first, second)


def cases(op_kind: OpKind, variants: int = VARIANTS) -> Iterator[tuple[Built, Case]]:
    """Every case of ``op_kind`` built with ``variants`` seeds."""
    seen = set()
    for shape in op_kind.shapes:
        for variant in range(variants):
            b = build(op_kind, shape, variant)
            if b is None:
                continue
            key = "\n".join(b.site.lines)
            if key in seen:
                continue
            seen.add(key)
            has_index = any(a.role == "index" for a in b.site.args)
            for target, shardings, result, constraint in targets(b):
                text = module_text(b, shardings, result, constraint)
                spec = target.rsplit(" ", 1)[-1] if target != "none" else ""
                for scenario in SCENARIOS if has_index else ("-",):
                    yield b, Case(op_kind.name, variant, target.rsplit(" ", 1)[0]
                                  if target != "none" else "none", spec, scenario, text,
                                  seed=variant)


def index_inputs(site: SweepSite, scenario: str, seed: int) -> list[np.ndarray]:
    """Inputs for ``site``'s arguments: floats in [-1, 1]; indices per ``scenario``."""
    rng = np.random.default_rng(seed)
    out = []
    for a in site.args:
        if a.role == "index":
            out.append(_index_values(a, scenario, rng))
        elif a.dtype == "f32":
            out.append(rng.uniform(-1, 1, a.shape).astype(np.float32))
        else:
            raise ValueError(f"no inputs for a {a.dtype} argument")
    return out


def _index_values(a: _Arg, scenario: str, rng) -> np.ndarray:
    n, w = a.size, a.window
    if a.shape == ():
        value = {"inside": 1 if n > w else 0, "straddle": max(0, n // 2 - 1),
                 "past_end": n + 2, "negative": -3}.get(scenario, 0)
        return np.array(value, np.int32)
    low, high = {"inside": (0, min(2, n)), "straddle": (0, n), "past_end": (n - 2, n + 3),
                 "negative": (-3, 2)}.get(scenario, (0, n))
    return rng.integers(low, max(high, low + 1), a.shape).astype(np.int32)


@dataclass
class Outcome:
    """How one case ended: ``equal``, ``refused`` (with the reason's first line),
    ``wrong`` (with what differs) or ``error`` (an exception that is not a located
    refusal)."""

    verdict: str
    detail: str = ""


def run_case(site: SweepSite, case: Case) -> Outcome:
    from shardy_ref.execute import compile_spmd, run
    from shardy_ref.ir.diagnostics import PassError
    from shardy_ref.testing.invariants import _mismatch

    key = (case.scenario, case.target.startswith("constrained"))
    if key not in site.single_device:
        arrays = case.inputs(site)
        try:
            site.single_device[key] = (arrays, run(case.text, *arrays))
        except Exception as e:  # the generated program itself is bad: a catalog bug
            site.single_device[key] = (arrays, e)
    arrays, want = site.single_device[key]
    if isinstance(want, Exception):
        return Outcome("error", f"single-device run: {type(want).__name__}: {want}")
    try:
        program = compile_spmd(case.text)
    except PassError as e:
        return Outcome("refused", e.message.splitlines()[0])
    except Exception as e:
        return Outcome("error", f"partitioning: {type(e).__name__}: {e}")
    try:
        got = program.run(*arrays)
    except Exception as e:
        return Outcome("error", f"simulation: {type(e).__name__}: {e}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        why = _mismatch(np.asarray(g), np.asarray(w))
        if why:
            return Outcome("wrong", f"result {i}: {why}")
    return Outcome("equal")


def all_kinds() -> list[OpKind]:
    return list(KINDS.values())
