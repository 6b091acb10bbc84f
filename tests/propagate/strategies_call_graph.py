"""Random modules of functions calling each other, for the call-graph pass tests.

:func:`call_graph_module` builds one from a :class:`random.Random`, so the same generator
feeds hypothesis (``st.randoms()``) and the seeded oracle-differential tests. Calls only go
from ``@f<i>`` to ``@f<j>`` with ``j > i`` (upstream cannot flatten recursion), functions
appear in a random module order, and some are bodiless declarations.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

TYPE = "tensor<8x2xi32>"
MESHES = ('sdy.mesh @mesh = <["x"=2, "y"=2]>\n'
          "sdy.mesh @maximal = <[], device_ids=[0]>\n")
SHARDINGS = ('<@mesh, [{"x"}, {}]>', '<@mesh, [{}, {"y"}]>', '<@mesh, [{?}, {}]>',
             "<@maximal, []>")


def _maybe_sharding(rng: random.Random, shardings: bool) -> str | None:
    return rng.choice((None, *SHARDINGS)) if shardings and rng.random() < 0.5 else None


def _call(rng: random.Random, i: int, callee: int, num_results: int, value: str,
          shardings: bool) -> str:
    attrs = ""
    if shardings and rng.random() < 0.3:
        per_value = ", ".join(rng.choice(SHARDINGS[:3]) for _ in range(num_results))
        attrs = f" {{sdy.sharding = #sdy.sharding_per_value<[{per_value}]>}}"
    lhs = f"%{i}" if num_results == 1 else f"%{i}:{num_results}"
    results = TYPE if num_results == 1 else f"({', '.join([TYPE] * num_results)})"
    return f"  {lhs} = call @f{callee}({value}){attrs} : ({TYPE}) -> {results}\n"


def _func(rng: random.Random, index: int, num_funcs: int, num_results: list[int],
          declaration: bool, shardings: bool) -> str:
    results = []
    for _ in range(num_results[index]):
        sharding = _maybe_sharding(rng, shardings)
        results.append(f"{TYPE} {{sdy.sharding = #sdy.sharding{sharding}}}" if sharding
                       else TYPE)
    public = index == 0 or (not declaration and rng.random() < 0.2)
    visibility = "" if public else "private "
    arg = TYPE if declaration else f"%arg0: {TYPE}"
    signature = f"func.func {visibility}@f{index}({arg}) -> ({', '.join(results)})"
    if declaration:
        return signature + "\n"
    body, value = [], "%arg0"
    callees = list(range(index + 1, num_funcs))
    for n in range(rng.randint(0, 3) if callees else 0):
        callee = rng.choice(callees)
        body.append(_call(rng, n, callee, num_results[callee], value, shardings))
        value = f"%{n}" if num_results[callee] == 1 else f"%{n}#0"
    ret = ", ".join([value] * num_results[index])
    body.append(f"  return {ret} : {', '.join([TYPE] * num_results[index])}\n")
    return signature + " {\n" + "".join(body) + "}\n"


def call_graph_module(rng: random.Random, shardings: bool = False) -> str:
    """A verifying module of up to five functions ``@f0`` (public) ... ``@f4``."""
    num_funcs = rng.randint(1, 5)
    num_results = [rng.randint(1, 2) for _ in range(num_funcs)]
    declarations = {i for i in range(1, num_funcs) if rng.random() < 0.15}
    funcs = [_func(rng, i, num_funcs, num_results, i in declarations, shardings)
             for i in range(num_funcs)]
    rng.shuffle(funcs)
    return MESHES + "".join(funcs)


@st.composite
def call_graph_modules(draw, shardings: bool = False) -> str:
    return call_graph_module(draw(st.randoms(use_true_random=False)), shardings)


def has_declaration(text: str) -> bool:
    """Whether the module has a body-less function (upstream crashes or hangs on some)."""
    return any(line.startswith("func.func") and not line.rstrip().endswith("{")
               for line in text.splitlines())
