"""JAX programs in the pattern of public reports of XLA partitioning bugs, lowered to MLIR
text for ``shardy-ref check --partitioner xla`` (docs/xla_partitioner_bugs.md).

Each program is written here from the report's description (the reports' own scripts need
thousands of GPUs or were not at hand); none is copied from them. ``CASES`` lists every
program with the verdict ``check --partitioner xla`` gives it with jaxlib 0.10.2 on CPU;
``tests/backends/test_xla_bugs.py`` holds the tool to those verdicts and, for each
MISMATCH, checks that XLA's own run of the program (jax.jit on CPU devices) is wrong too.

    python examples/xla_bugs/lower_xla_bugs.py   (needs the jax extra; writes NAME.mlir and
                                                  NAME.inputs.npz here)
    shardy-ref check --partitioner xla --inputs examples/xla_bugs/NAME.inputs.npz \
        examples/xla_bugs/NAME.mlir
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
V, D, B, S = 32, 8, 2, 16  # vocabulary, embedding width, batch, sequence


@dataclass(frozen=True)
class Case:
    """One program: its file, the report it follows, the mesh, and the verdict."""

    name: str
    report: str
    mesh: tuple
    verdict: str  # OK or MISMATCH, with jaxlib 0.10.2 on CPU


CASES = [
    # openxla/xla#42481: the gradient of a gather (jnp.take) whose table has a reduced axis
    Case("take_grad_table_reduced_dp", "openxla/xla#42481", (2, 4), "MISMATCH"),
    Case("take_grad_table_reduced_tp", "openxla/xla#42481", (2, 4), "MISMATCH"),
    Case("take_grad_table_plain", "openxla/xla#42481", (2, 4), "OK"),
    # openxla/xla#40034: unreduced partial sums resharded to mixed sharded/replicated axes
    Case("unreduced_to_dp", "openxla/xla#40034", (2, 4), "OK"),
    Case("unreduced_to_dp_fsdp", "openxla/xla#40034", (2, 2, 2), "OK"),
    Case("unreduced_to_tp_dp", "openxla/xla#40034", (2, 2, 2), "OK"),
    # jax-ml/jax#23052: scatter into a matrix sharded by rows
    Case("scatter_add_rows_sharded", "jax-ml/jax#23052", (4, 1), "OK"),
    Case("scatter_set_rows_sharded", "jax-ml/jax#23052", (4, 1), "OK"),
]


def programs():
    """``name -> (function, argument specs as (shape, dtype, PartitionSpec), mesh)``."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    def mesh(case_mesh, names, kind=AxisType.Explicit):
        return jax.make_mesh(case_mesh, names, axis_types=(kind,) * len(names))

    def take_grad(ids_spec):
        def loss(table, ids, g):
            return jnp.sum(table.at[ids].get(out_sharding=P(*ids_spec.partitions, None)) * g)
        return jax.grad(loss)

    def unreduced_to(out, names):
        def f(x, w):
            y = jnp.einsum("bk,kn->bn", x, w, out_sharding=P(None, None, unreduced=set(names)))
            return jax.sharding.reshard(y, out)
        return f

    dims = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    f32, i32 = jnp.float32, jnp.int32
    dp_tp, three = ("dp", "tp"), ("dp", "fsdp", "tp")
    take = [((V, D), f32), ((B, S), i32), ((B, S, D), f32)]
    return {
        "take_grad_table_reduced_dp": (take_grad(P("dp", "tp")), [
            (*take[0], P("tp", None, reduced={"dp"})), (*take[1], P("dp", "tp")),
            (*take[2], P("dp", "tp", None))], mesh((2, 4), dp_tp)),
        "take_grad_table_reduced_tp": (take_grad(P("dp", None)), [
            (*take[0], P(None, None, reduced={"tp"})), (*take[1], P("dp", None)),
            (*take[2], P("dp", None, None))], mesh((2, 4), dp_tp)),
        "take_grad_table_plain": (take_grad(P("dp", "tp")), [
            (*take[0], P("tp", None)), (*take[1], P("dp", "tp")),
            (*take[2], P("dp", "tp", None))], mesh((2, 4), dp_tp)),
        "unreduced_to_dp": (unreduced_to(P("dp", None), dp_tp), [
            ((16, 32), f32, P(None, dp_tp)), ((32, 8), f32, P(dp_tp, None))],
            mesh((2, 4), dp_tp)),
        "unreduced_to_dp_fsdp": (unreduced_to(P(("dp", "fsdp"), None), three), [
            ((16, 32), f32, P(None, three)), ((32, 8), f32, P(three, None))],
            mesh((2, 2, 2), three)),
        "unreduced_to_tp_dp": (unreduced_to(P("tp", "dp"), three), [
            ((16, 32), f32, P(None, three)), ((32, 8), f32, P(three, None))],
            mesh((2, 2, 2), three)),
        "scatter_add_rows_sharded": (lambda x, i, u: lax.scatter_add(x, i, u, dims), [
            ((16, 16), f32, P("a", None)), ((8, 1), i32, P()), ((8, 16), f32, P())],
            mesh((4, 1), ("a", "b"), AxisType.Auto)),
        "scatter_set_rows_sharded": (lambda x, i, u: lax.scatter(x, i, u, dims), [
            ((16, 16), f32, P("a", None)), ((8, 1), i32, P()), ((8, 16), f32, P("a", None))],
            mesh((4, 1), ("a", "b"), AxisType.Auto)),
    }


def inputs(name: str) -> list:
    """Seeded arguments of program ``name``: floats standard normal, indices spread over
    the whole indexed dimension (so that every shard of a scattered or gathered table is
    hit, some rows twice)."""
    import numpy as np

    rng = np.random.default_rng(0)
    _, args, _ = programs()[name]
    out = []
    for shape, dtype, _ in args:
        if np.dtype(dtype).kind == "f":
            out.append(rng.standard_normal(shape).astype(np.float32))
        else:
            bound = V if name.startswith("take") else 16
            out.append(rng.integers(0, bound, shape).astype(np.int32))
    return out


def lower(name: str) -> str:
    """The MLIR text jax gives program ``name`` (its arguments kept even when unused)."""
    import jax
    from jax.sharding import NamedSharding

    fn, args, mesh = programs()[name]
    with jax.set_mesh(mesh):
        specs = [jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))
                 for shape, dtype, spec in args]
        return jax.jit(fn, keep_unused=True).lower(*specs).as_text()


def main() -> None:
    import jax

    jax.config.update("jax_num_cpu_devices", 8)
    import numpy as np

    for case in CASES:
        (HERE / f"{case.name}.mlir").write_text(lower(case.name))
        np.savez(HERE / f"{case.name}.inputs.npz",
                 **{f"arg{i}": a for i, a in enumerate(inputs(case.name))})
        print(f"wrote {case.name}.mlir and .inputs.npz ({case.report})")


if __name__ == "__main__":
    main()
