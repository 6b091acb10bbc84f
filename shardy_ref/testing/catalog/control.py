"""Control flow and calls: ``while`` (a plain loop, and ``lax.fori_loop`` writing one row
per step with ``dynamic_update_slice`` at the loop counter, as ``lax.scan`` lowers),
``case`` and ``if`` on run-time values, ``optimization_barrier``, ``func.call``,
``composite`` and ``custom_call @Sharding``."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import tensor

I32 = tensor((), "i32")
I1 = tensor((), "i1")


def _loop_cond(bound: int):
    def cond(inner, i, *_):
        n = inner.const(bound, (), "i32")
        return [(inner.op(f"stablehlo.compare LT, {i}, {n}, SIGNED : ({I32}, {I32}) -> "
                          f"{I1}"), I1)]
    return cond


def _while(s, inits, types, bound, body) -> list[str]:
    cond = s.block(types, _loop_cond(bound))
    step = s.block(types, body)
    return s.ops(f'"stablehlo.while"({", ".join(inits)}) ({cond}, {step}) : '
                 f"({', '.join(types)}) -> ({', '.join(types)})", len(types))


@kind("while_loop", "stablehlo.while")
def while_loop(s, x, shape):
    """``x = tanh(x) + y`` three times."""
    t = tensor(shape)
    y = s.arg(shape)

    def body(inner, i, acc):
        nxt = inner.binary("add", i, inner.const(1, (), "i32"), (), "i32")
        out = inner.binary("add", inner.op(f"stablehlo.tanh {acc} : {t}"), y, shape)
        return [(nxt, I32), (out, t)]
    _, out = _while(s, [s.const(0, (), "i32"), x], [I32, t], 3, body)
    return out, shape


@kind("while_scan_rows", "stablehlo.while", "stablehlo.dynamic_slice",
      "stablehlo.dynamic_update_slice")
def while_scan_rows(s, x, shape):
    """``lax.scan`` over the rows: step ``i`` reads row ``i`` (``dynamic_slice`` at the
    loop counter), transforms it with a carry, and writes it back
    (``dynamic_update_slice``)."""
    t = tensor(shape)
    row = (1, *shape[1:])
    rt = tensor(row)
    zeros = ", ".join([I32] * (len(shape) - 1))

    def body(inner, i, acc, carry):
        zero = inner.const(0, (), "i32")
        starts = ", ".join([i, *[zero] * (len(shape) - 1)])
        r = inner.op(f"stablehlo.dynamic_slice {acc}, {starts}, sizes = {list(row)} : "
                     f"({t}, {I32}{', ' + zeros if zeros else ''}) -> {rt}")
        c = inner.binary("add", inner.op(f"stablehlo.tanh {carry} : {rt}"), r, row)
        u = inner.op(f"stablehlo.dynamic_update_slice {acc}, {c}, {starts} : ({t}, {rt}, "
                     f"{I32}{', ' + zeros if zeros else ''}) -> {t}")
        nxt = inner.binary("add", i, inner.const(1, (), "i32"), (), "i32")
        return [(nxt, I32), (u, t), (c, rt)]
    _, out, _ = _while(s, [s.const(0, (), "i32"), x, s.arg(row)], [I32, t, rt], shape[0],
                       body)
    return out, shape


@kind("case")
def case(s, x, shape):
    """``lax.switch`` on a run-time index (clamped into range, as JAX does)."""
    t = tensor(shape)
    idx = s.index(3)
    idx = s.op(f"stablehlo.clamp {s.const(0, (), 'i32')}, {idx}, {s.const(2, (), 'i32')} : "
               f"{I32}")
    y = s.arg(shape)
    branches = [
        s.block([], lambda inner: [(inner.binary("add", x, y, shape), t)]),
        s.block([], lambda inner: [(inner.op(f"stablehlo.negate {x} : {t}"), t)]),
        s.block([], lambda inner: [(inner.binary("multiply", x, y, shape), t)]),
    ]
    return s.op(f'"stablehlo.case"({idx}) ({", ".join(branches)}) : ({I32}) -> {t}'), shape


@kind("if")
def if_(s, x, shape):
    """``lax.cond`` on a run-time predicate."""
    t = tensor(shape)
    p = s.op(f"stablehlo.compare GT, {s.index(4)}, {s.const(1, (), 'i32')}, SIGNED : "
             f"({I32}, {I32}) -> {I1}")
    y = s.arg(shape)
    then = s.block([], lambda inner: [(inner.binary("subtract", x, y, shape), t)])
    other = s.block([], lambda inner: [(inner.op(f"stablehlo.exponential {x} : {t}"), t)])
    return s.op(f'"stablehlo.if"({p}) ({then}, {other}) : ({I1}) -> {t}'), shape


@kind("optimization_barrier")
def optimization_barrier(s, x, shape):
    t = tensor(shape)
    y = s.arg(shape)
    a, b = s.ops(f"stablehlo.optimization_barrier {x}, {y} : {t}, {t}", 2)
    return s.binary("add", a, b, shape), shape


def _function(s, shape, attrs: str = "") -> str:
    """A private function ``(x, y) -> tanh(x) * y`` of the module; its symbol."""
    t = tensor(shape)
    name = "@f" + s.fresh()[1:]
    s.funcs.append(f"func.func private {name}(%a: {t}, %b: {t}) -> {t}{attrs} {{\n"
                   f"  %0 = stablehlo.tanh %a : {t}\n"
                   f"  %1 = stablehlo.multiply %0, %b : {t}\n"
                   f"  return %1 : {t}\n}}\n")
    return name


@kind("call", "func.call")
def call(s, x, shape):
    t = tensor(shape)
    callee = _function(s, shape)
    return s.op(f"func.call {callee}({x}, {s.arg(shape)}) : ({t}, {t}) -> {t}"), shape


@kind("composite", "stablehlo.composite")
def composite(s, x, shape):
    t = tensor(shape)
    callee = _function(s, shape)
    return s.op(f'"stablehlo.composite"({x}, {s.arg(shape)}) {{composite_attributes = {{}}, '
                f'decomposition = {callee}, name = "my.tanh_mul", version = 1 : i32}} : '
                f"({t}, {t}) -> {t}"), shape


@kind("custom_call_sharding", "stablehlo.custom_call")
def custom_call_sharding(s, x, shape):
    """JAX's GSPMD-style ``with_sharding_constraint``: ``custom_call @Sharding``."""
    t = tensor(shape)
    return s.op(f'stablehlo.custom_call @Sharding({x}) {{mhlo.sharding = "{{replicated}}"}} '
                f": ({t}) -> {t}"), shape


@kind("tokens", "stablehlo.create_token", "stablehlo.after_all",
      "stablehlo.optimization_barrier")
def tokens(s, x, shape):
    """A token made and joined, held with the value in an optimization barrier."""
    t = tensor(shape)
    first = s.op("stablehlo.create_token : !stablehlo.token")
    joined = s.op(f"stablehlo.after_all {first}, {first} : !stablehlo.token")
    value, _ = s.ops(f"stablehlo.optimization_barrier {x}, {joined} : {t}, !stablehlo.token", 2)
    return s.op(f"stablehlo.negate {value} : {t}"), shape
