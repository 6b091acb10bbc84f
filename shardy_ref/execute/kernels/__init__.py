"""Kernels, one module per op family; importing a module registers its kernels in
:data:`shardy_ref.execute.registry.KERNELS` (see :func:`~shardy_ref.execute.registry.kernel`)."""
