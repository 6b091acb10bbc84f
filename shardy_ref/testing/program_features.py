"""The optional parts of :func:`shardy_ref.testing.programs.random_program`: sharding
groups, manual computations ("Manual Computation" in
https://openxla.org/shardy/compiler_api), ``stablehlo.while`` / ``stablehlo.case``, calls of
private functions, dimension priorities, and the kinds of the op catalog
(:mod:`shardy_ref.testing.program_catalog`). Each step appends well-typed ops to ``@main``
and draws from the program's own random generator, so a seed still names one program."""
from __future__ import annotations

from dataclasses import dataclass

UNARY = ("negate", "abs", "tanh", "exponential")


@dataclass(frozen=True, slots=True)
class Features:
    """What :func:`random_program` may generate besides its plain op chain."""

    max_ops: int = 8
    sharding_groups: bool = False
    manual_computations: bool = False
    control_flow: bool = False
    calls: bool = False
    priorities: bool = False
    ops: bool = False  # every kind of the op catalog (shardy_ref.testing.catalog)

    @property
    def any_extra(self) -> bool:
        """Whether any extra op kind is on (priorities only change shardings)."""
        return self.sharding_groups or self.manual_computations or self.control_flow or \
            self.calls

    @classmethod
    def parse(cls, text: str, max_ops: int = 8) -> Features:
        """``groups,manual,control-flow,calls,priorities,ops`` (any subset,
        comma-separated; ``all`` for every one) as features; a ValueError names an unknown
        one."""
        names = {"groups": "sharding_groups", "manual": "manual_computations",
                 "control-flow": "control_flow", "calls": "calls", "priorities": "priorities",
                 "ops": "ops"}
        on = {}
        for word in filter(None, (w.strip() for w in text.split(","))):
            if word == "all":
                on.update(dict.fromkeys(names.values(), True))
            elif word in names:
                on[names[word]] = True
            else:
                raise ValueError(f"unknown feature '{word}' (expected one of "
                                 f"{', '.join(names)} or all)")
        return cls(max_ops=max_ops, **on)


def _tensor(shape, element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{element}>"


def extra_step(p, features: Features) -> bool:
    """Append one optional op to ``p`` (a ``programs.Program``); False if the kind drawn
    does not fit the value drawn, and the caller then takes a plain step."""
    kinds = [k for k, on in (("group", features.sharding_groups),
                             ("manual", features.manual_computations),
                             ("while", features.control_flow), ("case", features.control_flow),
                             ("call", features.calls)) if on]
    kind = p.rng.choice(kinds)
    value, shape = p.pick()
    step = {"group": _group, "manual": _manual, "while": _while, "case": _case,
            "call": _call}[kind]
    return step(p, value, shape)


def _fresh(p) -> str:
    name = f"%{p.count}"
    p.count += 1
    return name


def _group(p, value: str, shape) -> bool:
    """``sdy.sharding_group`` on the value and, sometimes, another of its shape, in a new
    group or an earlier one of that shape: values of one group must have the same shape
    (https://openxla.org/shardy/sdy_dialect#sdysharding_group-sdyshardinggroupop)."""
    same = [v for v, s in p.values if s == shape and v != value]
    members = [value] + ([p.rng.choice(same)] if same and p.rng.random() < 0.7 else [])
    earlier = [g for g, s in p.groups.items() if s == shape]
    group = p.rng.choice(earlier) if earlier and p.rng.random() < 0.5 else len(p.groups)
    p.groups[group] = shape
    for v in members:
        p.lines.append(f"  sdy.sharding_group {v} group_id={group} : {_tensor(shape)}")
    return True


def _manual_axes(p, shape):
    """Manual axes in mesh order and the dimension each one shards (None: unused), each
    dividing what is left of its dimension so the local shape is whole
    ("Manual Computation" in https://openxla.org/shardy/compiler_api)."""
    rng = p.rng
    axes = [(n, s) for n, s in p.mesh if rng.random() < 0.6]
    local = list(shape)
    dims: dict[int, list[str]] = {}
    for name, size in axes:
        fits = [d for d in range(len(shape)) if local[d] % size == 0]
        if fits and rng.random() < 0.8:
            d = rng.choice(fits)
            local[d] //= size
            dims.setdefault(d, []).append(f'"{name}"')
    return [n for n, _ in axes], dims, tuple(local)


def _manual(p, value: str, shape) -> bool:
    """An ``sdy.manual_computation`` of one unary op: in and out shardings name only
    manual axes, closed, so the body sees the local shape ("Manual Computation" in
    https://openxla.org/shardy/compiler_api)."""
    manual, dims, local = _manual_axes(p, shape)
    if not manual:
        return False
    sharding = "<@mesh, [" + ", ".join(
        "{" + ", ".join(dims.get(d, [])) + "}" for d in range(len(shape))) + "]>"
    result, arg, inner = _fresh(p), _fresh(p), _fresh(p)
    t, lt = _tensor(shape), _tensor(local)
    axes = ", ".join(f'"{n}"' for n in manual)
    p.lines.append(
        f"  {result} = sdy.manual_computation({value}) in_shardings=[{sharding}] "
        f"out_shardings=[{sharding}] manual_axes={{{axes}}} ({arg}: {lt}) {{\n"
        f"    {inner} = stablehlo.{p.rng.choice(UNARY)} {arg} : {lt}\n"
        f"    sdy.return {inner} : {lt}\n"
        f"  }} : ({t}) -> {t}")
    p.values.append((result, shape))
    return True


def _while(p, value: str, shape) -> bool:
    """A ``stablehlo.while`` counting an i32 from 0 to 2 while applying a unary op to the
    value: the loop-carried types match the operands and the condition returns an i1."""
    t, i32 = _tensor(shape), _tensor((), "i32")
    zero, result, it, acc = _fresh(p), _fresh(p), _fresh(p), _fresh(p)
    limit, cmp, one, nxt, body = (_fresh(p) for _ in range(5))
    p.lines.append(
        f"  {zero} = stablehlo.constant dense<0> : {i32}\n"
        f"  {result}:2 = stablehlo.while({it} = {zero}, {acc} = {value}) : {i32}, {t}\n"
        f"  cond {{\n"
        f"    {limit} = stablehlo.constant dense<2> : {i32}\n"
        f"    {cmp} = stablehlo.compare LT, {it}, {limit}, SIGNED : ({i32}, {i32}) -> "
        f"tensor<i1>\n"
        f"    stablehlo.return {cmp} : tensor<i1>\n"
        f"  }} do {{\n"
        f"    {one} = stablehlo.constant dense<1> : {i32}\n"
        f"    {nxt} = stablehlo.add {it}, {one} : {i32}\n"
        f"    {body} = stablehlo.{p.rng.choice(UNARY)} {acc} : {t}\n"
        f"    stablehlo.return {nxt}, {body} : {i32}, {t}\n"
        f"  }}")
    p.values.append((f"{result}#1", shape))
    return True


def _case(p, value: str, shape) -> bool:
    """A two-branch ``stablehlo.case`` on a constant i32 index; both branches return the
    value's type and take no block arguments."""
    t, i32 = _tensor(shape), _tensor((), "i32")
    index, result, inner = _fresh(p), _fresh(p), _fresh(p)
    p.lines.append(
        f"  {index} = stablehlo.constant dense<{p.rng.randint(0, 1)}> : {i32}\n"
        f"  {result} = \"stablehlo.case\"({index}) ({{\n"
        f"    {inner} = stablehlo.{p.rng.choice(UNARY)} {value} : {t}\n"
        f"    stablehlo.return {inner} : {t}\n"
        f"  }}, {{\n"
        f"    stablehlo.return {value} : {t}\n"
        f"  }}) : ({i32}) -> {t}")
    p.values.append((result, shape))
    return True


def _call(p, value: str, shape) -> bool:
    """A ``func.call`` of a new private function applying a unary op; its signature is the
    call's operand and result types."""
    t = _tensor(shape)
    callee = f"@f{len(p.funcs)}"
    p.funcs.append(
        f"func.func private {callee}(%x: {t}) -> {t} {{\n"
        f"  %y = stablehlo.{p.rng.choice(UNARY)} %x : {t}\n"
        f"  return %y : {t}\n}}\n")
    result = _fresh(p)
    p.lines.append(f"  {result} = func.call {callee}({value}) : ({t}) -> {t}")
    p.values.append((result, shape))
    return True
