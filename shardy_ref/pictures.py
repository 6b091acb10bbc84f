"""Draw a sharding from Python, as ``jax.debug.visualize_array_sharding`` does, with what
``shardy-ref show`` draws (any rank, sub-axes, open dimensions, replicated axes):

    import shardy_ref
    shardy_ref.visualize(x)          # or shardy_ref.show(x); x a jax.Array
    shardy_ref.visualize(NamedSharding(mesh, P("x", None)), shape=(8, 4))
    shardy_ref.visualize('#sdy.sharding<@mesh, [{"x"}, {}]>', shape=(8, 4),
                         mesh='<["x"=2, "y"=4]>')

Needs rich (the ``testing`` extra); jax objects need jax.
"""
from __future__ import annotations

import sys


def visualize(x, shape=None, mesh=None, *, file=None, width: int | None = None) -> None:
    """Print the picture of ``x``'s sharding: a ``jax.Array``, a jax ``NamedSharding``
    (with ``shape``), an sdy sharding (text or ``TensorSharding``, with ``shape`` and
    ``mesh``: text such as ``<["x"=2]>`` or a ``Mesh``)."""
    from rich.console import Console

    from shardy_ref.tools.show_cmd import ShownValue, tensor_picture

    sharding, mesh_attr, shape, mesh_name = _sdy(x, shape, mesh)
    from shardy_ref.ir.types import FloatType, RankedTensorType

    value = ShownValue("value", "argument", RankedTensorType(tuple(shape), FloatType("f32")),
                       sharding, mesh_attr, mesh_name)
    console = Console(file=file or sys.stdout, width=width, highlight=False)
    console.print(tensor_picture(value))


def _sdy(x, shape, mesh):
    """``(TensorSharding, Mesh, shape, mesh name)`` for what :func:`visualize` accepts."""
    from shardy_ref.ir.sdy_sharding import TensorSharding

    if hasattr(x, "sharding") and hasattr(x, "shape") and shape is None:  # a jax.Array
        return _sdy(x.sharding, tuple(x.shape), mesh)
    if isinstance(x, str) or isinstance(x, TensorSharding):
        if shape is None or mesh is None:
            raise ValueError("an sdy sharding needs shape= and mesh=")
        return _from_sdy(x, tuple(shape), mesh)
    if hasattr(x, "spec") and hasattr(x, "mesh"):  # jax.sharding.NamedSharding
        if shape is None:
            raise ValueError("a NamedSharding needs shape=")
        return _from_named(x, tuple(shape))
    if shape is not None and hasattr(x, "device_set"):  # another jax sharding: one device
        return _from_sdy("#sdy.sharding<@mesh, [" + ", ".join("{}" for _ in shape) + "]>",
                         tuple(shape), "<[]>")
    raise TypeError(f"cannot draw a {type(x).__name__}: give a jax.Array, a NamedSharding "
                    "with shape=, or an sdy sharding with shape= and mesh=")


def _from_sdy(sharding, shape, mesh):
    from shardy_ref.ir.sdy_axes import Mesh
    from shardy_ref.parser import parse_attribute

    if isinstance(sharding, str):
        sharding = parse_attribute(sharding)
    if isinstance(mesh, str):
        text = mesh.strip()
        if text.startswith("sdy.mesh"):
            text = text.split("=", 1)[1].strip()
        mesh = parse_attribute(text if text.startswith("#sdy.mesh") else f"#sdy.mesh{text}")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"mesh= must be mesh text or a Mesh, not {type(mesh).__name__}")
    if len(sharding.dim_shardings) != len(shape):
        raise ValueError(f"the sharding has {len(sharding.dim_shardings)} dimensions, the "
                         f"shape {len(shape)}")
    name = sharding.mesh_or_ref if isinstance(sharding.mesh_or_ref, str) else None
    return sharding, mesh, shape, name


def _from_named(named, shape):
    """A jax ``NamedSharding`` as an sdy mesh and sharding (``None`` entries closed and
    empty, ``P.UNCONSTRAINED`` open, tuples of axes major to minor)."""
    axes = ", ".join(f'"{n}"={s}' for n, s in named.mesh.shape.items())
    ids = [int(d.id) for d in named.mesh.devices.flat]
    order = "" if ids == sorted(ids) else f", device_ids=[{', '.join(map(str, ids))}]"
    dims = []
    spec = tuple(named.spec) + (None,) * (len(shape) - len(named.spec))
    for entry in spec:
        if entry is None:
            dims.append("{}")
        elif not isinstance(entry, (str, tuple, list)):  # PartitionSpec.UNCONSTRAINED
            dims.append("{?}")
        else:
            names = (entry,) if isinstance(entry, str) else tuple(entry)
            dims.append("{" + ", ".join(f'"{n}"' for n in names) + "}")
    return _from_sdy(f"#sdy.sharding<@mesh, [{', '.join(dims)}]>", shape,
                     f"<[{axes}]{order}>")
