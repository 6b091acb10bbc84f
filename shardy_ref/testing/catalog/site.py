"""Where a catalog builder emits its ops: fresh SSA names, lines of ``@main``'s body, new
arguments and runtime indices. The sweep (:mod:`.sweep`) and the random programs
(:mod:`shardy_ref.testing.programs`) each say what a new argument and a runtime index are."""
from __future__ import annotations

import random

FLOAT = "f32"


def tensor(shape, dtype: str = FLOAT) -> str:
    """``tensor<8x6xf32>`` for ``shape`` (``tensor<f32>`` for a scalar)."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{dtype}>"


def splat(value, dtype: str) -> str:
    """A dense literal's splat value as MLIR prints it for ``dtype``."""
    if dtype.startswith("f"):
        return f"{float(value):e}"
    if dtype == "i1":
        return "true" if value else "false"
    return str(int(value))


class Site:
    """The emission state of one builder call. ``rng`` draws the builder's own choices;
    ``lines`` collect the ops, indented for ``@main``'s body."""

    def __init__(self, rng: random.Random, prefix: str = "v",
                 mesh: tuple[tuple[str, int], ...] = ()):
        self.rng = rng
        self.mesh = mesh  # (axis name, size) of the module's mesh ``@mesh``, in order
        self.lines: list[str] = []
        self.prefix = prefix
        self.count = 0
        self.kinds: list[str] = []  # the catalog kinds emitted (for coverage counts)
        self.funcs: list[str] = []  # private functions of the module (func.call, composite)

    # -- what the user of the site decides --------------------------------------------------
    def arg(self, shape, dtype: str = FLOAT) -> str:
        """A new argument of ``@main`` holding data (shardable)."""
        raise NotImplementedError

    def index(self, size: int, window: int = 1) -> str:
        """A scalar i32 start index, known only at run time, into a dimension of ``size``
        where a window of ``window`` elements starts (it may be out of range: the ops
        clamp)."""
        raise NotImplementedError

    def indices(self, shape, size: int) -> str:
        """An i32 tensor of ``shape`` of run-time indices into a dimension of ``size``
        (some out of range)."""
        raise NotImplementedError

    # -- emission ---------------------------------------------------------------------------
    def fresh(self) -> str:
        name = f"%{self.prefix}{self.count}"
        self.count += 1
        return name

    def op(self, text: str) -> str:
        """Emit ``%n = text`` and return ``%n``."""
        name = self.fresh()
        self.lines.append(f"{name} = {text}")
        return name

    def ops(self, text: str, n: int) -> list[str]:
        """Emit ``%n:k = text`` for an op of ``n`` results; their names."""
        name = self.fresh()
        self.lines.append(f"{name}:{n} = {text}")
        return [f"{name}#{i}" for i in range(n)]

    def raw(self, text: str) -> None:
        """Emit lines that define their own names (``fresh`` ones) or none."""
        self.lines.extend(text.splitlines())

    def const(self, value, shape=(), dtype: str = FLOAT) -> str:
        return self.op(f"stablehlo.constant dense<{splat(value, dtype)}> : "
                       f"{tensor(shape, dtype)}")

    def const_array(self, values, dtype: str) -> str:
        """A 1-D constant of ``values``."""
        body = ", ".join(splat(v, dtype) for v in values)
        return self.op(f"stablehlo.constant dense<[{body}]> : {tensor((len(values),), dtype)}")

    def convert(self, x: str, shape, src: str, dst: str) -> str:
        if src == dst:
            return x
        return self.op(f"stablehlo.convert {x} : ({tensor(shape, src)}) -> "
                       f"{tensor(shape, dst)}")

    def binary(self, name: str, a: str, b: str, shape, dtype: str = FLOAT) -> str:
        return self.op(f"stablehlo.{name} {a}, {b} : {tensor(shape, dtype)}")

    def broadcast(self, x: str, shape, dims, out_shape, dtype: str = FLOAT) -> str:
        return self.op(f"stablehlo.broadcast_in_dim {x}, dims = {list(dims)} : "
                       f"({tensor(shape, dtype)}) -> {tensor(out_shape, dtype)}")

    def reshape(self, x: str, shape, out_shape, dtype: str = FLOAT) -> str:
        return self.op(f"stablehlo.reshape {x} : ({tensor(shape, dtype)}) -> "
                       f"{tensor(out_shape, dtype)}")

    def block(self, params, body_fn, terminator: str = "stablehlo.return") -> str:
        """The text ``{ ^bb0(...): ... }`` of a block with arguments of ``params`` (types)
        and the lines ``body_fn(inner_site, *arg_names)`` emits; it returns the
        ``(value, type)`` pairs the block returns with ``terminator``."""
        head, body = self.body(params, body_fn, terminator)
        if not params:
            return body
        return "{\n^bb0" + head + ":\n" + body[2:]

    def body(self, params, body_fn, terminator: str = "sdy.return") -> tuple[str, str]:
        """A block as ops with a region of their own list it: its arguments ``(%a: T,
        ...)`` and its body ``{ ... }`` (see :meth:`block`)."""
        names = [self.fresh() for _ in params]
        inner = Site(self.rng, self.prefix + "r", self.mesh)
        inner.count = self.count
        inner.funcs = self.funcs
        returned = body_fn(inner, *names)
        self.count = inner.count
        rtypes = ", ".join(t for _, t in returned)
        rvals = ", ".join(v for v, _ in returned)
        head = "(" + ", ".join(f"{n}: {t}" for n, t in zip(names, params, strict=True)) + ")"
        lines = ["  " + line for line in inner.lines] + [f"  {terminator} {rvals} : {rtypes}"]
        return head, "{\n" + "\n".join(lines) + "\n}"

    def region(self, params, body_fn) -> str:
        """``({ block })``: one region of one block (see :meth:`block`)."""
        return "(" + self.block(params, body_fn) + ")"

    def scalar_body(self, op_name: str, dtype: str = FLOAT, count: int = 1) -> str:
        """A region combining ``count`` pairs of scalars with ``op_name`` (a reduction
        body)."""
        t = tensor((), dtype)

        def body(inner, *args):
            return [(inner.binary(op_name, args[i], args[i + count], (), dtype), t)
                    for i in range(count)]
        return self.region([t] * (2 * count), body)
