"""Random sharded StableHLO programs, for propagation properties and differential tests: a
mesh, user shardings on ``@main``'s arguments and results and on sharding constraints, and a
chain of elementwise, dot_general, reshape, transpose, broadcast_in_dim, reduce and
concatenate ops on static shapes (mostly divisible by the axis sizes, not always). The same
seed gives the same program, so a failure is reproduced by its seed alone."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

AXIS_NAMES = ("a", "b", "c")
DIM_SIZES = (2, 4, 8, 8, 16, 16, 12, 6)
UNARY = ("negate", "abs", "tanh", "exponential")
BINARY = ("add", "multiply", "subtract", "maximum")


def tensor(shape, dtype: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{dtype}>"


@dataclass
class Program:
    rng: random.Random
    mesh: list[tuple[str, int]]
    args: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    values: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    count: int = 0
    priorities: bool = False  # ``{"a"}p1`` on some dimensions (Features.priorities)
    funcs: list[str] = field(default_factory=list)  # private callees (Features.calls)
    groups: dict[int, tuple[int, ...]] = field(default_factory=dict)  # group id -> shape
    dtypes: dict[str, str] = field(default_factory=dict)  # argument -> element type if not f32
    kinds: list[str] = field(default_factory=list)  # catalog kinds drawn (Features.ops)

    def sharding(self, shape) -> str:
        """A random valid sharding of a tensor of ``shape`` on the mesh."""
        rng = self.rng
        free = [(n, s) for n, s in self.mesh]
        rng.shuffle(free)
        dims = []
        for _ in shape:
            axes = []
            while free and rng.random() < 0.4:
                name, size = free.pop()
                if size == 4 and rng.random() < 0.25:  # a sub-axis, the rest unused
                    axes.append(f'"{name}":(1)2')
                else:
                    axes.append(f'"{name}"')
            body = ", ".join(axes)
            is_open = rng.random() < 0.5
            if is_open:
                body = f"{body}, ?" if body else "?"
            dims.append("{" + body + "}" + self.priority(bool(axes) or is_open))
        out = "@mesh, [" + ", ".join(dims) + "]"
        replicated = [n for n, _ in free if rng.random() < 0.2]
        if replicated:
            order = [n for n, _ in self.mesh]
            replicated.sort(key=order.index)
            out += ", replicated={" + ", ".join(f'"{n}"' for n in replicated) + "}"
        return out

    def priority(self, allowed: bool) -> str:
        """A ``pN`` suffix, sometimes, when priorities are on; never on an empty closed
        dimension (the invariants of "Priorities" in
        https://openxla.org/shardy/sharding_representation, upstream "is empty and closed
        but has a priority"). Draws nothing when priorities are off, so old seeds keep their
        program."""
        if not (self.priorities and allowed) or self.rng.random() < 0.5:
            return ""
        return f"p{self.rng.randint(0, 3)}"

    def new_arg(self, shape, sharded: float = 0.6, dtype: str = "f32") -> str:
        name = f"%arg{len(self.args)}"
        attr = (f" {{sdy.sharding = #sdy.sharding<{self.sharding(shape)}>}}"
                if self.rng.random() < sharded else "")
        self.args.append((name, shape, attr))
        if dtype != "f32":
            self.dtypes[name] = dtype
        return name

    def emit(self, text: str, shape) -> str:
        name = f"%{self.count}"
        self.count += 1
        self.lines.append(f"  {name} = {text}")
        self.values.append((name, shape))
        return name

    def pick(self, rank: int | None = None):
        choices = [v for v in self.values if rank is None or len(v[1]) == rank]
        return self.rng.choice(choices) if choices else None


def _step(p: Program) -> None:
    """One random op on a random value (see :data:`_STEPS`)."""
    kind = p.rng.choice(("unary", "binary", "binary", "dot", "reshape", "transpose",
                         "broadcast", "reduce", "concat", "constraint"))
    value, shape = p.pick()
    _STEPS[kind](p, value, shape, tensor(shape))


def _unary_step(p: Program, value: str, shape, t: str) -> None:
    p.emit(f"stablehlo.{p.rng.choice(UNARY)} {value} : {t}", shape)


def _binary_step(p: Program, value: str, shape, t: str) -> None:
    rng = p.rng
    same = [v for v in p.values if v[1] == shape]
    other = rng.choice(same)[0] if rng.random() < 0.7 else p.new_arg(shape)
    p.emit(f"stablehlo.{rng.choice(BINARY)} {value}, {other} : {t}", shape)


def _dot_step(p: Program, value: str, shape, t: str) -> None:
    if len(shape) != 2:
        return
    n = p.rng.choice(DIM_SIZES)
    rhs = p.new_arg((shape[1], n))
    out = (shape[0], n)
    p.emit(f"stablehlo.dot_general {value}, {rhs}, contracting_dims = [1] x [0] : "
           f"({t}, {tensor((shape[1], n))}) -> {tensor(out)}", out)


def _reshape_step(p: Program, value: str, shape, t: str) -> None:
    if len(shape) >= 2 and p.rng.random() < 0.5:
        out = (*shape[:-2], shape[-2] * shape[-1])
    elif shape[-1] % 2 == 0 and len(shape) < 3:
        out = (*shape[:-1], 2, shape[-1] // 2)
    else:
        return
    p.emit(f"stablehlo.reshape {value} : ({t}) -> {tensor(out)}", out)


def _transpose_step(p: Program, value: str, shape, t: str) -> None:
    if len(shape) < 2:
        return
    perm = list(range(len(shape)))
    p.rng.shuffle(perm)
    out = tuple(shape[i] for i in perm)
    p.emit(f"stablehlo.transpose {value}, dims = {perm} : ({t}) -> {tensor(out)}", out)


def _broadcast_step(p: Program, value: str, shape, t: str) -> None:
    if len(shape) != 1:
        return
    rng = p.rng
    m = rng.choice(DIM_SIZES)
    out, dims = ((shape[0], m), [0]) if rng.random() < 0.5 else ((m, shape[0]), [1])
    p.emit(f"stablehlo.broadcast_in_dim {value}, dims = {dims} : ({t}) -> {tensor(out)}",
           out)


def _reduce_step(p: Program, value: str, shape, t: str) -> None:
    if len(shape) < 2:
        return
    dim = p.rng.randrange(len(shape))
    out = tuple(d for i, d in enumerate(shape) if i != dim)
    zero = p.emit("stablehlo.constant dense<0.000000e+00> : tensor<f32>", ())
    p.values.pop()  # the scalar is not a candidate operand
    p.emit(f"stablehlo.reduce({value} init: {zero}) applies stablehlo.add across "
           f"dimensions = [{dim}] : ({t}, tensor<f32>) -> {tensor(out)}", out)


def _concat_step(p: Program, value: str, shape, t: str) -> None:
    same = [v for v in p.values if v[1] == shape]
    other = p.rng.choice(same)[0]
    out = (shape[0] * 2, *shape[1:])
    p.emit(f"stablehlo.concatenate {value}, {other}, dim = 0 : ({t}, {t}) -> {tensor(out)}",
           out)


def _constraint_step(p: Program, value: str, shape, t: str) -> None:
    p.emit(f"sdy.sharding_constraint {value} <{p.sharding(shape)}> : {t}", shape)


# Step kind -> what it emits; a kind whose op does not fit the value's rank emits nothing.
_STEPS = {
    "unary": _unary_step,
    "binary": _binary_step,
    "dot": _dot_step,
    "reshape": _reshape_step,
    "transpose": _transpose_step,
    "broadcast": _broadcast_step,
    "reduce": _reduce_step,
    "concat": _concat_step,
    "constraint": _constraint_step,
}


def random_program(seed: int, features=None, ops: int | None = None) -> str:
    """A module with one mesh and one ``@main``; the same seed gives the same program.
    ``features`` (:class:`shardy_ref.testing.program_features.Features`) turns on sharding
    groups, manual computations, control flow, calls and priorities; without it (or with
    all of them off and ``max_ops=8``) the program is the one older versions gave. With
    ``ops``, the body has at least that many ops (for throughput measurements)."""
    return draw_program(seed, features, ops)[0]


def draw_program(seed: int, features=None, ops: int | None = None) -> tuple[str, list[str]]:
    """:func:`random_program` and the catalog kinds it drew (with ``Features.ops``)."""
    from shardy_ref.testing.program_catalog import catalog_step
    from shardy_ref.testing.program_features import Features, extra_step

    features = features if features is not None else Features()
    rng = random.Random(seed)
    axes = rng.sample(AXIS_NAMES, rng.randint(1, 3))
    mesh = [(name, rng.choice((2, 2, 4))) for name in axes]
    p = Program(rng, mesh, priorities=features.priorities)
    for _ in range(rng.randint(1, 2)):
        shape = tuple(rng.choice(DIM_SIZES) for _ in range(rng.randint(1, 3)))
        p.values.append((p.new_arg(shape, 0.8), shape))
    for _ in range(rng.randint(min(2, features.max_ops), features.max_ops)):
        if features.ops and rng.random() < 0.5 and catalog_step(p):
            continue
        if not (features.any_extra and rng.random() < 0.35 and extra_step(p, features)):
            _step(p)
    while ops is not None and len(p.lines) < ops:
        _step(p)
    results = rng.sample(p.values, min(len(p.values), rng.randint(1, 2)))
    result_types = []
    for _, shape in results:
        attr = (f" {{sdy.sharding = #sdy.sharding<{p.sharding(shape)}>}}"
                if rng.random() < 0.4 else "")
        result_types.append(f"{tensor(shape)}{attr}")
    mesh_text = ", ".join(f'"{n}"={s}' for n, s in mesh)
    args = ", ".join(f"{n}: {tensor(s, p.dtypes.get(n, 'f32'))}{a}" for n, s, a in p.args)
    body = "\n".join(p.lines)
    return (f"sdy.mesh @mesh = <[{mesh_text}]>\n" + "".join(p.funcs) +
            f"func.func @main({args}) -> ({', '.join(result_types)}) {{\n{body}\n"
            f"  return {', '.join(v for v, _ in results)} : "
            f"{', '.join(tensor(s) for _, s in results)}\n}}\n"), p.kinds


def programs(*, max_ops: int = 8, sharding_groups: bool = False,
             manual_computations: bool = False, control_flow: bool = False,
             calls: bool = False, priorities: bool = False,
             ops: bool = False) -> st.SearchStrategy[str]:
    """Module texts of :func:`random_program` for random seeds: a mesh of 1-3 axes of size
    2 or 4, ``@main`` with up to ``max_ops`` steps, user shardings and
    ``sdy.sharding_constraint`` valid by https://openxla.org/shardy/sharding_representation
    and https://openxla.org/shardy/sdy_dialect#tensorshardingattr, and, when asked for,
    ``sdy.sharding_group`` (same-shape values per group id, sdy_dialect
    ``#sdysharding_group-sdyshardinggroupop``), ``sdy.manual_computation`` (closed in/out
    shardings on manual axes only, sdy_dialect ``#sdymanual_computation-sdymanualcomputationop``
    and "Manual Computation" in https://openxla.org/shardy/compiler_api),
    ``stablehlo.while`` / ``stablehlo.case``, ``func.call`` of private functions,
    dimension priorities ``{"a"}p1`` (never on an empty closed dimension, "Priorities"),
    and with ``ops`` every kind of the op catalog (:mod:`shardy_ref.testing.catalog`: the
    ops the interpreter runs, with sharded operands, run-time indices and sub-axis
    reshapes). Every program parses, verifies and prints back identically; without
    ``ops`` it is also accepted by upstream's ``-sdy-propagation-pipeline``.

    Drawing a program takes milliseconds, but checking one runs passes and interpreters:
    tests that ``@given`` these should set ``deadline=None`` (as the CI profile in
    ``tests/profiles.py`` does)."""
    from shardy_ref.testing.program_features import Features

    features = Features(max_ops, sharding_groups, manual_computations, control_flow, calls,
                        priorities, ops)
    return st.integers(0, 2**32 - 1).map(lambda seed: random_program(seed, features))


def programs_with_kinds(features=None) -> st.SearchStrategy[tuple[str, list[str]]]:
    """:func:`programs` of ``features`` (a :class:`Features`), each with the catalog kinds
    it drew (for coverage counts)."""
    return st.integers(0, 2**32 - 1).map(lambda seed: draw_program(seed, features))
