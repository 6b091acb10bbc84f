"""Random modules for the ``canonicalize`` tests: chains of ``sdy.reshard`` through reshapes
and transposes, and chains of sdy collectives valid by construction.

The generators take a :class:`random.Random`, so the same code feeds hypothesis
(``st.randoms()``) and the seeded oracle-differential tests.
"""
from __future__ import annotations

import random

from hypothesis import strategies as st

RESHARD_MESHES = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\nsdy.mesh @mesh_4 = <["a"=4]>\n'
COLLECTIVE_MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>\n'
SHAPES = [(8, 8), (64,), (4, 16), (2, 4, 8)]
MESH_AXES = ["x", "y", "z"]
T3 = "tensor<16x16x16xf32>"


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _quoted(axes) -> str:
    return ", ".join(f'"{a}"' for a in axes)


def _reshard_sharding(rank: int, rng: random.Random) -> str:
    if rng.random() < 0.2:  # sub-axes of the 4-device mesh
        dims = [[] for _ in range(rank)]
        for axis in rng.sample(['"a":(1)2', '"a":(2)2'], 2):
            if rng.random() < 0.6:
                dims[rng.randrange(rank)].append(axis)
        dims = [['"a"'] if d == ['"a":(1)2', '"a":(2)2'] else d for d in dims]
        return "<@mesh_4, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]>"
    axes = ['"a"', '"b"']
    rng.shuffle(axes)
    dims = [[] for _ in range(rank)]
    for a in axes:
        if rng.random() < 0.5:
            dims[rng.randrange(rank)].append(a)
    out = []
    for d in dims:
        body = ", ".join(d)
        if rng.random() < 0.3:
            body = body + ", ?" if body else "?"
        out.append("{" + body + "}")
    return "<@mesh, [" + ", ".join(out) + "]>"


def reshard_func(name: str, rng: random.Random) -> str:
    """Reshards, reshapes, transposes and negates of one ``tensor<8x8xf32>`` argument."""
    values = [("%arg0", (8, 8))]
    lines = []
    for i in range(rng.randint(2, 9)):
        v, shape = rng.choice(values)
        k = rng.random()
        if k < 0.45:
            lines.append(f"%{i} = sdy.reshard {v} {_reshard_sharding(len(shape), rng)} : "
                         f"{_t(shape)}")
        elif k < 0.7:
            new = rng.choice(SHAPES)
            lines.append(f"%{i} = stablehlo.reshape {v} : ({_t(shape)}) -> {_t(new)}")
            shape = new
        elif k < 0.85:
            perm = list(range(len(shape)))
            rng.shuffle(perm)
            new = tuple(shape[p] for p in perm)
            lines.append(f"%{i} = stablehlo.transpose {v}, dims = {perm} : "
                         f"({_t(shape)}) -> {_t(new)}")
            shape = new
        else:
            lines.append(f"%{i} = stablehlo.negate {v} : {_t(shape)}")
        values.append((f"%{i}", shape))
    returned = rng.sample(values[1:], min(len(values) - 1, rng.randint(1, 3)))
    sig = ", ".join(_t(s) for _, s in returned)
    body = "".join(f"  {line}\n" for line in lines)
    return (f"func.func @{name}(%arg0: tensor<8x8xf32>) -> ({sig}) {{\n{body}"
            f"  return {', '.join(v for v, _ in returned)} : {sig}\n}}\n")


def reshard_module(rng: random.Random, funcs: int = 3) -> str:
    return RESHARD_MESHES + "".join(reshard_func(f"f{i}", rng) for i in range(funcs))


def _fmt(dims, unreduced=()) -> str:
    text = "<@mesh, [" + ", ".join("{" + _quoted(d) + "}" for d in dims) + "]"
    if unreduced:
        text += ", unreduced={" + _quoted(unreduced) + "}"
    return text + ">"


def _axes_per_dim(lists) -> str:
    return "[" + ", ".join("{" + _quoted(d) + "}" for d in lists) + "]"


def _collective(rng: random.Random, v: str, dims, unreduced):
    """One collective on ``v`` (sharded ``dims``, ``unreduced``): (text, dims, unreduced),
    or None when the chosen kind does not apply."""
    used = {a for d in dims for a in d} | set(unreduced)
    free = [a for a in MESH_AXES if a not in used]
    new = [list(d) for d in dims]
    return _COLLECTIVES[rng.randrange(8)](rng, v, new, unreduced, free)


# Each builder below takes the operand ``v``, ``new`` (a copy of its dim shardings, which it
# may change into the result's), its ``unreduced`` axes and the ``free`` mesh axes.

def _all_gather(rng: random.Random, v: str, new, unreduced, free):
    gathered = [[] for _ in new]
    for d, axes in enumerate(new):
        if axes and rng.random() < 0.6:
            cut = rng.randint(0, len(axes))
            gathered[d], new[d] = axes[cut:], axes[:cut]
    out = f"out_sharding={_fmt(new, unreduced)} : {T3}"
    return f"sdy.all_gather {_axes_per_dim(gathered)} {v} {out}", new, unreduced


def _slicing(op: str, rng: random.Random, v: str, new, unreduced, free):
    """``sdy.all_slice`` or ``sdy.reduce_scatter``: free axes added to random dims."""
    sliced = [[] for _ in new]
    rng.shuffle(free)
    for a in free:
        if rng.random() < 0.6:
            d = rng.randrange(len(new))
            sliced[d].append(a)
            new[d].append(a)
    out = f"out_sharding={_fmt(new, unreduced)} : {T3}"
    return f"{op} {_axes_per_dim(sliced)} {v} {out}", new, unreduced


def _all_slice(rng: random.Random, v: str, new, unreduced, free):
    return _slicing("sdy.all_slice", rng, v, new, unreduced, free)


def _reduce_scatter(rng: random.Random, v: str, new, unreduced, free):
    return _slicing("sdy.reduce_scatter", rng, v, new, unreduced, free)


def _all_reduce(rng: random.Random, v: str, new, unreduced, free):
    reduced = [a for a in free if rng.random() < 0.6]
    out = f"out_sharding={_fmt(new, unreduced)} : {T3}"
    return f"sdy.all_reduce {{{_quoted(reduced)}}} {v} {out}", new, unreduced


def _all_to_all(rng: random.Random, v: str, new, unreduced, free):
    sources = [d for d, axes in enumerate(new) if axes]
    if not sources:
        return None
    src = rng.choice(sources)
    tgt = rng.choice([d for d in range(len(new)) if d != src])
    cut = rng.randint(0, len(new[src]) - 1)
    moved, new[src] = new[src][cut:], new[src][:cut]
    new[tgt] = new[tgt] + moved
    out = f"out_sharding={_fmt(new, unreduced)} : {T3}"
    return f"sdy.all_to_all [{{{_quoted(moved)}}}: {src}->{tgt}] {v} {out}", new, unreduced


def _collective_permute(rng: random.Random, v: str, new, unreduced, free):
    flat = [(d, j) for d, axes in enumerate(new) for j in range(len(axes))]
    if rng.random() < 0.5 and len(flat) >= 2:
        (d1, j1), (d2, j2) = rng.sample(flat, 2)
        new[d1][j1], new[d2][j2] = new[d2][j2], new[d1][j1]
    out = f"out_sharding={_fmt(new, unreduced)} : {T3}"
    return f"sdy.collective_permute {v} {out}", new, unreduced


def _replicated_to_unreduced(rng: random.Random, v: str, new, unreduced, free):
    axes = [a for a in free if rng.random() < 0.6]
    if not axes:
        return None
    merged = tuple(sorted({*unreduced, *axes}, key=MESH_AXES.index))
    return (f"sdy.replicated_to_unreduced {{{_quoted(axes)}}} {v} "
            f"out_sharding={_fmt(new, merged)} : {T3}"), new, merged


def _unreduced_all_reduce(rng: random.Random, v: str, new, unreduced, free):
    """An ``sdy.all_reduce`` of some of the unreduced axes."""
    if not unreduced:
        return None
    axes = [a for a in unreduced if rng.random() < 0.7]
    kept = tuple(a for a in unreduced if a not in axes)
    return (f"sdy.all_reduce {{{_quoted(axes)}}} {v} out_sharding={_fmt(new, kept)} : {T3}",
            new, kept)


# by ``rng.randrange(8)``: the order keeps the modules drawn for each seed
_COLLECTIVES = (_all_gather, _all_slice, _all_reduce, _all_to_all, _collective_permute,
                _reduce_scatter, _replicated_to_unreduced, _unreduced_all_reduce)


def collective_func(name: str, rng: random.Random) -> str:
    """A chain of collectives on a sharded ``tensor<16x16x16xf32>`` argument; each op's
    operand and out sharding agree as the verifier requires."""
    init = [[], [], []]
    for a in MESH_AXES:
        if rng.random() < 0.5:
            init[rng.randrange(3)].append(a)
    values = [("%arg0", init, ())]
    lines = []
    for _ in range(rng.randint(2, 7)):
        v, dims, unreduced = rng.choice(values)
        made = _collective(rng, v, dims, unreduced)
        if made is not None:
            lines.append(f"%{len(lines)} = {made[0]}")
            values.append((f"%{len(lines) - 1}", made[1], made[2]))
    returned = rng.sample(values, min(len(values), rng.randint(1, 2)))
    sig = ", ".join(T3 for _ in returned)
    body = "".join(f"  {line}\n" for line in lines)
    return (f"func.func @{name}(%arg0: {T3} {{sdy.sharding = #sdy.sharding{_fmt(init)}}}) "
            f"-> ({sig}) {{\n{body}  return {', '.join(v for v, *_ in returned)} : {sig}\n}}\n")


def collective_module(rng: random.Random, funcs: int = 3) -> str:
    return COLLECTIVE_MESH + "".join(collective_func(f"f{i}", rng) for i in range(funcs))


reshard_modules = st.randoms(use_true_random=False).map(reshard_module)
collective_modules = st.randoms(use_true_random=False).map(collective_module)
