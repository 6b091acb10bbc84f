"""shardy_ref: a pure-Python reference implementation of OpenXLA Shardy (the ``sdy`` dialect).

Subpackages: ``ir`` (types, attributes, ops), ``parser`` (MLIR text in and out),
``propagate``, ``partition`` and ``execute``. ``import shardy_ref`` is cheap: subpackages
load what they need when first used.
"""

__version__ = "0.1.0"
ORACLE_JAX_VERSION = "0.10.2"  # the jaxlib whose Shardy our output is compared against


def visualize(x, shape=None, mesh=None, **options) -> None:
    """Draw ``x``'s sharding: a ``jax.Array``, a ``NamedSharding`` with ``shape``, or an
    sdy sharding with ``shape`` and ``mesh`` (see :mod:`shardy_ref.pictures`)."""
    from shardy_ref.pictures import visualize as draw

    draw(x, shape, mesh, **options)


show = visualize
