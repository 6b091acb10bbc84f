"""sdy ops in the input program: sharding constraints and reshards, propagation
barriers, sharding groups, named computations, ``sdy.constant``, the explicit
collectives (``all_slice``, ``all_to_all``, ``collective_permute``, ``all_gather``,
``all_reduce`` of ``replicated_to_unreduced``), and ``sdy.manual_computation`` bodies
with StableHLO's collectives (``all_gather``, ``all_reduce``, ``reduce_scatter``,
``all_to_all``, ``collective_permute``, ``collective_broadcast``) and ``partition_id``
as ``shard_map`` lowers them."""
from __future__ import annotations

from shardy_ref.testing.catalog.kinds import kind
from shardy_ref.testing.catalog.site import tensor


def sharding(dims, unreduced=()) -> str:
    """``<@mesh, [{"x"}, {}]>`` for per-dimension axis names."""
    body = ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in dims)
    tail = (", unreduced={" + ", ".join(f'"{a}"' for a in unreduced) + "}") if unreduced \
        else ""
    return f"<@mesh, [{body}]{tail}>"


def _placement(s, shape, axes=None):
    """Each mesh axis (of ``axes``, default all) on a dimension it still divides, or on
    none: per-dimension axis lists."""
    dims: list[list[str]] = [[] for _ in shape]
    left = list(shape)
    for name, size in (axes if axes is not None else s.mesh):
        fits = [d for d, n in enumerate(left) if n % size == 0]
        if fits and s.rng.random() < 0.8:
            d = s.rng.choice(fits)
            dims[d].append(name)
            left[d] //= size
    return dims


def _local(s, shape, dims):
    sizes = dict(s.mesh)
    out = list(shape)
    for d, axes in enumerate(dims):
        for a in axes:
            out[d] //= sizes[a]
    return tuple(out)


@kind("sharding_constraint", "sdy.sharding_constraint")
def sharding_constraint(s, x, shape):
    return s.op(f"sdy.sharding_constraint {x} {sharding(_placement(s, shape))} : "
                f"{tensor(shape)}"), shape


@kind("reshard", "sdy.reshard")
def reshard(s, x, shape):
    y = s.op(f"stablehlo.tanh {x} : {tensor(shape)}")
    return s.op(f"sdy.reshard {y} {sharding(_placement(s, shape))} : {tensor(shape)}"), shape


@kind("propagation_barrier", "sdy.propagation_barrier")
def propagation_barrier(s, x, shape):
    direction = s.rng.choice(("NONE", "FORWARD", "BACKWARD"))
    return s.op(f"sdy.propagation_barrier {x} allowed_direction={direction} : "
                f"{tensor(shape)}"), shape


@kind("sharding_group", "sdy.sharding_group")
def sharding_group(s, x, shape):
    y = s.arg(shape)
    group = s.rng.randrange(1000, 2000)
    s.raw(f"sdy.sharding_group {x} group_id={group} : {tensor(shape)}\n"
          f"sdy.sharding_group {y} group_id={group} : {tensor(shape)}")
    return s.binary("add", x, y, shape), shape


@kind("sdy_constant", "sdy.constant")
def sdy_constant(s, x, shape):
    c = s.op(f"sdy.constant dense<1.250000e+00> : {tensor(shape)}")
    return s.binary("multiply", x, c, shape), shape


@kind("sdy_collectives", "sdy.all_slice", "sdy.all_to_all", "sdy.all_gather",
      "sdy.collective_permute", "sdy.reshard")
def sdy_collectives(s, x, shape):
    """Replicated -> all_slice -> all_to_all -> collective_permute -> all_gather, each
    ``out_sharding`` the one its operand needs next."""
    fits = [(n, k) for n, k in s.mesh if shape[0] % k == 0 and len(shape) > 1
            and shape[1] % k == 0]
    if not fits:
        return None
    axis = s.rng.choice(fits)[0]
    t = tensor(shape)
    rest = [[] for _ in shape[2:]]
    a = s.op(f"sdy.reshard {x} {sharding([[], [], *rest])} : {t}")
    b = s.op(f'sdy.all_slice [{{"{axis}"}}, {{}}{", {}" * len(rest)}] {a} out_sharding='
             f"{sharding([[axis], [], *rest])} : {t}")
    c = s.op(f'sdy.all_to_all [{{"{axis}"}}: 0->1] {b} out_sharding='
             f"{sharding([[], [axis], *rest])} : {t}")
    d = s.op(f"sdy.collective_permute {c} out_sharding={sharding([[], [axis], *rest])} : {t}")
    return s.op(f'sdy.all_gather [{{}}, {{"{axis}"}}{", {}" * len(rest)}] {d} out_sharding='
                f"{sharding([[], [], *rest])} : {t}"), shape


@kind("sdy_unreduced", "sdy.replicated_to_unreduced", "sdy.all_reduce",
      "sdy.sharded_to_unreduced", "sdy.reduce_scatter")
def sdy_unreduced(s, x, shape):
    """A replicated value made unreduced along an axis, then all-reduced back; made
    unreduced again and reduce-scattered; then made unreduced from its sharding along the
    axis and all-reduced."""
    axis, size = s.rng.choice(s.mesh)
    t = tensor(shape)
    none = [[] for _ in shape]
    a = s.op(f"sdy.sharding_constraint {s.op(f'stablehlo.tanh {x} : {t}')} {sharding(none)} : "
             f"{t}")
    u = s.op(f'sdy.replicated_to_unreduced {{"{axis}"}} {a} out_sharding='
             f"{sharding(none, [axis])} : {t}")
    r = s.op(f'sdy.all_reduce {{"{axis}"}} {u} out_sharding={sharding(none)} : {t}')
    if shape[0] % size:
        return r, shape
    rows = [[axis], *none[1:]]
    u1 = s.op(f'sdy.replicated_to_unreduced {{"{axis}"}} {r} out_sharding='
              f"{sharding(none, [axis])} : {t}")
    r = s.op(f'sdy.reduce_scatter [{{"{axis}"}}{", {}" * (len(shape) - 1)}] {u1} '
             f"out_sharding={sharding(rows)} : {t}")
    b = s.op(f"sdy.reshard {r} {sharding(rows)} : {t}")
    u2 = s.op(f'sdy.sharded_to_unreduced [{{"{axis}"}}{", {}" * (len(shape) - 1)}] {b} '
              f"out_sharding={sharding(none, [axis])} : {t}")
    return s.op(f'sdy.all_reduce {{"{axis}"}} {u2} out_sharding={sharding(none)} : {t}'), \
        shape


def _groups(mesh, axis: str) -> list[list[int]]:
    """Device ids (row-major over the mesh) of each group differing only along ``axis``."""
    names = [n for n, _ in mesh]
    sizes = [k for _, k in mesh]
    a = names.index(axis)
    stride = 1
    for k in sizes[a + 1:]:
        stride *= k
    total = 1
    for k in sizes:
        total *= k
    starts = [d for d in range(total) if (d // stride) % sizes[a] == 0]
    return [[d + i * stride for i in range(sizes[a])] for d in starts]


def _groups_attr(groups) -> str:
    rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    return f"dense<[{rows}]> : tensor<{len(groups)}x{len(groups[0])}xi64>"


def _manual(s, x, shape, body_fn, tries: int = 8):
    """``sdy.manual_computation`` over every mesh axis: ``body_fn(inner, arg, local,
    dims)`` returns ``(value, local shape, out dims)``, or Nones when the collective does
    not fit the placement of the axes (another is drawn, ``tries`` times); the result's
    global shape follows from the out dims."""
    if not s.mesh:
        return None
    for _ in range(tries):
        dims = _placement(s, shape)
        local = _local(s, shape, dims)
        made = {}

        def body(inner, arg, dims=dims, local=local, made=made):
            value, out_local, out_dims = body_fn(inner, arg, local, dims)
            made["out"] = (out_local, out_dims)
            if value is None:  # the collective does not fit: the block is dropped
                return [(arg, tensor(local))]
            return [(value, tensor(out_local))]
        head, block = s.body([tensor(local)], body)
        if made["out"][0] is not None:
            break
    else:
        return None
    out_local, out_dims = made["out"]
    sizes = dict(s.mesh)
    out = tuple(n * _prod(sizes[a] for a in axes) for n, axes in zip(out_local, out_dims))
    axes = ", ".join(f'"{n}"' for n, _ in s.mesh)
    return s.op(f"sdy.manual_computation({x}) in_shardings=[{sharding(dims)}] "
                f"out_shardings=[{sharding(out_dims)}] manual_axes={{{axes}}} {head} "
                f"{block} : ({tensor(shape)}) -> {tensor(out)}"), out


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def _sharded_axis(s, dims):
    """A (dimension, axis) whose axis is the last of its dimension's axes, or None."""
    options = [(d, axes[-1]) for d, axes in enumerate(dims) if axes]
    return s.rng.choice(options) if options else None


@kind("manual_all_gather", "sdy.manual_computation", "stablehlo.all_gather")
def manual_all_gather(s, x, shape):
    def body(inner, a, local, dims):
        picked = _sharded_axis(s, dims)
        if picked is None:
            return a, local, dims
        d, axis = picked
        size = dict(s.mesh)[axis]
        out = tuple(n * size if i == d else n for i, n in enumerate(local))
        g = inner.op(f'"stablehlo.all_gather"({a}) {{all_gather_dim = {d} : i64, '
                     f"replica_groups = {_groups_attr(_groups(s.mesh, axis))}, {CHANNEL}, "
                     f"use_global_device_ids}} : ({tensor(local)}) -> {tensor(out)}")
        return g, out, [axes[:-1] if i == d else axes for i, axes in enumerate(dims)]
    return _manual(s, x, shape, body)


def _all_reduce(inner, a, local, groups):
    return inner.op(f'"stablehlo.all_reduce"({a}) {inner.scalar_body("add")} {{'
                    f"replica_groups = {_groups_attr(groups)}, {CHANNEL}, "
                    f"use_global_device_ids}} : ({tensor(local)}) -> {tensor(local)}")


@kind("manual_all_reduce", "sdy.manual_computation", "stablehlo.all_reduce")
def manual_all_reduce(s, x, shape):
    """``psum`` over an axis: the result is the same along it (dropped from out)."""
    def body(inner, a, local, dims):
        axis = s.rng.choice(s.mesh)[0]
        r = _all_reduce(inner, a, local, _groups(s.mesh, axis))
        out_dims = [[b for b in axes if b != axis] for axes in dims]
        if any(axis in axes and axes[-1] != axis for axes in dims):
            return None, None, None  # dropping a major axis would reorder the blocks
        return r, local, out_dims
    return _manual(s, x, shape, body)


@kind("manual_reduce_scatter", "sdy.manual_computation", "stablehlo.reduce_scatter")
def manual_reduce_scatter(s, x, shape):
    """``psum_scatter`` over an axis the value is not sharded along."""
    def body(inner, a, local, dims):
        used = {b for axes in dims for b in axes}
        free = [(n, k) for n, k in s.mesh if n not in used]
        fits = [(d, n, k) for n, k in free for d, m in enumerate(local) if m % k == 0]
        if not fits:
            return None, None, None
        d, axis, size = s.rng.choice(fits)
        out = tuple(m // size if i == d else m for i, m in enumerate(local))
        r = inner.op(f'"stablehlo.reduce_scatter"({a}) {inner.scalar_body("add")} {{'
                     f"scatter_dimension = {d} : i64, replica_groups = "
                     f"{_groups_attr(_groups(s.mesh, axis))}, {CHANNEL}, "
                     f"use_global_device_ids}} : ({tensor(local)}) -> {tensor(out)}")
        return r, out, [[*axes, axis] if i == d else axes for i, axes in enumerate(dims)]
    return _manual(s, x, shape, body)


@kind("manual_all_to_all", "sdy.manual_computation", "stablehlo.all_to_all")
def manual_all_to_all(s, x, shape):
    """Move an axis from one dimension to another (``lax.all_to_all``)."""
    def body(inner, a, local, dims):
        options = [(c, axes[-1], sp) for c, axes in enumerate(dims) if axes
                   for sp in range(len(local)) if sp != c
                   and local[sp] % dict(s.mesh)[axes[-1]] == 0]
        if not options:
            return None, None, None
        concat, axis, split = s.rng.choice(options)
        size = dict(s.mesh)[axis]
        out = tuple(m // size if i == split else m * size if i == concat else m
                    for i, m in enumerate(local))
        r = inner.op(f'"stablehlo.all_to_all"({a}) {{split_dimension = {split} : i64, '
                     f"concat_dimension = {concat} : i64, split_count = {size} : i64, "
                     f"replica_groups = {_groups_attr(_groups(s.mesh, axis))}, {CHANNEL}}} : "
                     f"({tensor(local)}) -> {tensor(out)}")
        out_dims = [[*axes, axis] if i == split else axes[:-1] if i == concat else axes
                    for i, axes in enumerate(dims)]
        return r, out, out_dims
    return _manual(s, x, shape, body)


@kind("manual_collective_permute", "sdy.manual_computation", "stablehlo.collective_permute")
def manual_collective_permute(s, x, shape):
    """A shift by one along an axis (``lax.ppermute``), some devices receiving nothing
    (zeros) when it does not wrap around."""
    def body(inner, a, local, dims):
        axis = s.rng.choice(s.mesh)[0]
        wrap = s.rng.random() < 0.5 or not any(axis in axes for axes in dims)
        pairs = [(g[i], g[(i + 1) % len(g)]) for g in _groups(s.mesh, axis)
                 for i in range(len(g)) if wrap or i + 1 < len(g)]
        text = ", ".join(f"[{u}, {v}]" for u, v in pairs)
        r = inner.op(f'"stablehlo.collective_permute"({a}) {{source_target_pairs = '
                     f"dense<[{text}]> : tensor<{len(pairs)}x2xi64>, {CHANNEL}}} : "
                     f"({tensor(local)}) -> {tensor(local)}")
        return r, local, dims
    return _manual(s, x, shape, body)


@kind("manual_collective_broadcast", "sdy.manual_computation",
      "stablehlo.collective_broadcast")
def manual_collective_broadcast(s, x, shape):
    """The first device of each group along an axis sends its block to the group."""
    def body(inner, a, local, dims):
        axis = s.rng.choice(s.mesh)[0]
        if any(axis in axes and axes[-1] != axis for axes in dims):
            return None, None, None
        r = inner.op(f'"stablehlo.collective_broadcast"({a}) {{replica_groups = '
                     f"{_groups_attr(_groups(s.mesh, axis))}, {CHANNEL}}} : "
                     f"({tensor(local)}) -> {tensor(local)}")
        return r, local, [[b for b in axes if b != axis] for axes in dims]
    return _manual(s, x, shape, body)


@kind("manual_axis_index", "sdy.manual_computation", "stablehlo.partition_id")
def manual_axis_index(s, x, shape):
    """``x + lax.axis_index(a)`` for an axis ``a`` that shards ``x`` (the index is then
    the same on devices holding the same block)."""
    def body(inner, a, local, dims):
        picked = _sharded_axis(s, dims)
        if picked is None:
            return a, local, dims
        axis = picked[1]
        names = [n for n, _ in s.mesh]
        sizes = dict(s.mesh)
        stride = _prod(sizes[n] for n in names[names.index(axis) + 1:])
        pid = inner.op(f"stablehlo.partition_id : {tensor((), 'ui32')}")
        pid = inner.convert(pid, (), "ui32", "i32")
        idx = inner.binary("remainder", inner.binary("divide", pid, inner.const(
            stride, (), "i32"), (), "i32"), inner.const(sizes[axis], (), "i32"), (), "i32")
        f = inner.convert(idx, (), "i32", "f32")
        return inner.binary("add", a, inner.broadcast(f, (), [], local), local), local, dims
    return _manual(s, x, shape, body)


@kind("manual_collective_reduce", "sdy.manual_computation", "stablehlo.collective_reduce")
def manual_collective_reduce(s, x, shape):
    """The sum over an axis lands on the first device of each group, the others get
    zeros (so the axis must shard ``x``: each block is then well defined)."""
    def body(inner, a, local, dims):
        picked = _sharded_axis(s, dims)
        if picked is None:
            return None, None, None
        axis = picked[1]
        r = inner.op(f'"stablehlo.collective_reduce"({a}) {inner.scalar_body("add")} {{'
                     f"replica_groups = {_groups_attr(_groups(s.mesh, axis))}, {CHANNEL}, "
                     f"use_global_device_ids}} : ({tensor(local)}) -> {tensor(local)}")
        return r, local, dims
    return _manual(s, x, shape, body)
