"""CHLO ops as JAX emits them: the special functions and the broadcasting binary ops, the
constants, ``mulhi``, ``top_k``, ``ragged_dot`` and ``scan``. The simulator legalizes them
to StableHLO before partitioning, as XLA does, and runs those it keeps directly."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import FLOAT, tensor

UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "cosh", "digamma",
         "erf", "erf_inv", "erfc", "lgamma", "sinh", "square", "tan")
PREDICATES = ("is_inf", "is_neg_inf", "is_pos_inf")
BROADCASTING = ("add", "atan2", "divide", "maximum", "minimum", "multiply", "power",
                "remainder", "subtract")
BROADCASTING_INT = ("and", "or", "xor", "shift_left", "shift_right_arithmetic",
                    "shift_right_logical")


# each function on a domain where it is defined and well conditioned, so that summing in
# another order (as partitioned contractions do) moves its result by rounding only
_INTO_DOMAIN = {
    "acosh": lambda s, x, shape: _at_least(s, x, shape, 1.0),
    "lgamma": lambda s, x, shape: _at_least(s, x, shape, 0.5),
    "digamma": lambda s, x, shape: _at_least(s, x, shape, 0.5),
    **dict.fromkeys(("acos", "asin", "atanh", "erf_inv", "tan"),
                    lambda s, x, shape: s.binary("multiply", s.op(
                        f"stablehlo.tanh {x} : {tensor(shape)}"), s.const(0.9, shape),
                        shape)),
}


def _unary(name: str):
    def build(s, x, shape):
        if name in _INTO_DOMAIN:
            x = _INTO_DOMAIN[name](s, x, shape)
        t = tensor(shape)
        return s.op(f'"chlo.{name}"({x}) : ({t}) -> {t}'), shape
    return build


def _predicate(name: str):
    def build(s, x, shape):
        t = tensor(shape)
        inf = s.op(f"stablehlo.divide {x}, {s.const(0.0, shape)} : {t}")
        p = s.op(f'"chlo.{name}"({inf}) : ({t}) -> {tensor(shape, "i1")}')
        return s.convert(p, shape, "i1", FLOAT), shape
    return build


def _special_binary(name: str):
    def build(s, x, shape):
        t = tensor(shape)
        y = s.arg(shape)
        if name in ("polygamma", "zeta"):  # an order/argument > 1 keeps values finite
            x = _order(s, x, shape)
            y = _at_least(s, y, shape, 2.0)
        return s.op(f'"chlo.{name}"({x}, {y}) : ({t}, {t}) -> {t}'), shape
    return build


def _at_least(s, x, shape, low: float) -> str:
    """``|x| + low``."""
    return s.binary("add", s.op(f"stablehlo.abs {x} : {tensor(shape)}"), s.const(low, shape),
                    shape)


def _order(s, x, shape) -> str:
    """A whole number >= 1 from ``x`` (a polygamma order)."""
    return s.op(f"stablehlo.floor {_at_least(s, x, shape, 1.0)} : {tensor(shape)}")


def _broadcasting(name: str, dtype: str = FLOAT):
    """``chlo.broadcast_<name>`` of the input and a vector along one of its dimensions."""
    def build(s, x, shape):
        dim = s.rng.randrange(len(shape)) if shape else None
        if dim is None:
            return None
        vec = s.arg((shape[dim],))
        a, b = x, vec
        if dtype != FLOAT:
            a = s.convert(x, shape, FLOAT, dtype)
            b = s.convert(vec, (shape[dim],), FLOAT, dtype)
        out = s.op(f'"chlo.broadcast_{name}"({a}, {b}) {{broadcast_dimensions = '
                   f'array<i64: {dim}>}} : ({tensor(shape, dtype)}, '
                   f'{tensor((shape[dim],), dtype)}) -> {tensor(shape, dtype)}')
        return s.convert(out, shape, dtype, FLOAT), shape
    return build


for _name in UNARY:
    kind(f"chlo_{_name}", f"chlo.{_name}")(_unary(_name))
for _name in PREDICATES:
    kind(f"chlo_{_name}", f"chlo.{_name}")(_predicate(_name))
for _name in ("next_after", "polygamma", "zeta"):
    kind(f"chlo_{_name}", f"chlo.{_name}")(_special_binary(_name))
for _name in BROADCASTING:
    kind(f"chlo_broadcast_{_name}", f"chlo.broadcast_{_name}")(_broadcasting(_name))
for _name in BROADCASTING_INT:
    kind(f"chlo_broadcast_{_name}", f"chlo.broadcast_{_name}")(_broadcasting(_name, "i32"))


@kind("chlo_broadcast_special", "chlo.broadcast_next_after", "chlo.broadcast_polygamma",
      "chlo.broadcast_zeta", "chlo.broadcast_complex")
def broadcast_special(s, x, shape):
    dim = s.rng.randrange(len(shape))
    t, vt = tensor(shape), tensor((shape[dim],))
    vec = s.arg((shape[dim],))
    order = _order(s, vec, (shape[dim],))
    big = _at_least(s, x, shape, 2.0)
    attrs = f"{{broadcast_dimensions = array<i64: {dim}>}}"
    a = s.op(f'"chlo.broadcast_next_after"({x}, {vec}) {attrs} : ({t}, {vt}) -> {t}')
    b = s.op(f'"chlo.broadcast_polygamma"({order}, {big}) {attrs} : ({vt}, {t}) -> {t}')
    c = s.op(f'"chlo.broadcast_zeta"({big}, {order}) {attrs} : ({t}, {vt}) -> {t}')
    z = s.op(f'"chlo.broadcast_complex"({x}, {vec}) {attrs} : ({t}, {vt}) -> '
             f'{tensor(shape, "complex<f32>")}')
    re = s.op(f"stablehlo.real {z} : ({tensor(shape, 'complex<f32>')}) -> {t}")
    out = s.binary("add", s.binary("add", a, b, shape), s.binary("add", c, re, shape), shape)
    return out, shape


@kind("chlo_broadcast_compare_select", "chlo.broadcast_compare", "chlo.broadcast_select")
def broadcast_compare_select(s, x, shape):
    """NumPy-style broadcasting of a vector along the last dimension (``broadcast_select``
    has no broadcast dimensions)."""
    dim = len(shape) - 1
    t, vt = tensor(shape), tensor((shape[dim],))
    vec = s.arg((shape[dim],))
    attrs = (f"{{broadcast_dimensions = array<i64: {dim}>, comparison_direction = "
             "#chlo<comparison_direction LT>}")
    p = s.op(f'"chlo.broadcast_compare"({x}, {vec}) {attrs} : ({t}, {vt}) -> '
             f'{tensor(shape, "i1")}')
    return s.op(f'"chlo.broadcast_select"({p}, {x}, {vec}) : ({tensor(shape, "i1")}, '
                f'{t}, {vt}) -> {t}'), shape


@kind("chlo_constants", "chlo.constant", "chlo.constant_like", "chlo.conj")
def constants(s, x, shape):
    t = tensor(shape)
    like = s.op(f'"chlo.constant_like"({x}) <{{value = 2.5 : f32}}> : ({t}) -> {t}')
    k = s.op(f"chlo.constant dense<1.5> : {t}")
    z = s.op(f"stablehlo.complex {x}, {k} : {tensor(shape, 'complex<f32>')}")
    z = s.op(f'"chlo.conj"({z}) : ({tensor(shape, "complex<f32>")}) -> '
             f'{tensor(shape, "complex<f32>")}')
    im = s.op(f"stablehlo.imag {z} : ({tensor(shape, 'complex<f32>')}) -> {t}")
    return s.binary("add", s.binary("multiply", x, like, shape), im, shape), shape


@kind("chlo_mulhi", "chlo.mulhi")
def mulhi(s, x, shape):
    t = tensor(shape, "i32")
    a = s.convert(s.binary("multiply", x, s.const(1e6, shape), shape), shape, FLOAT, "i32")
    b = s.convert(s.binary("multiply", s.arg(shape), s.const(1e6, shape), shape), shape,
                  FLOAT, "i32")
    return s.convert(s.op(f"chlo.mulhi {a}, {b} : {t}, {t} -> {t}"), shape, "i32",
                     FLOAT), shape


@kind("chlo_top_k", "chlo.top_k")
def top_k(s, x, shape):
    """``jax.lax.top_k`` along the last dimension; values plus indices."""
    k = min(3, shape[-1])
    out = (*shape[:-1], k)
    values, indices = s.ops(f"chlo.top_k({x}, k = {k}) : {tensor(shape)} -> "
                            f"({tensor(out)}, {tensor(out, 'i32')})", 2)
    return s.binary("add", values, s.convert(indices, out, "i32", FLOAT), out), out


@kind("chlo_ragged_dot", "chlo.ragged_dot", shapes=((8, 6),))
def ragged_dot(s, x, shape):
    """``jax.lax.ragged_dot``: rows of ``x`` in groups, each group times its own matrix."""
    if len(shape) != 2:
        return None
    m, k = shape
    groups, n = 3, 4
    rhs = s.arg((groups, k, n))
    sizes = s.const_array([m // 3, m // 2, m - m // 3 - m // 2], "i64")
    dims = ("lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
            "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], "
            "lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]")
    out = (m, n)
    return s.op(f'"chlo.ragged_dot"({x}, {rhs}, {sizes}) {{ragged_dot_dimension_numbers = '
                f"#chlo.ragged_dot<{dims}>}} : ({tensor(shape)}, {tensor((groups, k, n))}, "
                f"{tensor((groups,), 'i64')}) -> {tensor(out)}"), out


@kind("chlo_scan", "chlo.scan")
def scan(s, x, shape):
    """A running sum along dimension 0 (``jax.lax.associative_scan``'s sequential form)."""
    if len(shape) != 2:
        return None
    row = tensor(shape[1:])
    init = s.arg(shape[1:])
    a, acc = s.fresh(), s.fresh()
    total, sq = s.fresh(), s.fresh()
    name = s.fresh()
    s.raw(f"{name}:2 = chlo.scan({x}) inits({init}) dimension=0 {{\n"
          f"^bb0({a}: {row}, {acc}: {row}):\n"
          f"  {total} = stablehlo.add {a}, {acc} : {row}\n"
          f"  {sq} = stablehlo.multiply {total}, {a} : {row}\n"
          f"  stablehlo.return {total}, {total} : {row}, {row}\n"
          f"}} : ({tensor(shape)}, {row}) -> ({tensor(shape)}, {row})")
    return f"{name}#0", shape
