"""The per-device pipeline keeps a program's meaning (issue 13): random programs with random
shardings on random meshes (up to 16 devices, sub-axes, ``device_ids`` permutations,
non-divisible intermediate dimensions) go through propagation (when only the arguments and
results are sharded) and the whole per-device pipeline; the per-device program, run by
``run_spmd`` on shards of the global inputs, gives shards of the unpartitioned program's
results (exactly for integers). A clear ``PassError`` is allowed (and counted with
``hypothesis.event``); a wrong value or any other exception fails."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from shardy_ref.execute import run, run_spmd
from shardy_ref.execute.shards import ShardMismatch, device_ids, is_divisible, shard, unshard
from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.value_sharding import get_func_result_sharding, get_sharding
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module, print_module
from shardy_ref.pass_manager import PassContext, PassError, PassManager, parse_pipeline
from shardy_ref.testing.strategies import axis_pieces
from tests.profiles import examples

PROPAGATE = "sdy-propagation-pipeline"
DIM_SIZES = (2, 3, 4, 6, 8, 12, 16)


def per_device_pipeline(devices: int, halo_exchange: bool) -> str:
    """The per-device pipeline for ``devices`` partitions, as upstream's executable
    partitioner tests run it (with and without halo exchange)."""
    return (f"sdy-ref-per-device-pipeline{{enable-halo-exchange={str(halo_exchange).lower()} "
            f"partition-count={devices}}}")


# -- meshes and shardings -------------------------------------------------------------------
@st.composite
def small_meshes(draw, devices: int = 16) -> Mesh:
    """1-3 axes of sizes 2, 3, 4 or 8, at most ``devices`` devices, half of them with a
    permutation of the device ids."""
    axes, total = [], 1
    for name in ("x", "y", "z")[:draw(st.integers(1, 3))]:
        size = draw(st.sampled_from([s for s in (2, 3, 4, 8) if total * s <= devices] or [1]))
        if size > 1:
            axes.append(MeshAxis(name, size))
            total *= size
    ids = tuple(draw(st.permutations(range(total)))) if draw(st.booleans()) else ()
    return Mesh(tuple(axes), ids if ids != tuple(range(total)) else ())


@st.composite
def shardings(draw, mesh: Mesh, shape, divisible: bool) -> TensorSharding:
    """A closed sharding of ``shape``: disjoint axes and sub-axes of ``mesh`` placed on
    dimensions (only where they divide it when ``divisible``)."""
    pieces = draw(st.permutations(draw(axis_pieces(mesh))))
    dims: list[list] = [[] for _ in shape]
    for piece in pieces:
        d = draw(st.integers(0, len(shape)))
        if d == len(shape):
            continue
        trial = [*dims[d], piece]
        count = math.prod(a.size(mesh) for a in trial)
        if any(a.can_merge(b) for a, b in itertools.pairwise(trial)) \
                or (divisible and shape[d] % count) or count > shape[d]:
            continue
        dims[d] = trial
    return TensorSharding("mesh", tuple(DimensionSharding(tuple(d)) for d in dims))


# -- programs -------------------------------------------------------------------------------
def ttype(shape, et: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def i64s(values) -> str:
    return "array<i64" + "".join(f"{', ' if i else ': '}{v}" for i, v in enumerate(values)) \
        + ">"


@dataclass
class Program:
    """A ``@main`` built op by op in generic form; ``explicit`` programs carry a random
    sharding on every op result (no propagation), the others only on arguments, results
    and sharding constraints."""

    draw: object
    mesh: Mesh
    et: str
    explicit: bool
    args: list = field(default_factory=list)  # (shape, sharding)
    lines: list = field(default_factory=list)
    values: list = field(default_factory=list)  # (name, shape)
    count: int = 0
    single: int | None = None  # the device of the maximal mesh @single, once used

    def new_arg(self, shape) -> str:
        self.args.append((shape, self.draw(shardings(self.mesh, shape, divisible=True))))
        name = f"%arg{len(self.args) - 1}"
        self.values.append((name, shape))
        return name

    def op(self, name: str, operands, shape, attrs: str = "", region: str = "",
           keep: bool = True, ets=None, result_et: str | None = None) -> str:
        """Append ``%N = "stablehlo.<name>"(operands) ...``; ``ets`` are the operands'
        element types (default: the program's)."""
        ets = ets or [self.et] * len(operands)
        types = ", ".join(ttype(s, et) for (_, s), et in zip(operands, ets, strict=True))
        if self.explicit and shape:
            sharding = self.draw(shardings(self.mesh, shape, divisible=False))
            sdy = f"sdy.sharding = #sdy.sharding_per_value<[{sharding.params()}]>"
            attrs = f"{attrs}, {sdy}" if attrs else sdy
        result = f"%{self.count}"
        self.count += 1
        body = f" ({{\n{region}\n  }})" if region else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f"  {result} = \"stablehlo.{name}\"({', '.join(v for v, _ in operands)})"
                          f"{body}{attr_text} : ({types}) -> {ttype(shape, result_et or self.et)}")
        if keep:
            self.values.append((result, shape))
        return result

    def scalar(self, value: int) -> tuple[str, tuple]:
        name = f"%{self.count}"
        self.count += 1
        literal = f"{value}.0" if self.et == "f32" else str(value)
        self.lines.append(f"  {name} = \"stablehlo.constant\"() {{value = dense<{literal}> : "
                          f"{ttype((), self.et)}}} : () -> {ttype((), self.et)}")
        return name, ()

    def pick(self, shape=None):
        choices = [v for v in self.values if shape is None or v[1] == shape]
        return self.draw(st.sampled_from(choices)) if choices else None


def _dims(draw, n: int = 1):
    return tuple(draw(st.sampled_from(DIM_SIZES)) for _ in range(n))


def _binary(p: Program, value, draw) -> None:
    """An elementwise op with another value of the same shape: an existing one, an iota or
    a new argument."""
    shape = value[1]
    other = p.pick(shape) if draw(st.booleans()) else None
    if other is None and draw(st.booleans()):
        dim = draw(st.integers(0, len(shape) - 1))
        other = (p.op("iota", [], shape, f"iota_dimension = {dim} : i64"), shape)
    elif other is None:
        other = (p.new_arg(shape), shape)
    kinds = ("add", "subtract", "maximum", "minimum") + (("multiply",) if p.et == "i32" else ())
    p.op(draw(st.sampled_from(kinds)), [value, other], shape)


def _dot(p: Program, value, draw) -> None:
    shape = value[1]
    if len(shape) not in (2, 3):
        return
    n = _dims(draw)[0]
    k = shape[-1]
    batch = shape[:-2]
    rhs_shape = (*batch, k, n)
    rhs = p.pick(rhs_shape) if draw(st.booleans()) else None
    rhs = rhs or (p.new_arg(rhs_shape), rhs_shape)
    nb = len(batch)
    dims = ("dot_dimension_numbers = #stablehlo.dot<"
            + ("lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], " if nb else "")
            + f"lhs_contracting_dimensions = [{nb + 1}], rhs_contracting_dimensions = [{nb}]>")
    p.op("dot_general", [value, rhs], (*batch, shape[-2], n), dims)


def _reduce(p: Program, value, draw) -> None:
    shape = value[1]
    if not shape:
        return
    dims = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1, max_size=2)))
    kind = draw(st.sampled_from(("add", "maximum", "minimum")
                                + (("multiply",) if p.et == "i32" else ())))
    init = p.scalar(1 if kind == "multiply" else 0)
    a, b, r = (f"%r{p.count}_{s}" for s in "abr")
    s = ttype((), p.et)
    region = (f"  ^bb0({a}: {s}, {b}: {s}):\n"
              f"    {r} = \"stablehlo.{kind}\"({a}, {b}) : ({s}, {s}) -> {s}\n"
              f"    \"stablehlo.return\"({r}) : ({s}) -> ()")
    out = tuple(d for i, d in enumerate(shape) if i not in dims)
    p.op("reduce", [value, init], out, f"dimensions = {i64s(dims)}", region)


def _reduce_window(p: Program, value, draw) -> None:
    """A sliding-window sum along one dimension (windows of 2 or 3, stride 1 or 2)."""
    shape = value[1]
    dim = draw(st.integers(0, len(shape) - 1))
    window = [1] * len(shape)
    strides = [1] * len(shape)
    window[dim] = draw(st.integers(2, 3))
    strides[dim] = draw(st.integers(1, 2))
    if shape[dim] < window[dim]:
        return
    out = list(shape)
    out[dim] = (shape[dim] - window[dim]) // strides[dim] + 1
    init = p.scalar(0)
    a, b, r = (f"%w{p.count}_{s}" for s in "abr")
    s = ttype((), p.et)
    region = (f"  ^bb0({a}: {s}, {b}: {s}):\n"
              f"    {r} = \"stablehlo.add\"({a}, {b}) : ({s}, {s}) -> {s}\n"
              f"    \"stablehlo.return\"({r}) : ({s}) -> ()")
    p.op("reduce_window", [value, init], tuple(out), f"window_dimensions = {i64s(window)}, "
         f"window_strides = {i64s(strides)}", region)


def _sort(p: Program, value, draw) -> None:
    """A stable descending sort along one dimension."""
    shape = value[1]
    dim = draw(st.integers(0, len(shape) - 1))
    a, b, r = (f"%s{p.count}_{s}" for s in "abr")
    s = ttype((), p.et)
    region = (f"  ^bb0({a}: {s}, {b}: {s}):\n"
              f"    {r} = \"stablehlo.compare\"({a}, {b}) {{comparison_direction = "
              f"#stablehlo<comparison_direction GT>}} : ({s}, {s}) -> tensor<i1>\n"
              f"    \"stablehlo.return\"({r}) : (tensor<i1>) -> ()")
    p.op("sort", [value], shape, f"dimension = {dim} : i64, is_stable = true", region)


def _convolution(p: Program, value, draw) -> None:
    """A 1-D convolution of a rank-3 value read as [batch, feature, spatial] with a new
    kernel argument [output feature, feature, window] (stride 1 or 2, padding 0 or 1)."""
    shape = value[1]
    if len(shape) != 3:
        return
    window, stride = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    low, high = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    if shape[2] + low + high < window:
        return
    kernel_shape = (_dims(draw)[0], shape[1], window)
    kernel = (p.new_arg(kernel_shape), kernel_shape)
    out = (shape[0], kernel_shape[0], (shape[2] + low + high - window) // stride + 1)
    p.op("convolution", [value, kernel], out,
         "batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x"
         "[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, padding = dense<"
         f"[[{low}, {high}]]> : tensor<1x2xi64>, window_strides = {i64s([stride])}")


def _transpose(p: Program, value, draw) -> None:
    shape = value[1]
    perm = draw(st.permutations(range(len(shape))))
    p.op("transpose", [value], tuple(shape[i] for i in perm), f"permutation = {i64s(perm)}")


def _broadcast(p: Program, value, draw) -> None:
    shape = value[1]
    if len(shape) >= 3:
        return
    at = draw(st.integers(0, len(shape)))
    out = (*shape[:at], _dims(draw)[0], *shape[at:])
    dims = [i if i < at else i + 1 for i in range(len(shape))]
    p.op("broadcast_in_dim", [value], out, f"broadcast_dimensions = {i64s(dims)}")


def _reshape(p: Program, value, draw) -> None:
    shape = value[1]
    splits = [i for i, d in enumerate(shape) if d % 2 == 0 and d > 2]
    if len(shape) >= 2 and (draw(st.booleans()) or len(shape) == 3 or not splits):
        i = draw(st.integers(0, len(shape) - 2))
        out = (*shape[:i], shape[i] * shape[i + 1], *shape[i + 2:])
    elif splits:
        i = draw(st.sampled_from(splits))
        f = draw(st.sampled_from([f for f in (2, 3, 4) if shape[i] % f == 0 and f < shape[i]]))
        out = (*shape[:i], f, shape[i] // f, *shape[i + 1:])
    else:
        return
    p.op("reshape", [value], out)


def _concatenate(p: Program, value, draw) -> None:
    shape = value[1]
    if not shape:
        return
    d = draw(st.integers(0, len(shape) - 1))
    other = p.pick(shape) or value
    p.op("concatenate", [value, other], (*shape[:d], 2 * shape[d], *shape[d + 1:]),
         f"dimension = {d} : i64")


def _pad(p: Program, value, draw) -> None:
    shape = value[1]
    if not shape:
        return
    low = [draw(st.integers(-1 if d > 2 else 0, 2)) for d in shape]
    high = [draw(st.integers(-1 if d > 2 else 0, 2)) for d in shape]
    interior = [draw(st.sampled_from((0, 0, 1))) for _ in shape]
    out = tuple(lo + hi + d + max(d - 1, 0) * i
                for d, lo, hi, i in zip(shape, low, high, interior, strict=True))
    pad = p.scalar(draw(st.integers(-3, 3)))
    p.op("pad", [value, pad], out, f"edge_padding_low = {i64s(low)}, edge_padding_high = "
         f"{i64s(high)}, interior_padding = {i64s(interior)}")


def _slice(p: Program, value, draw) -> None:
    shape = value[1]
    if not shape:
        return
    start = [draw(st.integers(0, d - 1)) for d in shape]
    limit = [draw(st.integers(s + 1, d)) for s, d in zip(start, shape, strict=True)]
    strides = [draw(st.sampled_from((1, 1, 2))) for _ in shape]
    out = tuple(-(-(lim - s) // k) for s, lim, k in zip(start, limit, strides, strict=True))
    p.op("slice", [value], out, f"start_indices = {i64s(start)}, limit_indices = "
         f"{i64s(limit)}, strides = {i64s(strides)}")


def _reverse(p: Program, value, draw) -> None:
    shape = value[1]
    if not shape:
        return
    dims = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
    p.op("reverse", [value], shape, f"dimensions = {i64s(dims)}")


def _select(p: Program, value, draw) -> None:
    shape = value[1]
    other = p.pick(shape)
    if other is None or other is value:
        return
    direction = draw(st.sampled_from(("GT", "LT", "EQ", "GE")))
    pred = p.op("compare", [value, other], shape,
                f"comparison_direction = #stablehlo<comparison_direction {direction}>",
                keep=False, result_et="i1")
    p.op("select", [(pred, shape), value, other], shape, ets=["i1", p.et, p.et])


def _constraint(p: Program, value, draw) -> None:
    shape = value[1]
    sharding = draw(shardings(p.mesh, shape, divisible=False))
    op = "sdy.reshard" if p.explicit or draw(st.booleans()) else "sdy.sharding_constraint"
    name = f"%{p.count}"
    p.count += 1
    p.lines.append(f"  {name} = {op} {value[0]} {sharding.params()} : {ttype(shape, p.et)}")
    p.values.append((name, shape))


def _single_device(p: Program, value, draw) -> None:
    """An elementwise op that runs on one device (``@single``, a maximal mesh); explicit
    programs only, since propagation does not move maximal shardings."""
    if not p.explicit:
        return
    p.single = draw(st.integers(0, p.mesh.total_size - 1)) if p.single is None else p.single
    other = p.pick(value[1]) or value
    name = f"%{p.count}"
    p.count += 1
    kind = draw(st.sampled_from(("add", "multiply" if p.et == "i32" else "subtract")))
    p.lines.append(f"  {name} = \"stablehlo.{kind}\"({value[0]}, {other[0]}) {{sdy.sharding = "
                   f"#sdy.sharding_per_value<[<@single, []>]>}} : ({ttype(value[1], p.et)}, "
                   f"{ttype(value[1], p.et)}) -> {ttype(value[1], p.et)}")
    p.values.append((name, value[1]))


STEPS = {"single": _single_device, "binary": _binary, "dot": _dot, "reduce": _reduce,
         "transpose": _transpose, "broadcast": _broadcast, "reshape": _reshape,
         "concatenate": _concatenate, "pad": _pad, "slice": _slice, "reverse": _reverse,
         "select": _select, "constraint": _constraint, "reduce_window": _reduce_window,
         "sort": _sort, "convolution": _convolution}


@dataclass(frozen=True)
class Case:
    text: str
    mesh: Mesh
    arg_shapes: tuple
    et: str
    explicit: bool
    seed: int
    halo_exchange: bool = True


@st.composite
def cases(draw, devices: int = 16) -> Case:
    """A random program on a random mesh of at most ``devices`` devices."""
    mesh = draw(small_meshes(devices))
    p = Program(draw, mesh, draw(st.sampled_from(("i32", "i32", "f32"))), draw(st.booleans()))
    for _ in range(draw(st.integers(1, 2))):
        p.new_arg(_dims(draw, draw(st.integers(1, 3))))
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(sorted(STEPS)))
        value = p.pick()
        if value[1] and math.prod(value[1]) <= 4096:
            STEPS[kind](p, value, draw)
    last = p.values[-1]
    results = [last] + ([p.pick()] if draw(st.booleans()) else [])
    result_types = []
    for _, shape in results:
        attr = ""
        if p.explicit or draw(st.booleans()):
            sharding = draw(shardings(mesh, shape, divisible=True))
            attr = f" {{sdy.sharding = {sharding}}}"
        result_types.append(ttype(shape, p.et) + attr)
    args = ", ".join(f"%arg{i}: {ttype(s, p.et)} {{sdy.sharding = {sh}}}"
                     for i, (s, sh) in enumerate(p.args))
    single = "" if p.single is None else f"sdy.mesh @single = <[], device_ids=[{p.single}]>\n"
    text = (f"sdy.mesh @mesh = {str(mesh).removeprefix('#sdy.mesh')}\n{single}"
            f"func.func @main({args}) -> ({', '.join(result_types)}) {{\n"
            + "\n".join(p.lines) + "\n"
            f"  \"func.return\"({', '.join(v for v, _ in results)}) : "
            f"({', '.join(ttype(s, p.et) for _, s in results)}) -> ()\n}}\n")
    return Case(text, mesh, tuple(s for s, _ in p.args), p.et, p.explicit,
                draw(st.integers(0, 2**32 - 1)), draw(st.booleans()))


# -- running --------------------------------------------------------------------------------
def _main(module):
    return next(op for op in module.regions[0].blocks[0].ops
                if op.name == "func.func" and op.attributes["sym_name"].value == "main")


def _io_shardings(module):
    """@main's argument and result shardings (replicated where it has none)."""
    func = _main(module)
    args = func.regions[0].blocks[0].args
    n_results = len(func.attributes["function_type"].value.results)

    def closed(s, rank):
        return s if s is not None else TensorSharding.fully_closed("mesh", rank)

    ins = [closed(get_sharding(a), len(a.type.shape)) for a in args]
    outs = [closed(get_func_result_sharding(func, i),
                   len(func.attributes["function_type"].value.results[i].shape))
            for i in range(n_results)]
    return ins, outs


# ops whose presence shows a program really was partitioned (counted as events)
PARTITIONING_OPS = frozenset(f"stablehlo.{n}" for n in (
    "all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter",
    "dynamic_slice"))


def run_case(case: Case) -> list[str]:
    """Partition and run ``case``; returns what happened ("ok" and the partitioning ops the
    per-device program uses, or "pass error: ...") and fails the test on a wrong value or a
    per-device program that does not verify or run."""
    module = parse_module(case.text, "case.mlir")
    verify_module(module)
    n = case.mesh.total_size
    try:
        if not case.explicit:
            PassManager(parse_pipeline(PROPAGATE), verify=verify_module).run(module,
                                                                             PassContext())
        ins, outs = _io_shardings(module)
        propagated = print_module(module)
        PassManager(parse_pipeline(per_device_pipeline(n, case.halo_exchange)),
                    verify=verify_module).run(module, PassContext())
    except PassError as e:
        return [f"pass error: {e.message.split(':')[0][:60]}"]
    rng = np.random.default_rng(case.seed)
    dtype = np.int32 if case.et == "i32" else np.float32
    arrays = [rng.integers(-4, 5, s).astype(dtype) for s in case.arg_shapes]
    expected = run(case.text, *arrays)
    local = [shard(a, s, case.mesh) for a, s in zip(arrays, ins, strict=True)]
    per_device = run_spmd(module, [[x[d] for x in local] for d in range(n)], num_replicas=1)
    for i, (want, s) in enumerate(zip(expected, outs, strict=True)):
        try:
            got = unshard([res[i] for res in per_device], want.shape, s, case.mesh)
        except ShardMismatch as e:
            pytest.fail(f"result {i}: {e}\n{_report(case, propagated, module)}")
        same = np.array_equal(got, want) if case.et == "i32" else \
            np.allclose(got, want, rtol=1e-5, atol=1e-5)
        assert same, (f"result {i} differs:\n{got}\n!=\n{want}\n"
                      f"{_report(case, propagated, module)}")
    return ["ok", *sorted({op.name for op in module.walk() if op.name in PARTITIONING_OPS})]


def _report(case: Case, propagated: str, module) -> str:
    return (f"--- program (seed {case.seed}, halo exchange {case.halo_exchange})\n{case.text}"
            f"--- propagated\n{propagated}--- per device\n{print_module(module)}")


@settings(max_examples=examples(100, 1000), deadline=None)
@given(cases())
def test_per_device_program_computes_the_global_program(case):
    for what in run_case(case):
        event(what)


def test_io_shardings_are_divisible_in_generated_programs():
    """The generator keeps function IO divisible, as sdy-pad-for-divisibility requires."""
    @settings(max_examples=20, deadline=None, database=None)
    @given(cases())
    def check(case):
        module = parse_module(case.text, "case.mlir")
        ins, outs = _io_shardings(module)
        func = _main(module)
        shapes = [a.type.shape for a in func.regions[0].blocks[0].args]
        shapes += [t.shape for t in func.attributes["function_type"].value.results]
        assert all(is_divisible(s, sh, case.mesh)
                   for s, sh in zip(shapes, ins + outs, strict=True))
        assert sorted(device_ids(case.mesh)) == list(range(case.mesh.total_size))

    check()


MAX_REDUCE = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
    -> (tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
  %c = stablehlo.constant dense<-100> : tensor<i32>
  %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.maximum across dimensions = [0]
      : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""


def test_max_reduce_over_a_sharded_dimension():
    """A max reduction over a sharded dimension is all-reduced with max (upstream's
    insertAllReducesForReductionFactors takes the sharding's op, a sum, and gets it wrong)."""
    run_case(Case(MAX_REDUCE, Mesh((MeshAxis("x", 2),)), ((4,),), "i32", True, 7))
