"""Random functions for the data-flow-edge, sharding-constraint and sharding-group passes.

``constraint_modules`` builds a function over ``tensor<8x8xf32>`` values mixing
``sdy.sharding_constraint`` chains, plain ops (some already sharded), data-flow ops
(``stablehlo.optimization_barrier``, ``stablehlo.while``, ``sdy.named_computation``) and
``sdy.manual_computation`` users, optionally with ``sdy.data_flow_edge`` ops already in place.
``sharding_group_modules`` puts function arguments into random (overlapping) groups.
"""
from __future__ import annotations

from hypothesis import strategies as st

from shardy_ref.ir.sdy_axes import Mesh, MeshAxis
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.testing.strategies import tensor_shardings

T = "tensor<8x8xf32>"
MESH = Mesh((MeshAxis("a", 2), MeshAxis("b", 2)))
MESH_OP = 'sdy.mesh @mesh = <["a"=2, "b"=2]>'
# closed shardings, so that constraints often apply
CLOSED = ('<@mesh, [{}, {"b"}]>', '<@mesh, [{"a"}, {}]>', '<@mesh, [{}, {}]>',
          '<@mesh, [{"b"}, {"a"}]>', '<@mesh, [{}, {"b"}], unreduced={"a"}>')


@st.composite
def shardings(draw) -> str:
    """A sharding of a ``tensor<8x8xf32>`` on ``@mesh``: often one of a few closed ones."""
    if draw(st.booleans()):
        return draw(st.sampled_from(CLOSED))
    sharding = draw(tensor_shardings(MESH, mesh_name="mesh", rank=2))
    return "<" + sharding.replace(reduction_op=ReductionOp.SUM).body() + ">"


class _Builder:
    """Accumulates the lines of one function body and its SSA values."""

    def __init__(self, draw):
        self.draw = draw
        self.lines: list[str] = []
        self.values = ["%arg0", "%arg1"]
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def pick(self) -> str:
        return self.draw(st.sampled_from(self.values))

    def emit(self, kind: str) -> None:
        getattr(self, kind)(self.fresh())

    def constraint(self, v: str) -> None:
        self.lines.append(f"  {v} = sdy.sharding_constraint {self.pick()} "
                          f"{self.draw(shardings())} : {T}")
        self.values.append(v)

    def add(self, v: str) -> None:
        attr = ""
        if self.draw(st.integers(0, 5)) == 0:
            attr = f" {{sdy.sharding = #sdy.sharding_per_value<[{self.draw(shardings())}]>}}"
        self.lines.append(f"  {v} = stablehlo.add {self.pick()}, {self.pick()}{attr} : {T}")
        self.values.append(v)

    def manual(self, v: str) -> None:
        sharding = self.draw(shardings())
        self.lines.append(
            f"  {v} = sdy.manual_computation({self.pick()}) in_shardings=[{sharding}] "
            f"out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{}} (%b{v[1:]}: {T}) {{\n"
            f"    sdy.return %b{v[1:]} : {T}\n  }} : ({T}) -> {T}")
        self.values.append(v)

    def barrier(self, v: str) -> None:
        x, y = self.pick(), self.pick()
        self.lines.append(f"  {v}:2 = stablehlo.optimization_barrier {x}, {y} : {T}, {T}")
        self.values += [f"{v}#0", f"{v}#1"]

    def named(self, v: str) -> None:
        inner = f"%n{v[1:]}"
        body = f"    %c{v[1:]} = sdy.sharding_constraint {inner} {self.draw(shardings())} : {T}\n"
        ret = self.draw(st.sampled_from([inner, f"%c{v[1:]}"]))
        self.lines.append(
            f"  {v} = sdy.named_computation<\"nc\">({self.pick()}) ({inner}: {T}) {{\n{body}"
            f"    sdy.return {ret} : {T}\n  }} : ({T}) -> {T}")
        self.values.append(v)

    def loop(self, v: str) -> None:
        x = self.pick()
        body_sc = f"    %w{v[1:]} = sdy.sharding_constraint %it{v[1:]} " \
                  f"{self.draw(shardings())} : {T}\n"
        self.lines.append(
            f"  {v} = stablehlo.while(%it{v[1:]} = {x}) : {T}\n    cond {{\n"
            f"    %k{v[1:]} = stablehlo.constant dense<true> : tensor<i1>\n"
            f"    stablehlo.return %k{v[1:]} : tensor<i1>\n  }} do {{\n{body_sc}"
            f"    %s{v[1:]} = stablehlo.add %w{v[1:]}, {x} : {T}\n"
            f"    stablehlo.return %s{v[1:]} : {T}\n  }}")
        self.values.append(v)

    def edge(self, v: str) -> None:
        """A data-flow edge on a fresh barrier result (so the owner has a single use)."""
        self.lines.append(f"  {v} = stablehlo.optimization_barrier {self.pick()} : {T}")
        e = self.fresh()
        self.lines.append(f"  {e} = sdy.data_flow_edge {v} : {T}")
        self.values.append(e)


KINDS = ("constraint", "constraint", "constraint", "add", "add", "manual", "barrier",
         "named", "loop", "edge")


@st.composite
def constraint_modules(draw, kinds=KINDS) -> str:
    b = _Builder(draw)
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=9)):
        b.emit(kind)
    rets = draw(st.lists(st.sampled_from(b.values), min_size=1, max_size=3))
    arg0 = f"%arg0: {T}"
    if draw(st.booleans()):
        arg0 += f" {{sdy.sharding = #sdy.sharding{draw(st.sampled_from(CLOSED))}}}"
    types = ", ".join([T] * len(rets))
    body = "\n".join(b.lines)
    return (f"{MESH_OP}\nfunc.func @f({arg0}, %arg1: {T}) -> ({types}) {{\n{body}\n"
            f"  return {', '.join(rets)} : {types}\n}}\n")


@st.composite
def sharding_group_modules(draw) -> str:
    """Arguments put into overlapping groups, some inside a manual computation body."""
    n_args = draw(st.integers(1, 4))
    ids = st.sampled_from([0, 1, 2, 3, 5, 8, 13, 40, 7])
    outer = [f"  sdy.sharding_group %arg{draw(st.integers(0, n_args - 1))} "
             f"group_id = {draw(ids)} : {T}"
             for _ in range(draw(st.integers(0, 8)))]
    inner = [f"    sdy.sharding_group %m{draw(st.integers(0, 1))} group_id = {100 + draw(ids)}"
             f" : {T}" for _ in range(draw(st.integers(0, 4)))]
    manual = (f"  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{{}}, {{}}]>] "
              f"out_shardings=[<@mesh, [{{}}, {{}}]>] manual_axes={{}} (%m0: {T}) {{\n"
              f"    %m1 = stablehlo.add %m0, %m0 : {T}\n" + "".join(s + "\n" for s in inner)
              + f"    sdy.return %m1 : {T}\n  }} : ({T}) -> {T}\n")
    args = ", ".join(f"%arg{i}: {T}" for i in range(n_args))
    body = "\n".join(draw(st.permutations(outer)))
    return f"{MESH_OP}\nfunc.func @f({args}) {{\n{manual}{body}\n  return\n}}\n"
