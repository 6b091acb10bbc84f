"""Random modules of constant sub-computations, scalar expansions and their users, for the
``sdy-constant-or-scalar-splitter`` tests.

:func:`constant_module` builds one from a :class:`random.Random`, so the same generator
feeds hypothesis (``st.randoms()``) and the seeded oracle-differential tests. A module has
a ``@main`` function of straight-line ops on ``tensor<4x8xf32>`` values and ``tensor<f32>``
scalars (constants, iotas, element-wise ops, scalar broadcasts, a non-constant
``transpose``, sharding groups), optionally a named computation over some of them and, if
``calls`` is set, calls to private functions whose bodies are or are not constant.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

T, S = "tensor<4x8xf32>", "tensor<f32>"


class _Body:
    """Ops being generated into one block, with the values they may use by type."""

    def __init__(self, rng: random.Random, prefix: str, values: dict[str, list[str]]):
        self.rng = rng
        self.prefix = prefix
        self.values = {T: list(values.get(T, ())), S: list(values.get(S, ()))}
        self.lines: list[str] = []
        self.count = 0

    def new(self, type_: str, text: str) -> str:
        name = f"%{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text}")
        self.values[type_].append(name)
        return name

    def pick(self, type_: str) -> str | None:
        return self.rng.choice(self.values[type_]) if self.values[type_] else None

    def add_op(self, funcs: list[str]) -> None:
        rng, kind = self.rng, self.rng.randrange(10)
        a, b, s = self.pick(T), self.pick(T), self.pick(S)
        if kind == 0 or a is None:
            self.new(T, f"stablehlo.constant dense<{rng.randrange(3)}.0> : {T}")
        elif kind == 1:
            self.new(S, f"stablehlo.constant dense<{rng.randrange(3)}.0> : {S}")
        elif kind == 2:
            self.new(T, f"stablehlo.iota dim = {rng.randrange(2)} : {T}")
        elif kind == 3:
            self.new(T, f"stablehlo.add {a}, {b} : {T}")
        elif kind == 4:
            self.new(T, f"stablehlo.{rng.choice(('negate', 'abs'))} {a} : {T}")
        elif kind == 5 and s is not None:
            self.new(T, f"stablehlo.broadcast_in_dim {s}, dims = [] : ({S}) -> {T}")
        elif kind == 6:
            self.new(T, f"stablehlo.transpose {a}, dims = [0, 1] : ({T}) -> {T}")
        elif kind == 7:
            self.lines.append(f"sdy.sharding_group {a} group_id={rng.randrange(3)} : {T}")
        elif kind == 8 and funcs:
            self.new(T, f"func.call @{rng.choice(funcs)}({a}) : ({T}) -> {T}")
        else:
            self.new(S, f"stablehlo.add {s}, {s} : {S}" if s is not None
                     else f"stablehlo.constant dense<1.0> : {S}")

    def named_computation(self, funcs: list[str]) -> None:
        a = self.pick(T)
        if a is None:
            return
        inner = _Body(self.rng, f"{self.prefix}n{self.count}_", {T: ["%x"]})
        for _ in range(self.rng.randrange(1, 5)):
            inner.add_op(funcs)
        body = "\n".join(f"  {line}" for line in inner.lines)
        self.new(T, f'sdy.named_computation<"nc{self.rng.randrange(2)}">({a}) (%x: {T}) {{\n'
                    f"{body}\n  sdy.return {inner.pick(T)} : {T}\n}} : ({T}) -> {T}")


def _callee(rng: random.Random, name: str) -> str:
    body = _Body(rng, "v", {T: ["%arg0"]})
    for _ in range(rng.randrange(1, 4)):
        body.add_op([])
    if rng.random() < 0.3:  # make it non-constant
        body.new(T, f"stablehlo.transpose %arg0, dims = [0, 1] : ({T}) -> {T}")
    ops = "".join(f"  {line}\n" for line in body.lines)
    return (f"func.func private @{name}(%arg0: {T}) -> {T} {{\n{ops}"
            f"  return {body.pick(T)} : {T}\n}}\n")


def constant_module(rng: random.Random, calls: bool = False) -> str:
    """A module whose ``@main`` mixes constant and non-constant ops (see the module doc)."""
    funcs = [f"g{i}" for i in range(rng.randrange(1, 3))] if calls else []
    body = _Body(rng, "v", {T: ["%arg0"], S: ["%arg1"]})
    for _ in range(rng.randrange(2, 12)):
        if rng.random() < 0.1:
            body.named_computation(funcs)
        else:
            body.add_op(funcs)
    results = [v for v in body.values[T] if rng.random() < 0.4] or [body.values[T][-1]]
    ops = "".join(f"  {line}\n" for line in "\n".join(body.lines).splitlines())
    types = ", ".join([T] * len(results))
    main = (f"func.func @main(%arg0: {T}, %arg1: {S}) -> ({types}) {{\n{ops}"
            f"  return {', '.join(results)} : {types}\n}}\n")
    return main + "".join(_callee(rng, name) for name in funcs)


@st.composite
def constant_modules(draw, calls: bool = False) -> str:
    return constant_module(draw(st.randoms(use_true_random=False)), calls)
