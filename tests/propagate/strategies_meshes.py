"""Random modules whose shardings name or inline meshes, for the mesh passes
(``sdy-lift-inlined-meshes``, ``sdy-inline-meshes``, ``sdy-remove-size-one-axes``) and
manual computations for ``sdy-manual-axes-cleanup``.

Shardings come from ``shardy_ref/testing/strategies.py``; this module only places them: on function
arguments and results, in ``sdy.sharding`` of ops and on ``sdy.sharding_constraint``, bound
to an ``sdy.mesh`` (possibly one of several equal ones) or to an inline mesh.
"""
from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from shardy_ref.ir.builtin_attrs import format_symbol_name
from shardy_ref.ir.diagnostics import VerifyError
from shardy_ref.ir.sdy_axes import AxisRef, Mesh, MeshAxis, mesh_axis_key
from shardy_ref.ir.sdy_debug import ReductionOp
from shardy_ref.ir.sdy_sharding import DimensionSharding, TensorSharding
from shardy_ref.ir.verify import verify_module
from shardy_ref.parser import parse_module
from shardy_ref.testing.strategies import meshes, tensor_shardings

TYPE = "tensor<8x8xf32>"
# names that collide with the ones the lift pass invents, to exercise symbol uniquing
MESH_NAMES = ("mesh", "mesh_0", "m", "empty_mesh", "maximal_mesh_3", "mesh_1", "other")


@st.composite
def with_size_one_axes(draw, sharding: TensorSharding, mesh: Mesh) -> TensorSharding:
    """``sharding`` plus some of the mesh's size-one axes (which ``tensor_shardings`` never
    uses), each in a dimension or the replicated or unreduced axes."""
    if mesh.is_maximal:
        return sharding
    dims = [list(d.axes) for d in sharding.dim_shardings]
    replicated, unreduced = list(sharding.replicated_axes), list(sharding.unreduced_axes)
    for axis in mesh.axes:
        if axis.size != 1 or not draw(st.booleans()):
            continue
        slot = draw(st.integers(0, len(dims) + 1))
        target = dims[slot] if slot < len(dims) else (
            replicated if slot == len(dims) else unreduced)
        target.insert(draw(st.integers(0, len(target))), AxisRef(axis.name))
    key = mesh_axis_key(mesh)
    new_dims = tuple(DimensionSharding(tuple(a), d.is_closed, d.priority)
                     for a, d in zip(dims, sharding.dim_shardings))
    return sharding.replace(dim_shardings=new_dims,
                            replicated_axes=tuple(sorted(replicated, key=key)),
                            unreduced_axes=tuple(sorted(unreduced, key=key)))


@st.composite
def sharded_modules(draw, size_one: bool = False, sum_only: bool = False) -> str:
    """A module of ``sdy.mesh`` ops (some equal under different names) and one function
    whose shardings refer to them by name or inline a mesh. ``size_one``: shardings also
    use size-one axes; ``sum_only``: no ``unreduced=max{...}`` (older Shardy rejects it;
    a sharding constraint may never introduce it)."""
    distinct = draw(st.lists(meshes(max_axes=3), min_size=1, max_size=3, unique=True))
    names = draw(st.lists(st.sampled_from(MESH_NAMES), max_size=4, unique=True))
    named = [(name, draw(st.sampled_from(distinct))) for name in names]

    @st.composite
    def sharding_text(draw, sum_only: bool = sum_only) -> str:
        if named and draw(st.booleans()):
            name, mesh = draw(st.sampled_from(named))
        else:
            name, mesh = None, draw(st.sampled_from(distinct))
        sharding = draw(tensor_shardings(mesh, mesh_name=name, rank=2))
        if size_one:
            sharding = draw(with_size_one_axes(sharding, mesh))
        if sum_only:
            sharding = sharding.replace(reduction_op=ReductionOp.SUM)
        return sharding.params()

    def maybe(text: str) -> str:
        return text if draw(st.booleans()) else ""

    lines = [f"sdy.mesh {format_symbol_name(n)} = {m.params()}" for n, m in named]
    args = [f"%arg{i}: {TYPE}" + maybe(f" {{sdy.sharding = #sdy.sharding{draw(sharding_text())}}}")
            for i in range(draw(st.integers(1, 3)))]
    results = [TYPE + maybe(f" {{sdy.sharding = #sdy.sharding{draw(sharding_text())}}}")
               for _ in range(draw(st.integers(1, 2)))]
    body, value = [], "%arg0"
    for i in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            attr = maybe(" {sdy.sharding = #sdy.sharding_per_value<["
                         + draw(sharding_text()) + "]>}")
            body.append(f"  %{i} = stablehlo.add {value}, %arg0{attr} : {TYPE}")
        else:
            body.append(f"  %{i} = sdy.sharding_constraint {value} {draw(sharding_text(True))}"
                        f" : {TYPE}")
        value = f"%{i}"
    body.append(f"  return {', '.join([value] * len(results))} : "
                f"{', '.join([TYPE] * len(results))}")
    lines.append(f"func.func @main({', '.join(args)}) -> ({', '.join(results)}) {{")
    text = "\n".join([*lines, *body, "}"]) + "\n"
    assume(verifies(text))  # e.g. a constraint must not change the reduction of kept axes
    return text


def verifies(text: str) -> bool:
    try:
        verify_module(parse_module(text, "t"))
    except VerifyError:
        return False
    return True


MANUAL_AXIS_NAMES = ("a", "b", "c", "d")


@st.composite
def manual_computation_modules(draw) -> str:
    """A manual computation on a mesh of size-2 axes (in random name order): manual axes
    in random order, in/out shardings sharding dimension 0 on the same manual axes (in
    any order, then maybe a free axis) and replicating some other manual axes, bound to
    ``@mesh`` or the same mesh inline."""
    names = draw(st.permutations(MANUAL_AXIS_NAMES))[:draw(st.integers(1, 4))]
    mesh = Mesh(tuple(MeshAxis(n, 2) for n in names))
    manual = draw(st.permutations(names))[:draw(st.integers(0, len(names)))]
    free = [n for n in names if n not in manual]
    dim_axes = [n for n in manual if draw(st.booleans())]
    key = mesh_axis_key(mesh)

    def sharding() -> str:
        dim = list(draw(st.permutations(dim_axes)))
        if free and draw(st.booleans()):
            dim.append(draw(st.sampled_from(free)))
        replicated = [AxisRef(n) for n in manual if n not in dim and draw(st.booleans())]
        dims = (DimensionSharding(tuple(AxisRef(a) for a in dim), draw(st.booleans())),)
        mesh_or_ref = "mesh" if draw(st.booleans()) else mesh
        return TensorSharding(mesh_or_ref, dims, tuple(sorted(replicated, key=key))).params()

    local = 16 >> len(dim_axes)
    manual_axes = ", ".join(f'"{n}"' for n in manual)
    return "\n".join([
        f"sdy.mesh @mesh = {mesh.params()}",
        "func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {",
        f"  %0 = sdy.manual_computation(%arg0) in_shardings=[{sharding()}]"
        f" out_shardings=[{sharding()}] manual_axes={{{manual_axes}}}"
        f" (%arg1: tensor<{local}xf32>) {{",
        f"    sdy.return %arg1 : tensor<{local}xf32>",
        "  } : (tensor<16xf32>) -> tensor<16xf32>",
        "  return %0 : tensor<16xf32>",
        "}",
    ]) + "\n"
