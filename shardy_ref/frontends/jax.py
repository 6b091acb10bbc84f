"""Programs in from JAX: ``from_jax(fn, *example_args, mesh=..., in_shardings=...)``.

JAX lowers ``fn`` (``jax.jit(fn, in_shardings=..., out_shardings=...).lower(...)``) to the
StableHLO + sdy text it hands Shardy: ``sdy.mesh``, argument and result shardings,
``sdy.sharding_constraint`` from ``with_sharding_constraint``, ``sdy.manual_computation``
from ``shard_map``. That text is what ``examples/jax/lower_programs.py`` writes; it parses
as it is (no clean-up), and :func:`from_jax` returns it parsed and verified, ready for our
passes, ``simulate`` or :func:`shardy_ref.backends.run_on_xla`. Needs the ``jax`` extra.
"""
from __future__ import annotations

from shardy_ref.backends.jax_runtime import require_jax


def lower_to_text(fn, *example_args, mesh=None, in_shardings=None,
                  out_shardings=None) -> str:
    """The StableHLO + sdy text JAX lowers ``fn`` to for ``example_args`` (arrays or
    ``jax.ShapeDtypeStruct``). Shardings are ``NamedSharding``s, or ``PartitionSpec``s
    on ``mesh``; with a ``mesh``, ``fn`` is traced under ``jax.set_mesh(mesh)``, so a bare
    ``PartitionSpec`` in its ``with_sharding_constraint`` calls names that mesh's axes."""
    jax = require_jax("from_jax")
    kwargs = {}
    if in_shardings is not None:
        kwargs["in_shardings"] = _named(jax, in_shardings, mesh)
    if out_shardings is not None:
        kwargs["out_shardings"] = _named(jax, out_shardings, mesh)
    jitted = jax.jit(fn, **kwargs)
    if mesh is None:
        return jitted.lower(*example_args).as_text()
    with jax.set_mesh(mesh):
        return jitted.lower(*example_args).as_text()


def from_jax(fn, *example_args, mesh=None, in_shardings=None, out_shardings=None):
    """``fn`` lowered by JAX (:func:`lower_to_text`) and parsed into a verified
    :class:`~shardy_ref.ir.Module` named after it; raises ParseError/VerifyError (located
    in ``<jax fn_name>``) for text we cannot read."""
    from shardy_ref.ir import Module
    from shardy_ref.ir.verify import verify_module
    from shardy_ref.parser import parse_module

    text = lower_to_text(fn, *example_args, mesh=mesh, in_shardings=in_shardings,
                         out_shardings=out_shardings)
    op = parse_module(text, f"<jax {getattr(fn, '__name__', 'function')}>")
    verify_module(op)
    return Module(op)


def _named(jax, shardings, mesh):
    """``shardings`` (a pytree) with each ``PartitionSpec`` made a ``NamedSharding`` on
    ``mesh``; a ValueError when a spec has no mesh to name."""
    from jax.sharding import NamedSharding, PartitionSpec

    def convert(s):
        if not isinstance(s, PartitionSpec):
            return s
        if mesh is None:
            raise ValueError(f"the sharding {s} is a PartitionSpec: pass mesh= to name its "
                             "axes")
        return NamedSharding(mesh, s)

    return jax.tree.map(convert, shardings, is_leaf=lambda s: isinstance(s, PartitionSpec))
